"""Faults end to end: the real simulator, a real policy-server process, the real CLI.

Each fault must give the episode's row ``status="error"`` with the reason (never ``fail``, which
would count against the method), and the run must go on to the next unit.

Covered elsewhere, not repeated here:
* a worker process killed mid-episode: ``test_harness_executors.py::test_pool_survives_a_killed_worker``
  and ``kill -9`` of the whole run then resume: ``test_harness_resume.py::test_kill_9_then_resume``;
* a full disk while writing results: ``test_harness_results.py::test_full_disk_is_a_clear_error_and_keeps_written_rows``
  and ``::test_full_disk_in_a_run_exits_1_without_losing_rows``;
* a torn or garbage line when reading: ``test_harness_results.py::test_torn_last_line_is_skipped_with_its_line_number``
  and ``::test_garbage_and_incomplete_rows_are_skipped``;
* the policy client alone against a slow, dying or absent server: ``test_openpi_client.py``.
"""

from __future__ import annotations

import re
import sys
import warnings
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness_fixture_fns as fx  # noqa: E402
from test_openpi_client import free_port, server_process  # noqa: E402  (reuse the real-server fixture)

from experiments import run  # noqa: E402
from experiments.loop.results import ResultsWarning, read_rows  # noqa: E402

pytestmark = pytest.mark.timeout(300)  # the first simulator test of a process also compiles the shaders


def _argv(out, *extra):
    return ["--tasks", "PickXtimes", "--conditions", "oracle", "--wandb", "disabled", "--out", str(out), *extra]


def _openpi(port, *extra):
    return ["--policy", "openpi", "--openpi-host", "127.0.0.1", "--openpi-port", str(port), *extra]


def _by_episode(out):
    return {r["episode"]: r for r in read_rows(out)}


# --------------------------------------------------------------------------- policy server
def test_unreachable_policy_server_is_an_error_naming_the_port(tmp_path, capsys):
    port = free_port()  # nothing listens there
    argv = _argv(tmp_path, "--episodes", "0:2", "--max-steps", "48", *_openpi(port, "--openpi-connect-timeout-s", "2"))
    assert run.main(argv) == 0  # errors are rows; the run itself completes
    rows = _by_episode(tmp_path)
    assert sorted(rows) == [0, 1]  # the run went on to the next unit
    for r in rows.values():
        assert r["status"] == "error" and r["success"] is False
        assert "cannot reach openpi policy server" in r["error"] and str(port) in r["error"]
    assert "error 2" in capsys.readouterr().out


def test_slow_policy_server_times_out_then_the_next_unit_runs(tmp_path):
    # the first query is answered after 4 s, the receive timeout is 1 s; later queries are prompt
    with server_process("--delay-s", "4", "--delay-queries", "1") as (proc, port):
        argv = _argv(tmp_path, "--episodes", "0:2", "--max-steps", "48", *_openpi(port, "--openpi-recv-timeout-s", "1"))
        assert run.main(argv) == 0
    rows = _by_episode(tmp_path)
    assert rows[0]["status"] == "error"
    assert re.search(r"no reply .*within 1 s", rows[0]["error"]) and "PolicyTimeout" in rows[0]["error"]
    # the late reply died with the closed connection; the next unit ran normally to its budget
    assert rows[1]["status"] == "timeout" and rows[1]["steps"] == 48 and rows[1]["error"] is None


def test_policy_server_dying_mid_episode_is_an_error_not_a_fail(tmp_path):
    # the server answers two queries (32 of the 48 steps), then exits abruptly when the third arrives
    with server_process("--crash-after", "2") as (proc, port):
        argv = _argv(tmp_path, "--episodes", "0:2", "--max-steps", "48", *_openpi(port, "--openpi-connect-timeout-s", "2"))
        assert run.main(argv) == 0
        assert proc.wait(timeout=10) == 3
    rows = _by_episode(tmp_path)
    first = rows[0]
    assert first["status"] == "error" and first["steps"] == 32
    assert "PolicyServerError" in first["error"] and "closed the connection during query 3" in first["error"]
    # the next unit still ran (and found the server gone)
    assert rows[1]["status"] == "error" and "cannot reach openpi policy server" in rows[1]["error"]


