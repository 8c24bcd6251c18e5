"""Tables and plots from one or more run directories.

    python -m experiments.report runs/paper [runs/paper-extra ...] [--out DIR]
    python -m experiments.report --readme README.md     # regenerate the README's result blocks
    python -m experiments.report --check README.md      # exit 1 if one differs from benchmarks/results/

Reads every row of each ``episodes.jsonl`` (a key present in two directories counts once, from
the first), prints the report and writes it beside the first run directory (or ``--out``):

- ``report.md``: everything below, as markdown;
- ``report_tasks.csv`` / ``report_suites.csv``: success per task / suite and condition, each
  seed's rate, mean and sample sd across seeds, episodes and errors;
- ``report_paired.csv``: paired comparisons (difference, paired-bootstrap 95 % interval, exact
  McNemar p, better/worse counts, N) of every memory and recent-frame condition against
  ``no-memory``, and of every ``memory-*`` ablation against ``memory``;
- ``report_ablation_matrix.csv``: task x ablation, ablated minus full success in points;
- ``report_memory.csv``: memory reads, abstentions and read accuracy per task and condition;
- ``report_ood_tiers.csv``: on ood rows, success per task and tier, memory ÷ oracle, read and count
  accuracy (``experiments/tier_report.py``);
- ``report_<suite>.png``: one bar chart per suite (mean +- sd over seeds).

Rates leave out ``error`` rows (crashes are not failures of the policy); tables flag them.
"""

from __future__ import annotations

import csv
import math
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tyro

from envs.episodes import ALL_TASKS, SUITES
from experiments.conditions import condition_from_name, condition_sort_key
from experiments.results import read_rows, results_path, row_key
from experiments.tier_report import tier_section
from experiments.stats import N_RESAMPLES, PairedComparison, SeedSummary, by_group, by_task, compare

Row = dict[str, Any]
SUITE_OF = {t: s for s, ts in SUITES.items() for t in ts}
MEMORY_KEYS = ("reads", "abstentions", "reads_correct", "reads_wrong")


# --- loading ---------------------------------------------------------------------------------------
def load_rows(run_dirs: list[Path] | tuple[Path, ...]) -> list[Row]:
    """All rows of the run directories; a unit present in several counts once (first directory wins)."""
    seen: set = set()
    rows: list[Row] = []
    for d in run_dirs:
        n_dup = 0
        for r in read_rows(d):
            k = row_key(r)
            if k in seen:
                n_dup += 1
                continue
            seen.add(k)
            rows.append(r)
        if n_dup:
            warnings.warn(f"{d}: {n_dup} rows already present in an earlier run directory were ignored", stacklevel=2)
    return rows


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
    if baseline in conds:
        others = [c for c in conds if c not in (baseline, "oracle") and _is_memory_or_recent(c)]
        body = []
        for c in others:
            for scope in suites_present + ["all"]:
                tasks = SUITES.get(scope)
                comp = compare(rows, c, baseline, tasks=tasks, scope=scope, n_resamples=n_resamples, seed=seed)
                if comp.n:
                    comps.append(comp)
                    body.append(line(comp))
        if body:
            out += [f"## Paired comparisons against `{baseline}` (A = condition, B = {baseline})", "", md_table(headers, body), ""]
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


# --- the report -----------------------------------------------------------------------------------
@dataclass
class Report:
    markdown: str
    tables: dict[str, list[dict[str, Any]]]


def build_report(
    rows: list[Row],
    *,
    sources: list[str] | None = None,
    baseline: str = "no-memory",
    control: str = "memory",
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
) -> Report:
    conds = condition_order(rows)
    statuses: dict[str, int] = {}
    for r in rows:
        statuses[r.get("status", "?")] = statuses.get(r.get("status", "?"), 0) + 1
    seeds = sorted({int(r["seed"]) for r in rows})
    head = [
        "# Results",
        "",
        f"Runs: {', '.join(sources or [])}  ",
        f"{len(rows)} episodes; tasks: {len(task_order(rows))}; conditions: {', '.join(conds)}; seeds: {' '.join(map(str, seeds))}  ",
        "Statuses: " + ", ".join(f"{k} {v}" for k, v in sorted(statuses.items())),
        "",
        "Success in %, mean ± sample sd over seeds (one seed: the rate alone). Error rows are left out of rates.",
        "",
    ]
    t_md, t_rec = task_table(rows)
    s_md, s_rec = suite_table(rows)
    p_md, comps = paired_section(rows, baseline=baseline, control=control, n_resamples=n_resamples, seed=seed)
    m_md, m_rec = ablation_matrix(rows, control=control, baseline=baseline)
    r_md, r_rec = memory_section(rows)
    a_md, a_rec = state_accuracy_section(rows)
    h_md, h_rec = history_audit_section(rows)
    o_md, o_rec = tier_section(rows)
    parts = head + ["## Success by task", "", t_md, "", "## Success by suite", "", s_md, ""]
    parts += [p for p in (p_md, m_md) if p]
    parts += [r_md] + [p for p in (h_md, a_md, o_md) if p]
    return Report(
        "\n".join(parts).rstrip() + "\n",
        {
            "tasks": t_rec,
            "suites": s_rec,
            "paired": [c.as_row() for c in comps],
            "ablation_matrix": m_rec,
            "memory": r_rec,
            "state_accuracy": a_rec,
            "history_audit": h_rec,
            **({"ood_tiers": o_rec} if o_rec else {}),
        },
    )


