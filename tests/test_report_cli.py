"""``python -m experiments.report``: tables, comparisons, memory diagnostics, files written."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness_fixture_fns as fx  # noqa: E402

from experiments.reporting import report  # noqa: E402
from experiments.loop.config import ExperimentConfig  # noqa: E402
from experiments.loop.executors import make_units  # noqa: E402
from experiments.loop.results import ResultsWarning, ResultsWriter  # noqa: E402


def _fill(out: Path, **kw) -> list[dict]:
    cfg = ExperimentConfig.from_flat(out=out, **kw)
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


def test_memory_section_reports_probe_accuracy_and_memory_cpu_ratio():
    def row(ep, right, na, mem_s, env_s):
        return {"task": "BinFill", "condition": "memory", "seed": 7, "episode": ep, "status": "success", "success": True,
                "wall_s": 10.0, "timings": {"memory_s": mem_s, "env_s": env_s},
                "memory": {"reads": 2, "abstentions": 0, "reads_correct": 2, "reads_wrong": 0,
                           "assessment": {"by_kind": {"count": {"asked": 4, "right": right, "wrong": 4 - right - na,
                                                                "not_available": na}}}}}

    md, recs = report.memory_section([row(0, 4, 0, 1.0, 2.0), row(1, 1, 2, 3.0, 2.0)])
    (rec,) = recs
    assert rec["probe_questions"] == 8 and rec["probe_accuracy"] == pytest.approx(5 / 8)
    assert rec["probe_not_available"] == pytest.approx(2 / 8)
    assert rec["memory_over_physics"] == pytest.approx(1.0) and rec["memory_share_of_wall"] == pytest.approx(0.2)
    assert "| memory | BinFill | 2 | 2.0 | 0.0 | 0.0 | 100.0 | 4 | 8 | 62.5 | 25.0 | 1.00 | 20.0 |" in md


def test_state_accuracy_splits_counts_by_direction_and_routes_by_length():
    def row(ep, count, routes):
        return {"task": "PatternLock" if routes else "PickXtimes", "condition": "memory", "seed": 7, "episode": ep,
                "status": "success", "success": True,
                "memory": {"assessment": {"by_kind": {"count": count} if count else {}, "route_by_length": routes}}}

    rows = [row(0, {"asked": 4, "right": 2, "wrong": 2, "too_low": 1, "too_high": 1, "not_available": 0}, {}),
            row(1, {"asked": 4, "right": 3, "wrong": 0, "not_available": 1}, {}),
            row(0, None, {"3": {"asked": 2, "right": 2}, "5": {"asked": 2, "right": 1}})]
    md, recs = report.state_accuracy_section(rows)
    count = next(r for r in recs if r["table"] == "count")
    assert (count["exact"], count["too_low"], count["too_high"], count["not_available"]) == (5 / 8, 1 / 8, 1 / 8, 1 / 8)
    by_len = {r["route_length"]: r["exact"] for r in recs if r["table"] == "route"}
    assert by_len == {3: 1.0, 5: 0.5}
    assert "| memory | PickXtimes | 8 | 62.5 | 12.5 | 12.5 | 12.5 |" in md and "| memory | PatternLock | 5 | 2 | 50.0 |" in md
    assert report.state_accuracy_section([row(0, None, {})]) == ("", [])
