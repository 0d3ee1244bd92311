"""Recovery tests for the FLP / FLP-M functional forms and the checkpoint filter."""

import numpy as np
import pandas as pd
import pytest

from lmforecast.errors import InputError
from lmforecast.fitting import fit_law, squared
from lmforecast.flp.fitting import fit_from_closed_form
from lmforecast.flp.mixture import fit_stage1
from lmforecast.flp.tables import filter_checkpoints, improved_loss_mask, source_flops
from lmforecast.flp.tasks import table1, table1_flops, task_settings
from lmforecast.laws import get_law
from lmforecast.laws.base import Law


@pytest.mark.parametrize("name", ["flp-power", "flp-gpt4", "flp-linear", "flp-sigmoid"])
def test_single_input_jacobians_match_finite_differences(name):
    law = get_law(name)
    rng = np.random.default_rng(1)
    inp = law.inputs[0]
    X = {inp: 10 ** rng.uniform(17, 22, 15) if inp == "C" else rng.uniform(1.5, 3.5, 15)}
    theta = np.array([[60.0, -0.05], [40.0, 0.1]]) if inp == "C" else rng.normal(0, 1, (2, 2))
    _, J = law.predict_and_jacobian(theta, X)
    assert np.allclose(J, Law.jacobian(law, theta, X), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("form", ["flpm-m1", "flpm-m2", "flpm-m3", "flpm-m4"])
def test_mixture_jacobians_three_sources(form):
    law = get_law(form, sources=["general", "code", "math"])
    rng = np.random.default_rng(2)
    X = {k: 10 ** rng.uniform(17, 21, 12) for k in law.inputs}
    theta = rng.normal(0, 0.5, (3, len(law.parameters)))
    _, J = law.predict_and_jacobian(theta, X)
    assert np.allclose(J, Law.jacobian(law, theta, X), rtol=1e-5, atol=1e-6)


def test_flops_to_loss_power_law_recovered():
    """Eq. 1 on noiseless data: alpha_N and C_N come back to 1e-8 relative."""
    law = get_law("flp-power")
    C = np.asarray(table1()["flops"][:12], float)
    true = {"C_N": 5.85e29, "alpha": -0.0485}
    L = law.predict(true, C=C)
    res = fit_from_closed_form(law, {"C": C}, L, law.ols_start(C, L))
    assert res.converged
    assert res.params["alpha"] == pytest.approx(-0.0485, rel=1e-8)
    assert res.params["C_N"] == pytest.approx(5.85e29, rel=1e-6)


def test_loss_to_performance_linear_recovered_with_noise():
    law = get_law("flp-linear")
    rng = np.random.default_rng(0)
    L = rng.uniform(2.3, 2.7, 200)
    P = 112.0 - 31.0 * L + rng.normal(0, 0.3, L.size)
    res = fit_law(law, {"L": L}, P, loss=squared(), extra_starts=law.ols_start(L, P))
    assert res.params["w1"] == pytest.approx(-31.0, abs=0.5)
    assert res.params["w0"] == pytest.approx(112.0, abs=1.5)


def test_gpt4_form_reads_minus_log_p():
    """Eq. 6 read as -log(P/100) = (C/C_M)^alpha_M: data from that law come back exactly."""
    law = get_law("flp-gpt4")
    C = np.logspace(20, 22, 10)
    P = 100 * np.exp(-((C / 1e19) ** -0.2))
    assert np.all((P > 0) & (P < 100))
    res = fit_law(law, {"C": C}, P, loss=squared())
    assert res.params["alpha"] == pytest.approx(-0.2, rel=1e-6)
    assert res.params["C_N"] == pytest.approx(1e19, rel=1e-4)


def test_sigmoid_map_recovered():
    law = get_law("flp-sigmoid", chance=25.0)
    nll = np.linspace(0.5, 2.5, 40)
    P = law.predict({"k": 4.0, "m": 1.4}, nll=nll)
    assert P.max() < 100 and P.min() > 25
    res = fit_law(law, {"nll": nll}, P, loss=squared())
    assert res.params["k"] == pytest.approx(4.0, rel=1e-5)
    assert res.params["m"] == pytest.approx(1.4, rel=1e-6)


def _mixture_design(K=2, n=40, seed=0):
    rng = np.random.default_rng(seed)
    C = 10 ** rng.uniform(18, 21.5, n)
    share = rng.dirichlet(np.ones(K), n) * 0.9 + 0.1 / K
    return share * C[:, None]


@pytest.mark.parametrize("form", ["flpm-m1", "flpm-m2", "flpm-m4"])
@pytest.mark.parametrize("K", [2, 3])
def test_mixture_forms_recovered(form, K):
    """Data drawn from M1/M2/M4 (K sources): the exponents and the combined intercept (the
    identified quantities) come back, and predictions off the design match."""
    sources = ["general", "code", "math"][:K]
    law = get_law(form, sources=sources)
    rng = np.random.default_rng(K)
    theta = np.array(
        [60.0 if p.name.startswith("log_C") else rng.uniform(-0.06, -0.01) for p in law.parameters]
    )
    F = _mixture_design(K)
    X = {f"C_{s}": F[:, i] for i, s in enumerate(sources)}
    L = law.predict(theta, **X)
    res = fit_stage1(law, X, L)
    assert res.converged
    got, want = law.identified(res.theta), law.identified(theta)
    for k in want:
        assert got[k] == pytest.approx(want[k], rel=1e-6, abs=1e-9), k
    F2 = _mixture_design(K, 10, seed=9)
    X2 = {f"C_{s}": F2[:, i] for i, s in enumerate(sources)}
    assert np.allclose(law.predict(res.theta, **X2), law.predict(theta, **X2), rtol=1e-8)


def test_m3_recovers_relative_source_weight():
    law = get_law("flpm-m3")
    true = {"w_general": 1.0, "w_code": 4.0, "C_T": 1e12, "alpha_C": -0.05}
    F = _mixture_design(2, 60)
    X = {"C_general": F[:, 0], "C_code": F[:, 1]}
    L = law.predict(true, **X)
    res = fit_stage1(law, X, L)
    p = res.params
    assert p["w_code"] / p["w_general"] == pytest.approx(4.0, rel=1e-4)
    assert p["alpha_C"] == pytest.approx(-0.05, rel=1e-5)


def test_m2_m4_defined_at_ratio_zero_through_floor():
    """Ratio-0 reading: a source's own compute is floored at ratio_floor x total."""
    law = get_law("flpm-m4", ratio_floor=1e-3)
    p = {"C_T": 1e12, "alpha_C": -0.05, "C_general": 1e9, "alpha_general": -0.01}
    p |= {"C_code": 1e10, "alpha_code": -0.02}
    a = law.predict(p, C_general=np.array([1e20]), C_code=np.array([0.0]))
    hand = (1e20 / 1e12) ** -0.05 * (1e20 / 1e9) ** -0.01 * (1e17 / 1e10) ** -0.02
    assert a[0] == pytest.approx(hand, rel=1e-12)


def test_table1_flops_formula_reproduces_printed_column():
    t = table1()
    calc = table1_flops(t["n_layers"], t["d_model"], t["d_ffn"], t["tokens"])
    # largest deviation 0.035% (43M), at most 0.011% from 0.5B up
    assert np.max(np.abs(calc / t["flops"] - 1)) < 4e-4
    assert np.max(np.abs(calc / t["flops"] - 1)[8:]) < 1.1e-4


def test_table2_defaults_and_unknown_task():
    assert task_settings("arc").chance == 25.0
    assert task_settings("HumanEval").chance == 0.0
    assert task_settings("MMLU", 25.0).chance == 25.0
    with pytest.raises(InputError, match="unknown task 'MMLU'.*--chance P"):
        task_settings("MMLU")


def test_improved_loss_filter_hand_worked():
    """Rounded to 2 decimals, strictly below the last kept value; ties dropped; per model."""
    models = ["a"] * 5 + ["b"] * 3
    steps = [1, 2, 3, 4, 5, 1, 2, 3]
    tl = [3.004, 2.996, 3.001, 2.951, 2.954, 2.5, 2.6, 2.4]
    # a: 3.00 keep, 3.00 tie drop, 3.00 drop, 2.95 keep, 2.95 tie drop; b: 2.5 keep, 2.6 drop, 2.4
    assert improved_loss_mask(models, steps, tl).tolist() == [1, 0, 0, 1, 0, 1, 0, 1]
    # order of rows does not matter: steps decide
    perm = [7, 3, 0, 5, 1, 6, 2, 4]
    got = improved_loss_mask(np.array(models)[perm], np.array(steps)[perm], np.array(tl)[perm])
    assert got.tolist() == [[1, 0, 0, 1, 0, 1, 0, 1][i] for i in perm]


def test_emergence_filter_at_least_five_points():
    df = pd.DataFrame({"model": ["a"] * 4, "step": [1, 2, 3, 4]})
    rep = filter_checkpoints(df, np.array([29.9, 30.0, 31.0, 24.0]), 25.0, 5.0)
    assert rep.kept.tolist() == [False, True, True, False]
    assert rep.counts() == {
        "checkpoints": 4,
        "kept": 2,
        "dropped_not_improved": 0,
        "dropped_not_emerged": 2,
    }


def test_source_flops_from_ratio_and_bad_sums():
    df = pd.DataFrame({"ratio": [0.0, 0.3], "C": [1e20, 2e20]})
    names, F = source_flops(df)
    assert names == ("general", "code")
    assert np.allclose(F, [[1e20, 0.0], [1.4e20, 0.6e20]])
    bad = pd.DataFrame({"ratio_general": [0.7, 0.6], "ratio_code": [0.3, 0.3], "C": [1, 2]})
    with pytest.raises(InputError, match="row 2: mixing ratios .* sum to 0.9, not 1"):
        source_flops(bad)
    with pytest.raises(InputError, match="C_<source>"):
        source_flops(pd.DataFrame({"C": [1.0]}))
