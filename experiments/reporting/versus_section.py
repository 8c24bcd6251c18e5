"""One backend's results now beside the same episodes at an earlier commit: what a change of code moved.

Why a section of its own: a claim such as "every task within 2 points of its Results v1 figure or
better" compares two published runs at two commits, arm by arm, on the episodes both ran. Typing
that table by hand is what the report exists to prevent, and pooling the two runs would hide which
commit a number is from. The table keeps the (task, split, episode, condition, seed) both runs hold,
never mixes backends, and gives, per task and suite: each arm then and now, memory ÷ oracle then and
now, and the memory arm's change in points with whether it is within ``tolerance`` points of then or
better.
"""

from __future__ import annotations

from typing import Any

from envs.episodes import SUITES
from experiments.reporting.backends_section import common_rows, ratio_cell
from experiments.reporting.report_sections import SUITE_OF, condition_order, fmt_summary, md_table, task_order
from experiments.reporting.stats import by_group, by_task

Row = dict[str, Any]
TOLERANCE_PTS = 2.0
"""How far below its earlier figure the memory arm may land and still count as holding it (points)."""


def versus_section(now: list[Row], then: list[Row], tolerance: float = TOLERANCE_PTS) -> str:
    """The markdown table of ``now`` (rows at one commit) beside ``then`` (the same backend at another)."""
    backends = {str(r.get("backend", "robomem")) for r in now} | {str(r.get("backend", "robomem")) for r in then}
    if len(backends) > 1:
        raise ValueError(f"versus section: rows of {', '.join(sorted(backends))}; compare one backend with itself "
                         "(section=backends sets two backends side by side)")
    now, then = common_rows(now, then)
    if not now:
        raise ValueError("versus section: the two runs share no (task, split, episode, condition, seed)")
    arms = condition_order(now)
    t_now, t_then, g_now, g_then = by_task(now), by_task(then), by_group(now), by_group(then)
    memory = "memory" in arms
    head = ["suite", "task"] + [f"{a} {when}" for a in arms for when in ("then", "now")]
    if memory and "oracle" in arms:
        head += ["memory ÷ oracle then", "memory ÷ oracle now"]
    if memory:
        head += ["memory Δ pts", f"within {tolerance:g} or better"]
    body: list[list[Any]] = []
    held = [0, 0]

    def line(suite: str, task: str, a_now: dict, a_then: dict, key, count: bool) -> None:
        cells = []
        for a in arms:
            cells += [fmt_summary(a_then.get(key(a))), fmt_summary(a_now.get(key(a)))]
        if memory and "oracle" in arms:
            cells += [ratio_cell(a_then.get(key("memory")), a_then.get(key("oracle"))),
                      ratio_cell(a_now.get(key("memory")), a_now.get(key("oracle")))]
        if memory:
            m_now, m_then = a_now.get(key("memory")), a_then.get(key("memory"))
            if m_now is None or m_then is None:
                cells += ["–", "–"]
            else:
                delta = 100.0 * (m_now.mean - m_then.mean)
                ok = round(delta, 6) >= -tolerance  # 0.98 - 1.00 is -2.0000000000000018 in floats
                if count:
                    held[0] += ok
                    held[1] += 1
                cells += [f"{delta:+.1f}", "yes" if ok else "no"]
        body.append([suite, task] + cells)

    for t in task_order(now):
        line(SUITE_OF.get(t, "?"), t, t_now, t_then, lambda a, t=t: (t, a), True)
    for g in [g for g in (*SUITES, "all") if any(k[0] == g for k in g_now)]:
        line(f"**{g}**", "", g_now, g_then, lambda a, g=g: (g, a), False)
    if memory and held[1]:
        body[-1][-1] = f"{held[0]}/{held[1]} tasks"
    return md_table(head, body)
