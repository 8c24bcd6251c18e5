"""What a run cost: CPU-hours per condition and the memory layer's own time per episode.

Every row records its episode's wall time (``wall_s``, one worker process on one core) and the
split of it (``timings``: reset, which renders a demonstration video when the memory watches one,
then physics, rendering, policy, memory). Summed over rows, wall time is the
run's CPU-hours; the memory's seconds per episode say what the memory adds to a frozen policy's
loop on this machine. The machine's load is not in the rows; the run's own log and
``benchmarks/`` speed results carry that.
"""

from __future__ import annotations

import math
from typing import Any

from experiments.reporting.report_sections import condition_order, md_table

Row = dict[str, Any]


def _sum(rows: list[Row], key: str) -> tuple[float, int]:
    """Sum of ``timings[key]`` over the rows that carry it, and how many do."""
    v = [float(r["timings"][key]) for r in rows
         if isinstance(r.get("timings"), dict) and isinstance(r["timings"].get(key), (int, float))]
    return sum(v), len(v)


def cost_section(rows: list[Row]) -> tuple[str, list[dict[str, Any]]]:
    body, records = [], []
    groups = [(c, [r for r in rows if r["condition"] == c]) for c in condition_order(rows)]
    groups.append(("**all**", rows))
    for name, part in groups:
        wall = sum(float(r.get("wall_s") or 0.0) for r in part)
        n = len(part)
        rec: dict[str, Any] = {"condition": name.strip("*"), "episodes": n, "cpu_hours": wall / 3600,
                               "wall_s_per_episode": wall / n if n else math.nan}
        sums = {key: _sum(part, key) for key in ("memory_s", "render_s", "env_s", "policy_s", "reset_s")}
        for key, (total, k) in sums.items():
            rec[f"{key}_per_episode"] = total / k if k else math.nan
        mem, k = sums["memory_s"]
        mem_wall = sum(float(r.get("wall_s") or 0.0) for r in part
                       if isinstance(r.get("timings"), dict) and "memory_s" in r["timings"])
        rec["memory_share_of_wall"] = mem / mem_wall if k and mem_wall else math.nan
        records.append(rec)
        body.append([name, n, f"{rec['cpu_hours']:.2f}", _s(rec["wall_s_per_episode"]), _s(rec["reset_s_per_episode"]),
                     _s(rec["env_s_per_episode"]), _s(rec["render_s_per_episode"]), _s(rec["memory_s_per_episode"]),
                     "—" if math.isnan(rec["memory_share_of_wall"]) else f"{100 * rec['memory_share_of_wall']:.0f}"])
    md = md_table(["condition", "episodes", "CPU-hours", "s / episode", "reset s", "physics s", "render s", "memory s",
                   "memory % of wall"], body)
    return md, records


def _s(x: float) -> str:
    return "—" if x is None or math.isnan(x) else f"{x:.1f}"
