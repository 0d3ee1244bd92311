"""Honest intervals for the distillation law: multi-started bootstrap, prediction
intervals on every forecast, the bootstrap identifiability rule, calibration on simulated data
with known truth, the CLI contract and bit-for-bit round trips."""

import copy
import json
import warnings

import numpy as np
import pandas as pd
import pytest

from lmforecast.compute.flops import forward_flops_per_token as F
from lmforecast.distill import DistillationScalingLaw, simulate_distillation_runs
from lmforecast.distill.plan_intervals import plan_interval
from lmforecast.distill.planning import plan_distillation
from lmforecast.distill.uncertainty import (
    BOOTSTRAP_GRID,
    multistart_bootstrap,
    spread_status,
    variance_shares,
)
from lmforecast.errors import InputError
from lmforecast.fitting import FitResult, huber
from lmforecast.fitting.engine import Objective, polish_many
from lmforecast.laws import get_law
from lmforecast.uncertainty.bootstrap import bootstrap_fit
from lmforecast.uncertainty.percentile import interval_from_draws
from lmforecast.uncertainty.resample import resample_indices

# a small product grid for fast test fits (App. F.2 axes, ends and middle of a few)
SMALL_GRID = {
    "log_A'": [5.0, 10.0], "log_B'": [10.0, 15.0], "alpha'": [0.5], "beta'": [0.5, 1.0],
    "gamma'": [0.5, 1.0], "c0": [1.5], "c1": [522.6], "f1": [0.09], "log_d1": [0.0],
}  # fmt: skip
WELL_DESIGNED = {
    "A'": 2243.0, "B'": 3.0e6, "alpha'": 0.321, "beta'": 0.637, "gamma'": 0.764,
    "c0": 2.549, "c1": 522.6, "f1": 0.090, "d1": 1.315,
}  # fmt: skip


@pytest.fixture(scope="module")
def preset():
    return DistillationScalingLaw.from_preset()


# ---- building blocks -----------------------------------------------------------------------
def test_spread_rule_decade_for_scales_and_range_for_exponents():
    rng = np.random.default_rng(0)
    n = 400
    nat = np.column_stack(
        [
            10 ** rng.uniform(2, 4, n),  # A': two decades -> not identified
            10 ** rng.uniform(3, 3.5, n),  # B': half a decade -> identified
            rng.uniform(0.30, 0.34, n),  # alpha': tight exponent
            rng.uniform(0.0, 2.0, n),  # beta': range > median -> not identified
            rng.uniform(0.5, 1.4, n),  # gamma': ratio < 3, range < median -> identified
        ]
    )
    st = spread_status(nat, ["A'", "B'", "alpha'", "beta'", "gamma'"])
    assert not st["A'"]["identified"] and st["A'"]["ratio"] > 10
    assert st["B'"]["identified"] and st["B'"]["ratio"] < 10
    assert st["alpha'"]["identified"]
    assert not st["beta'"]["identified"] and st["beta'"]["p05"] < 0.15
    assert st["gamma'"]["identified"]


def test_variance_shares_find_the_driving_coefficient():
    rng = np.random.default_rng(1)
    th = rng.normal(size=(200, 3))
    f = 2.0 * th[:, 1] + 0.1 * rng.normal(size=200)
    sh = variance_shares(f, th, ["a", "b", "c"])
    assert sh["b"] > 0.95 and sh["a"] < 0.05 and sh["c"] < 0.05
    th[:, 2] = 1.0  # a coefficient held fixed has no share
    assert variance_shares(f, th, ["a", "b", "c"])["c"] == 0.0


def test_interval_from_draws_adds_noise_exactly():
    """No parameter spread: the interval is exactly the normal run-noise interval."""
    T = np.zeros((10, 1))
    lo, hi = interval_from_draws(T, 0.01, 0.9)
    assert hi[0] == pytest.approx(-lo[0]) and hi[0] == pytest.approx(0.01 * 1.645, rel=0.03)
    lo0, hi0 = interval_from_draws(T, 0.0, 0.9)
    assert lo0[0] == hi0[0] == 0.0


