"""Execution noise of the scripted policy: the kind of failure a learned policy makes.

π0.5 on RoboMME fails some grasps and recovers from many of them; the policy seeds of the paper
differ by a few points per task for that reason. The scripted policy is exact unless told
otherwise. With ``p_fail_grasp > 0`` each pick first makes one failed attempt with that
probability: it closes the gripper ``high_dz`` above the grasp height (on air) or ``offset_xy``
to one side (on the object's edge, which may push it), lifts, opens and then grasps properly.
The draws come from the episode's ``policy`` stream (``experiments/streams.py``), so the same
episode and seed fail the same grasps in every condition until the conditions' actions diverge.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ScriptedNoise:
    """Probability of one failed grasp attempt per pick, and its size."""

    p_fail_grasp: float = 0.0
    """Probability that a pick starts with one failed attempt (0: an exact policy)."""
    high_dz: float = 0.03
    """A 'too high' attempt closes this many metres above the grasp height."""
    offset_xy: float = 0.03
    """An 'offset' attempt closes this many metres beside the object's centre, in a drawn direction."""

    def __post_init__(self) -> None:
        if not 0.0 <= self.p_fail_grasp <= 1.0:
            raise ValueError(f"p_fail_grasp must be in [0, 1], got {self.p_fail_grasp!r}")
        for name in ("high_dz", "offset_xy"):
            v = getattr(self, name)
            if not 0.0 <= v <= 0.1:
                raise ValueError(f"{name} must be in [0, 0.1] metres, got {v!r}")

    @property
    def active(self) -> bool:
        return self.p_fail_grasp > 0.0


PAPER_NOISE = ScriptedNoise(p_fail_grasp=0.15)
"""The ``paper`` preset's noise: a failed first attempt on about one pick in seven."""
