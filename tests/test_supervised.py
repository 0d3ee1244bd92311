"""Supervised compute laws: recovery, allocation, presets, FLOPs accounting."""

import numpy as np
import pandas as pd
import pytest

from lmforecast.compute.allocation import compute_optimal
from lmforecast.compute.flops import (
    forward_flops_per_token,
    non_embedding_params,
    sigma_coefficients,
    total_params,
    training_flops,
)
from lmforecast.errors import InputError
from lmforecast.supervised import PRESETS, SupervisedScalingLaw
from lmforecast.supervised.simulate import simulate_supervised_runs

TABLE6 = PRESETS["busbridge2025"]["params"]
HOFF = {"A": 406.4, "B": 410.7, "E": 1.69, "alpha": 0.34, "beta": 0.28}


def _grid_runs(params, n=200, noise=0.005, seed=0):
    rng = np.random.default_rng(seed)
    N = 10 ** rng.uniform(7.5, 10.5, n)
    D = N * 10 ** rng.uniform(0.3, 3.0, n)
    from lmforecast.laws.chinchilla import ChinchillaGamma

    L = ChinchillaGamma.loss(params, N, D) * np.exp(rng.normal(0, noise, n))
    return pd.DataFrame({"N": N, "D": D, "loss": L})


def test_recovers_chinchilla_coefficients_from_noisy_runs():
    runs = _grid_runs(HOFF, noise=0.005, seed=1)
    law = SupervisedScalingLaw("chinchilla", huber_delta=1e-3, intervals=False).fit(runs)
    p = law.params_
    assert law.result_.converged
    assert p["E"] == pytest.approx(1.69, rel=0.02)
    assert p["alpha"] == pytest.approx(0.34, rel=0.05)
    assert p["beta"] == pytest.approx(0.28, rel=0.05)
    assert np.log(p["A"]) == pytest.approx(np.log(406.4), abs=0.3)
    assert np.log(p["B"]) == pytest.approx(np.log(410.7), abs=0.3)


def test_recovers_chinchilla_gamma_coefficients():
    runs = _grid_runs(TABLE6, noise=0.001, seed=2)
    law = SupervisedScalingLaw("chinchilla-gamma", huber_delta=1e-4, intervals=False).fit(runs)
    p = law.params_
    for k in ("E", "alpha", "beta", "gamma"):
        assert p[k] == pytest.approx(TABLE6[k], rel=0.06), k
    # the law itself (what users forecast with) is recovered far more tightly
    grid = _grid_runs(TABLE6, n=400, noise=0.0, seed=9)
    err = np.abs(law.predict(grid["N"], grid["D"]) / grid["loss"] - 1)
    assert err.max() < 2e-3


def test_bootstrap_intervals_cover_truth_and_prediction_is_wider():
    runs = _grid_runs(HOFF, n=120, noise=0.01, seed=4)
    law = SupervisedScalingLaw("chinchilla", bootstrap=30, seed=3, n_jobs=1).fit(runs)
    ci = law.result_.ci
    for k in ("E", "alpha", "beta"):
        assert ci[k][0] < HOFF[k] < ci[k][1], (k, ci[k])
    lo_c, hi_c = law.predict_interval(1e10, 2e11, kind="confidence")
    lo_p, hi_p = law.predict_interval(1e10, 2e11, kind="bootstrap")
    assert hi_p - lo_p > hi_c - lo_c > 0
    band = law.allocate_interval(1e22)
    assert band["N"][0] < law.allocate(1e22).N < band["N"][1]


def test_allocation_closed_form_matches_numeric_search():
    for params in (TABLE6, HOFF):
        for C in (1e19, 1e21, 1e23):
            a = compute_optimal(params, C)
            N = np.geomspace(a.N / 30, a.N * 30, 200001)
            from lmforecast.laws.chinchilla import ChinchillaGamma

            L = ChinchillaGamma.loss(params, N, C / (6 * N))
            assert float(a.N) == pytest.approx(N[np.argmin(L)], rel=1e-3)
            assert float(a.loss) == pytest.approx(L.min(), rel=1e-9)
            assert 6 * a.N * a.D == pytest.approx(C)


def test_allocation_matches_papers_calc_numbers():
    # METHODS.md 2.4 [CALC] with Table 6: C=1e20 -> N* ~ 9.36e8, D* ~ 1.78e10 (M ~ 19.0), ...
    a = SupervisedScalingLaw.from_preset("busbridge2025").allocate([1e20, 1e21, 1e22])
    np.testing.assert_allclose(a.N, [9.36e8, 3.05e9, 9.97e9], rtol=3e-3)
    np.testing.assert_allclose(a.D, [1.78e10, 5.46e10, 1.67e11], rtol=3e-3)
    np.testing.assert_allclose(a.D / a.N, [19.0, 17.9, 16.8], rtol=5e-3)
    ex = SupervisedScalingLaw.from_preset("busbridge2025").exponents_
    assert ex["a"] == pytest.approx(0.513, abs=1e-3) and ex["b"] == pytest.approx(0.486, abs=1e-3)


