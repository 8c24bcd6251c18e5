"""The report's sections: markdown tables and their CSV records, from episode rows.

Shared by ``experiments.report`` (the whole report of a run) and ``experiments.reporting.readme_tables`` (the
README's result blocks) and ``experiments.reporting.tier_report`` (the formatting), so none of them imports
another for a table.
"""

from __future__ import annotations

import math
from typing import Any

from envs.episodes import ALL_TASKS, SUITES
from experiments.loop.conditions import condition_from_name, condition_sort_key
from experiments.reporting.stats import N_RESAMPLES, PairedComparison, SeedSummary, by_group, by_task, compare

Row = dict[str, Any]
SUITE_OF = {t: s for s, ts in SUITES.items() for t in ts}
MEMORY_KEYS = ("reads", "abstentions", "reads_correct", "reads_wrong")


def task_order(rows: list[Row]) -> list[str]:
    present = {r["task"] for r in rows}
    return [t for t in ALL_TASKS if t in present] + sorted(present - set(ALL_TASKS))


def condition_order(rows: list[Row]) -> list[str]:
    return sorted({r["condition"] for r in rows}, key=condition_sort_key)


# --- formatting -----------------------------------------------------------------------------------
def pct(x: float, digits: int = 1) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.{digits}f}"


def pts(x: float, digits: int = 1) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:+.{digits}f}"


def fmt_summary(s: SeedSummary | None) -> str:
    if s is None:
        return ""
    if not s.per_seed:
        cell = "—"
    elif s.n_seeds > 1:
        cell = f"{pct(s.mean)} ± {pct(s.sd)}"
    else:
        cell = pct(s.mean)
    return cell + (f" ({s.n_errors} err)" if s.n_errors else "")


def fmt_p(p: float) -> str:
    if p is None or math.isnan(p):
        return "—"
    return f"{p:.2g}" if p >= 1e-3 else f"{p:.1e}"


def md_table(headers: list[str], body: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in body]
    return "\n".join(lines)


# --- tables ---------------------------------------------------------------------------------------
def task_table(rows: list[Row]) -> tuple[str, list[dict[str, Any]]]:
    """Markdown and CSV records of success per task and condition (mean ± sd over seeds, %)."""
    summ = by_task(rows)
    conds = condition_order(rows)
    body, records = [], []
    for t in task_order(rows):
        body.append([SUITE_OF.get(t, "?"), t] + [fmt_summary(summ.get((t, c))) for c in conds])
        for c in conds:
            if (t, c) in summ:
                records.append(_record({"task": t, "suite": SUITE_OF.get(t, "?"), "condition": c}, summ[(t, c)]))
    return md_table(["suite", "task"] + conds, body), records


def suite_table(rows: list[Row]) -> tuple[str, list[dict[str, Any]]]:
    summ = by_group(rows)
    conds = condition_order(rows)
    groups = [g for g in list(SUITES) + ["all"] if any((g, c) in summ for c in conds)]
    body = [[g] + [fmt_summary(summ.get((g, c))) for c in conds] for g in groups]
    records = [_record({"suite": g, "condition": c}, summ[(g, c)]) for g in groups for c in conds if (g, c) in summ]
    return md_table(["suite"] + conds, body), records


def _record(head: dict[str, Any], s: SeedSummary) -> dict[str, Any]:
    rec = dict(head, mean=s.mean, sd=s.sd, n_seeds=s.n_seeds, n_episodes=s.n_episodes, n_errors=s.n_errors)
    rec.update({f"seed_{k}": v for k, v in s.per_seed.items()})
    return rec


FAIR_MEMORYLESS = "best-memoryless"
"""The best memoryless arm (``policies/slot_prior.py``): memory is also compared against it, paired."""


