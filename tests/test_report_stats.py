"""Statistics against values computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from experiments.reporting.stats import by_group, by_task, compare, mcnemar_exact, mean_sd, paired_bootstrap_ci, wilson_interval


def _row(task, cond, ep, seed, success, status=None):
    return {
        "task": task, "split": "test", "episode": ep, "seed": seed, "condition": cond,
        "status": status or ("success" if success else "fail"), "success": success,
    }  # fmt: skip


def test_mcnemar_exact_by_hand():
    # 1 vs 7 discordant pairs: p = 2 * P(X <= 1 | n=8, 1/2) = 2 * (1 + 8) / 256
    assert mcnemar_exact(1, 7) == pytest.approx(18 / 256)
    assert mcnemar_exact(7, 1) == pytest.approx(18 / 256)
    assert mcnemar_exact(0, 6) == pytest.approx(2 / 64)
    assert mcnemar_exact(4, 1) == pytest.approx(2 * (1 + 5) / 32)
    assert mcnemar_exact(5, 5) == pytest.approx(1.0)
    assert mcnemar_exact(0, 0) == 1.0


def test_paired_comparison_on_a_known_table():
    a = [1, 1, 1, 1, 1, 1, 0, 0, 0, 0]
    b = [1, 1, 0, 0, 0, 0, 0, 0, 1, 0]
    rows = [_row("BinFill", "memory", i, 7, bool(x)) for i, x in enumerate(a)]
    rows += [_row("BinFill", "no-memory", i, 7, bool(x)) for i, x in enumerate(b)]
    rows += [_row("BinFill", "no-memory", 99, 7, True)]  # unmatched: ignored
    c = compare(rows, "memory", "no-memory", n_resamples=20_000, seed=3)
    assert (c.n, c.better, c.worse) == (10, 4, 1)
    assert c.rate_a == pytest.approx(0.6) and c.rate_b == pytest.approx(0.3)
    assert c.diff == pytest.approx(0.3)
    assert c.p_mcnemar == pytest.approx(0.375)
    assert -1 <= c.ci_low < c.diff < c.ci_high <= 1
    assert compare(rows, "memory", "no-memory", n_resamples=20_000, seed=3) == c  # seeded: reproducible


def test_bootstrap_interval():
    assert paired_bootstrap_ci([1, 1, 0], [0, 0, -1]) == (1.0, 1.0)  # constant difference
    assert all(math.isnan(x) for x in paired_bootstrap_ci([], []))
    rng = np.random.default_rng(0)
    a = rng.random(800) < 0.65
    b = rng.random(800) < 0.45
    lo, hi = paired_bootstrap_ci(a, b, n_resamples=20_000, seed=1)
    d = a.astype(float) - b.astype(float)
    assert lo < d.mean() < hi
    normal_half_width = 1.96 * d.std(ddof=1) / math.sqrt(d.size)
    assert (hi - lo) / 2 == pytest.approx(normal_half_width, rel=0.1)


def test_errors_are_left_out_of_pairs():
    rows = [_row("BinFill", "memory", 0, 7, True), _row("BinFill", "no-memory", 0, 7, False)]
    rows += [_row("BinFill", "memory", 1, 7, False, status="error"), _row("BinFill", "no-memory", 1, 7, True)]
    c = compare(rows, "memory", "no-memory", n_resamples=100)
    assert (c.n, c.n_error_pairs, c.better, c.worse) == (1, 1, 1, 0)


def test_mean_and_sd_over_seeds_by_hand():
    rows = []
    for seed, wins in ((7, 3), (11, 1), (23, 2)):
        rows += [_row("BinFill", "memory", e, seed, e < wins) for e in range(4)]
    rows.append(_row("BinFill", "memory", 4, 23, False, status="error"))
    s = by_task(rows)[("BinFill", "memory")]
    assert s.per_seed == {7: 0.75, 11: 0.25, 23: 0.5}
    assert s.mean == pytest.approx(0.5) and s.sd == pytest.approx(0.25)
    assert (s.n_seeds, s.n_episodes, s.n_errors) == (3, 13, 1)


def test_suite_rate_averages_tasks():
    rows = [_row("BinFill", "memory", e, 7, True) for e in range(2)]
    rows += [_row("BinFill", "memory", e, 11, e == 0) for e in range(2)]
    rows += [_row("PickXtimes", "memory", e, 7, False) for e in range(2)]
    rows += [_row("PickXtimes", "memory", e, 11, e == 0) for e in range(2)]
    g = by_group(rows)
    assert g[("counting", "memory")].per_seed == {7: 0.5, 11: 0.5}
    assert g[("counting", "memory")].sd == pytest.approx(0.0)
    assert ("permanence", "memory") not in g
    assert g[("all", "memory")].mean == pytest.approx(0.5)


def test_paper_table_4_mean_and_sd():
    # per-seed rows of the paper's Table 4: BinFill 72/54/54 -> 60.00 +- 10.39; average 67.75/68.00/65.75 -> 67.17 +- 1.23
    m, sd = mean_sd([72, 54, 54])
    assert (round(m, 2), round(sd, 2)) == (60.0, 10.39)
    m, sd = mean_sd([67.75, 68.00, 65.75])
    assert (round(m, 2), round(sd, 2)) == (67.17, 1.23)
    assert math.isnan(mean_sd([0.5])[1])


def test_wilson():
    lo, hi = wilson_interval(5, 10)
    assert lo == pytest.approx(0.2366, abs=1e-3) and hi == pytest.approx(0.7634, abs=1e-3)
