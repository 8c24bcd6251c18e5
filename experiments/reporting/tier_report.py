"""The ood split's report: every measure per task *and tier*, so a memory that holds on the
benchmark's ranges but breaks one step beyond them shows where.

Built from rows alone (their ``difficulty`` is the tier, ``ood1``, ``ood2``, ...; see ``envs/ood.py``):

- success of ``oracle`` / ``no-memory`` / ``memory`` and memory ÷ oracle, per task and tier;
- the memory's read accuracy (audited reads) and its count state against the env's true counts
  (exact / too low / too high / not available), per task and tier;
- route state by route length (the imitation tasks' routes and patterns are longer on ood);
- the memory's failures in every cell where memory ÷ oracle falls below ``RATIO_FLOOR``, named by
  episode, status and the subgoal it ended on.

Only rows whose difficulty is an ood tier enter; a report of other splits has no such section.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from envs.ood import parse_difficulty
from experiments.reporting.report_sections import md_table, pct

Row = dict[str, Any]
RATIO_FLOOR = 0.9
ARMS = ("oracle", "no-memory", "memory")


def tier_of_row(row: Row) -> int:
    """The row's ood tier (0: not an ood row)."""
    return parse_difficulty(str(row.get("difficulty") or ""))[1] if row.get("split") == "ood" else 0


@dataclass
class Cell:
    """One (task, tier): per arm success counts, and the memory arm's reads and count probes."""

    episodes: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    successes: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    errors: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    reads_right: float = 0.0
    reads_wrong: float = 0.0
    count: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    failures: list[str] = field(default_factory=list)

    def rate(self, arm: str) -> float:
        n = self.episodes.get(arm, 0)
        return self.successes.get(arm, 0) / n if n else math.nan


def _pct(x: float) -> str:
    return pct(x, digits=0)


def _failure(row: Row) -> str:
    subgoals = row.get("subgoals") or []
    last = subgoals[-1] if subgoals and isinstance(subgoals[-1], dict) else {}
    where = last.get("oracle") or last.get("executed") or ""
    extra = f" at '{where}'" if where else ""
    if row.get("error"):
        extra += f" ({str(row['error']).splitlines()[0][:80]})"
    return f"ep{row['episode']} {row.get('status')}{extra}"


def collect(rows: list[Row], memory_arm: str = "memory") -> tuple[dict[tuple[str, int], Cell], dict[tuple[str, int], dict[str, float]]]:
    cells: dict[tuple[str, int], Cell] = defaultdict(Cell)
    routes: dict[tuple[str, int], dict[str, float]] = defaultdict(lambda: {"asked": 0.0, "right": 0.0})
    for r in rows:
        tier = tier_of_row(r)
        arm = r.get("condition")
        if not tier or arm not in ARMS:
            continue
        c = cells[(r["task"], tier)]
        if r.get("status") == "error":
            c.errors[arm] += 1
            if arm == memory_arm:
                c.failures.append(_failure(r))
            continue  # rates leave errors out, as the main report does
        c.episodes[arm] += 1
        c.successes[arm] += bool(r.get("success"))
        if arm != memory_arm:
            continue
        if not r.get("success"):
            c.failures.append(_failure(r))
        m = r.get("memory") if isinstance(r.get("memory"), dict) else {}
        c.reads_right += float(m.get("reads_correct", 0) or 0)
        c.reads_wrong += float(m.get("reads_wrong", 0) or 0)
        a = m.get("assessment") or {}
        probe = (a.get("by_kind") or {}).get("count") or {}
        for k in ("asked", "right", "too_low", "too_high", "not_available"):
            c.count[k] += float(probe.get(k, 0) or 0)
        for length, v in (a.get("route_by_length") or {}).items():
            cell = routes[(r["task"], int(length))]
            cell["asked"] += float(v.get("asked", 0) or 0)
            cell["right"] += float(v.get("right", 0) or 0)
    return cells, routes


def tier_section(rows: list[Row]) -> tuple[str, list[dict[str, Any]]]:
    """The markdown section and its records; empty when no row is an ood row."""
    cells, routes = collect(rows)
    if not cells:
        return "", []
    body, records, named = [], [], []
    for (task, tier), c in sorted(cells.items()):
        o, b, m = (c.rate(a) for a in ARMS)
        ratio = m / o if o and not math.isnan(o) and not math.isnan(m) else math.nan
        audited = c.reads_right + c.reads_wrong
        read_acc = c.reads_right / audited if audited else math.nan
        asked = c.count["asked"]
        share = {k: (c.count[k] / asked if asked else math.nan) for k in ("right", "too_low", "too_high", "not_available")}
        rec = {"task": task, "tier": tier, "episodes": c.episodes.get("memory", 0),
               "oracle": o, "no_memory": b, "memory": m, "memory_over_oracle": ratio,
               "read_accuracy": read_acc, "reads_audited": int(audited), "count_probes": int(asked),
               "count_exact": share["right"], "count_too_low": share["too_low"], "count_too_high": share["too_high"],
               "count_not_available": share["not_available"], "errors": dict(c.errors)}
        records.append(rec)
        n = max(c.episodes.values(), default=0)
        err = sum(c.errors.values())
        body.append([task, tier, n, _pct(o), _pct(b), _pct(m), "—" if math.isnan(ratio) else f"{ratio:.2f}",
                     _pct(read_acc), int(audited),
                     "—" if not asked else f"{_pct(share['right'])} / {_pct(share['too_low'])} / {_pct(share['too_high'])}",
                     err or ""])
        if not math.isnan(ratio) and ratio < RATIO_FLOOR or (math.isnan(ratio) and c.failures):
            head = f"- **{task} tier {tier}** (memory ÷ oracle {'—' if math.isnan(ratio) else f'{ratio:.2f}'})"
            named.append(f"{head}: " + ("; ".join(c.failures) if c.failures else "no memory failure; the oracle failed too"))
    lines = [
        "## Out-of-distribution split, per tier",
        "",
        "Tiers are the episode index's (`envs/ood.py`: tier = 1 + index mod the task's tier count). Success in %; "
        "memory ÷ oracle on success rates; read accuracy over the memory's audited reads; count probes of the "
        "memory's state against the env's true count, exact / too low / too high in %. Error rows are left out "
        "of rates and counted in the last column.",
        "",
        md_table(["task", "tier", "episodes", "oracle", "no-memory", "memory", "memory ÷ oracle", "read acc.",
                  "reads", "count exact / low / high", "errors"], body),
        "",
    ]
    if routes:
        rbody = []
        for (task, length), v in sorted(routes.items()):
            acc = v["right"] / v["asked"] if v["asked"] else math.nan
            rbody.append([task, length, int(v["asked"]), _pct(acc)])
            records.append({"task": task, "route_length": length, "route_probes": int(v["asked"]), "route_exact": acc})
        lines += ["### Route state by route length (ood, memory)", "",
                  md_table(["task", "route length", "probes", "exact %"], rbody), ""]
    lines += [f"### Where memory ÷ oracle < {RATIO_FLOOR}: the memory's failures", ""]
    lines += named or ["None."]
    lines.append("")
    return "\n".join(lines), records