# ---- the preset: intervals from the published CIs ------------------------------------------
def test_preset_interval_contains_point_and_is_narrow_where_table6_is(preset):
    p = preset.predict([1e9, 3e9], [2e10, 6e10], 2.0)
    lo, hi = preset.predict_interval([1e9, 3e9], [2e10, 6e10], 2.0)
    assert np.all(lo < p) and np.all(p < hi)
    rel = np.log(hi / lo)
    assert np.all(rel > 0.005) and np.all(rel < 0.08)  # Table 6 CIs are tight: ~1-3%
    lo50, hi50 = preset.predict_interval(1e9, 2e10, 2.0, level=0.5)
    lo99, hi99 = preset.predict_interval(1e9, 2e10, 2.0, level=0.99)
    assert lo99 < lo50 < hi50 < hi99
    # by teacher (N_T, D_T): its loss is a forecast, drawn from the supervised law's interval
    # (tests/test_distill_teacher_uncertainty.py), so the interval differs from the one with
    # the same loss measured; this teacher sits near the student's capacity-gap optimum L_T*
    # (Sec. 5.2), where dL_S/dL_T ~ 0, so it differs only a little
    LT = float(preset.teacher_loss(7.75e9, 1.55e11))
    a = np.array(preset.predict_interval(1e9, 2e10, N_T=7.75e9, D_T=1.55e11), float)
    b = np.array(preset.predict_interval(1e9, 2e10, LT), float)
    assert not np.array_equal(a, b) and np.allclose(a, b, rtol=1e-3)
    with pytest.raises(InputError, match="level"):
        preset.predict_interval(1e9, 2e10, 2.0, level=1.5)


def test_preset_plan_intervals(preset):
    p = plan_distillation(preset, 1e9, 1e22, "teacher-pretraining-inference")
    iv = plan_interval(preset, 1e9, 1e22, "teacher-pretraining-inference", max_draws=60)
    for k in ("student_loss", "teacher_params", "student_tokens", "teacher_loss"):
        lo, hi = iv[k]
        v = float(getattr(p, k))
        assert lo < v < hi, k
    # best case: D_S* = C / 3F(N_S) is fixed by the budget, so its interval is degenerate
    # any draw count: a D_S* that moved with the draws would spread over 4 of them
    iv = plan_interval(preset, 1e9, 1e22, "best-case", max_draws=4)
    lo, hi = iv["student_tokens"]
    assert float(hi / lo) == pytest.approx(1.0, abs=1e-9)


# ---- multi-start bootstrap and identifiability ---------------------------------------------
def _fit(runs, **kw):
    kw = {"grid": SMALL_GRID, "n_polish": 4, "bootstrap": 16, "boot_polish": 2, "n_jobs": 1,
          "fixed": {"c1": 522.6}, **kw}  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return DistillationScalingLaw("busbridge2025", **kw).fit(runs)


def _well_designed_runs(seed=0, noise=0.005):
    """192 runs: students 100M-10B over 2-500 tokens per parameter and four teachers, so
    B'/D^beta' is 2-72% of the power sum; truth = Table 6 with B' = 3e6."""
    truth = DistillationScalingLaw.from_preset()
    truth.params_ = dict(WELL_DESIGNED)
    rng = np.random.default_rng(seed)
    N = np.repeat(np.geomspace(1e8, 1e10, 6), 8 * 4)
    M = np.tile(np.repeat(np.geomspace(2, 500, 8), 4), 6)
    LT = np.tile(np.array([1.9, 2.2, 2.6, 3.2]), 6 * 8)
    D = N * M
    L = truth.predict(N, D, LT) * np.exp(rng.normal(0, noise, N.size))
    return pd.DataFrame({"N_S": N, "D_S": D, "L_T": LT, "L_S": L}), truth