def write_csv(path: Path, records: list[dict[str, Any]]) -> None:
    cols: list[str] = []
    for r in records:
        cols += [k for k in r if k not in cols]
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        w.writerows(records)


def plot_suites(rows: list[Row], out_dir: Path) -> list[Path]:
    """One grouped bar chart per suite: tasks on x, one bar per condition, sd over seeds as error bars."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    summ = by_task(rows)
    conds = condition_order(rows)
    paths = []
    for suite, tasks in SUITES.items():
        tasks = [t for t in tasks if any((t, c) in summ for c in conds)]
        if not tasks:
            continue
        cs = [c for c in conds if any((t, c) in summ for t in tasks)]
        x = np.arange(len(tasks))
        width = 0.8 / max(1, len(cs))
        fig, ax = plt.subplots(figsize=(max(8.0, 2.4 * len(tasks)), 4.5))
        for i, c in enumerate(cs):
            means = [100 * summ[(t, c)].mean if (t, c) in summ else np.nan for t in tasks]
            sds = [100 * summ[(t, c)].sd if (t, c) in summ else np.nan for t in tasks]
            sds = [0.0 if math.isnan(s) else s for s in sds]
            ax.bar(x + (i - (len(cs) - 1) / 2) * width, means, width, yerr=sds, capsize=2, label=c)
        ax.set_xticks(x, tasks)
        ax.set_ylim(0, 110)
        ax.set_ylabel("success (%)")
        ax.set_title(f"{suite}: success by condition (mean ± sd over seeds)")
        ax.legend(fontsize="small", ncol=min(6, len(cs)), loc="upper center", bbox_to_anchor=(0.5, -0.1), frameon=False)
        p = out_dir / f"report_{suite}.png"
        fig.savefig(p, dpi=110, bbox_inches="tight")
        plt.close(fig)
        paths.append(p)
    return paths


def write_report(report: Report, rows: list[Row], out_dir: Path, *, plots: bool = True) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    written = [out_dir / "report.md"]
    written[0].write_text(report.markdown)
    for name, records in report.tables.items():
        p = out_dir / f"report_{name}.csv"
        write_csv(p, records)
        written.append(p)
    if plots and rows:
        written += plot_suites(rows, out_dir)
    return written


# --- CLI -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ReportArgs:
    """Print success tables and paired comparisons for run directories, and write them beside the first."""

    run_dirs: tyro.conf.Positional[tuple[Path, ...]] = ()
    """Run directories (each holding an episodes.jsonl)."""
    readme: Path | None = None
    """Rewrite the result blocks of this markdown file (e.g. README.md) from benchmarks/results/ (no run dirs needed)."""
    check: Path | None = None
    """Exit 1 when a result block of this markdown file differs from what benchmarks/results/ gives."""
    out: Path | None = None
    """Where to write report.md, the CSVs and the plots (default: the first run directory)."""
    baseline: str = "no-memory"
    """Condition every memory and recent-frame condition is compared against."""
    control: str = "memory"
    """Full-method condition the memory-* ablations are compared against."""
    resamples: int = N_RESAMPLES
    """Paired bootstrap resamples."""
    bootstrap_seed: int = 0
    """Seed of the bootstrap's random generator."""
    plots: bool = True
    """Write one PNG bar chart per suite."""


def main(argv: list[str] | None = None) -> int:
    args = tyro.cli(ReportArgs, args=sys.argv[1:] if argv is None else argv, prog="python -m experiments.report")
    if args.readme is not None or args.check is not None:
        from experiments.readme_tables import check_readme, write_readme

        try:
            if args.readme is not None:
                changed = write_readme(args.readme)
                print(f"{args.readme}: {len(changed)} result blocks rewritten" + (f" ({', '.join(changed)})" if changed else ""))
            if args.check is not None:
                n, problems = check_readme(args.check)
                if problems:
                    print(problems, file=sys.stderr)
                    return 1
                print(f"{args.check}: all {n} result blocks match the committed results")
        except (OSError, ValueError) as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        return 0
    if not args.run_dirs:
        print("error: give at least one run directory", file=sys.stderr)
        return 2
    missing = [str(d) for d in args.run_dirs if not results_path(d).exists()]
    if missing:
        print(f"error: no episodes.jsonl in {', '.join(missing)}", file=sys.stderr)
        return 2
    rows = load_rows(list(args.run_dirs))
    if not rows:
        print(f"error: no readable rows in {', '.join(map(str, args.run_dirs))}", file=sys.stderr)
        return 1
    report = build_report(
        rows,
        sources=[str(d) for d in args.run_dirs],
        baseline=args.baseline,
        control=args.control,
        n_resamples=args.resamples,
        seed=args.bootstrap_seed,
    )
    print(report.markdown)
    out_dir = Path(args.out) if args.out else results_path(args.run_dirs[0]).parent
    written = write_report(report, rows, out_dir, plots=args.plots)
    print(f"wrote {len(written)} files to {out_dir}: {', '.join(p.name for p in written)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
