"""Run-time bridges that let the official RoboMME envs run on PyPI ManiSkill 3.0.1 + gymnasium 1.x.

The benchmark pins a ManiSkill fork (``YinpeiDai/ManiSkill@07be6fb``) and gymnasium 0.29.1, neither
of which installs here. Three upstream differences stand between its code and the registry
packages; each bridge below names the behaviour it bridges, checks whether it is needed, and does
nothing when it is not (so a user on the fork gets the benchmark unchanged). All are idempotent and
only ever applied by :func:`apply_bridges`, called when an official env is built: our own envs'
processes never see them.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field

import gymnasium as gym
import numpy as np

# the fork mounts a 256x256 hand camera on the stick robot; its exact pose is not published, so we
# use panda_wristcam's camera_link offset from panda_hand (realsense_joint then camera_link_joint
# of ManiSkill's panda_v3.urdf)
STICK_CAMERA_SIZE = 256


@dataclass
class BridgeReport:
    """Which bridges were applied in this process (empty lists: the installed packages needed none)."""

    applied: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


_REPORT = BridgeReport()


def _forward_public(self, name: str):
    """gymnasium 0.29 semantics: a public attribute missing on the wrapper resolves on the inner env."""
    if name.startswith("_"):
        raise AttributeError(f"accessing private attribute '{name}' is prohibited")
    inner = self.__dict__.get("env")
    while inner is not None:
        try:
            return getattr(inner, name)
        except AttributeError:
            inner = inner.__dict__.get("env") if isinstance(inner, gym.Wrapper) else None
    raise AttributeError(f"{type(self).__name__!r} (and the envs it wraps) have no attribute {name!r}")


def bridge_wrapper_forwarding(report: BridgeReport = _REPORT) -> None:
    """gymnasium >= 1.0 removed ``gym.Wrapper.__getattr__`` forwarding (0.29 forwarded with a
    deprecation warning). The benchmark's code (written for gymnasium 0.29.1) reads inner-env
    attributes through wrappers everywhere (``current_task_demonstration``, ``task_list``,
    ``agent``, ``evaluate``; ``task_goal`` reads ``difficulty`` through ManiSkill's
    ``TimeLimitWrapper``). Bridge: give ``gym.Wrapper`` the 0.29 forwarding for public names, only
    when it has none. This is process-wide, so it is applied only in a process that builds an
    official env; our own wrappers never read a missing attribute, so they behave the same."""
    if "__getattr__" in vars(gym.Wrapper):
        report.skipped.append("wrapper-forwarding (gymnasium %s forwards already)" % gym.__version__)
        return
    gym.Wrapper.__getattr__ = _forward_public
    report.applied.append("wrapper-forwarding (gymnasium %s)" % gym.__version__)


def bridge_stick_planner_init(report: BridgeReport = _REPORT) -> None:
    """ManiSkill 3.0.1 bug: ``PandaStickMotionPlanningSolver.__init__`` passes
    ``visualize_target_grasp_pose`` positionally to ``BaseMotionPlanningSolver.__init__``, which
    does not take it (one argument too many: ``TypeError``), so the stick planner of PatternLock and
    RouteStick cannot be built. Bridge: an ``__init__`` that drops that argument, only when the base
    signature lacks it."""
    from mani_skill.examples.motionplanning.base_motionplanner.motionplanner import BaseMotionPlanningSolver
    from mani_skill.examples.motionplanning.panda.motionplanner_stick import PandaStickMotionPlanningSolver

    if "visualize_target_grasp_pose" in inspect.signature(BaseMotionPlanningSolver.__init__).parameters:
        report.skipped.append("stick-planner-init (base solver takes visualize_target_grasp_pose)")
        return
    if getattr(PandaStickMotionPlanningSolver.__init__, "_robomem_bridge", False):
        return

    def __init__(self, env, debug=False, vis=True, base_pose=None, visualize_target_grasp_pose=True,
                 print_env_info=True, joint_vel_limits=0.9, joint_acc_limits=0.9):
        BaseMotionPlanningSolver.__init__(self, env, debug, vis, base_pose, print_env_info,
                                          joint_vel_limits, joint_acc_limits)

    __init__._robomem_bridge = True
    PandaStickMotionPlanningSolver.__init__ = __init__
    report.applied.append("stick-planner-init (mani_skill 3.0.1 positional-argument bug)")


def stick_hand_camera_pose():
    """``camera_link`` in ``panda_hand``'s frame on panda_wristcam (panda_v3.urdf: realsense_joint
    xyz 0.035 0 0.036 rpy 0 -1.5707 3.1415, then camera_link_joint xyz 0 0.02 0.0115)."""
    import sapien
    from transforms3d.euler import euler2quat

    base = sapien.Pose(p=[0.035, 0.0, 0.036], q=euler2quat(0.0, -1.5707, 3.1415))
    return base * sapien.Pose(p=[0.0, 0.02, 0.0115])


def bridge_stick_hand_camera(report: BridgeReport = _REPORT) -> None:
    """ManiSkill 3.0.1's ``panda_stick`` has no sensor, but the benchmark's wrappers always read
    ``sensor_data["hand_camera"]`` (the fork mounts a 256x256 hand camera on the stick robot).
    Bridge: a ``hand_camera`` on ``panda_hand`` at panda_wristcam's camera offset, only when the
    installed ``PandaStick`` declares no camera."""
    from mani_skill.agents.robots.panda.panda_stick import PandaStick
    from mani_skill.sensors.camera import CameraConfig

    if getattr(PandaStick, "_robomem_bridge", False):
        return
    if any(getattr(c, "uid", None) == "hand_camera" for c in _class_sensor_configs(PandaStick)):
        report.skipped.append("stick-hand-camera (panda_stick has a hand_camera)")
        return

    def _sensor_configs(self):
        return [CameraConfig(uid="hand_camera", pose=stick_hand_camera_pose(), width=STICK_CAMERA_SIZE,
                             height=STICK_CAMERA_SIZE, fov=np.pi / 2, near=0.01, far=100,
                             mount=self.robot.links_map["panda_hand"])]

    PandaStick._sensor_configs = property(_sensor_configs)
    PandaStick._robomem_bridge = True
    report.applied.append("stick-hand-camera (panda_stick has no camera in mani_skill 3.0.1)")


def _class_sensor_configs(cls) -> list:
    """The sensor configs a class declares without building a robot (only static lists are visible;
    a property that needs ``self.robot`` counts as 'declares something' and is left alone)."""
    prop = inspect.getattr_static(cls, "_sensor_configs")
    from mani_skill.agents.base_agent import BaseAgent

    if prop is inspect.getattr_static(BaseAgent, "_sensor_configs"):
        return []
    return [type("Declared", (), {"uid": "hand_camera"})()]


def apply_bridges() -> BridgeReport:
    """Apply every needed bridge once per process; returns what was applied."""
    bridge_wrapper_forwarding()
    bridge_stick_planner_init()
    bridge_stick_hand_camera()
    return _REPORT
