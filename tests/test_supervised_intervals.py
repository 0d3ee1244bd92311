"""Calibrated forecast intervals of supervised laws, the overtrain law, averaging, presets."""

import json

import numpy as np
import pandas as pd
import pytest

from lmforecast.fitting import fit_law, huber
from lmforecast.laws import get_law
from lmforecast.laws.base import Law
from lmforecast.supervised import PRESETS, SupervisedScalingLaw
from lmforecast.supervised import intervals as iv
from lmforecast.supervised.model import DEFAULT_BOOTSTRAP
from lmforecast.uncertainty.normal import z_of

HOFF = {"A": 406.4, "B": 410.7, "E": 1.69, "alpha": 0.34, "beta": 0.28}
OT = {"a": 300.0, "b": 2000.0, "E": 1.8, "eta": 0.12, "alpha_C": 0.14}


def _hoff(N, D):
    return HOFF["E"] + HOFF["A"] / N ** HOFF["alpha"] + HOFF["B"] / D ** HOFF["beta"]


# ---- the over-training law (Gadre et al. 2024) ----------------------------------------------
def test_overtrain_jacobian_matches_finite_differences():
    law = get_law("overtrain")
    rng = np.random.default_rng(0)
    X = {"N": 10 ** rng.uniform(6, 10, 30), "D": 10 ** rng.uniform(8, 12, 30)}
    theta = np.vstack([law.from_natural(OT), law.from_natural(OT) + rng.normal(0, 0.1, 5)])
    J = law.jacobian(theta, X)
    Jfd = Law.jacobian(law, theta, X)  # the base class's central differences
    np.testing.assert_allclose(J, Jfd, rtol=1e-5, atol=1e-7)
    # natural-space closed form agrees with the log-space evaluation
    np.testing.assert_allclose(law.predict(OT, **X), law.loss(OT, X["N"], X["D"]), rtol=1e-12)


def test_overtrain_recovers_coefficients_from_noiseless_runs():
    law = get_law("overtrain")
    rng = np.random.default_rng(1)
    N = 10 ** rng.uniform(7, 9.5, 50)
    D = N * 10 ** rng.uniform(0.5, 2.5, 50)
    res = fit_law(law, {"N": N, "D": D}, law.loss(OT, N, D), loss=huber(1e-4))
    for k, v in OT.items():
        assert res.params[k] == pytest.approx(v, rel=1e-4), k
    # it is Chinchilla with alpha = beta: eta = alpha_C = alpha / 2 reproduces that law exactly
    A, B, E, al = 400.0, 900.0, 1.7, 0.3
    ch = {"a": A * 6 ** (al / 2), "b": B * 6 ** (al / 2), "E": E, "eta": al / 2, "alpha_C": al / 2}
    np.testing.assert_allclose(law.loss(ch, N, D), E + A / N**al + B / D**al, rtol=1e-12)


# ---- interval machinery ---------------------------------------------------------------------
def test_extrapolation_slope_is_the_weighted_quantile_of_needed_slopes():
    z = z_of(0.9)
    r = np.array([1.0, 2.0, 3.0, 4.0])
    pairs = {
        "log_error": [0.0, 2 * z * 0.01, -3 * z * 0.02, 4 * z * 0.03],
        "log_ratio": r.tolist(),
        "noise": [0.0] * 4,
        "weight": [0.25] * 4,
    }
    # needed k: 0, 0.01, 0.02, 0.03 -> 75% quantile 0.02, 100% 0.03
    assert iv.extrapolation_slope(pairs, 0.9, 0.0) == pytest.approx(0.03)
    pairs_l = dict(pairs, weight=[0.3, 0.3, 0.3, 0.1])
    assert iv.extrapolation_slope(pairs_l, 0.9, 0.0) == pytest.approx(0.02)
    assert iv.bias_slope({**pairs, "log_error": (0.01 * r).tolist()}) == pytest.approx(0.01)


