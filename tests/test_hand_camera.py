"""The benchmark's 256x256 hand camera on both robots (envs/core/hand_camera.py), rendered for real.

The stick robot used to have no camera, so PatternLock and RouteStick sent a black wrist frame; the
gripper robot's was 128x128 where the benchmark's is 256x256.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import envs
from envs.core.hand_camera import HAND_CAMERA, WRIST_SIZE, hand_mount, with_hand_camera, wristcam_offset
from envs.episodes import episode_spec

pytestmark = pytest.mark.timeout(120)


def test_stick_mount_is_the_wristcam_offset_looking_down_the_hand():
    mount = wristcam_offset()
    assert mount.link == "panda_hand"
    np.testing.assert_allclose(mount.p, (0.0465, -0.02, 0.036), atol=1e-3)
    w, x, y, z = mount.q
    forward = Rotation.from_quat([x, y, z, w]).apply([1.0, 0.0, 0.0])  # a SAPIEN camera looks along +x
    np.testing.assert_allclose(forward, (0.0, 0.0, 1.0), atol=1e-3)  # the hand's +z: towards the tip
    assert hand_mount("panda_stick") == mount
    assert hand_mount("panda_wristcam").link == "camera_link"


def test_unknown_robot_is_named():
    with pytest.raises(ValueError, match="'ur5'"):
        hand_mount("ur5")


def test_subclass_changes_only_the_camera():
    from mani_skill.agents.robots.panda.panda_stick import PandaStick

    cls = with_hand_camera(PandaStick)
    assert with_hand_camera(PandaStick) is cls  # cached: the render LOD cache keys on the class
    assert cls.uid == PandaStick.uid and cls.urdf_path == PandaStick.urdf_path
    assert set(vars(cls)) <= {"_sensor_configs", "__doc__", "__module__", "__dict__", "__weakref__"}


@pytest.mark.parametrize("task", ["RouteStick", "PickXtimes"])
def test_hand_camera_frame_is_256_and_not_black(task):
    env = envs.task_class(task)()
    try:
        env.reset(options={"episode": episode_spec(task, 0)})
        assert HAND_CAMERA in env._sensors
        wrist = env.render_wrist()
        front = env.render_front()["rgb"]
        assert wrist.shape == (WRIST_SIZE, WRIST_SIZE, 3) == (256, 256, 3) and wrist.dtype == np.uint8
        # a real view of the table: bright and textured, not a black (or flat) frame
        assert wrist.mean() > 40 and wrist.std() > 15, (wrist.mean(), wrist.std())
        assert np.abs(wrist.astype(int) - front.astype(int)).mean() > 20  # its own view, not the front one
        # it moves with the hand
        q = env.qpos()
        action = np.zeros(env.action_space.shape[0], np.float32)
        action[:7] = q[:7]
        action[0] += 0.4
        for _ in range(20):
            env.step(action)
        assert np.abs(env.render_wrist().astype(int) - wrist.astype(int)).mean() > 5
    finally:
        env.close()