# --------------------------------------------------------------------------- simulator / solver
def test_solver_exception_is_an_error_with_the_reason(tmp_path, monkeypatch):
    from envs.tasks.pick_xtimes import PickXtimes

    real = PickXtimes.motion
    calls = {"n": 0}

    def exploding(self, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("solver exploded: no inverse kinematics for the grasp pose")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(PickXtimes, "motion", exploding)
    assert run.main(_argv(tmp_path, "--episodes", "0:2", "--max-steps", "48")) == 0
    rows = _by_episode(tmp_path)
    assert rows[0]["status"] == "error"
    assert rows[0]["error"].startswith("RuntimeError: solver exploded: no inverse kinematics")
    assert rows[1]["status"] == "timeout" and rows[1]["steps"] == 48  # the next unit was unaffected


def test_simulator_exception_mid_episode_is_an_error(tmp_path, monkeypatch):
    from envs.tasks.pick_xtimes import PickXtimes

    real = PickXtimes._after_control_step

    def breaking(self, *args, **kwargs):
        if self.clock == 20:
            raise FloatingPointError("physx: NaN in articulation state")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(PickXtimes, "_after_control_step", breaking)
    assert run.main(_argv(tmp_path, "--episodes", "0", "--max-steps", "48")) == 0
    (row,) = read_rows(tmp_path)
    assert row["status"] == "error" and "FloatingPointError: physx: NaN in articulation state" in row["error"]
    assert row["steps"] < 48


def test_an_exception_inside_the_memory_is_an_error_naming_the_memory_call_and_step(tmp_path, monkeypatch):
    from memory.layer import MemoryLayer

    real = MemoryLayer.observe

    def failing(self, frame):
        if frame.step >= 40:
            raise ZeroDivisionError("count gate divided by an empty window")
        return real(self, frame)

    monkeypatch.setattr(MemoryLayer, "observe", failing)
    assert run.main(["--tasks", "PickXtimes", "--conditions", "memory", "--wandb", "disabled", "--out", str(tmp_path),
                     "--episodes", "0", "--max-steps", "96"]) == 0
    (row,) = read_rows(tmp_path)
    assert row["status"] == "error"
    m = re.match(r"MemoryFault: memory MemoryLayer\.observe raised at step (\d+): ZeroDivisionError: count gate", row["error"])
    assert m and int(m.group(1)) >= 40, row["error"]


def test_an_error_status_without_a_reason_is_given_one(tmp_path, monkeypatch):
    """A part that ends an episode in ``error`` but says nothing (as the official env once did on
    StopCube) still leaves a row that names what happened."""
    from envs.official.mapping import error_text
    from wrappers.subgoal_execution import SubgoalExecution

    real = SubgoalExecution.step

    def silent(self, subgoal):
        obs, r, term, trunc, info = real(self, subgoal)
        if info["steps"] >= 30:
            info = dict(info, status="error", error=None)
            term = True
        return obs, r, term, trunc, info

    monkeypatch.setattr(SubgoalExecution, "step", silent)
    assert run.main(_argv(tmp_path, "--episodes", "0", "--max-steps", "96")) == 0
    (row,) = read_rows(tmp_path)
    assert row["status"] == "error" and row["error"].startswith("the env reported status 'error' without a reason after")
    assert "last subgoal" in row["error"]
    assert error_text({"status": "error", "error_message": "IK failed"}) == "IK failed"
    assert "without an error_message (info keys: elapsed_steps, status)" in error_text({"status": "error", "elapsed_steps": 3})


# --------------------------------------------------------------------------- results file
def test_corrupt_results_line_on_resume_reruns_only_that_unit(tmp_path):
    argv = ["--tasks", "BinFill", "--episodes", "0:5", "--conditions", "memory", "--out", str(tmp_path), "--wandb", "disabled"]
    assert run.main(argv, unit_fn=fx.det_unit) == 0
    path = tmp_path / "episodes.jsonl"
    lines = path.read_bytes().split(b"\n")[:-1]
    lines[2] = lines[2][:40] + b"\x00garbage}{"  # bit rot in the middle of the file
    path.write_bytes(b"\n".join(lines) + b"\n")
    with pytest.warns(ResultsWarning, match=r"episodes\.jsonl:3: skipped an unreadable row"):
        assert run.main(argv, unit_fn=fx.det_unit) == 0
    after = path.read_bytes().split(b"\n")[:-1]
    assert after[:5] == lines  # nothing finished was touched
    assert len(after) == 6  # exactly the unreadable unit ran again
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResultsWarning)
        assert sorted(r["episode"] for r in read_rows(tmp_path)) == [0, 1, 2, 3, 4]


def test_a_memory_that_rewrites_right_proposals_wrong_is_scored_harmful_everywhere(tmp_path):
    """Every rewrite is scored against the oracle, not only at history slots: PickXtimes's first pick
    is no slot (the goal settles it), and a memory that turns it into holding still is harmful there."""
    assert run.main(["--tasks", "PickXtimes", "--conditions", "memory:harmful_memory:HoldStill", "--wandb", "disabled",
                     "--out", str(tmp_path), "--episodes", "0", "--max-steps", "64"]) == 0
    (row,) = read_rows(tmp_path)
    mem = row["memory"]
    assert row["status"] == "timeout" and mem["rewrites"] >= 1
    assert mem["rewrites_harmful"] == mem["rewrites"] == mem["rewrites_wrong"]
    assert mem["rewrites_off_slot"] >= 1 and row["history_audit"]["decisions"] == 0
    # each wrong read is listed: the decision's step, the oracle's subgoal, the proposal, the rewrite
    assert mem["wrong_reads"] and len(mem["wrong_reads"]) == min(mem["reads_wrong"], 20)
    first = mem["wrong_reads"][0]
    assert first["proposed"] == first["oracle"] != first["executed"] and first["slot"] is False