@pytest.mark.slow
def test_identifiability_rule_fires_on_paper_design_not_on_well_designed():
    """Paper-like design (Table 6 truth: B'/D^beta' < 1.5% of the power sum): the resampled
    B', beta' span decades -> NOT identified, agreeing with the bootstrap. A design where both
    terms matter pins them (and the multi-start bootstrap does not invent spread)."""
    bad = _fit(simulate_distillation_runs(n_runs=250, seed=4))
    rep = bad.uncertainty_report()["coefficients"]
    status = bad.identifiability()
    # B' spans more than a decade over the multi-started resamples (the warm-started bootstrap
    # left it at the full-data value); beta' is flat (its term is negligible, the polish does
    # not move it), which the structural check reports
    assert not rep["B'"]["identified"] and rep["B'"]["ratio"] > 10
    for k in ("B'", "beta'"):
        assert status[k].startswith("not identified"), status[k]
    for k, v in rep.items():  # agreement: nothing spanning a decade is called identified
        if v["p05"] > 0 and v["ratio"] > 10:
            assert not status[k].startswith("identified"), k
    assert 0.0 <= min(v["share"] for v in rep.values())
    assert max(v["share"] for v in rep.values()) <= 1.0
    runs, _ = _well_designed_runs(noise=0.002)  # a study built to pin them
    good = _fit(runs)
    rep = good.uncertainty_report()["coefficients"]
    status = good.identifiability()
    for k in ("B'", "beta'", "A'", "alpha'", "c0"):
        assert rep[k]["identified"], (k, rep[k])
        assert status[k] == "identified", (k, status[k])
    assert good.params_["beta'"] == pytest.approx(0.637, rel=0.1)
    # summary and the CLI JSON carry the same report
    s = good.summary()
    assert "share" in s and "P95/P5" in s and "multi-start" in s


def test_multistart_resamples_leave_the_basin_warm_starts_do_not():
    """Warm-started resamples (`bootstrap_fit`, n_polish=0) cannot leave the basin of the fit
    they start from; multi-started ones re-score the grid on their own data and reach a better
    basin. Here the 'fit' is a genuine local optimum 7x worse than the best (polished from an
    App. F.2 corner start): every warm-started resample stays near it, the multi-started ones
    escape (objective on their own resample several times lower). Same resample rows."""
    runs = simulate_distillation_runs(n_runs=150, seed=5)
    m = DistillationScalingLaw.from_preset()
    law = get_law("busbridge-distillation")
    X = m._inputs(runs.N_S, runs.D_S, runs.L_T)
    y = runs.L_S.to_numpy()
    obj = Objective(law, X, np.log(y), huber(1e-4))
    corner = np.array([[20.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 1.5, 1.0]])
    theta, f, _ = polish_many(obj, corner, law.bounds)
    res = FitResult(law=law.name, theta=theta[0].tolist(), params=law.to_natural(theta[0]),
                    objective=float(f[0]), loss=huber(1e-4).to_dict(), n_obs=len(y),
                    n_starts=1, n_polished=1, n_at_best=1, converged=True)  # fmt: skip
    warm = bootstrap_fit(law, X, y, copy.deepcopy(res), n_boot=4, seed=1, n_jobs=1)
    multi = multistart_bootstrap(law, X, y, copy.deepcopy(res), n_boot=4, seed=1, n_jobs=1,
                                 grid=BOOTSTRAP_GRID, n_polish=2)  # fmt: skip
    assert multi.meta["bootstrap"]["winner_from_grid"] == 4

    def objectives(r):
        out = []
        for ss, th in zip(np.random.SeedSequence(1).spawn(4), r.bootstrap):
            idx = resample_indices(ss, len(y))
            o = Objective(law, {k: v[idx] for k, v in X.items()}, np.log(y[idx]), huber(1e-4))
            out.append(o.batch(np.array(th))[0])
        return np.array(out)

    ow, om = objectives(warm), objectives(multi)
    assert np.all(om < ow / 3), (om, ow)
    # the warm-started draws all sit next to the trapped optimum (beta' at its bound)
    assert np.all(np.abs(np.asarray(warm.bootstrap)[:, 3] - theta[0, 3]) < 0.5)


# ---- calibration: held-out students at larger compute -------------------------------------
@pytest.mark.slow
def test_prediction_intervals_are_calibrated_on_held_out_larger_compute():
    """Simulated runs (Table 6 truth, 0.5% noise): fit on students with compute <= 3e20 FLOPs,
    forecast every student above it (as a user would extrapolate). Nominal 90% prediction
    intervals must cover 85-95% of >= 200 held-out measurements; confidence intervals (no run
    noise) must cover far fewer, so the test fails if the noise term is dropped."""
    hit, hit_conf, n = 0, 0, 0
    for seed in range(3):
        runs = simulate_distillation_runs(n_runs=260, seed=10 + seed)
        C = 3.0 * F(runs["N_S"].to_numpy()) * runs["D_S"].to_numpy()
        tr, te = runs[C <= 3e20], runs[C > 3e20]
        m = _fit(tr, bootstrap=12, seed=seed)
        lo, hi = m.predict_interval(te.N_S, te.D_S, te.L_T)
        hit += int(np.sum((te.L_S >= lo) & (te.L_S <= hi)))
        lo, hi = m.predict_interval(te.N_S, te.D_S, te.L_T, kind="confidence")
        hit_conf += int(np.sum((te.L_S >= lo) & (te.L_S <= hi)))
        n += len(te)
    assert n >= 200
    assert 0.85 <= hit / n <= 0.95, hit / n
    assert hit_conf / n < 0.75


