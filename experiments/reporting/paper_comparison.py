"""Our Results v1 tables beside the SimpleARM paper's: the arms' means and the ablations' specificity.

Two questions a reader of the paper asks of our CPU setting. Do the arms order the same way
(oracle > memory > no-memory ~ recent frames)? And does each ablation hurt the tasks the paper says
need the removed state while sparing the others (its "mechanism specificity")? The paper's numbers
come from :mod:`experiments.reporting.paper_reference`; ours from the rows. Neither table tests our numbers
against the paper's: the policy and composer differ, only the direction is comparable.
"""

from __future__ import annotations

import math
from typing import Any

from envs.episodes import ALL_TASKS
from experiments.reporting.paper_reference import ABLATIONS, ARM_MEANS, ARM_SDS, PaperAblation
from experiments.reporting.report_sections import condition_order, md_table, pct, pts, task_order
from experiments.reporting.stats import by_group, compare

Row = dict[str, Any]

HURT_POINTS = 10.0
"""A task is *hurt* by an ablation when the ablated arm's matched success is at least this many
points below the full method's (2 of 20 paired episodes, 5 of 50), *helped* when as many above,
and *spared* otherwise: the size of the paper's own single-cell run-to-run variability."""


def anchors_section(rows: list[Row]) -> tuple[str, list[dict[str, Any]]]:
    """Each arm's all-task mean (± sd over seeds) here and in the paper, and the gap to the oracle."""
    summ = by_group(rows)
    conds = [c for c in condition_order(rows) if c in ARM_MEANS and ("all", c) in summ]
    oracle = summ.get(("all", "oracle"))
    body, records = [], []
    for c in conds:
        s = summ[("all", c)]
        ours = f"{pct(s.mean)} ± {pct(s.sd)}" if s.n_seeds > 1 else pct(s.mean)
        paper = f"{ARM_MEANS[c]:.2f}" + (f" ± {ARM_SDS[c]:.2f}" if c in ARM_SDS else "")
        of_oracle = s.mean / oracle.mean if oracle and oracle.mean else math.nan
        paper_of_oracle = ARM_MEANS[c] / ARM_MEANS["oracle"]
        records.append({"condition": c, "ours_mean": s.mean, "ours_sd": s.sd, "seeds": s.n_seeds, "episodes": s.n_episodes,
                        "paper_mean": ARM_MEANS[c] / 100, "ours_of_oracle": of_oracle, "paper_of_oracle": paper_of_oracle})
        body.append([c, s.n_seeds, s.n_episodes, ours, "—" if math.isnan(of_oracle) else f"{of_oracle:.2f}",
                     paper, f"{paper_of_oracle:.2f}"])
    md = md_table(["arm", "seeds", "episodes", "ours %", "ours ÷ oracle", "paper %", "paper ÷ oracle"], body)
    return md, records


def _matched(rows: list[Row], ablation: str, control: str, tasks: list[str]) -> dict[str, Any]:
    """Per task: the ablated minus control difference over matched episodes (fraction), and its N."""
    out = {}
    for t in tasks:
        c = compare(rows, ablation, control, tasks=[t], scope=t, n_resamples=0)
        if c.n:
            out[t] = c
    return out


def specificity_section(rows: list[Row], *, control: str = "memory") -> tuple[str, list[dict[str, Any]]]:
    """Per ablation: the tasks it hurts and spares here, beside the tasks the paper predicted and found."""
    conds = condition_order(rows)
    ablations = [c for c in conds if c.startswith("memory-") and c != control]
    if control not in conds or not ablations:
        return "", []
    tasks = task_order(rows)
    body, records = [], []
    for a in ablations:
        cells = _matched(rows, a, control, tasks)
        if not cells:
            continue
        hurt = [t for t, c in cells.items() if _points(c) <= -HURT_POINTS]
        helped = [t for t, c in cells.items() if _points(c) >= HURT_POINTS]
        paper: PaperAblation | None = ABLATIONS.get(a)
        predicted = [t for t in (paper.predicted_active if paper else ()) if t in cells]
        rest = [t for t in cells if t not in predicted]
        on_pred = _pooled(cells, predicted)
        off_pred = _pooled(cells, rest)
        paper_hurt = [t for t in ALL_TASKS if paper and paper.cell(t) is not None and paper.cell(t) <= -HURT_POINTS]
        n = min(c.n for c in cells.values())
        records.append({
            "ablation": a, "paper_name": paper.paper_name if paper else "", "episodes_per_task": n,
            "hurt": " ".join(hurt), "helped": " ".join(helped), "spared": len(cells) - len(hurt) - len(helped),
            "paper_predicted": " ".join(paper.predicted_active) if paper else "", "paper_hurt": " ".join(paper_hurt),
            "ours_on_predicted": on_pred, "ours_elsewhere": off_pred,
            "paper_on_predicted": (paper.active_delta / 100 if paper and paper.active_delta is not None else math.nan),
            "paper_pooled": paper.pooled / 100 if paper else math.nan,
            "ours_pooled": _pooled(cells, list(cells)),
        })
        body.append([
            a.removeprefix("memory-"),
            n,
            _named(cells, hurt) or "none",
            f"{len(cells) - len(hurt) - len(helped)}/{len(cells)}" + (f" (helped: {_named(cells, helped)})" if helped else ""),
            (f"{pts(on_pred, 0)} / {pts(off_pred, 0)}" if predicted else "—"),
            (paper.paper_name if paper else "not tested"),
            (" ".join(paper.predicted_active) or "not named") if paper else "—",
            (f"{paper.active_delta:+.0f} / " if paper and paper.active_delta is not None else "") + (f"{paper.pooled:+.1f} pooled" if paper else "—"),
            " ".join(f"{t} {paper.cell(t):+d}" for t in paper_hurt) if paper_hurt else ("—" if not paper or paper.cells is None else "none"),
        ])
    md = md_table(["ablation", "episodes / task", f"hurts here (Δ ≤ −{HURT_POINTS:.0f} pts)", "spared here",
                   "here: Δ on paper's tasks / elsewhere", "paper's ablation", "paper: tasks needing the state",
                   "paper: Δ there / pooled", f"paper: hurt cells (Δ ≤ −{HURT_POINTS:.0f})"], body)
    return md, records


def _points(cell: Any) -> float:
    """A cell's difference in points, rounded so that a difference of exactly the threshold counts:
    18/20 - 20/20 is -0.09999999999999998 in floating point, and its -10 points must read as hurt."""
    return round(100 * cell.diff, 6)


def _pooled(cells: dict[str, Any], tasks: list[str]) -> float:
    """Mean of the per-task differences over ``tasks`` (each task weighs the same, as in the paper)."""
    v = [cells[t].diff for t in tasks if t in cells]
    return sum(v) / len(v) if v else math.nan


def _named(cells: dict[str, Any], tasks: list[str]) -> str:
    return ", ".join(f"{t} {pts(cells[t].diff, 0)}" for t in tasks)
