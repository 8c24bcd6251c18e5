"""LeRobot π0.5 adapter: the pure mappings, and the glue against a stand-in package.

LeRobot itself cannot be installed in this environment (Python 3.11, torch 2.13 CPU),
so the class is exercised with a tiny fake ``lerobot`` module tree that records what
it receives; the mapping functions need only torch.
"""

from __future__ import annotations

import re
import sys
import types

import numpy as np
import pytest
import torch

from policies.base import PolicyError
from policies.lerobot_policy import (
    DEFAULT_IMAGE_KEYS,
    LEROBOT_INSTALL_HINT,
    LeRobotPI05Policy,
    build_prompt,
    chunk_from_actions,
    image_to_tensor,
    obs_to_batch,
    state_vector,
)

pytestmark = pytest.mark.timeout(30)


def make_obs(wrist=True):
    front = np.zeros((256, 256, 3), np.uint8)
    front[0, 0] = (255, 128, 0)
    return {
        "front_rgb": front,
        "wrist_rgb": np.full((256, 256, 3), 51, np.uint8) if wrist else None,
        "joint_state": np.arange(7, dtype=np.float32) / 10,
        "gripper_state": np.array([0.03, 0.031], np.float32),
        "goal": "pick up the red cube twice.",
        "subgoal": "pick up the red cube at <142, 97> for the first time",
        "step": 48,
    }


# ---------------------------------------------------------------------------- pure functions
def test_image_to_tensor_is_chw_float_0_1():
    t = image_to_tensor(make_obs()["front_rgb"])
    assert t.shape == (3, 256, 256) and t.dtype == torch.float32
    assert t[:, 0, 0].tolist() == pytest.approx([1.0, 128 / 255, 0.0])
    assert float(t.min()) >= 0.0 and float(t.max()) <= 1.0
    with pytest.raises(ValueError, match=r"\(256, 256\)"):
        image_to_tensor(np.zeros((256, 256), np.uint8))


def test_state_vector_is_joints_plus_first_finger():
    s = state_vector(make_obs())
    assert s.shape == (8,) and s.dtype == np.float32
    np.testing.assert_allclose(s, [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.03], rtol=1e-6)
    stick = make_obs()
    stick["gripper_state"] = np.zeros(2, np.float32)
    assert state_vector(stick)[7] == 0.0


def test_build_prompt_joins_goal_and_subgoal():
    assert build_prompt("pick up the cube.", "pick up the red cube at <1, 2>") == \
        "pick up the cube. pick up the red cube at <1, 2>"
    assert build_prompt("pick up the cube", None) == "pick up the cube"
    assert build_prompt("g", "hook the cube at <1, 2> to the target at <3, 4>", "{goal} | {simple_subgoal}") == \
        "g | hook the cube to the target"


def test_obs_to_batch_layout():
    batch = obs_to_batch(make_obs())
    assert set(batch) == {*DEFAULT_IMAGE_KEYS.values(), "observation.state", "task"}
    front = batch["observation.images.image"]
    wrist = batch["observation.images.wrist_image"]
    assert front.shape == (1, 3, 256, 256) and front.dtype == torch.float32
    assert wrist.shape == (1, 3, 256, 256) and torch.allclose(wrist, torch.full_like(wrist, 0.2))
    assert batch["observation.state"].shape == (1, 8)
    assert batch["task"] == ["pick up the red cube twice. pick up the red cube at <142, 97> for the first time"]


def test_obs_to_batch_custom_keys_and_missing_wrist():
    keys = {"front_rgb": "observation.images.base_0_rgb", "wrist_rgb": "observation.images.left_wrist_0_rgb"}
    batch = obs_to_batch(make_obs(wrist=False), image_keys=keys, prompt_template="{subgoal}")
    assert not batch["observation.images.left_wrist_0_rgb"].any()
    assert batch["task"] == ["pick up the red cube at <142, 97> for the first time"]
    with pytest.raises(ValueError, match="depth"):
        obs_to_batch(make_obs(), image_keys={"depth": "observation.images.depth"})


def test_chunk_from_actions_shapes_and_gripper():
    raw = torch.zeros(1, 20, 32)
    raw[0, :, :7] = 0.5
    raw[0, :10, 7] = 0.3
    raw[0, 10:, 7] = -0.7
    chunk = chunk_from_actions(raw, 8)
    assert chunk.shape == (20, 8) and chunk.dtype == np.float32
    assert set(chunk[:10, 7]) == {1.0} and set(chunk[10:, 7]) == {-1.0}
    assert chunk_from_actions(raw, 7).shape == (20, 7)
    assert chunk_from_actions(np.ones(8), 8).shape == (1, 8)
    np.testing.assert_allclose(chunk_from_actions(raw, 8, binarize_gripper=False)[0, 7], 0.3)


def test_chunk_from_actions_deltas_become_absolute():
    state = state_vector(make_obs())
    deltas = np.zeros((4, 8), np.float32)
    deltas[:, :7] = 0.01
    deltas[:, 7] = 1.0
    chunk = chunk_from_actions(deltas, 8, state=state, joint_deltas=True)
    np.testing.assert_allclose(chunk[:, :7], np.tile(state[:7] + 0.01, (4, 1)), rtol=1e-6)
    assert np.all(chunk[:, 7] == 1.0)  # gripper stays absolute
    with pytest.raises(ValueError, match="state"):
        chunk_from_actions(deltas, 8, joint_deltas=True)


