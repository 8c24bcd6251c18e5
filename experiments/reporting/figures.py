"""Figures quoted in prose, generated from committed results like the tables around them.

A sentence that quotes a number from the results carries it between two markers, so the number is
computed and checked exactly as a table is::

    no-memory reaches <!-- figure name=results_v1_test stage=headline-s7,headline-s11,headline-s23
    metric=success condition=no-memory task=PatternLock -->2.7 ± 3.1<!-- /figure --> % on PatternLock

(on one line). Why: the README's prose once said "PatternLock and RouteStick are at 0 %" while the
three-seed table beside it said 2.7 and 3.3; a typed number drifts from the rows, a generated one
cannot. ``python -m experiments.report --readme FILE`` rewrites every figure; ``--check FILE`` fails
on one that differs.

Selection (every argument but ``name`` and ``metric`` optional): ``stage=a,b`` (complete Results v1
stages only), ``split=``, ``episodes=LO:HI``, ``condition=``, ``task=`` (a task or a suite name),
``pool=`` (the rewording pool a row's goal came from: ``dev``, ``held_out``, ``probe``, ``template``).

Metrics (:data:`METRICS`):

- ``success``: success % of the selected rows, mean ± sd over seeds when there are several;
- ``episodes``: how many rows are selected;
- ``delta``: success points of ``condition`` against ``reference=`` on the same episodes (signed);
- ``won`` / ``lost``: episodes ``condition`` succeeds on and ``reference`` fails (or the reverse).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from envs.cards import suites
from envs.core.rewording import pool_of
from experiments.loop.results import read_rows
from experiments.reporting.markers import episode_range, marker_args, select_rows
from experiments.reporting.publish import PUBLISHED, check_publishable
from experiments.reporting.report_sections import fmt_summary
from experiments.reporting.stats import by_group

FIGURE = re.compile(r"<!-- figure (?P<args>[^>]*?) -->(?P<value>[^<\n]*)<!-- /figure -->")
_KNOWN = ("name", "metric", "stage", "split", "episodes", "condition", "task", "pool", "reference")


@dataclass(frozen=True)
class Figure:
    """One quoted number: which committed rows it is computed from, and how."""

    name: str
    metric: str
    stages: tuple[str, ...] | None = None
    split: str | None = None
    episodes: tuple[int, int] | None = None
    condition: str | None = None
    task: str | None = None
    pool: str | None = None
    reference: str | None = None

    @classmethod
    def parse(cls, args: str) -> "Figure":
        kv = marker_args(args)
        unknown = sorted(set(kv) - set(_KNOWN))
        if unknown or "name" not in kv or "metric" not in kv:
            raise ValueError(f"bad figure marker {args!r}: need name= and metric=; "
                             f"unknown {unknown} (known: {', '.join(_KNOWN)})")
        if kv["metric"] not in METRICS:
            raise ValueError(f"figure {args!r}: unknown metric {kv['metric']!r} (known: {', '.join(METRICS)})")
        if kv["metric"] in ("delta", "won", "lost") and ("reference" not in kv or "condition" not in kv):
            raise ValueError(f"figure {args!r}: metric={kv['metric']} needs condition= and reference=")
        if kv.get("pool") not in (None, "dev", "held_out", "probe", "template"):
            raise ValueError(f"figure {args!r}: unknown pool {kv['pool']!r} (known: dev, held_out, probe, template)")
        episodes = episode_range(kv["episodes"], f"figure {args!r}") if "episodes" in kv else None
        stages = tuple(kv["stage"].split(",")) if "stage" in kv else None
        return cls(kv["name"], kv["metric"], stages, kv.get("split"), episodes, kv.get("condition"),
                   kv.get("task"), kv.get("pool"), kv.get("reference"))


def _in_task(row: dict, task: str) -> bool:
    return row["task"] == task or row["task"] in suites().get(task, ())


def _pool(row: dict) -> str:
    return pool_of(row["task"], row.get("goal") or "") or "template"


def selected_rows(fig: Figure, root: Path = PUBLISHED) -> list[dict]:
    """The committed rows a figure reads (before its condition filter)."""

    rows = read_rows(root / fig.name, warn=False)
    if not rows:
        raise ValueError(f"figure: no rows under {root / fig.name}")
    check_publishable(rows)
    rows = select_rows(rows, fig.name, fig.stages, fig.split, fig.episodes)
    if fig.task:
        if fig.task not in {r["task"] for r in rows} and fig.task not in suites():
            raise ValueError(f"figure {fig}: no task or suite {fig.task!r} in {fig.name}")
        rows = [r for r in rows if _in_task(r, fig.task)]
    if fig.pool:
        rows = [r for r in rows if _pool(r) == fig.pool]
    return rows


def _of(rows: list[dict], condition: str | None, fig: Figure) -> list[dict]:
    if condition is None:
        return rows
    mine = [r for r in rows if r["condition"] == condition]
    if not mine:
        raise ValueError(f"figure {fig}: no rows of condition {condition!r} "
                         f"(present: {', '.join(sorted({r['condition'] for r in rows}))})")
    return mine


def _success(rows: list[dict], fig: Figure) -> str:
    mine = _of(rows, fig.condition, fig)
    summary = [v for k, v in by_group(mine, {"selected": sorted({r["task"] for r in mine})}).items()
               if k[0] == "selected"]
    if len(summary) != 1:
        raise ValueError(f"figure {fig}: success of several conditions at once; name one with condition=")
    return fmt_summary(summary[0])


def _episodes(rows: list[dict], fig: Figure) -> str:
    return str(len(_of(rows, fig.condition, fig)))


def _pairs(rows: list[dict], fig: Figure) -> list[tuple[bool, bool]]:
    key = lambda r: (r["task"], r["split"], r["episode"], r["seed"])  # noqa: E731
    ref = {key(r): bool(r["success"]) for r in _of(rows, fig.reference, fig)}
    pairs = [(bool(r["success"]), ref[key(r)]) for r in _of(rows, fig.condition, fig) if key(r) in ref]
    if not pairs:
        raise ValueError(f"figure {fig}: {fig.condition} and {fig.reference} share no episode")
    return pairs


def _delta(rows: list[dict], fig: Figure) -> str:
    pairs = _pairs(rows, fig)
    return f"{100 * (sum(a for a, _ in pairs) - sum(b for _, b in pairs)) / len(pairs):+.0f}"


def _won(rows: list[dict], fig: Figure) -> str:
    return str(sum(a and not b for a, b in _pairs(rows, fig)))


def _lost(rows: list[dict], fig: Figure) -> str:
    return str(sum(b and not a for a, b in _pairs(rows, fig)))


METRICS: dict[str, Callable[[list[dict], Figure], str]] = {
    "success": _success,
    "episodes": _episodes,
    "delta": _delta,
    "won": _won,
    "lost": _lost,
}


def figure_value(fig: Figure, root: Path = PUBLISHED) -> str:
    """The text a figure marker holds."""
    return METRICS[fig.metric](selected_rows(fig, root), fig)


def regenerate_figures(text: str, root: Path = PUBLISHED) -> tuple[str, list[str]]:
    """``text`` with every figure recomputed, and a description of each that changed."""
    changed: list[str] = []
    cache: dict[str, str] = {}

    def one(m: re.Match) -> str:
        args = m.group("args")
        if args not in cache:
            cache[args] = figure_value(Figure.parse(args), root)
        value = cache[args]
        if value != m.group("value"):
            changed.append(f"figure {args} ({m.group('value')!r} -> {value!r})")
        return f"<!-- figure {args} -->{value}<!-- /figure -->"

    return FIGURE.sub(one, text), changed