def paired_section(
    rows: list[Row], *, baseline: str = "no-memory", control: str = "memory", n_resamples: int = N_RESAMPLES, seed: int = 0
) -> tuple[str, list[PairedComparison]]:
    conds = condition_order(rows)
    out: list[str] = []
    comps: list[PairedComparison] = []
    headers = ["condition", "scope", "N", "A %", "B %", "Δ pts", "95% CI", "McNemar p", "better/worse"]

    def line(c: PairedComparison) -> list[Any]:
        ci = "—" if math.isnan(c.ci_low) else f"[{pts(c.ci_low)}, {pts(c.ci_high)}]"
        extra = f" ({c.n_error_pairs} err)" if c.n_error_pairs else ""
        return [c.a, c.scope, f"{c.n}{extra}", pct(c.rate_a), pct(c.rate_b), pts(c.diff), ci, fmt_p(c.p_mcnemar), f"{c.better}/{c.worse}"]

    suites_present = [s for s in SUITES if any(r["task"] in SUITES[s] for r in rows)]
    # the blind baseline, and the fair memoryless one beside it where the rows have it (issue 37)
    references = [baseline] + [c for c in (FAIR_MEMORYLESS,) if c != baseline and c in conds]
    for reference in (r for r in references if r in conds):
        others = [c for c in conds if c not in (reference, "oracle") and _is_memory_or_recent(c)]
        body = []
        for c in others:
            for scope in suites_present + ["all"]:
                tasks = SUITES.get(scope)
                comp = compare(rows, c, reference, tasks=tasks, scope=scope, n_resamples=n_resamples, seed=seed)
                if comp.n:
                    comps.append(comp)
                    body.append(line(comp))
        if body:
            out += [f"## Paired comparisons against `{reference}` (A = condition, B = {reference})", "", md_table(headers, body), ""]
    ablations = [c for c in conds if c.startswith("memory-")]
    if control in conds and ablations:
        body = []
        for c in ablations:
            comp = compare(rows, c, control, scope="all", n_resamples=n_resamples, seed=seed)
            if comp.n:
                comps.append(comp)
                body.append(line(comp))
        if body:
            out += [f"## Ablations against `{control}` (ablated minus full)", "", md_table(headers, body), ""]
    return "\n".join(out), comps


def _is_memory_or_recent(c: str) -> bool:
    try:
        cond = condition_from_name(c)
    except ValueError:
        return False
    return cond.memory or cond.recent_window is not None


def ablation_matrix(rows: list[Row], *, control: str = "memory", baseline: str = "no-memory") -> tuple[str, list[dict[str, Any]]]:
    """Task x ablation: ablated minus reference success, in points (reference: ``control``, else ``baseline``)."""
    conds = condition_order(rows)
    ablations = [c for c in conds if c.startswith("memory-")]
    ref = control if control in conds else baseline if baseline in conds else None
    if not ablations or ref is None:
        return "", []
    tasks = task_order(rows)
    body, records = [], []
    for t in tasks:
        cells = []
        for a in ablations:
            comp = compare(rows, a, ref, tasks=[t], scope=t, n_resamples=0)
            cells.append(f"{pts(comp.diff, 0)} ({comp.better}/{comp.worse})" if comp.n else "")
            if comp.n:
                records.append({"task": t, "ablation": a, "reference": ref, "n": comp.n, "diff": comp.diff, "better": comp.better, "worse": comp.worse})
        body.append([t] + cells)
    md = "\n".join(
        [
            f"## Task × ablation matrix (success of the ablation minus `{ref}`, points; better/worse pairs)",
            "",
            md_table(["task"] + [a.removeprefix("memory-") for a in ablations], body),
            "",
        ]
    )
    return md, records


def _cells(rows: list[Row], acc: dict[tuple[str, str], Any]):
    """``(condition, task, accumulated)`` for every cell of ``acc``, conditions then tasks in display order."""
    tasks = task_order(rows)
    for c in condition_order(rows):
        for t in tasks:
            if acc.get((t, c)):
                yield c, t, acc[(t, c)]


