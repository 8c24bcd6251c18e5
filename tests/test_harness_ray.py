"""A local two-CPU Ray cluster writes the same rows as the local executor (about 10 s)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness_fixture_fns as fx  # noqa: E402

from experiments import run  # noqa: E402
from experiments.loop.results import iter_rows, read_rows  # noqa: E402

pytest.importorskip("ray")


def test_ray_matches_local(tmp_path, capsys):
    def argv(out, executor):
        return ["--tasks", "BinFill", "StopCube", "--episodes", "0:3", "--conditions", "no-memory", "memory",
                "--out", str(out), "--wandb", "disabled", "--executor", executor, "--workers", "2"]  # fmt: skip

    assert run.main(argv(tmp_path / "ray", "ray"), unit_fn=fx.raising_unit) == 0
    assert run.main(argv(tmp_path / "local", "local"), unit_fn=fx.raising_unit) == 0

    def view(out):
        return sorted(
            (r["task"], r["split"], r["episode"], r["condition"], r["seed"], r["status"], r["success"], r["steps"], r["env_seed"])
            for r in read_rows(out)
        )

    remote, local = view(tmp_path / "ray"), view(tmp_path / "local")
    assert len(remote) == len(list(iter_rows(tmp_path / "ray"))) == 12
    assert remote == local
    assert sum(r[5] == "error" for r in remote) == 4  # episode 1 raises, in every (task, condition)
    assert "on ray with 2 worker(s)" in capsys.readouterr().err
