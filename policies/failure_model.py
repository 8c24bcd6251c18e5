"""The scripted executor's failures under an executor profile: which failure, and the motion it makes.

:func:`draw_failure` draws at most one failure for a subgoal's motion from the episode's policy
stream (one uniform draw against the skill's cumulative rates, then the failure's own parameters),
so the same episode and seed fail the same subgoals in every condition until the conditions'
actions diverge; a clean profile draws nothing. :func:`perturbed_motion` turns the option's
scripted motion into the failed one. Every failure is a change of the actions sent to the
simulator; what then happens to the objects (a cube that falls beside the bin, a button that is
not pressed) is physics, and the env's own checker judges the outcome.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from policies.executor_profile import FailureRates

KINDS: dict[str, tuple[str, ...]] = {
    "grasp": ("miss_retry", "miss", "wrong_object", "stall"),
    "carry": ("drop", "stall"),
    "press": ("extra", "short", "late", "early", "stall"),
    "stick": ("extra", "short", "wrong_turn", "stall"),
}
"""The failures each skill can make, in the order the single draw is laid out."""


@dataclass
class Failure:
    """One drawn failure: its kind and the parameters the motion needs (all from the policy stream)."""

    skill: str
    kind: str
    params: dict[str, Any] = field(default_factory=dict)

    def record(self, subgoal: str, option: str) -> dict[str, Any]:
        return {"subgoal": subgoal, "option": option, "skill": self.skill, "failure": self.kind, **self.params}


def draw_failure(rng: np.random.Generator, rates: FailureRates, skill: str | None) -> Failure | None:
    """At most one failure for this subgoal: ``rng`` is touched only when the skill can fail."""
    if skill is None or not rates.active:
        return None
    kinds = KINDS[skill]
    if not any(getattr(rates, k) > 0 for k in kinds):
        return None
    u, cum = float(rng.random()), 0.0
    for kind in kinds:
        cum += float(getattr(rates, kind))
        if u < cum:
            return Failure(skill, kind, _params(rng, kind, rates))
    return None


def _params(rng: np.random.Generator, kind: str, rates: FailureRates) -> dict[str, Any]:
    if kind in ("miss_retry", "miss"):
        return {"attempt": "high" if rng.random() < 0.5 else "offset", "angle": float(rng.uniform(0.0, 2.0 * np.pi))}
    if kind == "drop":
        return {"after_steps": int(rng.integers(2, 12))}  # early in the transport, away from where it should go
    if kind == "short":
        return {"after_steps": int(rng.integers(6, 30))}
    if kind == "stall":
        return {"after_steps": int(rng.integers(0, 20))}
    if kind in ("late", "early"):
        return {"shift_steps": int(rng.integers(max(1, rates.shift_steps // 2), rates.shift_steps + 1))}
    if kind == "wrong_object":
        return {"near_m": rates.near_m}
    if kind == "wrong_turn":
        return {"pick": float(rng.random())}
    return {}


Actions = Iterator[np.ndarray]


def truncated(motion: Actions, after: int) -> Actions:
    """The first ``after`` actions of ``motion``; the policy then holds still (a short press, a stall)."""
    for i, a in enumerate(motion):
        if i >= after:
            return
        yield a


def delayed(motion: Actions, hold: Callable[[int], Actions], steps: int) -> Actions:
    """``motion`` after ``steps`` actions of holding still (a late start)."""
    yield from hold(steps)
    yield from motion


def hurried(motion: Actions, steps: int) -> Actions:
    """``motion`` with up to ``steps`` of its waiting skipped: actions that repeat the previous one
    exactly (the arm holding still until the right moment) are dropped (an early start)."""
    prev, skipped = None, 0
    for a in motion:
        if prev is not None and skipped < steps and np.array_equal(a, prev):
            skipped += 1
            continue
        prev = a
        yield a


def slipping(motion: Actions, after: int, open_value: float) -> Actions:
    """``motion`` with the gripper opened from its ``after``-th action on: the object slips away."""
    for i, a in enumerate(motion):
        if i >= after:
            a = np.array(a, dtype=np.float32, copy=True)
            a[-1] = open_value
        yield a


def chained(first: Actions, then: Callable[[], Actions]) -> Actions:
    """``first``, then the motion ``then()`` plans from wherever ``first`` left the arm."""
    yield from first
    yield from then()


def sibling_option(option: str, options: list[str], pick: float) -> str | None:
    """Another option of the same family (the text before the first ``_``: ``route_*``, ``move_*``),
    chosen by ``pick`` in [0, 1); None when the option has no sibling."""
    from policies.executor_profile import skill_of

    family = option.split("_", 1)[0] + "_"
    if family == "stick_":  # starting and returning are not turns
        return None
    return choose_sibling({o for o in options if o.startswith(family) and o != option and skill_of(o) == "stick"}, pick)


def choose_sibling(siblings, pick: float):
    """One of ``siblings`` (sorted first, so the choice is the same whatever their order), chosen by
    ``pick`` in [0, 1); None when there are none. Shared by both backends' wrong turns."""
    sibs = sorted(siblings)
    if not sibs:
        return None
    return sibs[min(int(pick * len(sibs)), len(sibs) - 1)]