def memory_section(rows: list[Row]) -> tuple[str, list[dict[str, Any]]]:
    """Reads, abstentions and audited read accuracy per task, for every condition whose rows carry them."""
    acc: dict[tuple[str, str], dict[str, float]] = {}
    for r in rows:
        m = r.get("memory") or {}
        if not isinstance(m, dict) or not any(k in m for k in MEMORY_KEYS):
            continue
        a = acc.setdefault((r["task"], r["condition"]), {"episodes": 0, **{k: 0.0 for k in MEMORY_KEYS}})
        a["episodes"] += 1
        for k in MEMORY_KEYS:
            v = m.get(k, 0)
            a[k] += float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0.0
        # the retrospective probe (questions from the env's truth answered from snapshots alone)
        for kind in ((m.get("assessment") or {}).get("by_kind") or {}).values():
            for k in ("asked", "right", "not_available"):
                a[f"probe_{k}"] = a.get(f"probe_{k}", 0.0) + float(kind.get(k, 0) or 0)
        # the memory's CPU time against the simulator's physics time and the episode's wall time
        t = r.get("timings") or {}
        if isinstance(t.get("memory_s"), (int, float)) and isinstance(t.get("env_s"), (int, float)):
            a["memory_s"] = a.get("memory_s", 0.0) + t["memory_s"]
            a["env_s"] = a.get("env_s", 0.0) + t["env_s"]
            a["wall_s"] = a.get("wall_s", 0.0) + float(r.get("wall_s") or 0.0)
    if not acc:
        return "## Memory reads\n\nNo memory diagnostics in these rows.\n", []
    body, records = [], []
    for c, t, a in _cells(rows, acc):
        audited = a["reads_correct"] + a["reads_wrong"]
        accuracy = a["reads_correct"] / audited if audited else math.nan
        asked = a["reads"] + a["abstentions"]
        abstain = a["abstentions"] / asked if asked else math.nan
        n = a["episodes"]
        rec = {
            "condition": c,
            "task": t,
            "episodes": int(n),
            "reads_per_episode": a["reads"] / n,
            "abstentions_per_episode": a["abstentions"] / n,
            "abstention_rate": abstain,
            "read_accuracy": accuracy,
            "reads_audited": int(audited),
        }
        asked_p = a.get("probe_asked", 0.0)
        rec["probe_questions"] = int(asked_p)
        rec["probe_accuracy"] = a.get("probe_right", 0.0) / asked_p if asked_p else math.nan
        rec["probe_not_available"] = a.get("probe_not_available", 0.0) / asked_p if asked_p else math.nan
        env_s = a.get("env_s", 0.0)
        rec["memory_s_per_episode"] = a["memory_s"] / n if "memory_s" in a else math.nan
        rec["memory_over_physics"] = a["memory_s"] / env_s if env_s else math.nan
        rec["memory_share_of_wall"] = a["memory_s"] / a["wall_s"] if a.get("wall_s") else math.nan
        records.append(rec)
        ratio = rec["memory_over_physics"]
        body.append([c, t, int(n), f"{rec['reads_per_episode']:.1f}", f"{rec['abstentions_per_episode']:.1f}", pct(abstain),
                     pct(accuracy), int(audited), int(asked_p), pct(rec["probe_accuracy"]), pct(rec["probe_not_available"]),
                     "—" if math.isnan(ratio) else f"{ratio:.2f}", pct(rec["memory_share_of_wall"])])
    md = "\n".join(
        [
            "## Memory reads (per episode; accuracy over audited reads; abstention share of reads + abstentions)",
            "",
            "Probes: the retrospective assessment (questions from the env's truth answered from the memory's "
            "snapshot alone). Memory CPU: the memory layer's time over the simulator's physics time, and its "
            "share of the episode's wall time (rendering for the memory's tools is counted in neither).",
            "",
            md_table(["condition", "task", "episodes", "reads", "abstentions", "abstain %", "accuracy %", "audited",
                      "probes", "probe right %", "probe n/a %", "memory ÷ physics", "memory % of wall"], body),
            "",
        ]
    )
    return md, records


AUDIT_KEYS = ("decisions", "right", "corrected", "wrong", "abstained", "silent_wrong", "proposals_wrong")


