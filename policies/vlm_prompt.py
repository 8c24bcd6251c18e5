"""Prompt and answer conventions of the VLM subgoal composer (RoboMME-style).

The user turn follows RoboMME's Qwen-VL subgoal predictor, in this order:

1. the conditioning video (a few evenly spaced demo frames), when there is one;
2. the task goal;
3. either "initial turn" or the numbered list of the composer's *own* earlier
   subgoals, with every point replaced by a placeholder (the model must re-ground
   points in the current view instead of copying stale ones);
4. the current front image.

The model answers one subgoal line. Points come on Qwen's 0–1000 grid, either as
``<|box_start|>(a,b)<|box_end|>`` (a point or a two-corner box, whose centre is used)
or as ``<a, b>``; :func:`normalize_answer` rescales them to the 256-pixel front image
(×256/1000) and rewrites them as ``<y, x>``, the grounded-subgoal notation.

Messages are built in a backend-neutral form: ``{"role": ..., "content": [parts]}``
where a part is ``{"type": "text", "text": str}`` or ``{"type": "image", "image":
ndarray}``. Each backend converts images to what it sends (data URL, PIL image).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

__all__ = [
    "AnswerFormatError",
    "POINT_PLACEHOLDER",
    "SYSTEM_PROMPT",
    "build_messages",
    "history_text",
    "mask_points",
    "normalize_answer",
    "sample_frames",
]

POINT_PLACEHOLDER = "<bbox>"

SYSTEM_PROMPT = (
    "You control a robot arm by giving it one subgoal at a time. You see a demonstration video "
    "(if any), the task goal, the subgoals you gave earlier, and the current front camera image. "
    "Answer with exactly one line: the next subgoal in the same style as the task's subgoals, "
    "for example 'pick up the red cube at <|box_start|>(552,379)<|box_end|> for the first time'. "
    "Mark every object you refer to with its point in the current image as "
    "<|box_start|>(row,col)<|box_end|> on a 0-1000 grid (row from the top, column from the left)."
)

# a "<y, x>" pixel point as it appears in grounded subgoals (possibly after "at")
_PIXEL_POINT = re.compile(r"<\s*-?\d+(?:\.\d+)?\s*,\s*-?\d+(?:\.\d+)?\s*>")
_NUM = r"\s*(-?\d+(?:\.\d+)?)\s*"
_PAIR = rf"\({_NUM},{_NUM}\)"
# Qwen box markup: one point or two corners, parentheses optional in the wild
_QWEN_BOX = re.compile(
    rf"<\|box_start\|>\s*(?:{_PAIR}(?:\s*,\s*{_PAIR})?|{_NUM},{_NUM}(?:,{_NUM},{_NUM})?)\s*<\|box_end\|>"
)
_ANGLE_POINT = re.compile(rf"<{_NUM},{_NUM}>")
_ANY_POINT = re.compile(f"{_QWEN_BOX.pattern}|{_ANGLE_POINT.pattern}")
_QWEN_REFS = re.compile(r"<\|object_ref_(?:start|end)\|>")


class AnswerFormatError(ValueError):
    """The model's answer could not be turned into a subgoal line."""


def mask_points(subgoal: str, placeholder: str = POINT_PLACEHOLDER) -> str:
    """Replace every ``<y, x>`` point of a grounded subgoal with ``placeholder``."""
    return _PIXEL_POINT.sub(placeholder, subgoal)


def history_text(history: Sequence[str], placeholder: str = POINT_PLACEHOLDER) -> str:
    """The numbered list of earlier subgoals, points masked; 'initial turn' when empty."""
    if not history:
        return "Previous subgoals: none (initial turn)."
    lines = [f"{i}. {mask_points(s, placeholder)}" for i, s in enumerate(history, start=1)]
    return "Previous subgoals:\n" + "\n".join(lines)


