"""No truth in a proposal's timing: the memory decides the same when proposals arrive late.

The history-blind composer redraws exactly when the env's subgoal checker moves on, so the moment a
proposal changes is ground truth a real predictor queried at its own pace would not have. With
``--proposal-lag 2`` every change reaches the memory 0-2 decisions late (the robot holds still
meanwhile). A memory that counted proposals, or used their timing as an event clock, would now
count or bind differently; ours reads the frames, so no history decision gets worse and every
episode keeps its outcome (at train episode 0: PickXtimes, SwingXtimes, VideoUnmask right at every
decision on time and late; ButtonUnmaskSwap 18/20 on time, 17/17 late; BinFill 4/15 and 4/16, its
audit scoring a pick of another cube of the right colour than the oracle's as wrong). StopCube is left out on purpose: there the press's timing *is* the task,
and a late press is late for every arm.
"""

from __future__ import annotations

import pytest

from experiments import run
from experiments.loop.results import read_rows
from policies.composers import LaggedComposer

pytestmark = pytest.mark.timeout(900)

TASKS = ["PickXtimes", "SwingXtimes", "BinFill", "VideoUnmask", "ButtonUnmaskSwap"]
"""A count of picks, of swings, of deposits per colour, a binding through a video, one through swaps."""


def _play(out, lag: int) -> dict[str, dict]:
    argv = ["--tasks", *TASKS, "--split", "train", "--episodes", "0", "--conditions", "memory", "--seeds", "7",
            "--wandb", "disabled", "--workers", "1", "--proposal-lag", str(lag), "--out", str(out)]
    assert run.main(argv) == 0
    return {r["task"]: r for r in read_rows(out)}


def test_late_proposals_move_no_memory_decision(tmp_path):
    on_time, late = _play(tmp_path / "on_time", 0), _play(tmp_path / "late", 2)
    assert sum(len(r["proposals_held"]) for r in late.values()) >= len(TASKS)  # the lag really happened
    assert all(not r["proposals_held"] for r in on_time.values())
    for task in TASKS:
        a, b = on_time[task], late[task]
        assert a["success"] and b["success"], (task, a["status"], b["status"])
        missed = {k: sum(r["history_audit"][x] for x in ("wrong", "abstained", "silent_wrong")) for k, r in
                  (("on_time", a), ("late", b))}
        assert b["history_audit"]["decisions"] > 0 and missed["late"] <= missed["on_time"], (task, missed)


def test_the_lag_is_drawn_from_the_composer_stream_and_never_drops_a_proposal():
    class Fixed:
        def __init__(self):
            self.texts = iter(["a", "a", "b", "b", "b", "b", "c", "c", "c", "c"])

        def reset(self, goal, seed, demo_frames):
            pass

        def propose(self, obs, info):
            return next(self.texts)

    def seq(seed):
        c = LaggedComposer(Fixed(), 2)
        c.reset("", seed, [])
        return [c.propose({}, {"steps": i}) for i in range(10)], c.held

    out, held = seq(3)
    assert seq(3) == (out, held)  # deterministic from the episode's stream
    assert [x for x in out if x is not None][0] == "a" and {"a", "b", "c"} <= set(out)  # late, never lost
    assert all(0 < h["lag"] <= 2 for h in held)
    with pytest.raises(ValueError, match="max_lag"):
        LaggedComposer(Fixed(), -1)
