"""The one frame type of the loop: what an observer may see of one env step.

A :class:`Frame` carries exactly what a real robot would have: the front RGB image, the
joint state, the finger positions, the action just executed, the step counter and whether the frame comes
from the conditioning video or from live interaction. Keeping the input this narrow is
what makes the memory honest: nothing the simulator knows but a camera would not can
reach a tool through this door.

Every producer and consumer passes this one type: the subgoal-level envs put the env steps
of a subgoal in ``info["frames"]`` as Frames (``wrappers.subgoal_execution`` on our
backend, ``envs.official.env`` on the official one), and the memory observes those very
objects (``memory.contract.frames`` is its door: the same class, re-exported). It lives here, in the
bottom layer next to the subgoal language, because it is the memory's input contract
and both sides must import it: ``envs`` may not import ``memory`` or ``wrappers``, and
``memory`` may not import ``envs`` (``tests/test_import_direction.py``,
``tests/test_memory_isolation.py``). It needs numpy only.

Frames compare by value (step, source and the arrays' contents), so two rollouts of the
same seed and actions give equal ``info["frames"]`` (gymnasium's determinism check); the
hash reads only step and source, consistent with that equality.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

__all__ = ["Frame", "FrameSource", "SOURCES"]

FrameSource = Literal["video", "live"]
SOURCES: tuple[str, ...] = ("video", "live")


def _frozen_view(array: np.ndarray | None, name: str) -> np.ndarray | None:
    """A read-only view, so that no tool can edit a frame another tool will see (the caller's array is untouched)."""
    if array is None:
        return None
    if type(array) is not np.ndarray:
        # a list, a tensor or an ndarray subclass: keep only the numbers, as a plain ndarray
        array = np.asarray(array)
        if type(array) is not np.ndarray:
            array = np.array(array, subok=False)
        if array.dtype == object:
            raise TypeError(f"Frame.{name} must be a numeric array, got {type(array).__name__}")
    view = array.view(np.ndarray)
    view.flags.writeable = False
    return view


def _same(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    if a is None or b is None:
        return a is b
    return a.shape == b.shape and a.dtype == b.dtype and bool(np.array_equal(a, b))


@dataclass(frozen=True, eq=False)
class Frame:
    """One observation at one environment step.

    Attributes:
        step: the environment's step counter. It keeps counting through the conditioning
            video, so steps increase over a whole episode and ``snapshot(t)`` is unambiguous.
        rgb: front camera image, ``(H, W, 3)`` uint8, or ``None`` on steps that were not rendered.
        joint_state: robot joint positions, or ``None``.
        action: the action executed just before this frame, or ``None``.
        gripper: the two finger positions (m, each from closed at 0), or ``None``: what the hand's
            own encoders log, so a closed command can be told from fingers held apart by an object.
        source: ``"video"`` for conditioning-video frames, ``"live"`` for frames the robot acts in.
    """

    step: int
    rgb: np.ndarray | None = None
    joint_state: np.ndarray | None = None
    action: np.ndarray | None = None
    source: FrameSource = "live"
    gripper: np.ndarray | None = None

    def __post_init__(self) -> None:
        if isinstance(self.step, bool) or not isinstance(self.step, (int, np.integer)):
            raise TypeError(f"Frame.step must be an int, got {self.step!r}")
        object.__setattr__(self, "step", int(self.step))
        if self.source not in SOURCES:
            raise ValueError(f"Frame.source must be one of {SOURCES}, got {self.source!r}")
        rgb = _frozen_view(self.rgb, "rgb")
        if rgb is not None and (rgb.ndim != 3 or rgb.shape[2] != 3 or rgb.dtype != np.uint8):
            raise ValueError(f"Frame.rgb must be an (H, W, 3) uint8 array, got shape {rgb.shape} dtype {rgb.dtype}")
        object.__setattr__(self, "rgb", rgb)
        object.__setattr__(self, "joint_state", _frozen_view(self.joint_state, "joint_state"))
        object.__setattr__(self, "action", _frozen_view(self.action, "action"))
        object.__setattr__(self, "gripper", _frozen_view(self.gripper, "gripper"))

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return (self.step == other.step and self.source == other.source
                and all(_same(getattr(self, n), getattr(other, n)) for n in ("rgb", "joint_state", "action", "gripper")))

    def __hash__(self) -> int:
        return hash((self.step, self.source))

    @property
    def is_video(self) -> bool:
        return self.source == "video"

    def describe(self) -> dict:
        """A JSON-friendly summary (shapes, not pixels) for logs and traces."""
        return {
            "step": self.step,
            "source": self.source,
            "rgb": None if self.rgb is None else list(self.rgb.shape),
            "joint_state": None if self.joint_state is None else list(self.joint_state.shape),
            "action": None if self.action is None else list(self.action.shape),
            "gripper": None if self.gripper is None else list(self.gripper.shape),
        }
