"""The SimpleARM paper's published numbers that our Results v1 tables stand beside.

Why these live in code: the report puts the paper's *direction* next to ours (which ablation hurts
which task, what the arms score over all 16 tasks) so a reader sees where our CPU setting agrees in
shape and where it does not. Our numbers are never compared to these for significance: the paper
runs pi0.5 with a VLM composer, we run a scripted policy with execution noise and a history-blind
composer, so only the pattern carries over.

Sources (``../shared/papers/SimpleARM.txt``): the abstract and its Table 3 for the arms' all-task
means (three seeds, 50 test episodes per task); its Table 8 for the tasks each mechanism ablation is
predicted to need (fixed before the outcomes); its Table 9 for every ablation x task cell (seed 11,
50 matched episodes, ablated minus full success in points); its Table 12 for the rewording cost.
The cells of Table 9 were read from the paper's flattened text under two checks: each row's mean
equals Table 7's pooled difference, and each predicted-active mean equals Table 8's.
"""

from __future__ import annotations

from dataclasses import dataclass

from envs.episodes import ALL_TASKS

ARM_MEANS: dict[str, float] = {
    "oracle": 84.08,
    "memory": 67.17,
    "no-memory": 32.70,
    "recent4": 27.50,
    "recent16": 30.71,
    "recent32": 31.50,
}
"""All-task mean success (%) of each arm in the paper (three seeds, 16 tasks x 50 test episodes)."""

ARM_SDS: dict[str, float] = {"memory": 1.23, "recent4": 1.39, "recent16": 0.47, "recent32": 0.43}
"""Seed-to-seed sample sd (points) where the paper gives one."""

ORACLE_SUBGOAL: dict[str, float] = {
    "BinFill": 85.8, "PickXtimes": 100.0, "SwingXtimes": 100.0, "StopCube": 49.7,
    "VideoUnmask": 98.8, "ButtonUnmask": 95.0, "VideoUnmaskSwap": 99.2, "ButtonUnmaskSwap": 80.2,
    "PickHighlight": 83.3, "VideoRepick": 97.3, "VideoPlaceButton": 100.0, "VideoPlaceOrder": 100.0,
    "MoveCube": 87.8, "InsertPeg": 15.6, "PatternLock": 97.0, "RouteStick": 55.6,
}
"""π0.5's per-task success (%) with oracle subgoals (SimpleARM Table 1, from RoboMME; overall 84.08):
the ceiling the ``pi05-like`` executor profile is fitted to (scripts/fit_executor_profile.py)."""
assert set(ORACLE_SUBGOAL) == set(ALL_TASKS)

def _per_task(*v: float) -> dict[str, float]:
    assert len(v) == len(ALL_TASKS), len(v)
    return dict(zip(ALL_TASKS, v))


NO_MEMORY: dict[str, float] = _per_task(
    52.0, 92.7, 7.3, 0.0, 88.7, 24.0, 30.7, 14.0, 15.3, 25.3, 54.0, 31.8, 71.6, 3.3, 6.7, 6.0)
"""π0.5 without memory, per task (%; SimpleARM Table 1 "no mem.", RoboMME's published three seeds; overall 32.70)."""

FRAMESAMP: dict[str, float] = _per_task(
    39.6, 87.3, 92.0, 42.0, 32.7, 25.1, 24.4, 18.2, 22.9, 30.4, 60.0, 32.0, 77.8, 7.6, 53.6, 66.7)
"""RoboMME's FrameSamp+ModuL, the strongest published non-oracle memory before SimpleARM, per task
(%; SimpleARM Table 1; overall 44.51)."""

SIMPLEARM: dict[str, float] = _per_task(
    60.0, 91.3, 76.7, 0.0, 96.0, 82.0, 80.0, 56.7, 66.0, 78.0, 82.0, 88.0, 67.3, 4.0, 93.3, 53.3)
