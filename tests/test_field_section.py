"""The field section: one backend's arms beside the published columns, transcribed without drift."""

from __future__ import annotations

import pytest

from envs.episodes import ALL_TASKS, SUITES
from experiments.loop.results import read_rows
from experiments.reporting.field_section import field_section, published_mean
from experiments.reporting.paper_reference import ARM_MEANS, FRAMESAMP, NO_MEMORY, ORACLE_SUBGOAL, SIMPLEARM
from experiments.reporting.readme_tables import SECTIONS

# SimpleARM Table 1's suite and overall averages, as printed (no mem., FrameSamp, ours, oracle)
PRINTED = {
    "counting": (38.00, 65.22, 57.00, 83.86),
    "permanence": (39.34, 25.11, 78.67, 93.31),
    "reference": (31.61, 36.33, 78.50, 95.17),
    "imitation": (21.89, 51.39, 54.50, 63.98),
    "all": (32.70, 44.51, 67.17, 84.08),
}


@pytest.mark.parametrize("suite", list(PRINTED))
def test_transcribed_task_figures_average_to_the_printed_suite_figures(suite):
    """A mistyped cell would move its suite's average: each column's task figures must average to
    what the paper prints for the suite (to within the rounding of its one-decimal cells)."""
    tasks = list(ALL_TASKS) if suite == "all" else list(SUITES[suite])
    for column, printed in zip((NO_MEMORY, FRAMESAMP, SIMPLEARM, ORACLE_SUBGOAL), PRINTED[suite]):
        assert published_mean(column, tasks) == pytest.approx(printed, abs=0.05)
    assert PRINTED["all"][0] == ARM_MEANS["no-memory"] and PRINTED["all"][2] == ARM_MEANS["memory"]


def _official_rows():
    return read_rows("benchmarks/results/official_test_0_10", warn=False)


def test_the_run_stands_beside_the_published_columns():
    rows = _official_rows()
    table, records = field_section(rows)
    lines = {(r["suite"], r["task"]): r for r in records}
    binfill = [r for r in rows if r["task"] == "BinFill" and r["condition"] == "oracle"]
    assert lines[("counting", "BinFill")]["oracle"] == pytest.approx(sum(r["success"] for r in binfill) / len(binfill))
    assert lines[("counting", "BinFill")]["SimpleARM (paper)"] == 60.0
    assert lines[("counting", "StopCube")]["astra"] == 18.0 and lines[("counting", "BinFill")]["astra"] is None
    assert lines[("all", "")]["astra"] == 79.13 and lines[("all", "")]["π0.5 oracle subgoals (paper)"] == pytest.approx(84.08, abs=0.01)
    assert all(r["backend"] == "robomme" for r in records)
    assert table.splitlines()[0].startswith("| suite | task | oracle (here) |")
    assert SECTIONS["field"](rows) == table


def test_astra_is_shown_for_a_suite_only_when_the_run_holds_the_whole_suite():
    rows = [r for r in _official_rows() if r["task"] != "StopCube"]
    lines = {(r["suite"], r["task"]): r for r in field_section(rows)[1]}
    assert lines[("counting", "")]["astra"] is None and lines[("all", "")]["astra"] is None
    assert lines[("imitation", "")]["astra"] == 61.0


def test_rows_of_two_backends_are_refused():
    rows = _official_rows()
    mixed = rows[:5] + [dict(r, backend="robomem") for r in rows[5:10]]
    with pytest.raises(ValueError, match="rows of robomem, robomme would share a cell"):
        field_section(mixed)
