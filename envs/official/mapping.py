"""Pure mappings between the official envs' formats and this project's subgoal-level interface.

Nothing here imports ``robomme`` or touches a simulator, so the default test suite checks every
mapping on a recorded fixture (``tests/fixtures/official/``) without the package.

The official multi_choice action is ``{"choice": <option label>, "point": [y, x]}``; its subgoal
texts carry the point as ``<y, x>`` on the 256x256 front image (``'pick up the container at
<116, 156> that hides the green cube'``). Its observations are dicts of lists, one entry per env
step since the last call; ``reset()`` returns the conditioning video with the current frame last.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from subgoals.grammar import Point, points_in, replace_point, ungrounded, without_ordinals

STATUSES = ("ongoing", "success", "fail", "timeout", "error")


@dataclass(frozen=True)
class Command:
    """One multi_choice action: the option label and the ``[y, x]`` point (None: the option takes none)."""

    choice: str
    point: tuple[int, int] | None

    def to_action(self) -> dict:
        return {"choice": self.choice, "point": None if self.point is None else list(self.point)}


def subgoal_point(text: str) -> tuple[int, int] | None:
    """The first ``<y, x>`` of a subgoal text, or None."""
    pts = points_in(text)
    return pts[0].as_tuple() if pts else None


def with_point(text: str, yx: tuple[int, int]) -> str:
    """``text`` with its first ``<y, x>`` replaced by ``yx``; ValueError if it has none."""
    if not points_in(text):
        raise ValueError(f"subgoal {text!r} has no <y, x> point to replace")
    return replace_point(text, 0, Point(int(yx[0]), int(yx[1])))


def strip_points(text: str) -> str:
    """The subgoal's words without its points (``at <y, x>`` dropped), lower case, single spaces."""
    return " ".join(ungrounded(text).lower().split())


def plan_phrase(text: str) -> str:
    """A subgoal as the plan's phrase book keys it: no points, no position words, lower case."""
    return strip_points(without_ordinals(text.replace("<>", "<0, 0>")))


def option_label(text: str, options: Sequence[Mapping], oracle_text: str | None = None,
                 oracle_label: str | None = None, phrases: Mapping[str, str] | None = None) -> str | None:
    """The option label that executes ``text``, or None when no option matches.

    In order: the oracle's own label when ``text`` is the oracle's subgoal up to its point (the
    memory re-grounded it, or the history-blind composer drew another object); an option whose
    action text is the whole subgoal or its longest prefix; the option of a step of the task's plan
    that ``text`` words the same up to points and position words (``phrases``: :func:`plan_phrase`
    of each step's subgoal -> its option action; the benchmark's own wording of each option, so
    "pick up the red cube at <78, 98> for the third time" is a pick while the oracle presses); the
    oracle's label when ``text`` starts with the oracle's verb (its first two words: "pick up",
    "drop the", "press the").
    """
    words = strip_points(text)
    if not words:
        return None
    if oracle_text is not None and oracle_label and words == strip_points(oracle_text):
        return oracle_label
    best, best_len = None, 0
    for opt in options:
        action = " ".join(str(opt.get("action", "")).lower().split())
        if action and (words == action or words.startswith(action + " ")) and len(action) > best_len:
            best, best_len = opt.get("label"), len(action)
    if best is not None:
        return best
    action = (phrases or {}).get(plan_phrase(text))
    if action is not None:
        label = next((o.get("label") for o in options if o.get("action") == action), None)
        if label is not None:
            return label
    if oracle_text is not None and oracle_label and words.split()[:2] == strip_points(oracle_text).split()[:2]:
        return oracle_label
    return None


def command_for(text: str, options: Sequence[Mapping], oracle_text: str | None = None,
                oracle_label: str | None = None, phrases: Mapping[str, str] | None = None) -> Command | None:
    """The multi_choice command that executes subgoal ``text`` (None: no option matches it)."""
    label = option_label(text, options, oracle_text, oracle_label, phrases)
    return None if label is None else Command(label, subgoal_point(text))


def status_of(info: Mapping | None) -> str:
    """The episode status of an official info dict (``error`` when the wrapper caught a crash)."""
    s = str((info or {}).get("status", "error"))
    if s not in STATUSES:
        raise ValueError(f"unknown official status {s!r} (known: {', '.join(STATUSES)})")
    return s


def error_text(info: Mapping | None) -> str:
    """Why an official step ended in ``error``: the wrapper's ``error_message`` when it gave one, else
    a sentence saying it gave none and what the info held (never an empty reason)."""
    info = info or {}
    msg = info.get("error_message") or info.get("error")
    if msg:
        return str(msg)
    return (f"the official env reported status {info.get('status', '<missing>')!r} without an error_message "
            f"(info keys: {', '.join(sorted(map(str, info))) or 'none'})")


def elapsed_steps(info: Mapping) -> int:
    """``info["elapsed_steps"]`` (a 1-element tensor or array in the official envs) as an int."""
    v = info.get("elapsed_steps", 0)
    return int(np.asarray(v.cpu() if hasattr(v, "cpu") else v).reshape(-1)[-1])


def goal_texts(info: Mapping) -> list[str]:
    """The task goal paraphrases (``info["task_goal"]`` is a list of 1-3 strings, or one string)."""
    g = info.get("task_goal")
    if isinstance(g, str):
        return [g]
    if not g:
        raise ValueError(f"official info has no task_goal (keys: {sorted(info)})")
    return [str(x) for x in g]


def as_uint8_rgb(frame) -> np.ndarray:
    """A front frame as a plain ``(H, W, 3)`` uint8 ndarray (the memory boundary accepts nothing else)."""
    a = np.asarray(frame.cpu() if hasattr(frame, "cpu") else frame)
    if a.ndim != 3 or a.shape[-1] != 3:
        raise ValueError(f"front frame must be (H, W, 3), got shape {a.shape}")
    return np.ascontiguousarray(a, dtype=np.uint8)


def as_joints(q) -> np.ndarray:
    a = np.asarray(q.cpu() if hasattr(q, "cpu") else q, dtype=np.float32).reshape(-1)
    return np.ascontiguousarray(a[:7])


def as_fingers(g) -> np.ndarray:
    """The benchmark's ``gripper_state`` entry (the two finger positions, m) as a flat float array."""
    a = np.asarray(g.cpu() if hasattr(g, "cpu") else g, dtype=np.float32).reshape(-1)
    return np.ascontiguousarray(a[:2])


def batch_clocks(n: int, last_clock: int) -> list[int]:
    """Absolute clocks of the ``n`` entries of a batch whose last entry is at ``last_clock``."""
    return [last_clock - (n - 1) + i for i in range(n)]
