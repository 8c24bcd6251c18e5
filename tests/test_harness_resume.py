"""Kill -9 a real ``python -m experiments.run`` mid-run, rerun it, and lose or repeat nothing."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness_fixture_fns as fx  # noqa: E402

from experiments.loop.records import WorkUnit  # noqa: E402
from experiments.loop.results import iter_rows, read_rows  # noqa: E402

REPO = Path(__file__).resolve().parent.parent


def _cmd(out: Path) -> list[str]:
    return [
        sys.executable, "-m", "experiments.run",
        "--tasks", "BinFill", "--episodes", "0:4", "--seeds", "7", "11",
        "--conditions", "no-memory", "memory", "--out", str(out), "--wandb", "disabled",
        "--unit-fn", "tests.harness_fixture_fns:slow_unit",
    ]  # fmt: skip


def _complete_lines(path: Path) -> list[bytes]:
    data = path.read_bytes() if path.exists() else b""
    return data.split(b"\n")[:-1]  # drop a possibly torn tail


def test_kill_9_then_resume(tmp_path):
    out = tmp_path / "run"
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen(_cmd(out), cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    path = out / "episodes.jsonl"
    deadline = time.monotonic() + 60
    try:
        while len(_complete_lines(path)) < 3:
            assert proc.poll() is None, proc.stderr.read().decode()
            assert time.monotonic() < deadline, "the run wrote no rows"
            time.sleep(0.05)
    finally:
        proc.kill()  # SIGKILL
        proc.wait()
    before = _complete_lines(path)
    assert 3 <= len(before) < 16, "the run must have been stopped part-way"

    done = subprocess.run(_cmd(out), cwd=REPO, env=env, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()

    after = _complete_lines(path)
    assert after[: len(before)] == before  # finished rows untouched
    rows = list(iter_rows(path))
    keys = [(r["task"], r["split"], r["episode"], r["condition"], r["seed"]) for r in rows]
    assert len(keys) == len(set(keys)) == 16  # nothing lost, nothing twice
    for r in read_rows(out):
        u = WorkUnit(r["task"], r["split"], r["episode"], r["condition"], r["seed"])
        expected = fx.det_unit(u, None)
        assert (r["status"], r["success"], r["steps"]) == (expected.status, expected.success, expected.steps)
