"""Statistics for matched-episode comparisons and multi-seed success tables.

Two conditions are compared on the episodes they share, matched on ``(task, split, episode,
seed)``: the same scene under the same run seed. For every comparison we report

- the difference in success rate (A minus B),
- a 95 % percentile interval from a paired bootstrap: matched pairs are resampled jointly with a
  seeded ``numpy.random.Generator`` (20,000 resamples by default); it describes the spread of the
  evaluated episode set,
- the exact two-sided McNemar p-value: under the null hypothesis the discordant pairs split 50/50,
  so it is a binomial test on the number of pairs only A solved among all discordant pairs,
- the discordant counts (``better``: A succeeded and B failed; ``worse``: the reverse) and N.

Success tables give, per task (and per suite, and over all tasks), the success rate of each seed
and then the mean and sample standard deviation (``ddof=1``) across seeds. Suite and overall rates
of one seed average the task rates (every task weighs the same). Rows with ``status == "error"``
are infrastructure failures, not policy failures: they are left out of every rate and counted
separately.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from envs.episodes import SUITES

Row = dict[str, Any]
PairKey = tuple[str, str, int, int]  # task, split, episode, seed

N_RESAMPLES = 20_000


# --- paired comparisons ---------------------------------------------------------------------------
def mcnemar_exact(better: int, worse: int) -> float:
    """Exact two-sided McNemar p-value from the two discordant counts (1.0 when there are none)."""
    from scipy.stats import binomtest

    n = better + worse
    if n == 0:
        return 1.0
    return float(binomtest(better, n, 0.5, alternative="two-sided").pvalue)


def paired_bootstrap_ci(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    *,
    n_resamples: int = N_RESAMPLES,
    level: float = 0.95,
    seed: int = 0,
    chunk: int = 2000,
) -> tuple[float, float]:
    """Percentile interval of ``mean(a - b)`` over ``n_resamples`` resamples of matched pairs.

    ``a[i]`` and ``b[i]`` are the outcomes of the same episode under the two arms; resampling the
    index ``i`` keeps each pair together. Returns ``(nan, nan)`` for no pairs or no resamples.
    """
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    n = d.size
    if n == 0 or n_resamples <= 0:
        return (math.nan, math.nan)
    rng = np.random.default_rng(seed)
    means = np.empty(n_resamples)
    for start in range(0, n_resamples, chunk):  # chunked: 20,000 x n indices at once is a lot of memory
        k = min(chunk, n_resamples - start)
        idx = rng.integers(0, n, size=(k, n))
        means[start : start + k] = d[idx].mean(axis=1)
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(means, [alpha, 1.0 - alpha])
    return (float(lo), float(hi))


@dataclass(frozen=True)
class PairedComparison:
    """Condition ``a`` against condition ``b`` on their matched episodes (rates are fractions)."""

    a: str
    b: str
    scope: str
    n: int
    rate_a: float
    rate_b: float
    diff: float
    ci_low: float
    ci_high: float
    p_mcnemar: float
    better: int
    worse: int
    n_error_pairs: int = 0

    def as_row(self) -> dict[str, Any]:
        return dict(self.__dict__)


def pair_key(row: Row) -> PairKey:
    return (row["task"], row["split"], int(row["episode"]), int(row["seed"]))


def matched_outcomes(rows: Iterable[Row], a: str, b: str, tasks: Iterable[str] | None = None) -> tuple[list[PairKey], np.ndarray, np.ndarray, int]:
    """Keys shared by conditions ``a`` and ``b`` (sorted), their success arrays, and the number of
    shared keys dropped because either arm errored."""
    keep = set(tasks) if tasks is not None else None
    by: dict[str, dict[PairKey, Row]] = {a: {}, b: {}}
    for r in rows:
        if r["condition"] in by and (keep is None or r["task"] in keep):
            by[r["condition"]][pair_key(r)] = r
    shared = sorted(set(by[a]) & set(by[b]))
    ok = [k for k in shared if by[a][k].get("status") != "error" and by[b][k].get("status") != "error"]
    xa = np.array([bool(by[a][k]["success"]) for k in ok], dtype=bool)
    xb = np.array([bool(by[b][k]["success"]) for k in ok], dtype=bool)
    return ok, xa, xb, len(shared) - len(ok)


def compare(
    rows: Iterable[Row],
    a: str,
    b: str,
    *,
    tasks: Iterable[str] | None = None,
    scope: str = "all",
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
) -> PairedComparison:
    """Paired comparison of condition ``a`` minus condition ``b`` (see the module docstring)."""
    keys, xa, xb, n_err = matched_outcomes(rows, a, b, tasks)
    n = len(keys)
    better = int(np.sum(xa & ~xb))
    worse = int(np.sum(~xa & xb))
    if n == 0:
        return PairedComparison(a, b, scope, 0, math.nan, math.nan, math.nan, math.nan, math.nan, 1.0, 0, 0, n_err)
    lo, hi = paired_bootstrap_ci(xa, xb, n_resamples=n_resamples, seed=seed)
    ra, rb = float(xa.mean()), float(xb.mean())
    return PairedComparison(a, b, scope, n, ra, rb, ra - rb, lo, hi, mcnemar_exact(better, worse), better, worse, n_err)


# --- mean +- sd over seeds ------------------------------------------------------------------------
@dataclass(frozen=True)
class SeedSummary:
    """Success of one condition on one task (or suite) across seeds; rates are fractions."""

    per_seed: dict[int, float]
    n_episodes: int
    n_errors: int

    @property
    def mean(self) -> float:
        v = list(self.per_seed.values())
        return float(np.mean(v)) if v else math.nan

    @property
    def sd(self) -> float:
        """Sample standard deviation across seeds (nan with fewer than two seeds)."""
        v = list(self.per_seed.values())
        return float(np.std(v, ddof=1)) if len(v) > 1 else math.nan

    @property
    def n_seeds(self) -> int:
        return len(self.per_seed)


def task_seed_rates(rows: Iterable[Row]) -> tuple[dict[tuple[str, str, int], float], dict[tuple[str, str], tuple[int, int]]]:
    """Success rate per (task, condition, seed) over non-error rows, and (episodes, errors) per (task, condition)."""
    succ: dict[tuple[str, str, int], list[bool]] = defaultdict(list)
    counts: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for r in rows:
        tc = (r["task"], r["condition"])
        counts[tc][0] += 1
        if r.get("status") == "error":
            counts[tc][1] += 1
            continue
        succ[(r["task"], r["condition"], int(r["seed"]))].append(bool(r["success"]))
    rates = {k: sum(v) / len(v) for k, v in succ.items() if v}
    return rates, {k: (v[0], v[1]) for k, v in counts.items()}


def by_task(rows: Iterable[Row]) -> dict[tuple[str, str], SeedSummary]:
    """``(task, condition) -> SeedSummary``."""
    rates, counts = task_seed_rates(list(rows))
    out: dict[tuple[str, str], SeedSummary] = {}
    for (task, cond), (n, n_err) in counts.items():
        per_seed = {s: v for (t, c, s), v in rates.items() if t == task and c == cond}
        out[(task, cond)] = SeedSummary(dict(sorted(per_seed.items())), n, n_err)
    return out


def by_group(rows: Iterable[Row], groups: dict[str, Sequence[str]] | None = None) -> dict[tuple[str, str], SeedSummary]:
    """``(group, condition) -> SeedSummary`` where a seed's rate is the mean of its task rates.

    ``groups`` defaults to the four suites plus ``all`` (every task present). A seed counts for a
    group only when it has a rate for every task of the group that this condition ran.
    """
    rows = list(rows)
    rates, counts = task_seed_rates(rows)
    if groups is None:
        groups = {**SUITES, "all": sorted({r["task"] for r in rows})}
    out: dict[tuple[str, str], SeedSummary] = {}
    conditions = sorted({c for (_, c) in counts})
    for g, tasks in groups.items():
        for cond in conditions:
            ran = [t for t in tasks if (t, cond) in counts]
            if not ran:
                continue
            seeds = sorted({s for (t, c, s) in rates if c == cond and t in ran})
            per_seed = {}
            for s in seeds:
                v = [rates[(t, cond, s)] for t in ran if (t, cond, s) in rates]
                if len(v) == len(ran):
                    per_seed[s] = float(np.mean(v))
            n = sum(counts[(t, cond)][0] for t in ran)
            n_err = sum(counts[(t, cond)][1] for t in ran)
            out[(g, cond)] = SeedSummary(per_seed, n, n_err)
    return out


def mean_sd(values: Sequence[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (nan sd for fewer than two values)."""
    v = np.asarray(values, dtype=float)
    if v.size == 0:
        return (math.nan, math.nan)
    return (float(v.mean()), float(v.std(ddof=1)) if v.size > 1 else math.nan)


def wilson_interval(successes: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """Wilson score interval of a single success rate."""
    if n == 0:
        return (math.nan, math.nan)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (centre - half, centre + half)
