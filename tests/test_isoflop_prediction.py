"""isoFLOP N*(C) at a new budget: a prediction interval (sampling spread plus the scatter of the
budgets' optima about the power law), checked against the textbook formula and, on the shared
Porian suite, against held-out budgets (docs/isoflop.md, "At your budget")."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from lmforecast.isoflop import approaches, fit_isoflop, isoflop_table
from lmforecast.isoflop.simulate import simulate_isoflops

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))


def test_prediction_sd_is_the_least_squares_prediction_term():
    rng = np.random.default_rng(1)
    C = np.geomspace(1e18, 1e21, 7)
    N = 0.1 * C**0.5 * np.exp(rng.normal(0, 0.1, C.size))
    m = np.column_stack([C, N, C / (6 * N), np.ones_like(C)])
    C0 = 1e22
    sd, dof = approaches._prediction_sd(m, C0)
    x, y = np.log(C), np.log(N)
    fit = stats.linregress(x, y)
    s = np.sqrt(np.sum((y - fit.intercept - fit.slope * x) ** 2) / (len(x) - 2))
    lev = 1 / len(x) + (np.log(C0) - x.mean()) ** 2 / np.sum((x - x.mean()) ** 2)
    assert dof == 5 and sd == pytest.approx(s * np.sqrt(1 + lev), rel=1e-10)
    assert approaches._prediction_sd(m[:2], C0) == (0.0, 0)  # two budgets: no residual


def _scattered_runs(seed=0):
    """Profiles whose optima scatter about the power law by 15% (e.g. a recipe's learning rate
    retuned per budget): the within-budget bootstrap cannot see that."""
    t = simulate_isoflops(budgets=np.geomspace(1e18, 1e21, 7), seed=seed)
    rng = np.random.default_rng(seed)
    shift = dict(zip(sorted(t["C"].unique()), np.exp(rng.normal(0, 0.15, t["C"].nunique()))))
    return t.assign(N=t["N"] * t["C"].map(shift), D=t["D"] / t["C"].map(shift))


def test_interval_widens_by_the_scatter_for_approach_2_only():
    warnings.simplefilter("ignore")
    t = isoflop_table(_scattered_runs())
    r2 = fit_isoflop(t, 2, n_boot=100, at_flops=[1e22])
    lo, hi = r2.meta["at_flops"][0]["N_interval"]
    old = approaches.SCATTER_APPROACHES
    try:
        approaches.SCATTER_APPROACHES = ()
        s2 = fit_isoflop(t, 2, n_boot=100, at_flops=[1e22])
    finally:
        approaches.SCATTER_APPROACHES = old
    slo, shi = s2.meta["at_flops"][0]["N_interval"]
    assert np.log(hi / lo) > 1.5 * np.log(shi / slo)
    N = r2.meta["at_flops"][0]["N_star"]
    assert np.log(hi / N) == pytest.approx(np.log(N / lo), rel=1e-9)  # symmetric in ln N*
    D = r2.meta["at_flops"][0]["D_star"]
    dlo, dhi = r2.meta["at_flops"][0]["D_interval"]
    assert np.log(dhi / dlo) == pytest.approx(np.log(hi / lo), rel=0.25)
    assert dlo < D < dhi


@pytest.mark.slow
def test_porian_held_out_budgets_are_covered(shared_dir):
    """Fit all but the 1-3 largest budgets of each Porian recipe, forecast N* at the held-out
    ones: the sampling spread alone covered 0.39 of them; the prediction interval 0.89."""
    import trust_isoflop

    warnings.simplefilter("ignore")
    path = shared_dir / "data/suites/porian/isoflops.csv"
    df = trust_isoflop.forecasts(path, 2, n_boot=50, holds=(1, 2))
    assert len(df) >= 40
    assert 0.8 <= df["covered"].mean() <= 0.97
    # and not by being huge: the median half-width within 3x the median error (ln N*)
    assert df["ln_half_width"].median() < 3 * df["ln_abs_error"].median()


def test_without_resamples_the_scatter_term_alone():
    warnings.simplefilter("ignore")
    t = isoflop_table(_scattered_runs())
    r = fit_isoflop(t, 2, n_boot=0, at_flops=[1e22])
    at = r.meta["at_flops"][0]
    sd, dof = approaches._prediction_sd(approaches.budget_minima(t, 2), 1e22)
    h = stats.t.ppf(0.95, dof) * sd
    np.testing.assert_allclose(np.log(at["N_interval"]), np.log(at["N_star"]) + np.array([-h, h]))
    np.testing.assert_allclose(np.log(at["D_interval"]), np.log(at["D_star"]) + np.array([-h, h]))
    assert "N_interval" not in fit_isoflop(t, 1, n_boot=0, at_flops=[1e22]).meta["at_flops"][0]
