"""Prior-calibrated intervals, cluster bootstrap from scratch, form gating, --fix, replicates,
identification, non-finite intervals and allocation intervals."""

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from lmforecast.backtest import rolling_origin
from lmforecast.backtest.suites import score_forecasts, suite_forecasts, suite_splits
from lmforecast.cli.main import main
from lmforecast.fitting import fit_law, huber
from lmforecast.fitting.engine import Objective
from lmforecast.fitting.varpro import exponent_columns, honours_pins, projected_starts
from lmforecast.laws import get_law
from lmforecast.supervised import PRESETS, SupervisedScalingLaw
from lmforecast.supervised import calibration as cb
from lmforecast.supervised.simulate import simulate_supervised_runs
from lmforecast.uncertainty import cluster as ucl

TRUE = PRESETS["busbridge2025"]["params"]


def _runs(sizes=(2e7, 5e7, 1e8, 2e8, 5e8, 1e9), ratios=(5, 20, 80), noise=0.004, seed=0,
          params=TRUE):  # fmt: skip
    rng = np.random.default_rng(seed)
    N = np.repeat(np.asarray(sizes, float), len(ratios))
    D = N * np.tile(np.asarray(ratios, float), len(sizes))
    law = get_law("chinchilla-gamma")
    th = law.from_natural(dict(params))
    L = np.exp(law.predict_target(th[None, :], {"N": N, "D": D})[0] + rng.normal(0, noise, N.size))
    return pd.DataFrame({"N": N, "D": D, "loss": L})


@pytest.mark.parametrize("varpro", [True, False])
def test_cluster_bootstrap_resamples_whole_sizes_from_scratch(monkeypatch, varpro):
    calls = []
    real = ucl.fit_law

    def spy(law, X, y, **kw):
        calls.append((np.asarray(X["N"]), np.asarray(X["D"]), np.asarray(y), kw.get("weights"),
                      np.asarray(kw["grid"])))  # fmt: skip
        return real(law, X, y, **kw)

    monkeypatch.setattr(ucl, "fit_law", spy)
    monkeypatch.setattr(ucl, "BOOT_VARPRO", varpro)
    df = _runs()
    law = get_law("chinchilla")
    X = {"N": df["N"].to_numpy(), "D": df["D"].to_numpy()}
    thetas = ucl.cluster_bootstrap(law, X, df["loss"].to_numpy(), huber(1e-3), n_boot=4, seed=1)
    assert thetas.shape == (len(calls), 5) and len(calls) >= 3
    grid = ucl.grid_to_array(law, law.default_grid())
    full = fit_law(law, X, df["loss"].to_numpy(), loss=huber(1e-3)).theta
    for N, D, y, w, starts in calls:
        # every run of a drawn size enters with one weight: whole sizes are resampled
        for n in np.unique(N):
            assert np.unique(w[N == n]).size == 1
        assert np.all(w == np.round(w)) and w.min() >= 1
        # no warm start: every start comes from the resample alone, never from the full fit
        if varpro:  # projected on the resample's own rows and weights
            pool, _ = projected_starts(law, {"N": N, "D": D}, law.target_of(y), huber(1e-3),
                                       w, None, thin=2, steps=2)  # fmt: skip
        else:  # a grid point scored on the resample
            pool = grid
        assert all(np.any(np.all(np.isclose(pool, s), axis=1)) for s in starts)
        assert not any(np.allclose(s, full, rtol=1e-3) for s in starts)
    assert any(np.unique(N).size < df["N"].nunique() for N, *_ in calls)


