"""The generic uncertainty machinery every method's intervals are built from
(`lmforecast.uncertainty`): percentile intervals and spreads, normal quantiles, the resampling
schemes and the coverage summaries, each checked against what it must compute."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lmforecast.uncertainty.coverage import truth_summary
from lmforecast.uncertainty.normal import normal_cdf, normal_nodes, normal_ppf, z_of
from lmforecast.uncertainty.percentile import (
    interval_from_draws,
    percentile_interval,
    quantile_sd,
    weighted_quantile,
)
from lmforecast.uncertainty.resample import (
    child_resamples,
    cluster_counts,
    resample_counts,
    resample_indices,
    stationary_indices,
)


def test_percentile_interval_is_the_central_range_and_holds_its_point():
    draws = np.arange(1001, dtype=float)  # quantile q sits at 1000 q exactly
    assert np.allclose(percentile_interval(draws, 0.9), (50.0, 950.0), rtol=1e-12)
    lo, hi = percentile_interval(draws, 0.9, point=980.0)  # widened to hold the point
    assert hi == 980.0 and lo == pytest.approx(50.0)
    with_nan = np.append(draws, np.nan)
    assert np.allclose(percentile_interval(with_nan, 0.5, nan=True), (250.0, 750.0))


def test_normal_quantiles_and_nodes():
    assert z_of(0.9) == pytest.approx(1.6448536269514722, abs=1e-12)
    assert z_of(0.95) == pytest.approx(1.959963984540054, abs=1e-12)
    assert z_of(1.0) == float("inf")
    p = np.array([0.01, 0.3, 0.5, 0.9])
    np.testing.assert_allclose(normal_cdf(normal_ppf(p)), p, rtol=1e-12)
    z = normal_nodes(64)
    assert z.shape == (64,) and np.allclose(z, -z[::-1]) and abs(z.mean()) < 1e-12
    assert 0.95 < z.var() < 1.0  # mid-quantiles: slightly under the normal's variance


def test_run_noise_on_nodes_widens_a_point_to_the_normal_interval():
    lo, hi = interval_from_draws(np.zeros((1, 1)), sigma=2.0, level=0.9)
    assert hi[0] == pytest.approx(-lo[0]) and 2.8 < hi[0] < 2 * z_of(0.9) + 0.05


def test_robust_sd_and_weighted_quantile():
    rng = np.random.default_rng(0)
    x = rng.normal(0.0, 3.0, 200_000)
    assert quantile_sd(x) == pytest.approx(3.0, rel=0.01)
    x[:100] = 1e9  # a few wild draws do not inflate it
    assert quantile_sd(x) == pytest.approx(3.0, rel=0.01)
    v = np.array([1.0, 2.0, 3.0, 4.0])
    assert weighted_quantile(v, np.ones(4), 0.5) == 2.0
    assert weighted_quantile(v, np.array([1.0, 1.0, 1.0, 7.0]), 0.5) == 4.0


def test_resampling_schemes():
    a, b = resample_indices(7, 50), resample_indices(7, 50)
    assert np.array_equal(a, b) and a.min() >= 0 and a.max() < 50
    rows = child_resamples(3, 20, 10, degenerate=lambda r: np.array([len(set(x)) < 3 for x in r]))
    assert rows.shape == (20, 10) and all(len(set(r)) >= 3 for r in rows)
    assert np.array_equal(rows[0], resample_indices(np.random.SeedSequence(3).spawn(20)[0], 10))
    rng = np.random.default_rng(1)
    assert resample_counts(rng, 12).sum() == 12 and cluster_counts(rng, 9).sum() == 9
    idx = stationary_indices(5000, 10.0, np.random.default_rng(2))
    assert idx.shape == (5000,) and idx.min() >= 0 and idx.max() < 5000
    new_blocks = np.count_nonzero(np.diff(idx) % 5000 != 1) + 1
    assert 5000 / new_blocks == pytest.approx(10.0, rel=0.15)  # mean block length


def test_truth_summary_counts_coverage_and_error():
    f = pd.DataFrame(
        {
            "y": [1.0, 2.0, 3.0, 4.0],
            "y_pred": [1.1, 2.0, 2.5, 4.0],
            "lower": [0.9, 1.5, 2.6, 3.0],
            "upper": [1.2, 2.5, 2.9, 5.0],
        }
    )
    s = truth_summary(f, 0.9).iloc[0]
    assert s["n"] == 4 and s["coverage"] == 0.75  # 3.0 is outside [2.6, 2.9]
    assert s["mae"] == pytest.approx((0.1 + 0 + 0.5 + 0) / 4)
