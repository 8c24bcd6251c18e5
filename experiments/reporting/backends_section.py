"""Ours beside the benchmark's own envs: per task and suite, each arm's success on both backends.

Why side by side and never pooled: on the two backends the same (task, split, episode) is a
different scene (ours follow our seed formula, the official envs the benchmark's metadata), made by
a different simulator build and executed by a different executor (our scripted solvers or the
benchmark's planner). A cell therefore holds one backend's rows only; the table keeps the
episode indices and seeds both backends ran, so the two columns of an arm count the same indices.
The last column is the official memory arm over the official oracle, the issue's bar (0.9 per suite).
"""

from __future__ import annotations

import math
from typing import Any

from envs.episodes import SUITES
from experiments.reporting.report_sections import SUITE_OF, condition_order, fmt_summary, md_table, task_order
from experiments.reporting.stats import by_group, by_task

Row = dict[str, Any]
ARMS = ("oracle", "no-memory", "memory")


def _key(r: Row) -> tuple:
    return (r["task"], r["split"], int(r["episode"]), r["condition"], int(r["seed"]))


def common_rows(official: list[Row], ours: list[Row]) -> tuple[list[Row], list[Row]]:
    """Each side's rows of the (task, split, episode, condition, seed) both hold."""
    both = {_key(r) for r in official} & {_key(r) for r in ours}
    return [r for r in official if _key(r) in both], [r for r in ours if _key(r) in both]


def ratio_cell(num, den) -> str:
    """``num`` ÷ ``den`` (two summaries' means) as a table cell, ``–`` where either is missing or empty."""
    if num is None or den is None or not den.mean or math.isnan(num.mean) or math.isnan(den.mean):
        return "–"
    return f"{num.mean / den.mean:.2f}"


def backends_section(official: list[Row], ours: list[Row], suites_only: bool = False) -> tuple[str, list[dict[str, Any]]]:
    """The markdown table and its records; ``official`` and ``ours`` are one backend's rows each;
    ``suites_only``: the suite and overall lines alone (the README's short form)."""
    for rows, name in ((official, "robomme"), (ours, "robomem")):
        other = sorted({str(r.get("backend", "robomem")) for r in rows} - {name})
        if other:
            raise ValueError(f"backends section: the {name} side holds rows of {', '.join(other)}")
    official, ours = common_rows(official, ours)
    if not official:
        raise ValueError("backends section: the two runs share no (task, split, episode, condition, seed)")
    arms = [c for c in condition_order(official) if c in ARMS]
    t_off, t_ours = by_task(official), by_task(ours)
    g_off, g_ours = by_group(official), by_group(ours)
    head = ["suite"] + ([] if suites_only else ["task"]) + [f"{a} {side}" for a in arms for side in ("ours", "official")] \
        + ["official memory ÷ oracle"]
    body, records = [], []

    def line(suite: str, task: str, off: dict, mine: dict, key) -> None:
        cells = []
        for a in arms:
            cells += [fmt_summary(mine.get(key(a))), fmt_summary(off.get(key(a)))]
            for side, summ in (("robomem", mine.get(key(a))), ("robomme", off.get(key(a)))):
                if summ is not None:
                    records.append({"suite": suite, "task": task, "condition": a, "backend": side, "mean": summ.mean,
                                    "n_episodes": summ.n_episodes, "n_errors": summ.n_errors})
        body.append([suite] + ([] if suites_only else [task]) + cells + [ratio_cell(off.get(key("memory")), off.get(key("oracle")))])

    for t in [] if suites_only else task_order(official):
        line(SUITE_OF.get(t, "?"), t, t_off, t_ours, lambda a, t=t: (t, a))
    for g in [g for g in (*SUITES, "all") if any(k[0] == g for k in g_off)]:
        line(g if suites_only else f"**{g}**", "", g_off, g_ours, lambda a, g=g: (g, a))
    return md_table(head, body), records