def test_distance_counts_model_size_and_data_beyond_the_fitted_runs():
    cal = {"max_compute": 6e20, "max_N": 4e8, "max_D": 2.5e11}
    # (a) more compute; (b) less compute but 7x the largest N; (c) inside on every axis
    C = np.array([6e21, 6e20 * 0.5, 1e20])
    N = np.array([4e8, 2.8e9, 1e8])
    D = np.array([2.5e12, 1.8e10, 1e11])
    r = iv.distance(C, cal, N, D)
    assert r == pytest.approx([np.log(10.0), np.log(7.0), 0.0])
    # without stored maxima (old fits, presets) or without N, D: compute alone
    assert iv.distance(C, {"max_compute": 6e20}, N, D) == pytest.approx([np.log(10), 0, 0])
    assert iv.distance(C, cal) == pytest.approx([np.log(10), 0, 0])


def test_counting_model_size_only_ever_widens_an_interval():
    rng = np.random.default_rng(0)
    pairs = {"log_error": rng.normal(0, 0.05, 30).tolist(),
             "log_ratio": rng.uniform(0.1, 3, 30).tolist(), "noise": [0.01] * 30,
             "weight": [1 / 30] * 30}  # fmt: skip
    old = {"max_compute": 1e21, "noise": 0.01, "bias_slope": 0.01, "pairs": pairs}
    new = dict(old, max_N=1e9, max_D=2e11)
    N = np.geomspace(1e8, 1e10, 9)
    D = np.full(9, 5e10)
    C, t = 6 * N * D, np.zeros(9)
    lo0, hi0 = iv.log_interval(t, None, C, old, 0.9, N=N, D=D)
    lo1, hi1 = iv.log_interval(t, None, C, new, 0.9, N=N, D=D)
    assert np.all(lo1 <= lo0) and np.all(hi1 >= hi0)
    wider = (hi1 - lo1) > (hi0 - lo0) + 1e-12
    assert np.array_equal(wider, (N > 1e9) & (C < 1e21 * N / 1e9))  # where r_N > r_C only


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(3)
    N = np.repeat(np.geomspace(2e7, 8e8, 6), 4)
    D = N * np.tile([8.0, 20.0, 50.0, 120.0], 6)
    L = _hoff(N, D) * np.exp(rng.normal(0, 0.004, N.size))
    return SupervisedScalingLaw("chinchilla", seed=1, n_jobs=1).fit(N=N, D=D, loss=L)


@pytest.mark.slow  # shares a ~20 s default fit (or fits three forms)
def test_default_fit_has_calibrated_intervals_that_widen_with_extrapolation(fitted):
    cal = fitted.result_.meta["intervals"]
    # the interval scale is the bundled real-suite prior (no inner backtest by default)
    assert len(fitted.result_.bootstrap) == DEFAULT_BOOTSTRAP and cal["k"] > 0
    assert cal["method"] == "prior" and "bootstrap_kind" in fitted.result_.meta
    N = np.array([5e8, 2e9, 8e9, 3e10])
    lo, hi = fitted.predict_interval(N, 20 * N)
    p = fitted.predict(N, 20 * N)
    assert np.all(lo < p) and np.all(p < hi)
    width = np.log(hi / lo)
    assert np.all(np.diff(width) > 0)  # wider the further from the fitted runs
    lo80, hi80 = fitted.predict_interval(N, 20 * N, level=0.8)
    assert np.all(np.log(hi80 / lo80) < width)
    assert "Forecast intervals" in fitted.summary()
    # a model 5x the largest fitted one, on little data (compute inside the fitted range): an
    # extrapolation in N, so wider than a fitted-size model at the same compute
    cal_n = cal["max_N"]
    assert cal_n == pytest.approx(8e8) and cal["max_D"] == pytest.approx(8e8 * 120)
    Cin = 0.5 * cal["max_compute"]
    lo_b, hi_b = fitted.predict_interval(5 * cal_n, Cin / (6 * 5 * cal_n))
    lo_s, hi_s = fitted.predict_interval(cal_n, Cin / (6 * cal_n))
    assert np.log(hi_b / lo_b) > np.log(hi_s / lo_s) * 1.2