def sample_frames(frames: Sequence[np.ndarray], max_frames: int) -> list[np.ndarray]:
    """At most ``max_frames`` evenly spaced frames, first and last included."""
    frames = list(frames)
    if max_frames <= 0 or not frames:
        return []
    if len(frames) <= max_frames:
        return frames
    idx = np.linspace(0, len(frames) - 1, max_frames).round().astype(int)
    return [frames[i] for i in idx]


def build_messages(
    goal: str,
    history: Sequence[str],
    image: np.ndarray,
    demo_frames: Sequence[np.ndarray] = (),
    system_prompt: str = SYSTEM_PROMPT,
    placeholder: str = POINT_PLACEHOLDER,
) -> list[dict]:
    """The chat for one composer query, in the backend-neutral message form."""
    content: list[dict] = []
    if demo_frames:
        content.append({"type": "text", "text": f"Demonstration video ({len(demo_frames)} frames):"})
        content.extend({"type": "image", "image": f} for f in demo_frames)
    content.append({"type": "text", "text": f"Task goal: {goal}"})
    content.append({"type": "text", "text": history_text(history, placeholder)})
    content.append({"type": "text", "text": "Current front camera image:"})
    content.append({"type": "image", "image": image})
    content.append({"type": "text", "text": "What is the next subgoal? Answer with one line."})
    return [
        {"role": "system", "content": [{"type": "text", "text": system_prompt}]},
        {"role": "user", "content": content},
    ]


def _to_pixels(a: float, b: float, order: str, grid: float, size: int) -> tuple[int, int]:
    for v in (a, b):
        if not 0.0 <= v <= grid:
            raise AnswerFormatError(f"coordinate {v:g} is outside the 0-{grid:g} grid")
    y, x = (a, b) if order == "yx" else (b, a)

    def scale(v: float) -> int:
        return int(min(size - 1, max(0, round(v * size / grid))))

    return scale(y), scale(x)


def _first_line(text: str) -> str:
    text = text.strip()
    text = re.sub(r"^```[a-zA-Z]*\s*|\s*```$", "", text)  # code fences
    for line in text.splitlines():
        line = line.strip()
        if line:
            line = re.sub(r"^(?:next\s+)?subgoal\s*[:：]\s*", "", line, flags=re.IGNORECASE)
            line = re.sub(r"^\d+\.\s+", "", line)  # "3. pick up ..."
            return line.strip().strip("\"'`").rstrip(".").strip()
    return ""


def normalize_answer(text: str | None, grid: float = 1000.0, image_size: int = 256, order: str = "yx") -> str:
    """Turn a raw model answer into a grounded subgoal line with ``<y, x>`` pixels.

    ``order`` says how the model writes a point: ``"yx"`` (row, col; the convention
    this prompt asks for) or ``"xy"`` (Qwen's native image convention).
    Raises :class:`AnswerFormatError` for an empty answer or an off-grid number.
    """
    if order not in ("yx", "xy"):
        raise ValueError(f"order must be 'yx' or 'xy', got {order!r}")
    if not isinstance(text, str):
        raise AnswerFormatError(f"answer is not text: {type(text).__name__}")
    line = _first_line(text)
    if not line:
        raise AnswerFormatError("empty answer")
    line = _QWEN_REFS.sub("", line)

    def rewrite(m: re.Match) -> str:
        nums = [float(g) for g in m.groups() if g is not None]
        if len(nums) == 4:  # two box corners -> their centre
            nums = [(nums[0] + nums[2]) / 2.0, (nums[1] + nums[3]) / 2.0]
        y, x = _to_pixels(nums[0], nums[1], order, grid, image_size)
        return f"<{y}, {x}>"

    # one pass over both notations, so a rewritten point is never rescaled twice
    line = _ANY_POINT.sub(rewrite, line)
    if "<|box_start|>" in line or "<|box_end|>" in line:
        raise AnswerFormatError(f"malformed box markup in {line!r}")
    return re.sub(r"\s{2,}", " ", line).strip()