# ---- persistence and the CLI ---------------------------------------------------------------
def test_saved_fit_with_bootstrap_round_trips_bit_for_bit(tmp_path):
    m = _fit(simulate_distillation_runs(n_runs=120, seed=6), bootstrap=3)  # any count round-trips
    assert m.result_.bootstrap and m.result_.meta["bootstrap"]["mode"] == "multi-start"
    path = tmp_path / "fit.json"
    m.save(path)
    back = DistillationScalingLaw.load(path)
    assert back.to_json() == path.read_text() == m.to_json()
    assert back.result_.bootstrap == m.result_.bootstrap
    a = m.predict_interval([1e9, 3e9], 2e10, 2.1)
    b = back.predict_interval([1e9, 3e9], 2e10, 2.1)
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
    assert back.noise_scale_ == m.noise_scale_ > 0


@pytest.mark.slow
def test_small_fits_estimate_run_noise_by_leave_one_out():
    """<= 40 runs: the noise term is at least the leave-one-out RMS error of log L_S (a
    within-data backtest), which exceeds the in-sample residual scale; a hand-rolled refit
    without one run reproduces its leave-one-out error. Larger fits skip it."""
    from lmforecast.distill.zoo_data import zoo_fixed_coefficients

    runs = simulate_distillation_runs(n_runs=12, seed=9, noise=0.02)
    fixed = zoo_fixed_coefficients()  # 4 free coefficients, as on the zoo
    m = _fit(runs, bootstrap=2, fixed=fixed)
    noise = m.result_.meta["noise"]
    resid = m.result_.residual_scale * np.sqrt(12 / 8)  # dof-corrected in-sample scale
    assert noise["n"] == 12 and noise["loo_rms"] > resid
    assert m.noise_scale_ == noise["loo_rms"]
    # the simulated noise is 0.02; leave-one-out errors also carry the refit's own error
    assert 0.014 < noise["loo_rms"] < 0.06
    big = simulate_distillation_runs(n_runs=41, seed=9)
    assert "noise" not in _fit(big, bootstrap=2, fixed=fixed).result_.meta
    assert "noise" not in _fit(runs, bootstrap=0, fixed=fixed).result_.meta  # no intervals


def test_fit_without_bootstrap_has_no_interval_and_says_so(cli, tmp_path):
    m = _fit(simulate_distillation_runs(n_runs=60, seed=7), bootstrap=0)
    assert not m.has_intervals() and m.uncertainty_report() == {}
    with pytest.raises(InputError, match="bootstrap"):
        m.predict_interval(1e9, 2e10, 2.0)
    path = tmp_path / "nb.json"
    m.save(path)
    code, out, _ = cli("distill", "predict", "--student-params", 1e9, "--student-tokens", 2e10,
                       "--teacher-loss", 2.0, "--coefficients", path, "--json")  # fmt: skip
    d = json.loads(out)
    assert code == 0 and d["interval"] is None and "bootstrap" in d["interval_note"]


