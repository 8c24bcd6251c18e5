"""The Gym contract of the subgoal-level env: its action space, its observation space, and the
conversion of an internal observation into one that lies in that space.

Both subgoal-level envs declare these spaces: ours (``wrappers.subgoal_execution.SubgoalExecution``
over ``envs.robomme_env.RoboMMEEnv``) and the official backend (``envs.official.env.OfficialSubgoalEnv``),
so the wrappers above them (``MemoryWrapper``, ``RecentFrames``, ``RecordEpisode``) inherit the same
spaces whichever backend runs. It lives in ``envs`` because both sides import it and ``envs`` may not
import ``wrappers`` (``tests/test_import_direction.py``).

**Action**: a subgoal, ``gymnasium.spaces.Text`` of at most :data:`MAX_SUBGOAL_LENGTH` characters
from :data:`SUBGOAL_CHARSET` (letters, digits, space and the punctuation the composers write: the
``<y, x>`` points, commas, hyphens, apostrophes...). The empty string is an action too: "no
proposal", the robot holds still for one chunk.

**Observation**: a ``Dict`` whose keys are always all present (gymnasium's ``Dict`` space, and its
checker, require every key in every observation):

* ``front_rgb`` / ``wrist_rgb``: ``(256, 256, 3)`` uint8 images. A camera is rendered only where a
  consumer needs it (rendering costs tens of physics steps per frame), so on a step where it was
  not rendered the entry is an all-zero image and ...
* ``front_rendered`` / ``wrist_rendered`` (``Discrete(2)``) say whether the image is real (1) or
  that zero placeholder (0). Read the image through :func:`rendered` (``None`` when not rendered),
  never by testing the pixels: a black frame is a valid render.
* ``joint_state``: the 7 arm joint positions (float32, radians).
* ``step``: live env steps of this episode; ``clock``: the absolute clock, conditioning video
  included (``Discrete(CLOCK_LIMIT)``, plain ``int``).

Inside the stack the low-level env's observations keep ``None`` for an unrendered camera (what the
policies read); only the subgoal-level env's ``reset`` / ``step`` return :func:`subgoal_observation`.
"""

from __future__ import annotations

import string
from collections.abc import Mapping

import numpy as np
from gymnasium import spaces

__all__ = ["CLOCK_LIMIT", "IMAGE_SHAPE", "MAX_SUBGOAL_LENGTH", "SUBGOAL_CHARSET", "rendered",
           "subgoal_action_space", "subgoal_observation", "subgoal_observation_space"]

IMAGE_SHAPE = (256, 256, 3)
"""Both cameras of both backends (the benchmark's 256x256 front and hand cameras)."""

MAX_SUBGOAL_LENGTH = 256
"""The longest subgoal any composer writes is under 80 characters; a VLM answer has room to spare."""

SUBGOAL_CHARSET = string.ascii_letters + string.digits + " <>,.-'\"()[]:;!?/_&+"
"""Every character of the composers' subgoals (templates, rewordings, re-grounded points)."""

CLOCK_LIMIT = 2**31 - 1
"""An upper bound of ``step`` and ``clock`` (a step budget of 1800 plus a video of a few thousand)."""

JOINT_LIMIT = 2 * np.pi
"""A bound of every arm joint of both robots (the Panda's joints stay within about 2.9 rad)."""

_CAMERAS = ("front", "wrist")


def subgoal_action_space() -> spaces.Text:
    return spaces.Text(max_length=MAX_SUBGOAL_LENGTH, min_length=0, charset=SUBGOAL_CHARSET)


def subgoal_observation_space() -> spaces.Dict:
    image = spaces.Box(0, 255, IMAGE_SHAPE, np.uint8)
    return spaces.Dict({
        "front_rgb": image,
        "front_rendered": spaces.Discrete(2),
        "wrist_rgb": spaces.Box(0, 255, IMAGE_SHAPE, np.uint8),
        "wrist_rendered": spaces.Discrete(2),
        "joint_state": spaces.Box(-JOINT_LIMIT, JOINT_LIMIT, (7,), np.float32),
        "step": spaces.Discrete(CLOCK_LIMIT),
        "clock": spaces.Discrete(CLOCK_LIMIT),
    })


def subgoal_observation(raw: Mapping) -> dict:
    """The observation space's view of an internal observation (``None`` for an unrendered camera):
    fresh arrays on every call, so no two observations share a buffer."""
    out: dict = {}
    for cam in _CAMERAS:
        image = raw.get(f"{cam}_rgb")
        out[f"{cam}_rgb"] = np.zeros(IMAGE_SHAPE, np.uint8) if image is None else np.array(image, dtype=np.uint8)
        out[f"{cam}_rendered"] = int(image is not None)
    out["joint_state"] = np.array(raw["joint_state"], dtype=np.float32).reshape(-1)[:7]
    out["step"] = int(raw["step"])
    out["clock"] = int(raw["clock"])
    return out


def rendered(obs: Mapping, camera: str = "front") -> np.ndarray | None:
    """The ``camera`` image of a subgoal-level observation, or None where it was not rendered."""
    if f"{camera}_rendered" not in obs:  # an internal observation: None already marks it
        return obs.get(f"{camera}_rgb")
    return obs[f"{camera}_rgb"] if obs[f"{camera}_rendered"] else None
