"""Tables and plots from one or more run directories.

    python -m experiments.report runs/paper [runs/paper-extra ...] [--out DIR]
    python -m experiments.report --readme README.md docs/RESULTS.md   # regenerate the docs' generated blocks
    python -m experiments.report --check README.md docs/RESULTS.md    # exit 1 if one differs from benchmarks/results/

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
- ``report_anchors.csv``: each arm's all-task mean beside the SimpleARM paper's
  (``experiments/reporting/paper_comparison.py``);
- ``report_specificity.csv``: per ablation, the tasks it hurts and spares beside the paper's;
- ``report_failures.csv``: one reason per episode the memory arm failed and the oracle solved
  (``experiments/reporting/failure_reasons.py``);
- ``report_cost.csv``: CPU-hours and seconds per episode by condition (``experiments/reporting/cost_section.py``);
- ``report_ood_tiers.csv``: on ood rows, success per task and tier, memory ÷ oracle, read and count
  accuracy (``experiments/reporting/tier_report.py``);
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

from envs.episodes import SUITES
from experiments.reporting.cost_section import cost_section
from experiments.reporting.failure_reasons import failures_section
from experiments.reporting.paper_comparison import anchors_section, specificity_section
from experiments.reporting.report_sections import (
    ablation_matrix,
    condition_order,
    history_audit_section,
    memory_section,
    paired_section,
    state_accuracy_section,
    suite_table,
    task_order,
    task_table,
)
from experiments.loop.results import read_rows, results_path, row_key
from experiments.reporting.stats import N_RESAMPLES, by_task
from experiments.reporting.tier_report import tier_section

Row = dict[str, Any]


# --- loading ---------------------------------------------------------------------------------------
def load_rows(run_dirs: list[Path] | tuple[Path, ...]) -> list[Row]:
    """All rows of the run directories; a unit present in several counts once (first directory wins)."""
    seen: set = set()
    rows: list[Row] = []
    backends: set[str] = set()  # checked over every directory's rows, before a duplicate is dropped
    for d in run_dirs:
        n_dup = 0
        mine = read_rows(d)
        backends |= {r["backend"] for r in mine}
        for r in mine:
            k = row_key(r)
            if k in seen:
                n_dup += 1
                continue
            seen.add(k)
            rows.append(r)
        if n_dup:
            warnings.warn(f"{d}: {n_dup} rows already present in an earlier run directory were ignored", stacklevel=2)
    if len(backends) > 1:
        # the same (task, split, episode) is another scene on ours and on the benchmark's envs, so one
        # cell must never pool them (compare them side by side: a section=backends docs block)
        raise ValueError(f"rows of {len(backends)} backends ({', '.join(sorted(backends))}) in one report from "
                         f"{', '.join(map(str, run_dirs))}: report each backend's runs on their own")
    return rows


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
    an_md, an_rec = anchors_section(rows)
    sp_md, sp_rec = specificity_section(rows, control=control)
    f_md, f_rec = failures_section(rows, control)
    c_md, c_rec = cost_section(rows)
    parts = head + ["## Success by task", "", t_md, "", "## Success by suite", "", s_md, ""]
    if an_rec:
        parts += ["## All-task means beside the SimpleARM paper's", "", an_md, ""]
    parts += [p for p in (p_md, m_md) if p]
    if sp_rec:
        parts += ["## Mechanism specificity: the tasks each ablation hurts, beside the paper's", "", sp_md, ""]
    parts += [r_md] + [p for p in (h_md, a_md, o_md) if p]
    if f_rec:
        parts += [f"## Why `{control}` failed where the oracle succeeded", "", f_md, ""]
    parts += ["## Cost", "", c_md, ""]
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
            **({"anchors": an_rec} if an_rec else {}),
            **({"specificity": sp_rec} if sp_rec else {}),
            **({"failures": f_rec} if f_rec else {}),
            "cost": c_rec,
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
    readme: tuple[Path, ...] = ()
    """Rewrite the generated blocks of these markdown files (README.md docs/RESULTS.md) from benchmarks/results/ and the code (no run dirs needed)."""
    check: tuple[Path, ...] = ()
    """Exit 1 when a generated block of one of these markdown files differs from what benchmarks/results/ and the code give."""
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
    if args.readme or args.check:
        from experiments.reporting.readme_tables import check_readme, write_readme

        failed = False
        try:
            for doc in args.readme:
                changed = write_readme(doc)
                print(f"{doc}: {len(changed)} generated blocks rewritten" + (f" ({', '.join(changed)})" if changed else ""))
            for doc in args.check:
                n, problems = check_readme(doc)
                if problems:
                    print(f"{doc}: {problems}", file=sys.stderr)
                    failed = True
                else:
                    print(f"{doc}: all {n} generated blocks match the committed results and the code")
        except (OSError, ValueError) as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        return 1 if failed else 0
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