def test_cli_predict_and_plan_json_carry_intervals(cli, preset):
    base = ["distill", "predict", "--student-params", 1e9, "--student-tokens", 2e10]
    code, out, _ = cli(*base, "--teacher-loss", 2.0, "--json")
    d = json.loads(out)
    assert code == 0 and d["level"] == 0.9 and "no run noise" in d["interval_basis"]
    lo, hi = d["interval"]
    assert (lo, hi) == tuple(float(v) for v in preset.predict_interval(1e9, 2e10, 2.0))
    assert lo < d["student_loss"] < hi
    code, out, _ = cli(*base, "--teacher-loss", 2.0, "--json", "--level", 0.5)
    lo5, hi5 = json.loads(out)["interval"]
    assert lo < lo5 < hi5 < hi
    code, out, _ = cli("distill", "plan", "--student-params", 1e9, "--flops", 1e22, "--json",
                       "--scenario", "teacher-inference")  # fmt: skip
    d = json.loads(out)
    assert code == 0 and d["interval"] == d["intervals"]["student_loss"]
    assert d["interval"][0] < d["student_loss"] < d["interval"][1]
    assert d["intervals"]["teacher_params"][0] < d["teacher_params"]
    assert d["teacher_params"] < d["intervals"]["teacher_params"][1]
    code, out, _ = cli("distill", "plan", "--student-params", 1e9, "--flops", 1e22)
    assert code == 0 and "90% intervals" in out


def test_cli_choose_teacher_carries_intervals(cli, tmp_path, preset):
    t = tmp_path / "teachers.csv"
    t.write_text("N_T,D_T\n546000000,1.1e10\n7747000000,1.55e11\n")
    code, out, _ = cli("distill", "choose-teacher", "--student-params", 1e9, "--student-tokens",
                       2e10, "--teachers", t, "--scenario", "best-case", "--json")  # fmt: skip
    d = json.loads(out)
    assert code == 0 and d["level"] == 0.9
    # teachers given by size and tokens: the interval of a forecast teacher loss
    lo, hi = preset.predict_interval(1e9, 2e10, N_T=d["best"]["N_T"], D_T=d["best"]["D_T"])
    assert d["interval"] == [float(lo), float(hi)] == [d["best"]["L_S_lo"], d["best"]["L_S_hi"]]
    assert all(r["L_S_lo"] < r["L_S"] < r["L_S_hi"] for r in d["ranking"])


@pytest.mark.parametrize("level", ["0", "1.5", "1", "nan", "x"])
@pytest.mark.parametrize("verb", ["predict", "plan", "choose-teacher"])
def test_cli_bad_level_exits_2_one_line_nothing_written(cli, tmp_path, monkeypatch, verb, level):
    monkeypatch.chdir(tmp_path)
    args = {
        "predict": ["--student-params", 1e9, "--student-tokens", 2e10, "--teacher-loss", 2.0],
        "plan": ["--student-params", 1e9, "--flops", 1e22],
        "choose-teacher": ["--student-params", 1e9, "--student-tokens", 2e10, "--teachers", "t"],
    }[verb]
    code, out, err = cli("distill", verb, *args, "--json", "--level", level)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "--level" in err
    assert list(tmp_path.iterdir()) == []


def test_cli_fit_default_carries_intervals_and_identifiability(cli, tmp_path):
    runs = simulate_distillation_runs(n_runs=100, seed=8)
    csv = tmp_path / "runs.csv"
    runs.to_csv(csv, index=False)
    out = tmp_path / "fit.json"
    code, stdout, _ = cli("distill", "fit", "--runs", csv, "--out", out, "--json",
                          "--fix", "c1=522.6", "--bootstrap", 6, "--boot-polish", 1, "--jobs", 1,
                          "--supervised", "paper")  # fmt: skip
    assert code == 0
    d = json.loads(stdout)
    assert d["bootstrap"]["mode"] == "multi-start" and d["bootstrap"]["n_polish"] == 1
    unc = d["uncertainty"]
    assert set(unc) == {"forecast", "sd_log_forecast", "interval", "coefficients"}
    assert set(unc["coefficients"]) == set(d["params"])
    for k, v in unc["coefficients"].items():
        if not v["identified"]:
            assert d["identifiability"][k].startswith("not identified"), k
    m = DistillationScalingLaw.load(out)
    assert m.to_json() == out.read_text()
    code, stdout, _ = cli("distill", "predict", "--student-params", 1e9, "--student-tokens",
                          2e10, "--teacher-loss", 2.1, "--coefficients", out, "--json")  # fmt: skip
    lo, hi = json.loads(stdout)["interval"]
    assert [lo, hi] == [float(v) for v in m.predict_interval(1e9, 2e10, 2.1)]
    code, _, err = cli("distill", "fit", "--runs", csv, "--boot-polish", -1)
    assert code == 2 and "--boot-polish" in err


