"""Two-lane swaps of the Reference tasks (:class:`SwapAnimator`), played on the step clock.

Two objects exchange places along straight lines, each bulging sideways by ``0.07 * sin(pi * s)``
to its own left, so the two paths form two lanes; ``s`` is the smoothstep of the phase fraction
and orientations are blended by slerp. The partner of a swap is, unless fixed, the object
nearest to the first one when it starts.
"""

from __future__ import annotations

import math

import numpy as np
import sapien

from envs.core.easing import slerp, smoothstep

SWAP_STEPS = 50
SWAP_BULGE = 0.07


def lane_point(start, end, s: float, bulge: float = SWAP_BULGE) -> np.ndarray:
    """Position (x, y) of an object travelling from ``start`` to ``end`` at progress ``s``.

    It leaves the straight line to its own left by ``bulge * sin(pi * s)``; the partner, moving
    the opposite way, bulges to *its* left, which is the other side: two lanes that never cross.
    """
    start, end = np.asarray(start, float)[:2], np.asarray(end, float)[:2]
    d = end - start
    n = np.linalg.norm(d)
    left = np.array([-d[1], d[0]]) / n if n > 1e-9 else np.zeros(2)
    return start + s * d + bulge * math.sin(math.pi * s) * left


def actor_pose(actor) -> tuple[np.ndarray, np.ndarray]:
    return actor.pose.p[0].cpu().numpy().astype(float), actor.pose.q[0].cpu().numpy().astype(float)


def put_pose(actor, p, q) -> None:
    """Pose an actor (kinematic or dynamic) and, if dynamic, stop it."""
    actor.set_pose(sapien.Pose(p=[float(v) for v in p], q=[float(v) for v in q]))
    if getattr(actor, "px_body_type", "dynamic") == "dynamic":
        import torch

        actor.set_linear_velocity(torch.zeros(3))
        actor.set_angular_velocity(torch.zeros(3))


class SwapAnimator:
    """Runs one two-lane swap at a time among ``objects`` (cubes or target discs).

    ``begin(first, partner=None)`` fixes the pair (the nearest object when ``partner`` is None)
    and their start poses; ``update(k)`` poses both at step ``k`` of ``duration`` (k = 1..duration,
    exactly exchanged at k = duration). ``log`` keeps the pairs in the order they ran.
    """

    def __init__(self, objects: list, duration: int = SWAP_STEPS, bulge: float = SWAP_BULGE):
        self.objects = list(objects)
        self.duration = duration
        self.bulge = bulge
        self.log: list[tuple[int, int]] = []
        self._pair: tuple[int, int] | None = None
        self._start: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def nearest(self, first: int) -> int:
        p0 = actor_pose(self.objects[first])[0][:2]
        dist = [np.inf if i == first else float(np.linalg.norm(actor_pose(o)[0][:2] - p0)) for i, o in enumerate(self.objects)]
        return int(np.argmin(dist))

    def begin(self, first: int, partner: int | None = None) -> tuple[int, int]:
        partner = self.nearest(first) if partner is None else partner
        self._pair = (first, partner)
        self._start = {i: actor_pose(self.objects[i]) for i in self._pair}
        self.log.append(self._pair)
        return self._pair

    def update(self, k: int) -> None:
        if self._pair is None:
            return
        a, b = self._pair
        s = smoothstep(k / self.duration)
        (pa, qa), (pb, qb) = self._start[a], self._start[b]
        for i, (p0, q0, p1, q1) in ((a, (pa, qa, pb, qb)), (b, (pb, qb, pa, qa))):
            xy = lane_point(p0, p1, s, self.bulge)
            z = p0[2] + (p1[2] - p0[2]) * s
            put_pose(self.objects[i], [xy[0], xy[1], z], slerp(q0, q1, s))
        if k >= self.duration:
            self._pair = None
