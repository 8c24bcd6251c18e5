"""``python -m experiments.report``: tables, comparisons, memory diagnostics, files written."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness_fixture_fns as fx  # noqa: E402

from experiments import report  # noqa: E402
from experiments.config import ExperimentConfig  # noqa: E402
from experiments.executors import make_units  # noqa: E402
from experiments.results import ResultsWarning, ResultsWriter  # noqa: E402


def _fill(out: Path, **kw) -> list[dict]:
    cfg = ExperimentConfig(out=out, **kw)
    rows = [fx.det_unit(u, cfg) for u in make_units(cfg)]
    with ResultsWriter(out) as w:
        for r in rows:
            w.write(r)
    return [r.to_dict() for r in rows]


def test_report_on_two_run_dirs(tmp_path, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    _fill(a, tasks=("BinFill", "VideoUnmask"), episodes=("0:4",), seeds=(7, 11), conditions=("no-memory", "memory", "memory-no-route"))
    _fill(b, tasks=("BinFill", "VideoUnmask"), episodes=("0:4",), seeds=(7, 11), conditions=("recent4", "memory"))  # memory repeats: ignored
    with pytest.warns(UserWarning, match="already present"):
        rc = report.main([str(a), str(b), "--resamples", "500"])
    assert rc == 0
    out = capsys.readouterr().out
    for needle in ("## Success by task", "## Success by suite", "Paired comparisons against `no-memory`",
                   "Ablations against `memory`", "Task × ablation matrix", "## Memory reads", "recent4", "±"):
        assert needle in out  # fmt: skip
    for name in ("report.md", "report_tasks.csv", "report_suites.csv", "report_paired.csv", "report_ablation_matrix.csv",
                 "report_memory.csv", "report_counting.png", "report_permanence.png"):
        assert (a / name).exists(), name  # fmt: skip
    assert not (a / "report_imitation.png").exists()
    with open(a / "report_tasks.csv") as f:
        recs = list(csv.DictReader(f))
    assert {r["condition"] for r in recs} == {"no-memory", "memory", "memory-no-route", "recent4"}
    one = next(r for r in recs if r["task"] == "BinFill" and r["condition"] == "memory")
    assert one["n_seeds"] == "2" and one["seed_7"] and one["seed_11"] and one["n_episodes"] == "8"
    with open(a / "report_paired.csv") as f:
        paired = list(csv.DictReader(f))
    assert any(p["a"] == "memory" and p["b"] == "no-memory" and p["scope"] == "all" for p in paired)
    assert any(p["a"] == "memory-no-route" and p["b"] == "memory" for p in paired)


def test_report_without_memory_diagnostics_and_with_a_torn_line(tmp_path, capsys):
    _fill(tmp_path, tasks=("RouteStick",), episodes=("0:3",), conditions=("oracle", "no-memory"))
    with open(tmp_path / "episodes.jsonl", "ab") as f:
        f.write(b'{"task": "Rou')
    with pytest.warns(ResultsWarning, match=":7:"):
        assert report.main([str(tmp_path), "--no-plots", "--out", str(tmp_path / "rep")]) == 0
    out = capsys.readouterr().out
    assert "No memory diagnostics" in out and "Paired comparisons" not in out
    assert (tmp_path / "rep" / "report.md").exists() and not list((tmp_path / "rep").glob("*.png"))


def test_report_errors(tmp_path, capsys):
    assert report.main([str(tmp_path / "missing")]) == 2
    assert "missing" in capsys.readouterr().err