# ---- real data: the bundled zoo's distilled students ---------------------------------------
@pytest.fixture(scope="module")
def zoo():
    from lmforecast.zoo import load_zoo

    return load_zoo()


@pytest.fixture(scope="module")
def zoo_fits(zoo):
    """The backtest's two fits, once for both teacher modes (the fits do not depend on how the
    forecasts give the teacher). 8 resamples, as docs/distill_validation.md's backtest rows:
    the claims below are about coverage and errors of these fits, not the bootstrap's size."""
    from lmforecast.distill.zoo_data import zoo_backtest_fits

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "only 8 bootstrap resamples", UserWarning)
        return zoo_backtest_fits(zoo, bootstrap=8)


@pytest.mark.slow
def test_zoo_backtest_beats_naive_baselines_and_reports_coverage(zoo, zoo_fits):
    """Fit on the smaller students (or the smaller budget), forecast the larger: the law's
    mean error is far below the naive baselines' (supervised loss of the same student, teacher
    loss). With 6 runs per fit the in-sample residuals say nothing about new runs (the fit
    interpolates them); the leave-one-out noise term makes the 90% intervals cover at least 9
    of the 12 held-out runs (the residual scale alone covered 8; docs/distill.md)."""
    from lmforecast.distill.zoo_data import zoo_backtest

    bt = zoo_backtest(zoo, fits=zoo_fits)
    assert set(bt["split"]) == {"size", "compute"} and len(bt) == 12
    for _, g in bt.groupby("split"):
        mae = g["err"].abs().mean()
        assert mae < 0.05
        assert mae < 0.5 * g["err_supervised_baseline"].abs().mean()
        assert mae < 0.5 * g["err_teacher_baseline"].abs().mean()
    assert np.all(bt["lo"] <= bt["hi"]) and bt["covered"].sum() >= 9


@pytest.mark.slow
def test_zoo_backtest_with_each_teacher_forecast_from_its_size_and_tokens(zoo, zoo_fits):
    """The same splits with every teacher given by (N_T, D_T): its loss is the zoo supervised
    law's forecast and is drawn in the interval. Still far below the naive
    baselines, intervals wider in the median than with the measured teacher loss, as many of
    the 12 held-out runs covered (real data: 12 of 12 at 32 resamples, docs/distill.md)."""
    from lmforecast.distill.zoo_data import zoo_backtest

    meas = zoo_backtest(zoo, fits=zoo_fits)
    fc = zoo_backtest(zoo, teacher="forecast", fits=zoo_fits)
    # wider in the median (a run's forecast teacher loss differs from its measured one, so
    # single intervals sit elsewhere; the exact comparison is in test_distill_teacher_uncertainty)
    assert np.median(fc["hi"] - fc["lo"]) > np.median(meas["hi"] - meas["lo"])
    assert not np.allclose(fc["pred"], meas["pred"])  # the teacher's loss is the law's now
    for _, g in fc.groupby("split"):
        mae = g["err"].abs().mean()
        assert mae < 0.06 and mae < 0.5 * g["err_supervised_baseline"].abs().mean()
    assert fc["covered"].sum() >= meas["covered"].sum()
    with pytest.raises(InputError, match="teacher must be"):
        zoo_backtest(zoo, fits=zoo_fits, teacher="guess")


def test_plan_interval_holds_the_plan_with_few_draws(preset):
    # with a handful of draws the percentiles alone can miss the plan they are an interval of
    for scenario in ("teacher-pretraining-inference", "teacher-inference"):
        p = plan_distillation(preset, 3e9, [1e21, 1e22, 1e23], scenario)
        iv = plan_interval(preset, 3e9, [1e21, 1e22, 1e23], scenario, max_draws=3)
        for k, (lo, hi) in iv.items():
            v = np.asarray(getattr(p, k), float)
            assert np.all(lo <= v) and np.all(v <= hi), k
            if scenario == "teacher-inference" and k == "teacher_tokens":
                # D_T* sits at the App. D.4 bound in every draw: exactly 1e17, not the
                # 1.000000000000001e17 of exp(log(1e17))
                assert np.all(lo == 1e17) and np.all(hi == 1e17)
                continue
            assert np.any(hi > lo), k  # still an interval, not the point
