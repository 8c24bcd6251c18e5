"""One backend's arms per task and suite beside the field's published columns (issue 37's report).

Why a section of its own: Results v2 asks where this harness's numbers stand against the numbers
the field reports on the same benchmark (the paper's 67.17 / 32.70 / 84.08, FrameSamp's 44.51,
Astra's 79.13), task by task, without typing any of them by hand. The table gives this run's arms
(mean ± sd over its seeds) and memory ÷ oracle, then the published columns: π0.5 without memory,
FrameSamp+ModuL, SimpleARM, π0.5 with oracle subgoals (all three seeds, SimpleARM Table 1) and
Astra where its report names the task or suite (one run).

The columns are not the same experiment, and the page that shows this table must say so: here the
executor is the benchmark's planner (or ours) with or without the ``pi05-like`` fault profile, the
subgoal predictor is the oracle's text with history slots blinded (or the memory's fill of them),
and the step budgets are the harness's; there π0.5 executes and a fine-tuned VLM predicts subgoals.
Only the shape carries over; no significance is computed across the two sides.

The run's rows must come from one backend: a table that pooled two worlds would give numbers that
neither reports.
"""

from __future__ import annotations

import math
from typing import Any

from envs.episodes import ALL_TASKS, SUITES
from experiments.reporting.backends_section import ratio_cell
from experiments.reporting.paper_reference import ASTRA_SUITES, ASTRA_TASKS, FRAMESAMP, NO_MEMORY, ORACLE_SUBGOAL, SIMPLEARM
from experiments.reporting.report_sections import SUITE_OF, condition_order, fmt_summary, md_table, task_order
from experiments.reporting.stats import by_group, by_task

Row = dict[str, Any]

ARMS = ("oracle", "no-memory", "best-memoryless", "memory")
"""The arms this table shows when the run has them (Results v2's headline arms and its fair memoryless one)."""

PUBLISHED: tuple[tuple[str, dict[str, float]], ...] = (
    ("π0.5 no memory (paper)", NO_MEMORY),
    ("FrameSamp (paper)", FRAMESAMP),
    ("SimpleARM (paper)", SIMPLEARM),
    ("π0.5 oracle subgoals (paper)", ORACLE_SUBGOAL),
)


def published_mean(column: dict[str, float], tasks: list[str]) -> float:
    """A published column over ``tasks``: the mean of its task figures (each task weighs the same, as
    the paper's suite and overall averages do)."""
    return sum(column[t] for t in tasks) / len(tasks)


def field_section(rows: list[Row]) -> tuple[str, list[dict[str, Any]]]:
    """The markdown table and its records (one per line: the run's means and the published figures)."""
    backends = sorted({str(r.get("backend", "robomem")) for r in rows})
    if len(backends) > 1:
        raise ValueError(f"field section: rows of {', '.join(backends)} would share a cell; give one backend's run")
    if not rows:
        raise ValueError("field section: no rows")
    arms = [a for a in condition_order(rows) if a in ARMS]
    head = ["suite", "task"] + [f"{a} (here)" for a in arms] + ["memory ÷ oracle (here)"] \
        + [name for name, _ in PUBLISHED] + ["Astra (report)", "SimpleARM ÷ oracle subgoals (paper)"]
    t_here, g_here = by_task(rows), by_group(rows)
    body: list[list[Any]] = []
    records: list[dict[str, Any]] = []

    def line(suite: str, task: str, here: dict, key, tasks: list[str], astra: float | None) -> None:
        published = [published_mean(col, tasks) for _, col in PUBLISHED]
        ratio = published[2] / published[3] if published[3] else math.nan
        body.append([suite, task] + [fmt_summary(here.get(key(a))) for a in arms]
                    + [ratio_cell(here.get(key("memory")), here.get(key("oracle")))]
                    + [f"{v:.1f}" for v in published] + ["" if astra is None else f"{astra:.1f}", f"{ratio:.2f}"])
        rec = {"suite": suite.strip("*"), "task": task, "backend": backends[0]}
        for a in arms:
            s = here.get(key(a))
            rec[a] = None if s is None else s.mean
        rec.update({name: v for (name, _), v in zip(PUBLISHED, published)})
        rec["astra"] = astra
        records.append(rec)

    present = task_order(rows)
    for t in present:
        line(SUITE_OF.get(t, "?"), t, t_here, lambda a, t=t: (t, a), [t], ASTRA_TASKS.get(t))
    for g in (*SUITES, "all"):
        tasks = [t for t in present if t in SUITES[g]] if g != "all" else present
        if not tasks or not any(k[0] == g for k in g_here):
            continue
        whole = set(tasks) == set(ALL_TASKS if g == "all" else SUITES[g])  # Astra reports whole suites only
        line(f"**{g}**", "", g_here, lambda a, g=g: (g, a), tasks, ASTRA_SUITES.get(g) if whole else None)
    return md_table(head, body), records