@pytest.mark.slow  # shares a ~20 s default fit (or fits three forms)
def test_saved_fit_with_intervals_round_trips_bit_for_bit(fitted, tmp_path):
    p = tmp_path / "fit.json"
    fitted.save(p)
    back = SupervisedScalingLaw.load(p)
    assert back.result_.to_json() == fitted.result_.to_json()
    N = np.array([1e9, 1e10])
    for a, b in zip(back.predict_interval(N, 20 * N), fitted.predict_interval(N, 20 * N)):
        assert np.array_equal(a, b)


def test_presets_have_intervals():
    for name in PRESETS:
        law = SupervisedScalingLaw.from_preset(name)
        lo, hi = law.predict_interval(7e10, 1.4e12)
        p = law.predict(7e10, 1.4e12)
        assert lo < p < hi
    # inside the paper's compute range only CIs and run scatter count: narrower than far out
    b = SupervisedScalingLaw.from_preset("busbridge2025")
    lo1, hi1 = b.predict_interval(1e9, 2e10)
    lo2, hi2 = b.predict_interval(1e11, 2e12)
    assert np.log(hi1 / lo1) < np.log(hi2 / lo2)
    # a 63B model on 10B tokens (3.8e21 FLOPs, inside the paper's compute) is still 5x beyond
    # its largest model (12.6B, Sec. 4.1): wider than a 12.6B model at the same compute
    lo3, hi3 = b.predict_interval(6.3e10, 1e10)
    lo4, hi4 = b.predict_interval(1.26e10, 5e10)
    w3, w4 = np.log(hi3 / lo3), np.log(hi4 / lo4)
    cal = dict(b.result_.meta["intervals"])
    cal.pop("max_N")
    t, tb, C, _ = b._targets(6.3e10, 1e10)
    lo0, hi0 = iv.log_interval(t, tb, C, cal, 0.9, N=np.array([6.3e10]), D=np.array([1e10]))
    assert w3 > float(hi0[0] - lo0[0]) + 1e-3 and w3 > w4  # the N term, not the point, widens it


@pytest.mark.slow  # shares a ~20 s default fit (or fits three forms)
def test_no_interval_flag_and_backward_compatible_kinds(fitted):
    law = SupervisedScalingLaw("chinchilla", intervals=False).fit(fitted.data_)
    assert not law.result_.bootstrap and "intervals" not in law.result_.meta
    with pytest.raises(ValueError):
        law.predict_interval(1e9, 2e10)
    lo_c, hi_c = fitted.predict_interval(1e9, 2e10, kind="confidence")
    lo_p, hi_p = fitted.predict_interval(1e9, 2e10, kind="bootstrap")
    assert hi_p - lo_p > hi_c - lo_c > 0


@pytest.mark.slow
def test_user_backtest_update_narrows_the_real_suite_prior_and_still_covers():
    """Simulated runs below 1B parameters with known truth and 0.5% noise; forecast models of
    1.4B-7B (compute 10-300x beyond the fitted runs). The default prior k is chosen on real
    suites, whose laws are misspecified, so on this well-specified world it over-covers; the
    user's own size-cut backtest (calibration="prior+backtest") narrows it and still covers."""
    cov = {"prior": [], "prior+backtest": []}
    width = {"prior": [], "prior+backtest": []}
    for s in range(2):
        rng = np.random.default_rng(100 + s)
        N = 10 ** rng.uniform(7.3, 9.0, 24)
        D = N * 10 ** rng.uniform(0.7, 2.3, 24)
        L = _hoff(N, D) * np.exp(rng.normal(0, 0.005, 24))
        Nt = 10 ** rng.uniform(9.15, 9.85, 34)
        Dt = Nt * 10 ** rng.uniform(1.0, 2.3, 34)
        Lt = _hoff(Nt, Dt) * np.exp(rng.normal(0, 0.005, 34))
        for cal in cov:
            law = SupervisedScalingLaw("chinchilla", bootstrap=0, seed=s, n_jobs=1, calibration=cal)
            law.fit(N=N, D=D, loss=L)
            lo, hi = law.predict_interval(Nt, Dt)
            cov[cal].extend((lo <= Lt) & (Lt <= hi))
            width[cal].extend(np.log(hi / lo))
    assert np.mean(cov["prior+backtest"]) >= 0.85
    assert np.median(width["prior+backtest"]) < np.median(width["prior"])