def test_allocation_under_fn_accounting_is_the_isoflop_minimum():
    from lmforecast.laws.chinchilla import ChinchillaGamma

    for C in (1e19, 1e22, 1e25):
        a = compute_optimal(TABLE6, C, accounting="F(N)")
        assert float(training_flops(a.N, a.D, "F(N)")) == pytest.approx(C, rel=1e-9)
        N = np.geomspace(float(a.N) / 20, float(a.N) * 20, 100001)
        D = C / (3 * forward_flops_per_token(N))
        L = ChinchillaGamma.loss(TABLE6, N, D)
        assert float(a.N) == pytest.approx(N[np.argmin(L)], rel=2e-3)
    # attention/vocabulary FLOPs make small models costlier, so F(N) accounting trains on fewer
    # tokens than 6ND at the same budget
    assert compute_optimal(TABLE6, 1e20, "F(N)").D < compute_optimal(TABLE6, 1e20).D


def test_forward_flops_reproduce_table13():
    # Table 13 "2N + sigma" column (billions of FLOPs per token), rel. error to our Eq. 69 < 0.4%
    N = np.array([0.1028, 0.546, 1.821, 7.747, 12.61]) * 1e9
    table = np.array([0.3398, 1.415, 4.28, 16.99, 27.23]) * 1e9
    np.testing.assert_allclose(forward_flops_per_token(N), table, rtol=4e-3)
    s1, s2 = sigma_coefficients()
    assert s1 == pytest.approx(0.037857, rel=1e-4) and s2 == pytest.approx(2.20128, rel=1e-5)
    assert float(training_flops(1e9, 1e10)) == 6e19


def test_parameter_counting_reproduces_table13():
    # 103M: 8 layers, d_model 1024, d_ff 2816 -> N = 0.1028B, N_total = 0.1363B (V = 32768)
    assert non_embedding_params(8, 1024, 2816) / 1e9 == pytest.approx(0.1028, abs=5e-5)
    assert total_params(8, 1024, 2816) / 1e9 == pytest.approx(0.1363, abs=5e-5)
    # 12.6B: 40 layers, d_model 5120, d_ff 13696 -> N = 12.61B
    assert non_embedding_params(40, 5120, 13696) / 1e9 == pytest.approx(12.61, abs=0.01)


def test_paper_protocol_extrapolation_within_one_percent():
    runs = simulate_supervised_runs(TABLE6, noise=0.005, seed=5)
    hi = runs["loss"] >= 2.2
    law = SupervisedScalingLaw("chinchilla-gamma", huber_delta=1e-4, intervals=False).fit(runs[hi])
    rel = np.abs(law.predict(runs["N"][~hi], runs["D"][~hi]) / runs["loss"][~hi] - 1)
    assert rel.mean() < 0.01


def test_save_load_round_trip(tmp_path):
    runs = _grid_runs(HOFF, n=40, noise=0.01, seed=6)
    law = SupervisedScalingLaw("chinchilla").fit(runs)
    law.save(tmp_path / "fit.json")
    back = SupervisedScalingLaw.load(tmp_path / "fit.json")
    assert back.params_ == law.params_
    assert (tmp_path / "fit.json").read_text() == back.to_json()


def test_validation_messages_name_the_problem():
    runs = _grid_runs(HOFF, n=20)
    with pytest.raises(InputError, match="'loss'"):
        SupervisedScalingLaw().fit(runs.drop(columns="loss"))
    bad = runs.copy()
    bad.loc[3, "N"] = -5
    with pytest.raises(InputError, match="column 'N' row 4"):
        SupervisedScalingLaw().fit(bad)
    with pytest.raises(InputError, match="at least as many runs"):
        SupervisedScalingLaw("chinchilla-gamma").fit(runs.iloc[:5])
    dup = pd.concat([runs, runs.iloc[[2]]], ignore_index=True)
    with pytest.raises(InputError, match="row 21 duplicates row 3"):
        SupervisedScalingLaw().fit(dup)
    with pytest.raises(InputError, match="unknown preset"):
        SupervisedScalingLaw.from_preset("nope")


def test_runs_given_as_flops():
    runs = _grid_runs(HOFF, n=60, noise=0.002, seed=8)
    as_c = pd.DataFrame({"N": runs["N"], "C": 6 * runs["N"] * runs["D"], "loss": runs["loss"]})
    a = SupervisedScalingLaw("chinchilla", intervals=False).fit(runs).params_
    b = SupervisedScalingLaw("chinchilla", intervals=False).fit(as_c).params_
    for k in a:
        assert a[k] == pytest.approx(b[k], rel=1e-6)
