"""The audit judges a subgoal the executor is still running on the object it started on.

On our envs a subgoal runs in chunks, and a text repeated from one decision to the next continues
the motion it started (the scripted executor never re-resolves it). Resolving it afresh each
decision, in a scene where the lifted container has moved, scores the oracle's own text wrong: on
VideoUnmask train 18 the container being lifted passes nearer another one's point, and the memory's
last (correct) rewrite was counted a wrong read. The row now lists every wrong read it counts."""

from experiments import run
from experiments.loop.results import read_rows


def test_a_repeated_subgoal_is_judged_on_the_object_its_motion_started_on(tmp_path):
    assert run.main(["--tasks", "VideoUnmask", "--split", "train", "--episodes", "18", "--conditions", "memory",
                     "--wandb", "disabled", "--out", str(tmp_path)]) == 0
    (row,) = read_rows(tmp_path)
    mem = row["memory"]
    assert row["status"] == "success" and mem["reads_correct"] >= 5
    assert mem["reads_wrong"] == 0 and mem["wrong_reads"] == [], mem["wrong_reads"]
    assert row["history_audit"]["wrong"] == 0