"""The paper's memory (SimpleARM, frozen π0.5 and a fine-tuned Qwen3-VL subgoal predictor), per task
(%; Table 1 "ours", three seeds; overall 67.17)."""

ASTRA_SUITES: dict[str, float] = {"counting": 69.5, "permanence": 94.0, "reference": 92.0, "imitation": 61.0, "all": 79.13}
"""Astra on RoboMME (one run; a closed planner and a fine-tuned completion monitor): the suites and the
overall figure it reports (``../shared/reference/robomme_official.md``)."""

ASTRA_TASKS: dict[str, float] = {"StopCube": 18.0, "InsertPeg": 18.0, "RouteStick": 58.0}
"""The only tasks Astra's report names (its weakest three)."""

REWORDING_COST_POINTS = 17.8
"""How many points of the memory arm's success instruction rewording costs in the paper."""


@dataclass(frozen=True)
class PaperAblation:
    """One of the paper's matched ablations, named by the condition it corresponds to here."""

    condition: str
    paper_name: str
    predicted_active: tuple[str, ...]
    """Tasks the paper says need the removed state (its Table 8); empty when it names none."""
    cells: tuple[int, ...] | None
    """Ablated minus full success per task in :data:`ALL_TASKS` order (Table 9); None if not transcribable."""
    pooled: float
    """Table 7: the all-task ablated minus full difference (points)."""
    active_delta: float | None = None
    """Table 8: the mean difference over the predicted-active tasks (points)."""

    def cell(self, task: str) -> int | None:
        return None if self.cells is None else self.cells[ALL_TASKS.index(task)]


def _cells(*v: int) -> tuple[int, ...]:
    assert len(v) == len(ALL_TASKS), len(v)
    return v


ABLATIONS: dict[str, PaperAblation] = {a.condition: a for a in (
    PaperAblation("memory-no-route", "no route state", ("PatternLock", "RouteStick"),
                  _cells(4, 0, -12, 0, 2, -12, 2, -16, 0, -8, 0, -2, 0, -6, -90, -46), -11.50, -68.0),
    PaperAblation("memory-no-count", "no flash-count state", ("SwingXtimes",),
                  _cells(10, -6, -62, 0, 4, -2, 0, -6, -2, -10, 0, 0, 0, -6, -2, 2), -5.00, -62.0),
    PaperAblation("memory-no-demo-ref", "no demo references", ("VideoRepick", "VideoPlaceButton", "VideoPlaceOrder"),
                  _cells(6, -6, 0, 0, 0, 0, 0, 0, 2, -48, -34, -52, -2, -6, -4, -2), -9.12, -44.7),
    PaperAblation("memory-no-live-binding", "no live identity track", ("ButtonUnmask", "ButtonUnmaskSwap"),
                  _cells(0, 6, 0, 0, 2, -64, 2, -42, 2, 0, 0, -2, 2, -4, -2, 6), -5.88, -53.0),
    PaperAblation("memory-no-demo-binding", "no demo notes", ("VideoUnmask", "VideoUnmaskSwap"),
                  _cells(2, 2, -4, 0, -8, -4, -48, -10, 4, -8, 0, 0, -6, -6, 0, 0), -5.38, -28.0),
    PaperAblation("memory-no-demo-relation-update", "no demo following", ("VideoUnmaskSwap",),
                  _cells(2, 2, -2, 0, -6, 2, -50, 2, -4, 0, 0, -2, 10, -4, 0, 4), -2.88, -50.0),
    PaperAblation("memory-agent-access", "agent-decided access", (),
                  _cells(-12, -6, -38, 0, -2, -54, -8, -56, -6, 4, 0, 0, -4, -4, -6, 2), -11.88, -17.2),
    # Table 9's row for this one reads two ways from the flattened text (both match Table 7): no cells.
    PaperAblation("memory-refine-every-verb", "refine every verb", (), None, -2.00),
)}
"""The paper's ablations that have a counterpart among our conditions. Ours without one
(``memory-no-identity``'s nine-task study aside) were not tested there."""
