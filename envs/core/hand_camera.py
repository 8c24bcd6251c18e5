"""The benchmark's hand camera on both robots: 256x256, uid ``hand_camera``.

Why this module exists: RoboMME's ManiSkill fork renders the wrist view at 256x256 (its data format
and its π0.5 checkpoints take ``observation/wrist_image`` at that size), and it mounts a hand camera
on the stick robot too, because the benchmark's wrappers always read ``sensor_data["hand_camera"]``.
PyPI ManiSkill 3.0.1 differs on both counts: ``panda_wristcam``'s hand camera is 128x128, and
``panda_stick`` has no camera at all, so a policy would get a black wrist frame on PatternLock and
RouteStick.

:func:`with_hand_camera` returns the agent class to load instead: the packaged one (same uid, URDF,
controllers, physics) whose ``_sensor_configs`` is the benchmark's hand camera:

* ``panda_wristcam``: on ``camera_link`` with the packaged pose, only the resolution changes;
* ``panda_stick``: on ``panda_hand`` at the pose ``camera_link`` has relative to ``panda_hand`` on
  ``panda_wristcam`` (:func:`wristcam_offset`, read from the packaged URDF). The fork's exact stick
  camera pose is not available here (``../shared/reference/robomme_official.md``); this is the same
  view the gripper robot's wrist camera has, looking down the hand towards the stick's tip.

A camera adds no geometry to the scene and is rendered only when someone captures it
(``RoboMMETask.render_wrist``), so neither the front view nor a step gets slower; the harness
captures it only for image policies (``experiments/loop/render_schedule.py``).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

__all__ = ["HAND_CAMERA", "WRIST_SIZE", "HandMount", "hand_mount", "with_hand_camera", "wristcam_offset"]

HAND_CAMERA = "hand_camera"
"""Sensor uid the benchmark's wrappers read (``sensor_data["hand_camera"]``)."""
WRIST_SIZE = 256
"""Wrist image side in pixels, as in the fork's data format (``observation/wrist_image``)."""
WRIST_FOV = np.pi / 2  # panda_wristcam's packaged field of view, unchanged


@dataclass(frozen=True)
class HandMount:
    """Where a robot's hand camera sits: the link it rides on and the pose in that link's frame
    (``p`` metres, ``q`` quaternion w, x, y, z)."""

    link: str
    p: tuple[float, float, float]
    q: tuple[float, float, float, float]


def _urdf_joint_pose(root: ET.Element, name: str) -> np.ndarray:
    """4x4 transform parent -> child of the fixed joint ``name`` (URDF rpy: fixed-axis x, y, z)."""
    from scipy.spatial.transform import Rotation

    joint = root.find(f"joint[@name='{name}']")
    if joint is None:
        raise ValueError(f"URDF has no joint {name!r}")
    origin = joint.find("origin")
    xyz = [float(v) for v in (origin.get("xyz", "0 0 0") if origin is not None else "0 0 0").split()]
    rpy = [float(v) for v in (origin.get("rpy", "0 0 0") if origin is not None else "0 0 0").split()]
    t = np.eye(4)
    t[:3, :3] = Rotation.from_euler("xyz", rpy).as_matrix()
    t[:3, 3] = xyz
    return t


@lru_cache(maxsize=1)
def wristcam_offset() -> HandMount:
    """Pose of ``panda_wristcam``'s ``camera_link`` in the ``panda_hand`` frame, from the packaged URDF
    (``realsense_joint`` then ``camera_link_joint``), so the stick's camera sees what the gripper's does."""
    from mani_skill.agents.robots.panda.panda_wristcam import PandaWristCam
    from scipy.spatial.transform import Rotation

    root = ET.parse(PandaWristCam.urdf_path).getroot()
    chain = _urdf_joint_pose(root, "realsense_joint") @ _urdf_joint_pose(root, "camera_link_joint")
    x, y, z, w = Rotation.from_matrix(chain[:3, :3]).as_quat()
    return HandMount("panda_hand", tuple(float(v) for v in chain[:3, 3]), (float(w), float(x), float(y), float(z)))


def hand_mount(uid: str) -> HandMount:
    """The hand camera mount of robot ``uid`` (one of the two robots the tasks use)."""
    if uid == "panda_wristcam":
        return HandMount("camera_link", (0.0, 0.0, 0.0), (1.0, 0.0, 0.0, 0.0))  # the packaged mount
    if uid == "panda_stick":
        return wristcam_offset()
    raise ValueError(f"no hand camera mount known for robot {uid!r} (known: panda_wristcam, panda_stick)")


_CLASSES: dict[type, type] = {}


def with_hand_camera(agent_cls: type) -> type:
    """``agent_cls`` with the benchmark's 256x256 ``hand_camera`` (a cached subclass: same uid, URDF,
    controllers and keyframes; only ``_sensor_configs`` differs)."""
    if agent_cls in _CLASSES:
        return _CLASSES[agent_cls]
    mount = hand_mount(agent_cls.uid)

    def _sensor_configs(self):
        import sapien
        from mani_skill.sensors.camera import CameraConfig

        return [
            CameraConfig(
                uid=HAND_CAMERA,
                pose=sapien.Pose(p=list(mount.p), q=list(mount.q)),
                width=WRIST_SIZE,
                height=WRIST_SIZE,
                fov=WRIST_FOV,
                near=0.01,
                far=100,
                mount=self.robot.links_map[mount.link],
            )
        ]

    cls = type(agent_cls.__name__ + "HandCamera", (agent_cls,), {
        "_sensor_configs": property(_sensor_configs),
        "__doc__": f"{agent_cls.__name__} with the benchmark's {WRIST_SIZE}x{WRIST_SIZE} hand camera on {mount.link}.",
    })
    _CLASSES[agent_cls] = cls
    return cls
