"""W&B offline: one run per (condition, seed), read back from the files on disk."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness_fixture_fns as fx  # noqa: E402

from experiments.loop.config import ExperimentConfig  # noqa: E402
from experiments.loop.executors import make_units  # noqa: E402

pytest.importorskip("wandb")


def test_offline_runs_hold_the_summary(tmp_path, monkeypatch):
    from experiments.reporting.wandb_log import log_results

    monkeypatch.delenv("WANDB_MODE", raising=False)
    cfg = ExperimentConfig.from_flat(tasks=("BinFill", "VideoUnmask"), episodes=("0:3",), seeds=(7, 11), conditions=("memory",), out=tmp_path / "exp1")
    rows = [fx.det_unit(u, cfg).to_dict() for u in make_units(cfg)]
    dirs = log_results(cfg, rows)

    assert len(dirs) == 2
    assert "WANDB_MODE" not in os.environ  # environment restored
    names = set()
    for d in dirs:
        assert d.is_dir() and d.name.startswith("offline-run-")
        assert (tmp_path / "exp1" / "wandb") in d.parents
        summary = json.loads((d / "files" / "wandb-summary.json").read_text())
        for key in ("success/BinFill", "success/VideoUnmask", "success/all", "success_suite/counting", "episodes/n", "memory/reads"):
            assert key in summary
        assert summary["episodes/n"] == 6
        log = next(d.glob("run-*.wandb")).read_bytes()  # the record W&B itself syncs
        assert b"success/BinFill" in log and b"exp1" in log  # metrics and group
        names |= {n for n in ("memory-s7", "memory-s11") if n.encode() in log}
    assert names == {"memory-s7", "memory-s11"}

    seed7 = [r for r in rows if r["seed"] == 7 and r["task"] == "BinFill" and r["status"] != "error"]
    expected = sum(r["success"] for r in seed7) / len(seed7)
    got = [json.loads((d / "files" / "wandb-summary.json").read_text()) for d in dirs]
    assert any(abs(s["success/BinFill"] - expected) < 1e-9 for s in got)


def test_disabled_logs_nothing(tmp_path):
    from experiments.reporting.wandb_log import log_results

    cfg = ExperimentConfig.from_flat(tasks=("BinFill",), out=tmp_path, wandb="disabled")
    assert log_results(cfg, [fx.det_unit(u, cfg).to_dict() for u in make_units(cfg)]) == []
    assert not (tmp_path / "wandb").exists()


def test_published_results_mirror_into_one_group(tmp_path, monkeypatch):
    """A campaign published over several sessions logs as one W&B group, plus a report run per name."""
    from experiments.reporting.publish import publish
    from experiments.reporting.wandb_group import GroupArgs, log_group

    monkeypatch.delenv("WANDB_MODE", raising=False)
    cfg = ExperimentConfig.from_flat(tasks=("BinFill",), episodes=("0:2",), seeds=(7,), conditions=("oracle", "memory"),
                                     out=tmp_path / "run")
    rows = [dict(fx.det_unit(u, cfg).to_dict(), code_commit="a" * 40, code_dirty=False) for u in make_units(cfg)]
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "episodes.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "run" / "config.json").write_text(json.dumps({"git_commit": "a" * 40, "config": cfg.flat_dict()}))
    publish(tmp_path / "run", "v1_demo", dest_root=tmp_path / "results")

    dirs = log_group(GroupArgs(names=("v1_demo",), group="v1", out=tmp_path / "wb", root=tmp_path / "results"))
    assert len(dirs) == 3  # oracle-s7, memory-s7, the report
    logs = b"".join(next(d.glob("run-*.wandb")).read_bytes() for d in dirs)
    for needle in (b"v1_demo/oracle-s7", b"v1_demo/memory-s7", b"v1_demo/report", b"report/tasks", b"results:v1_demo"):
        assert needle in logs, needle
    assert all((tmp_path / "wb" / "wandb") in d.parents for d in dirs)