@pytest.mark.parametrize("shape", [(2, 20, 8), (20, 6), (0, 8)])
def test_chunk_from_actions_names_bad_shapes(shape):
    with pytest.raises(ValueError, match=re.escape(str(shape))):
        chunk_from_actions(np.zeros(shape, np.float32), 8)


def test_chunk_from_actions_rejects_nan():
    bad = np.zeros((3, 8), np.float32)
    bad[1, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        chunk_from_actions(bad, 8)


# ---------------------------------------------------------------------------- the policy class
def test_missing_checkpoint_path_is_clear(tmp_path):
    missing = tmp_path / "no_such_ckpt"
    with pytest.raises(FileNotFoundError, match="no_such_ckpt"):
        LeRobotPI05Policy(missing)


def test_missing_lerobot_names_install_command(tmp_path, monkeypatch):
    # Make sure no real or fake lerobot is importable.
    for name in [m for m in sys.modules if m == "lerobot" or m.startswith("lerobot.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "lerobot", None)
    with pytest.raises(ImportError) as err:
        LeRobotPI05Policy(tmp_path)
    assert "pip install 'lerobot>=0.4'" in str(err.value)
    assert "Python >= 3.12" in str(err.value)
    assert "pip install 'lerobot>=0.4'" in LEROBOT_INSTALL_HINT


class _FakePI05:
    """Records the processed batch; answers a (1, 20, 32) chunk of known values."""

    instances: list["_FakePI05"] = []

    def __init__(self, path):
        self.path = path
        self.config = types.SimpleNamespace(
            input_features={"observation.images.image": None, "observation.images.wrist_image": None,
                            "observation.state": None}
        )
        self.device = None
        self.resets = 0
        self.batches = []
        _FakePI05.instances.append(self)

    @classmethod
    def from_pretrained(cls, path):
        return cls(path)

    def to(self, device):
        self.device = device
        return self

    def eval(self):
        return self

    def reset(self):
        self.resets += 1

    def predict_action_chunk(self, batch):
        self.batches.append(batch)
        out = torch.zeros(1, 20, 32)
        out[0, :, :7] = batch["observation.state"][0, :7] + 0.25
        out[0, :, 7] = -0.5
        return out


def _install_fake_lerobot(monkeypatch, postprocess=lambda a: a):
    calls = {}

    def make_pre_post_processors(config, pretrained_path=None, preprocessor_overrides=None):
        calls["pretrained_path"] = pretrained_path
        calls["overrides"] = preprocessor_overrides

        def pre(batch):
            return {**batch, "preprocessed": True}

        return pre, postprocess

    modules = {
        "lerobot": types.ModuleType("lerobot"),
        "lerobot.policies": types.ModuleType("lerobot.policies"),
        "lerobot.policies.pi05": types.ModuleType("lerobot.policies.pi05"),
        "lerobot.policies.pi05.modeling_pi05": types.ModuleType("lerobot.policies.pi05.modeling_pi05"),
        "lerobot.policies.factory": types.ModuleType("lerobot.policies.factory"),
    }
    modules["lerobot.policies.pi05.modeling_pi05"].PI05Policy = _FakePI05
    modules["lerobot.policies.factory"].make_pre_post_processors = make_pre_post_processors
    for name, module in modules.items():
        monkeypatch.setitem(sys.modules, name, module)
    return calls


def test_policy_glue_with_stand_in_lerobot(tmp_path, monkeypatch):
    calls = _install_fake_lerobot(monkeypatch)
    policy = LeRobotPI05Policy(tmp_path, device="cpu")
    model = _FakePI05.instances[-1]
    assert model.device == "cpu" and calls["pretrained_path"] == str(tmp_path)
    assert calls["overrides"] == {"device_processor": {"device": "cpu"}}

    policy.reset(seed=5)
    assert model.resets == 1
    obs = make_obs()
    chunk = policy.infer(obs)
    assert chunk.shape == (20, 8) and chunk.dtype == np.float32
    np.testing.assert_allclose(chunk[0, :7], obs["joint_state"] + 0.25, rtol=1e-6)
    assert np.all(chunk[:, 7] == -1.0)
    seen = model.batches[-1]
    assert seen["preprocessed"] is True
    assert seen["task"][0].endswith("at <142, 97> for the first time")
    assert seen["observation.images.image"].shape == (1, 3, 256, 256)


def test_policy_rejects_unknown_feature_keys(tmp_path, monkeypatch):
    _install_fake_lerobot(monkeypatch)
    with pytest.raises(ValueError, match="base_0_rgb"):
        LeRobotPI05Policy(tmp_path, image_keys={"front_rgb": "observation.images.base_0_rgb"})


def test_policy_errors_become_policy_error(tmp_path, monkeypatch):
    def broken_post(actions):
        raise RuntimeError("unnormalizer stats missing")

    _install_fake_lerobot(monkeypatch, postprocess=broken_post)
    policy = LeRobotPI05Policy(tmp_path)
    policy.reset(seed=0)
    with pytest.raises(PolicyError, match="unnormalizer stats missing") as err:
        policy.infer(make_obs())
    assert str(tmp_path) in str(err.value)