def test_default_interval_widens_with_distance_on_a_misspecified_law():
    # data from chinchilla-gamma with gamma far from 1, fitted by the misspecified chinchilla
    params = dict(TRUE, gamma=0.6)
    df = _runs(params=params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = SupervisedScalingLaw("chinchilla", bootstrap=8).fit(df)
    N = np.array([1e9, 4e9, 1.6e10, 6.4e10])
    lo, hi = m.predict_interval(N, 20 * N)
    rel = (hi - lo) / m.predict(N, 20 * N)
    assert np.all(np.diff(rel) > 0)
    # the distance term dominates far out: width grows about linearly in ln N
    t = m.forecast_terms(N, 20 * N)
    assert t["k"] == pytest.approx(cb.prior_k("chinchilla")) and t["k"] > 0
    assert t["r"][0] == 0 and np.all(np.diff(t["r"]) >= np.log(4) - 1e-9)


def test_auto_form_falls_back_when_sizes_cannot_identify_gamma():
    df = _runs(sizes=(5e7, 1e8, 2e8))
    with pytest.warns(UserWarning, match="simpler"):
        m = SupervisedScalingLaw(bootstrap=0).fit(df)
    assert m.form_ == "chinchilla" and "3 model size" in m.result_.meta["form_reason"]
    m2 = SupervisedScalingLaw(bootstrap=0, intervals=False).fit(_runs())
    assert m2.form_ == "chinchilla-gamma"


def test_auto_form_needs_more_runs_than_gamma_parameters():
    # a ladder of one run per size (the final checkpoint of each) spanning two decades of D/N:
    # enough sizes and range for gamma, but 6 runs for its 6 parameters (refused before)
    sizes = (2e7, 5e7, 1e8, 2e8, 5e8, 1e9)
    df = _runs(sizes=sizes, ratios=(20,)).iloc[:6].copy()
    df["D"] = df["N"] * np.logspace(0.5, 2.5, 6)
    with pytest.warns(UserWarning, match="6 runs"):
        m = SupervisedScalingLaw(bootstrap=5).fit(df)
    assert m.form_ == "chinchilla" and ">= 7 runs" in m.result_.meta["form_reason"]
    lo, hi = m.predict_interval(1e9, 2e10)
    assert np.isfinite(lo) and lo < m.predict(1e9, 2e10) < hi


def test_fix_pins_a_parameter_and_refuses_unknown_or_out_of_bounds():
    df = _runs()
    m = SupervisedScalingLaw("chinchilla-gamma", intervals=False, fixed={"gamma": 1.0}).fit(df)
    assert m.params_["gamma"] == 1.0
    m = SupervisedScalingLaw("chinchilla", intervals=False, fixed={"E": 1.5}).fit(df)
    assert m.params_["E"] == pytest.approx(1.5, rel=1e-12)
    with pytest.raises(Exception, match="no parameter 'zeta'"):
        SupervisedScalingLaw("chinchilla", intervals=False, fixed={"zeta": 1}).fit(df)
    with pytest.raises(Exception, match="outside the bounds"):
        SupervisedScalingLaw("chinchilla", intervals=False, fixed={"alpha": 50}).fit(df)


def test_replicates_mean_keep_and_noise_floor():
    df = _runs()
    rep = pd.concat([df, df.assign(loss=df["loss"] * 1.02)], ignore_index=True)
    with pytest.raises(Exception, match="--replicates"):
        SupervisedScalingLaw(intervals=False).fit(rep)
    m = SupervisedScalingLaw("chinchilla", bootstrap=0, replicates="mean").fit(rep)
    assert m.result_.n_obs == len(df)
    sd = np.log(1.02) / np.sqrt(2)
    assert m.result_.meta["replicate_sd"] == pytest.approx(sd, rel=1e-6)
    assert m.result_.meta["intervals"]["noise"] >= sd
    k = SupervisedScalingLaw("chinchilla", bootstrap=0, replicates="keep").fit(rep)
    assert k.result_.n_obs == len(rep)


def test_unidentified_fit_warns_and_says_so():
    # 30 runs generated with gamma = 1, alpha = 0.34; resampling the six sizes
    # moves alpha over a factor > 3 (and gamma over a factor ~4)
    df = _runs(ratios=(10, 20, 40, 80, 160), noise=0.01, params=dict(TRUE, gamma=1.0, alpha=0.34))
    with pytest.warns(UserWarning, match="not identified"):
        m = SupervisedScalingLaw("chinchilla-gamma", bootstrap=10).fit(df)
    assert m.result_.meta["identification"]["identified"] is False
    assert "not identified" in m.summary()


def test_a_ladder_too_small_to_resample_says_why_it_is_not_identified():
    """Five sizes with one run each (20 tokens per parameter): every size resample repeats a
    run, so no resample has 5 distinct runs for 5 parameters; the reason says so."""
    N = np.array([7e7, 1.5e8, 4e8, 1e9, 3e9])
    L = 1.69 + 406.4 / N**0.34 + 410.7 / (20 * N) ** 0.28  # Hoffmann et al. 2022, Approach 3
    with pytest.warns(UserWarning, match="only 0 of 20 size resamples could be refitted"):
        m = SupervisedScalingLaw("chinchilla").fit(N=N, D=20 * N, loss=L)
    assert m.result_.meta["identification"]["identified"] is False


class _Diverging:
    name = "diverging"

    def fit(self, train):
        return self

    def predict(self, test):
        return np.full(len(test), 3.0)

    def interval(self, test, level):
        n = len(test)
        with np.errstate(over="raise"):
            pass
        return np.zeros(n), np.exp(np.full(n, 1e4))  # overflows to inf, like a diverging fit


def test_backtest_counts_non_finite_intervals_as_misses(recwarn):
    df = simulate_supervised_runs(TRUE, noise=0.01, seed=5)
    bt = rolling_origin(df, [_Diverging()], n_cutoffs=2)
    row = bt.summary_table().iloc[0]
    assert row["coverage %"] == 0.0 and row["non-finite"] == len(bt.forecasts)
    assert not bt.forecasts["covered"].any()
    assert not [w for w in recwarn if "overflow" in str(w.message)]
    from lmforecast.plots import backtest as plots

    fig = plots.calibration(bt)
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert any("non-finite interval" in t for t in labels)
    f = suite_forecasts({"s": {"s": df}}, [_Diverging()], splits=("size-1",))
    t = score_forecasts(f)
    assert t["coverage"].iloc[0] == 0.0 and t["nonfinite"].iloc[0] == len(f)


def test_suite_splits_fit_only_below_the_cut():
    df = _runs()
    sp = {name: (tr, te) for name, tr, te in suite_splits(df)}
    assert set(sp) == {"size-1", "size-2", "compute"}
    tr, te = sp["size-1"]
    assert df["N"][tr].max() < df["N"][te].min() and df["N"][te].nunique() == 1
    tr, te = sp["compute"]
    C = df["N"] * df["D"]
    assert C[tr].max() < C[te].min()


def test_allocate_json_carries_optimum_intervals(tmp_path, capsys):
    df = _runs()
    p = tmp_path / "runs.csv"
    df.to_csv(p, index=False)
    fit = tmp_path / "fit.json"
    assert main(["supervised", "fit", "--runs", str(p), "--form", "chinchilla", "--bootstrap",
                 "8", "--out", str(fit), "--quiet"]) == 0  # fmt: skip
    capsys.readouterr()
    assert main(["supervised", "allocate", "--fit", str(fit), "--flops", "1e21", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    m = SupervisedScalingLaw.load(fit)
    q = m.allocate_interval(1e21)
    assert out["N_interval"] == pytest.approx(list(q["N"]))
    assert out["N_interval"][0] < out["N"] < out["N_interval"][1]
    assert out["D_interval"][0] < out["D"] < out["D_interval"][1]


def test_projected_bootstrap_starts_reach_the_grid_paths_optima(capsys):
    """benchmarks/bench_cluster_bootstrap.py at reduced size: the projected starts (default) and
    the grid starts give the same resample optima on the 250-run simulated table."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import bench_cluster_bootstrap as bench

    law, X, y, th_grid, _ = bench.run("chinchilla", 3, varpro=False)
    *_, th_vp, _ = bench.run("chinchilla", 3, varpro=True)
    assert ucl.BOOT_VARPRO is True  # the benchmark restores the default
    assert th_vp.shape == th_grid.shape == (3, 5)
    np.testing.assert_allclose(th_vp, th_grid, atol=1e-4)
    assert bench.main(["--boot", "2", "--form", "chinchilla"]) == 0
    assert "ratio" in capsys.readouterr().out


def _pinned(name, value, form="chinchilla"):
    df = _runs()
    law = get_law(form)
    X = {"N": df["N"].to_numpy(), "D": df["D"].to_numpy()}
    b = list(law.bounds)
    b[law.param_names.index(name)] = (value, value)
    return law, X, df["loss"].to_numpy(), b


def _boot_both_paths(law, X, y, b, n_boot=4, seed=1):
    kw = dict(n_boot=n_boot, seed=seed, bounds=b)
    th = ucl.cluster_bootstrap(law, X, y, huber(1e-3), **kw)
    ucl.BOOT_VARPRO = False
    try:
        th_grid = ucl.cluster_bootstrap(law, X, y, huber(1e-3), **kw)
    finally:
        ucl.BOOT_VARPRO = True
    return th, th_grid


def _resample_objectives(law, X, y, thetas, seed=1):
    """Each resample's objective at its theta (the draws of `cluster_bootstrap(seed)`)."""
    sizes, inv = np.unique(X["N"], return_inverse=True)
    rng = np.random.default_rng(seed)
    out = []
    for th in thetas:
        w = np.bincount(rng.integers(0, sizes.size, sizes.size), minlength=sizes.size)[inv]
        keep = w > 0
        obj = Objective(law, {k: v[keep] for k, v in X.items()}, law.target_of(y[keep]),
                        huber(1e-3), w[keep].astype(float))  # fmt: skip
        out.append(obj.batch(th[None, :])[0])
    return np.array(out)


def test_projection_solves_the_linear_part_at_a_pinned_exponent():
    """--fix alpha=0.33 (off the exponent grid): every projected start has alpha = 0.33 and the
    best is within 1.5x of the fit's optimum (clipping starts projected at other alphas gave
    7.1x); exponents are found per block, a pinned linear coefficient is honoured by none."""
    law, X, y, b = _pinned("alpha", 0.33)
    t = law.target_of(y)
    obj = Objective(law, X, t, huber(1e-3))
    starts, _ = projected_starts(law, X, t, huber(1e-3), None, b)
    assert np.all(starts[:, law.param_names.index("alpha")] == 0.33)
    best = obj.batch(starts).min()
    assert best < 1.5 * fit_law(law, X, y, loss=huber(1e-3), bounds=b).objective
    assert honours_pins(law, X, b)
    g = get_law("chinchilla-gamma")
    cols = [exponent_columns(blk, X) for blk in g.linear_blocks(X)]
    assert cols == [{3: 0, 4: 1}, {3: 0, 4: 1, 5: 2}]  # alpha, beta (and gamma) by column
    law_e, X_e, _, b_e = _pinned("log_E", 0.5)
    assert not honours_pins(law_e, X_e, b_e)


def test_bootstrap_with_a_pinned_exponent_projects_at_the_pin():
    """A pinned exponent takes the projected path: the pin holds in every resample, and no
    resample ends above the grid path's optimum."""
    law, X, y, b = _pinned("alpha", 0.33)
    th, th_grid = _boot_both_paths(law, X, y, b)
    assert th.shape == th_grid.shape == (4, 5)
    assert np.all(th[:, law.param_names.index("alpha")] == 0.33)
    ours, grid = _resample_objectives(law, X, y, th), _resample_objectives(law, X, y, th_grid)
    assert np.all(ours <= grid * (1 + 1e-6))


def test_bootstrap_with_a_pinned_linear_coefficient_scores_the_grid():
    """A pinned log E is not honoured by the projection (only clipped), so the fit keeps the
    grid starts: the same thetas either way."""
    law, X, y, b = _pinned("log_E", 0.5)
    th, th_grid = _boot_both_paths(law, X, y, b)
    np.testing.assert_array_equal(th, th_grid)
    assert np.all(th[:, law.param_names.index("log_E")] == 0.5)