# ---- CLI ------------------------------------------------------------------------------------
@pytest.mark.slow  # shares a ~20 s default fit (or fits three forms)
def test_cli_predict_and_allocate_give_intervals(cli, fitted, tmp_path):
    p = tmp_path / "fit.json"
    fitted.save(p)
    code, out, err = cli(
        "supervised",
        "predict",
        "--fit",
        p,
        "--params",
        "7e9",
        "--tokens",
        "1.4e11",
        "--json",
        "--level",
        "0.8",
    )
    assert code == 0, err
    d = json.loads(out)
    lo, hi = fitted.predict_interval(7e9, 1.4e11, level=0.8)
    assert d["interval"] == [float(lo), float(hi)] and d["level"] == 0.8
    code, out, _ = cli(
        "supervised", "allocate", "--preset", "busbridge2025", "--flops", "1e22", "--json"
    )
    d = json.loads(out)
    assert d["interval"][0] < d["loss"] < d["interval"][1]
    code, out, err = cli(
        "supervised",
        "predict",
        "--preset",
        "hoffmann2022",
        "--params",
        "7e10",
        "--tokens",
        "1.4e12",
        "--level",
        "1",
    )
    assert code == 2 and "--level" in err and out == ""


@pytest.mark.slow  # shares a ~20 s default fit (or fits three forms)
def test_average_form_round_trip(tmp_path):
    rng = np.random.default_rng(5)
    N = np.repeat(np.geomspace(2e7, 8e8, 5), 3)
    D = N * np.tile([10.0, 30.0, 90.0], 5)
    L = _hoff(N, D) * np.exp(rng.normal(0, 0.004, N.size))
    law = SupervisedScalingLaw("average", bootstrap=4, n_polish=4, n_cutoffs=2, n_jobs=1).fit(
        pd.DataFrame({"N": N, "D": D, "loss": L})
    )
    w = law.result_.meta["average"]["weights"]
    assert set(w) == {"chinchilla", "chinchilla-gamma", "overtrain"}
    assert sum(w.values()) == pytest.approx(1.0)
    p = tmp_path / "avg.json"
    law.save(p)
    back = SupervisedScalingLaw.load(p)
    assert back.form == "average"
    assert np.array_equal(back.predict_interval(3e9, 6e10), law.predict_interval(3e9, 6e10))
    assert float(law.predict(3e9, 6e10)) == pytest.approx(_hoff(3e9, 6e10), rel=0.03)


def test_overtrain_allocation_matches_its_closed_form():
    from lmforecast.fitting import FitResult

    law = get_law("overtrain")
    res = FitResult.from_published(
        "overtrain",
        law.from_natural(OT).tolist(),
        OT,
        ci={},
        ci_level=None,
        n_obs=0,
        loss={"name": "huber", "delta": 1e-3},
        meta={"form": "overtrain"},
    )
    est = SupervisedScalingLaw.from_result(res)
    C = np.array([1e20, 1e22])
    a = est.allocate(C)
    # d/dM (a M^eta + b M^-eta) = 0  ->  M* = (b/a)^(1/(2 eta)); N* = sqrt(C / (6 M*))
    M = (OT["b"] / OT["a"]) ** (1 / (2 * OT["eta"]))
    np.testing.assert_allclose(a.D / a.N, M, rtol=1e-5)
    np.testing.assert_allclose(a.N, np.sqrt(C / (6 * M)), rtol=1e-5)
    np.testing.assert_allclose(a.loss, law.loss(OT, a.N, a.D), rtol=1e-12)
