"""π0.5 in-process through LeRobot's ``PI05Policy`` (optional).

LeRobot cannot live in this project's main environment: lerobot 0.5–0.6 need
Python >= 3.12, numpy >= 2 and torch < 2.12, and 0.4.x needs torch < 2.11 (and pulls a
CUDA torch), while this stack is Python 3.11 + torch 2.13 CPU + numpy < 2. Use it from
a separate environment, e.g.::

    uv venv -p 3.12 .venv-lerobot && . .venv-lerobot/bin/activate
    pip install 'lerobot>=0.4' && pip install -e . --no-deps

The package is imported lazily, inside :class:`LeRobotPI05Policy`, so importing this
module never needs it. Everything that does not need LeRobot, the observation→batch
and action→chunk mappings, is a pure function here and is tested on its own.

Batch layout (LeRobot conventions, batch dimension 1):

    observation.images.<camera>  (1, 3, H, W) float32 in [0, 1]
    observation.state            (1, 8) float32: 7 joints + first finger width
    task                         [prompt string]: the goal plus the grounded subgoal

The camera key names must match the checkpoint's ``input_features``; the defaults are
those of LeRobot's RoboMME dataset/env (``image`` = front, ``wrist_image`` = wrist).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from policies.base import Policy, PolicyError
from subgoals.grammar import ungrounded

log = logging.getLogger(__name__)

__all__ = [
    "DEFAULT_IMAGE_KEYS",
    "DEFAULT_PROMPT_TEMPLATE",
    "DEFAULT_STATE_KEY",
    "LEROBOT_INSTALL_HINT",
    "LeRobotPI05Policy",
    "build_prompt",
    "chunk_from_actions",
    "image_to_tensor",
    "obs_to_batch",
    "state_vector",
]

LEROBOT_INSTALL_HINT = (
    "LeRobot is not installed in this environment. LeRobotPI05Policy needs `pip install 'lerobot>=0.4'` "
    "in a separate environment with Python >= 3.12 (lerobot 0.5+ also needs numpy >= 2 and torch < 2.12; "
    "0.4.x needs torch < 2.11), then `pip install -e . --no-deps` of this project there. "
    "The default Python 3.11 / torch 2.13 CPU environment cannot hold it; use OpenPIPolicy or the scripted "
    "policy here instead."
)

DEFAULT_IMAGE_KEYS: dict[str, str] = {
    "front_rgb": "observation.images.image",
    "wrist_rgb": "observation.images.wrist_image",
}
DEFAULT_STATE_KEY = "observation.state"
# Must match how the checkpoint was fine-tuned; {simple_subgoal} is also available.
DEFAULT_PROMPT_TEMPLATE = "{goal}. {subgoal}"

# =========================================================================== pure mappings
def build_prompt(goal: str, subgoal: str | None, template: str = DEFAULT_PROMPT_TEMPLATE) -> str:
    """The language input of the policy: the task goal with the (grounded) subgoal.

    With no subgoal the prompt is the bare goal. Trailing periods of the goal are
    folded so the default template does not produce "..".
    """
    goal = (goal or "").strip()
    subgoal = (subgoal or "").strip()
    if not subgoal:
        return goal
    simple = ungrounded(subgoal)
    return template.format(goal=goal.rstrip(". "), subgoal=subgoal, simple_subgoal=simple).strip()


def image_to_tensor(image: np.ndarray):
    """(H, W, 3) uint8 → torch (3, H, W) float32 in [0, 1]."""
    import torch

    arr = np.asarray(image)
    if arr.ndim != 3 or arr.shape[-1] != 3:
        raise ValueError(f"expected an (H, W, 3) image, got shape {arr.shape}")
    if arr.dtype == np.uint8:
        arr = arr.astype(np.float32) / 255.0
    else:
        arr = arr.astype(np.float32)
        if arr.size and (arr.min() < 0.0 or arr.max() > 1.0):
            raise ValueError(f"float image values must lie in [0, 1], got [{arr.min():.3g}, {arr.max():.3g}]")
    return torch.from_numpy(np.ascontiguousarray(arr.transpose(2, 0, 1)))


def state_vector(obs: Mapping[str, Any]) -> np.ndarray:
    """(8,) float32: 7 joints + the first finger width (zero for the stick robot)."""
    joints = np.asarray(obs["joint_state"], dtype=np.float32).reshape(-1)
    if joints.shape != (7,):
        raise ValueError(f"joint_state must have 7 entries, got shape {joints.shape}")
    fingers = obs.get("gripper_state")
    fingers = np.zeros(1, np.float32) if fingers is None else np.asarray(fingers, dtype=np.float32).reshape(-1)
    first = fingers[:1] if fingers.size else np.zeros(1, np.float32)
    return np.concatenate([joints, first]).astype(np.float32)


def obs_to_batch(
    obs: Mapping[str, Any],
    image_keys: Mapping[str, str] | None = None,
    state_key: str = DEFAULT_STATE_KEY,
    prompt_template: str = DEFAULT_PROMPT_TEMPLATE,
) -> dict[str, Any]:
    """Our observation dict → an unprocessed LeRobot batch of size 1.

    ``image_keys`` maps our camera names (``front_rgb``, ``wrist_rgb``) to LeRobot
    feature names. A camera missing from ``obs`` (the stick robot has no wrist view)
    becomes a black image of the front camera's size, as RoboMME does.
    """
    import torch

    image_keys = dict(DEFAULT_IMAGE_KEYS if image_keys is None else image_keys)
    if obs.get("front_rgb") is None:
        raise ValueError(f"observation has no front_rgb; keys: {sorted(obs)}")
    front = np.asarray(obs["front_rgb"])
    batch: dict[str, Any] = {}
    for ours, theirs in image_keys.items():
        if ours not in ("front_rgb", "wrist_rgb"):
            raise ValueError(f"unknown camera {ours!r} in image_keys; use 'front_rgb' or 'wrist_rgb'")
        image = obs.get(ours)
        if image is None:
            image = np.zeros_like(front)
        batch[theirs] = image_to_tensor(image).unsqueeze(0)
    batch[state_key] = torch.from_numpy(state_vector(obs)).unsqueeze(0)
    batch["task"] = [build_prompt(obs.get("goal", ""), obs.get("subgoal"), prompt_template)]
    return batch


def chunk_from_actions(
    actions: Any,
    action_dim: int = 8,
    state: np.ndarray | None = None,
    joint_deltas: bool = False,
    binarize_gripper: bool = True,
) -> np.ndarray:
    """Model output → our action chunk ``(T, action_dim)`` float32 of absolute targets.

    ``actions`` may be a torch tensor or array of shape (1, T, D'), (T, D') or (D',)
    with D' >= ``action_dim`` (padding columns are dropped; for the stick robot,
    ``action_dim=7``, the gripper column is dropped too). With ``joint_deltas`` the 7
    joint columns are offsets from ``state[:7]`` and are turned into absolute targets;
    the gripper is always absolute. ``binarize_gripper`` maps the gripper column to
    +1 (open, value >= 0) or -1 (closed).
    """
    if hasattr(actions, "detach"):
        actions = actions.detach().to("cpu").float().numpy()
    arr = np.asarray(actions, dtype=np.float32)
    original = arr.shape
    if arr.ndim == 3:
        if arr.shape[0] != 1:
            raise ValueError(f"expected a batch of one action chunk, got shape {original}")
        arr = arr[0]
    elif arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < action_dim:
        raise ValueError(f"cannot read a (T, {action_dim}) action chunk from shape {original}")
    chunk = arr[:, :action_dim].copy()
    if joint_deltas:
        if state is None:
            raise ValueError("joint_deltas=True needs the current state to make absolute targets")
        chunk[:, :7] += np.asarray(state, dtype=np.float32).reshape(-1)[:7]
    if binarize_gripper and action_dim > 7:
        chunk[:, 7] = np.where(chunk[:, 7] >= 0.0, 1.0, -1.0)
    if not np.all(np.isfinite(chunk)):
        raise ValueError(f"action chunk of shape {original} contains NaN or inf")
    return chunk


# =========================================================================== the policy
def _import_lerobot() -> tuple[Any, Any]:
    """Return (PI05Policy, make_pre_post_processors) or raise an ImportError that says
    what to install and where."""
    try:
        from lerobot.policies.factory import make_pre_post_processors
        from lerobot.policies.pi05.modeling_pi05 import PI05Policy
    except ImportError as exc:
        raise ImportError(f"{LEROBOT_INSTALL_HINT} (import failed: {exc})") from exc
    return PI05Policy, make_pre_post_processors


class LeRobotPI05Policy(Policy):
    """π0.5 run in-process through LeRobot (``PI05Policy`` + its processor pipelines).

    Args:
        pretrained_path: local directory of a LeRobot PI05 checkpoint (``config.json``,
            ``model.safetensors`` and the ``policy_*processor*.json`` files).
        device: torch device for the model and the preprocessor.
        action_dim: 8 (gripper robot) or 7 (stick robot).
        image_keys: our camera name → checkpoint image feature; see :func:`obs_to_batch`.
        prompt_template: how goal and subgoal are joined into the ``task`` string.
        joint_deltas: set when the checkpoint predicts joint offsets (RoboMME's openpi
            configs turn deltas back into absolute targets on the server; a LeRobot
            checkpoint may or may not include that step in its postprocessor).

    Unlike the websocket server, the flow-matching noise is drawn in this process, so
    ``reset(seed)`` seeds torch and matched episodes get matched noise.
    """

    def __init__(
        self,
        pretrained_path: str | Path,
        *,
        device: str = "cpu",
        action_dim: int = 8,
        image_keys: Mapping[str, str] | None = None,
        state_key: str = DEFAULT_STATE_KEY,
        prompt_template: str = DEFAULT_PROMPT_TEMPLATE,
        joint_deltas: bool = False,
        binarize_gripper: bool = True,
    ) -> None:
        if action_dim not in (7, 8):
            raise ValueError(f"LeRobotPI05Policy: action_dim must be 7 or 8, got {action_dim}")
        path = Path(pretrained_path).expanduser()
        if not path.is_dir():
            raise FileNotFoundError(
                f"LeRobotPI05Policy: checkpoint directory {str(path)!r} does not exist; pass the local path of a "
                "LeRobot PI05 checkpoint (config.json + model.safetensors + processor files). Model hubs are not used."
            )
        PI05Policy, make_pre_post_processors = _import_lerobot()
        self.path = path
        self.device = device
        self.action_dim = action_dim
        self.image_keys = dict(DEFAULT_IMAGE_KEYS if image_keys is None else image_keys)
        self.state_key = state_key
        self.prompt_template = prompt_template
        self.joint_deltas = joint_deltas
        self.binarize_gripper = binarize_gripper
        self.seed: int | None = None

        self.model = PI05Policy.from_pretrained(str(path))
        self.model.to(device)
        self.model.eval()
        self._check_features()
        self.preprocessor, self.postprocessor = make_pre_post_processors(
            self.model.config,
            pretrained_path=str(path),
            preprocessor_overrides={"device_processor": {"device": str(device)}},
        )
        log.info("loaded LeRobot PI05 from %s on %s", path, device)

    def __repr__(self) -> str:
        return f"LeRobotPI05Policy({str(self.path)!r}, device={self.device!r}, action_dim={self.action_dim})"

    def _check_features(self) -> None:
        features = getattr(self.model.config, "input_features", None)
        if not features:
            return
        wanted = [*self.image_keys.values(), self.state_key]
        unknown = [k for k in wanted if k not in features]
        if unknown:
            raise ValueError(
                f"LeRobotPI05Policy: checkpoint {str(self.path)!r} has no input feature(s) {unknown}; it expects "
                f"{sorted(features)}. Pass image_keys=/state_key= to match it."
            )

    def reset(self, seed: int) -> None:
        import torch

        self.seed = int(seed)
        torch.manual_seed(self.seed)
        self.model.reset()
        for pipeline in (self.preprocessor, self.postprocessor):
            if hasattr(pipeline, "reset"):
                pipeline.reset()

    def infer(self, obs: dict) -> np.ndarray:
        import torch

        batch = obs_to_batch(obs, self.image_keys, self.state_key, self.prompt_template)
        try:
            processed = self.preprocessor(batch)
            with torch.inference_mode():
                actions = self.model.predict_action_chunk(processed)
            actions = self.postprocessor(actions)
        except Exception as exc:
            raise PolicyError(
                f"LeRobot PI05 at {str(self.path)!r} failed at step {obs.get('step')}: {exc!r}"
            ) from exc
        try:
            return chunk_from_actions(
                actions,
                self.action_dim,
                state=state_vector(obs),
                joint_deltas=self.joint_deltas,
                binarize_gripper=self.binarize_gripper,
            )
        except ValueError as exc:
            raise PolicyError(f"LeRobot PI05 at {str(self.path)!r}: {exc}") from exc
