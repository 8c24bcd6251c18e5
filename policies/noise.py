"""Execution noise of the scripted policy: the kind of failure a learned policy makes.

π0.5 on RoboMME fails some grasps and recovers from many of them, and sometimes loses an object for
good; the policy seeds of the paper differ by a few points per task for that reason. The scripted
policy is exact unless told otherwise. With ``p_fail_grasp > 0`` each pick first makes one failed
attempt with that probability: it closes the gripper ``high_dz`` above the grasp height (on air) or
``offset_xy`` to one side (on the object's edge, which may push it), lifts, opens and then grasps
properly. Such a failure costs time but is recovered. With ``p_drop > 0`` a carry lets the object
slip with that probability, which is not recovered.
The draws come from the episode's ``policy`` stream (``experiments/loop/streams.py``), so the same
episode and seed fail the same grasps in every condition until the conditions' actions diverge.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ScriptedNoise:
    """How often a pick starts with a failed attempt (and how far off it is), and how often a carry slips."""

    p_fail_grasp: float = 0.0
    """Probability that a pick starts with one failed attempt (0: an exact policy)."""
    high_dz: float = 0.03
    """A 'too high' attempt closes this many metres above the grasp height."""
    offset_xy: float = 0.03
    """An 'offset' attempt closes this many metres beside the object's centre, in a drawn direction."""
    p_drop: float = 0.0
    """Probability that a carry (place, move over, insert) lets the object slip: the gripper opens
    after a drawn number of steps of the motion. Nothing re-grasps it, so a slip is usually a
    failed episode: the kind of failure that makes a learned policy's seeds differ."""

    def __post_init__(self) -> None:
        for name in ("p_fail_grasp", "p_drop"):
            v = getattr(self, name)
            if not 0.0 <= v <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {v!r}")
        for name in ("high_dz", "offset_xy"):
            v = getattr(self, name)
            if not 0.0 <= v <= 0.1:
                raise ValueError(f"{name} must be in [0, 0.1] metres, got {v!r}")

    @property
    def active(self) -> bool:
        return self.p_fail_grasp > 0.0 or self.p_drop > 0.0


PAPER_NOISE = ScriptedNoise(p_fail_grasp=0.15, p_drop=0.03)
"""The ``paper`` preset's noise: a failed, recovered first attempt on about one pick in seven, and a
slip on about one carry in thirty (chosen on the train split: see the README's results)."""