def history_audit_section(rows: list[Row]) -> tuple[str, list[dict[str, Any]]]:
    """Every history-dependent decision (``task.history_slot()``) per task and condition: executed
    right, read wrong, abstained on a wrong proposal, or silently agreed with a wrong proposal."""
    acc: dict[tuple[str, str], dict[str, float]] = {}
    for r in rows:
        h = r.get("history_audit")
        if not isinstance(h, dict) or not h.get("decisions"):
            continue
        a = acc.setdefault((r["task"], r["condition"]), {k: 0.0 for k in AUDIT_KEYS} | {"episodes": 0})
        a["episodes"] += 1
        for k in AUDIT_KEYS:
            a[k] += float(h.get(k, 0) or 0)
    if not acc:
        return "", []
    body, records = [], []
    for c, t, a in _cells(rows, acc):
        n = a["decisions"]
        rec = {"condition": c, "task": t, "episodes": int(a["episodes"]), "decisions": int(n),
               **{k: a[k] / n for k in AUDIT_KEYS if k != "decisions"}}
        records.append(rec)
        body.append([c, t, int(a["episodes"]), int(n), pct(rec["proposals_wrong"]), pct(rec["right"]), pct(rec["corrected"]),
                     pct(rec["wrong"]), pct(rec["abstained"]), pct(rec["silent_wrong"])])
    md = "\n".join([
        "## Audit of every history-dependent decision (% of decisions)",
        "",
        "A decision is one composer query while the task declares a history-dependent slot. `right`: the "
        "executed subgoal acts on the oracle's object (`corrected`: the proposal was wrong); `read wrong`: "
        "memory answered and the answer is wrong; `abstained`: memory tried and left a wrong proposal; "
        "`silent`: memory left a wrong proposal without a trace (silently agreed).",
        "",
        md_table(["condition", "task", "episodes", "decisions", "proposal wrong", "right", "corrected", "read wrong",
                  "abstained", "silent"], body),
        "",
    ])
    return md, records


def state_accuracy_section(rows: list[Row]) -> tuple[str, list[dict[str, Any]]]:
    """Count probes split into exact / too low / too high / not available (the paper's figure 4a), and
    route probes by route length (its table 16), per task and condition, from the memory assessment."""
    counts: dict[tuple[str, str], dict[str, float]] = {}
    routes: dict[tuple[str, str, int], dict[str, float]] = {}
    for r in rows:
        a = ((r.get("memory") or {}).get("assessment") or {}) if isinstance(r.get("memory"), dict) else {}
        c = (a.get("by_kind") or {}).get("count")
        if c and c.get("asked"):
            acc = counts.setdefault((r["task"], r["condition"]), {"asked": 0, "right": 0, "too_low": 0, "too_high": 0, "not_available": 0})
            if c.get("wrong") and "too_low" not in c:
                # rows written before the split was recorded: recover it from the logged probes
                logged = [e for e in a.get("log") or [] if e.get("verdict") == "wrong"
                          and isinstance(e.get("truth"), int) and isinstance(e.get("memory"), int)]
                c = dict(c, too_low=sum(e["memory"] < e["truth"] for e in logged),
                         too_high=sum(e["memory"] > e["truth"] for e in logged))
            for k in acc:
                acc[k] += float(c.get(k, 0) or 0)
        for length, cell in (a.get("route_by_length") or {}).items():
            acc = routes.setdefault((r["task"], r["condition"], int(length)), {"asked": 0, "right": 0})
            for k in acc:
                acc[k] += float(cell.get(k, 0) or 0)
    if not counts and not routes:
        return "", []
    records: list[dict[str, Any]] = []
    lines: list[str] = []
    if counts:
        body = []
        for (t, c), v in sorted(counts.items(), key=lambda kv: (kv[0][1], kv[0][0])):
            n = v["asked"]
            rec = {"table": "count", "task": t, "condition": c, "probes": int(n), "exact": v["right"] / n,
                   "too_low": v["too_low"] / n, "too_high": v["too_high"] / n, "not_available": v["not_available"] / n}
            records.append(rec)
            body.append([c, t, int(n), pct(rec["exact"]), pct(rec["too_low"]), pct(rec["too_high"]), pct(rec["not_available"])])
        lines += ["## Count state against the env's true counts (probes)", "",
                  md_table(["condition", "task", "probes", "exact %", "too low %", "too high %", "n/a %"], body), ""]
    if routes:
        body = []
        for (t, c, length), v in sorted(routes.items(), key=lambda kv: (kv[0][1], kv[0][0], kv[0][2])):
            rec = {"table": "route", "task": t, "condition": c, "route_length": length, "probes": int(v["asked"]),
                   "exact": v["right"] / v["asked"] if v["asked"] else math.nan}
            records.append(rec)
            body.append([c, t, length, int(v["asked"]), pct(rec["exact"])])
        lines += ["## Route state by route length (probes; exact sequence match)", "",
                  md_table(["condition", "task", "route length", "probes", "exact %"], body), ""]
    return "\n".join(lines), records
