"""The memory cost benchmark's report: ratios pooled over the same episodes, the verdict per task."""

from __future__ import annotations

from benchmarks.bench_memory_cost import write_report


def _row(task, condition, wall, memory_cpu=None, reset=0.5):
    timings = {"reset_s": reset, "renders": 0 if condition == "oracle" else 50, "render_s": 0.0 if condition == "oracle" else 1.5,
               "memory_s": 0.0 if condition == "oracle" else 0.6, "cpu_s": wall}
    memory = {} if memory_cpu is None else {"cpu_s": memory_cpu}
    return {"task": task, "condition": condition, "wall_s": wall, "timings": timings, "memory": memory, "success": True}


def test_the_report_pools_ratios_and_names_the_tasks_over_the_target(tmp_path):
    rows = [_row("PickXtimes", "oracle", 2.0), _row("PickXtimes", "memory", 3.0, 0.4, reset=1.5),
            _row("StopCube", "oracle", 1.0), _row("StopCube", "memory", 5.0, 0.2)]
    facts = {"cpu_model": "test", "cpus": 2, "affinity": 2, "platform": "linux", "python": "3.11"}
    text = write_report(tmp_path / "cost.md", ["--tasks", "PickXtimes", "StopCube"], facts, rows, [1.0, 1.2], "now", 60.0, "abc")
    assert "| PickXtimes | 1 | 2.0 | 3.0 | **1.50x** | 1.0 |" in text  # video = memory reset - oracle reset
    assert "| StopCube | 1 | 1.0 | 5.0 | **5.00x** |" in text
    assert "pooled over every task played: **2.67x**" in text  # (3 + 5) / (2 + 1)
    assert "**not met** (1 of 2 tasks above it: StopCube)" in text
    assert "**0.30 s** on average over tasks" in text
    assert (tmp_path / "cost.md").read_text() == text
