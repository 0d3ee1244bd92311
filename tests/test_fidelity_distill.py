"""Paper fidelity of the distillation tools (Busbridge et al. 2025).

No silent default supervised law. L~_S (Eq. 8) comes from the user's supervised runs
(rows with an empty L_T) unless the paper's C4 law is chosen explicitly.
"""

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from lmforecast.distill import DistillationScalingLaw, simulate_distillation_runs
from lmforecast.errors import InputError

# the truth: Table 6's distillation column over a supervised law that is NOT the paper's C4 one
OWN_SUP = {"E": 1.6, "A": 3355.0, "B": 18186.0, "alpha": 0.408, "beta": 0.431, "gamma": 0.452}
GRID = {"log_A'": [5.0, 10.0], "log_B'": [5.0, 10.0], "alpha'": [0.5], "beta'": [0.5, 1.0],
        "gamma'": [0.5, 1.0], "c0": [1.5, 2.5], "c1": [1.0, 100.0], "f1": [0.09],
        "log_d1": [0.0, 0.5]}  # fmt: skip


@pytest.fixture(scope="module")
def own_data():
    truth = DistillationScalingLaw.from_result(
        DistillationScalingLaw.from_preset().result_, supervised=OWN_SUP
    )
    d = simulate_distillation_runs(truth, n_runs=150, seed=4)
    rng = np.random.default_rng(1)
    N = np.repeat([1e8, 3e8, 1e9, 3e9, 1e10], 4)
    D = N * np.tile([5.0, 20.0, 80.0, 320.0], 5)
    L = truth.supervised_loss(N, D) * np.exp(rng.normal(0.0, 0.003, N.size))
    sup = pd.DataFrame({"N_S": N, "D_S": D, "L_T": np.nan, "L_S": L})
    both = pd.concat([d[["N_S", "D_S", "L_T", "L_S"]], sup], ignore_index=True)
    return truth, d, both


@pytest.mark.slow
def test_supervised_law_fitted_from_supervised_rows(own_data, tmp_path):
    """Rows with an empty L_T fit Eq. 1 (App. F.1) and give L~_S; the paper's C4 law, chosen
    explicitly, misplaces the capacity gap on such data: the best student loss over teachers
    at D_S = 20 N_S (Sec. 5.2) is off by > 0.08 nats against < 0.06 with the data's own law."""
    truth, d, both = own_data
    own = DistillationScalingLaw(bootstrap=0, n_polish=4, grid=GRID).fit(both)
    sup = own.supervised_.params_
    assert sup["E"] == pytest.approx(1.6, rel=0.05)
    assert sup["alpha"] == pytest.approx(0.408, rel=0.05)
    assert own.result_.n_obs == len(d)  # the supervised rows are not distillation runs
    src = own.result_.meta["supervised_source"]
    assert src.startswith("fitted to the 20 supervised rows")
    assert src in own.summary()
    paper = DistillationScalingLaw("paper", bootstrap=0, n_polish=4, grid=GRID).fit(d)
    assert paper.result_.meta["supervised_source"].startswith("paper's law: busbridge2025")
    NS = np.array([3e8, 1e9, 3e9])
    best_truth = truth.optimal_teacher_loss(NS, 20 * NS)[1]
    err_own = np.abs(own.optimal_teacher_loss(NS, 20 * NS)[1] - best_truth)
    err_paper = np.abs(paper.optimal_teacher_loss(NS, 20 * NS)[1] - best_truth)
    # the data's own law misplaces the best teacher by little, the paper's by far more; the own-law
    # error sits on the B'/beta' ridge (docs/limitations.md): the variable-projection engine
    # reaches a lower objective than the previous grid path (5.5733e-5 vs 5.5757e-5) where it is
    # 0.049 nats rather than 0.024, so the bound is 0.06, and the paper's error is twice as large
    assert err_own.max() < 0.06 and err_paper.min() > 0.08
    assert err_paper.min() > 1.5 * err_own.max()
    # the source survives a save/load round trip
    own.save(tmp_path / "f.json")
    back = DistillationScalingLaw.load(tmp_path / "f.json")
    assert back.supervised_source_ == src and back.supervised_.params_ == pytest.approx(sup)


def test_no_silent_default(own_data):
    _, d, both = own_data
    with pytest.raises(InputError, match="no supervised law for L~_S.*--supervised paper"):
        DistillationScalingLaw(bootstrap=0).fit(d)
    with pytest.raises(InputError, match="20 row\\(s\\) have an empty 'L_T'.*drop one"):
        DistillationScalingLaw("busbridge2025", bootstrap=0).fit(both)
    few = pd.concat([d, both[both.L_T.isna()].head(3)], ignore_index=True)
    with pytest.raises(InputError, match="3 supervised row\\(s\\).*6 coefficients"):
        DistillationScalingLaw(bootstrap=0).fit(few)
    bad = d.copy()
    bad.loc[5, "L_T"] = -1.0
    with pytest.raises(InputError, match="'L_T' row 6: value -1 must be > 0"):
        DistillationScalingLaw(bootstrap=0).fit(bad)
    assert DistillationScalingLaw.from_preset().supervised_source_.startswith(
        "preset busbridge2025"
    )


def test_cli_requires_a_supervised_choice(cli, tmp_path, own_data):
    _, d, _ = own_data
    csv = tmp_path / "runs.csv"
    d.head(40).to_csv(csv, index=False)
    out = tmp_path / "fit.json"
    code, _, err = cli("distill", "fit", "--runs", csv, "--out", out, "--bootstrap", 0)
    assert code == 2 and not out.exists()
    assert len(err.strip().splitlines()) == 1 and "--supervised paper" in err
    code, stdout, _ = cli("distill", "fit", "--runs", csv, "--supervised", "paper", "--out", out,
                          "--bootstrap", 0, "--json", "--fix", "c1=522.6", "--fix", "f1=0.09",
                          "--fix", "gamma'=0.764")  # fmt: skip
    assert code == 0 and out.exists()
    j = json.loads(stdout)
    assert j["supervised"]["source"].startswith("paper's law: busbridge2025")
    assert j["supervised"]["params"]["E"] == pytest.approx(1.220)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert "paper's law" in DistillationScalingLaw.load(out).summary()


# ---- App. D.5, Eq. 34 ------------------------------------------------------------------------
def test_ratios_best_case_match_an_independent_hand_computation():
    """Best case (teacher free): distillation compute = 3F(N_S) D_S and supervised compute =
    3F(N_S) D, so both ratios equal D_S / D. D_S solves min_{L_T} L_S(N_S, D_S, L_T) = target
    (Sec. 5.2, `optimal_teacher_loss`) and D solves L(N_S, D) = target; both found here by
    brentq, independently of the planner's bisection on compute."""
    from scipy.optimize import brentq

    from lmforecast.distill.versus_supervised import distillation_vs_supervised_ratios

    m = DistillationScalingLaw.from_preset()
    N, L = 5e8, 2.25
    d_sup = np.exp(brentq(lambda x: float(m.supervised_loss(N, np.exp(x))) - L, 10, 60))
    d_dist = np.exp(brentq(lambda x: float(m.optimal_teacher_loss(N, np.exp(x))[1]) - L, 20, 35))
    r = distillation_vs_supervised_ratios(m, N, L, "best-case").iloc[0]
    assert r["supervised_tokens"] == pytest.approx(d_sup, rel=1e-9)
    assert r["compute_ratio"] == pytest.approx(d_dist / d_sup, rel=2e-3)
    assert r["token_ratio"] == pytest.approx(r["compute_ratio"], rel=1e-14)  # 3F cancels
    assert r["teacher_loss"] == pytest.approx(float(m.optimal_teacher_loss(N, d_dist)[0]), rel=1e-3)


def test_eq34_token_accounting_and_the_d5_claims():
    """Eq. 34: D_Dist = D_S + delta_Pre D_T. App. D.5: with teacher pretraining paid,
    supervised learning is always cheaper (ratios > 1); in the best case and with teacher
    inference distillation is cheaper slightly above the student's limit L(N_S, inf) and
    dearer as the target approaches it; targets at or below the limit are unreachable."""
    from lmforecast.distill.planning import SCENARIOS, F
    from lmforecast.distill.versus_supervised import distillation_vs_supervised_ratios

    m = DistillationScalingLaw.from_preset()
    N = np.array([5e8, 1e10])
    lim = m.supervised_loss(N, np.inf)
    gaps = np.array([0.1, 0.05, 0.01])  # nats above the limit
    NS, LS = np.repeat(N, 3), (lim[:, None] + gaps[None, :]).ravel()
    out = {s: distillation_vs_supervised_ratios(m, NS, LS, s) for s in SCENARIOS}
    for s, df in out.items():
        pre, lgt = SCENARIOS[s].delta_pre, SCENARIOS[s].delta_lgt
        D = df["student_tokens"] + pre * df["teacher_tokens"]
        assert np.allclose(df["distillation_tokens"], D, rtol=1e-12)
        assert np.allclose(df["token_ratio"], D / df["supervised_tokens"], rtol=1e-12)
        C = 3 * F(NS) * df["student_tokens"] + F(df["teacher_params"]) * (
            lgt * df["student_tokens"] + pre * 3 * df["teacher_tokens"]
        )
        assert np.allclose(df["distillation_flops"], C, rtol=1e-9)  # Eq. 9 at the solution
        assert np.allclose(df["supervised_flops"], 3 * F(NS) * df["supervised_tokens"])
    for s in ("teacher-pretraining", "teacher-pretraining-inference"):
        assert (out[s]["compute_ratio"] > 1).all(), s
    for s in ("best-case", "teacher-inference"):
        r = out[s]["compute_ratio"].to_numpy().reshape(2, 3)
        assert (r[:, 0] < 0.85).all() and (r[:, 2] > 1.5).all(), (s, r)
        assert (np.diff(r, axis=1) > 0).all()  # dearer as the target nears the limit
    bad = distillation_vs_supervised_ratios(m, 5e8, [lim[0] - 0.01, lim[0] - 1e-3], "best-case")
    assert bad["compute_ratio"].isna().all() and np.isinf(bad["supervised_tokens"]).sum() == 0


def test_ratios_cli(cli):
    code, out, _ = cli("distill", "ratios", "--student-params", 5e8, "--target-loss", 2.3,
                       2.1, "--json")  # fmt: skip
    assert code == 0
    rows = json.loads(out)["rows"]
    assert len(rows) == 8 and {r["scenario"] for r in rows} == {
        "best-case", "teacher-inference", "teacher-pretraining", "teacher-pretraining-inference"
    }  # fmt: skip
    assert all(r["compute_ratio"] is None for r in rows if r["target_loss"] == 2.1)
    code, _, err = cli("distill", "ratios", "--student-params", 5e8, "--target-loss", 0)
    assert code == 2 and len(err.strip().splitlines()) == 1


def test_ratio_intervals_over_parameter_draws(cli):
    from lmforecast.distill.versus_supervised import (
        distillation_vs_supervised_ratios,
        ratio_interval,
    )

    m = DistillationScalingLaw.from_preset()
    # 2 draws: shape, order and finiteness of the interval hold at any draw count
    iv = ratio_interval(m, 5e8, [2.3, 2.25], "best-case", level=0.9, max_draws=2)
    point = distillation_vs_supervised_ratios(m, 5e8, [2.3, 2.25], "best-case")
    for k in ("compute_ratio", "token_ratio"):
        lo, hi = iv[k]
        assert np.all(np.isfinite(lo)) and np.all(lo < hi) and lo.shape == (2,)
        assert np.all(hi / lo < 100) and np.all(point[k] > lo / 10)
    assert np.allclose(iv["compute_ratio"][0], iv["token_ratio"][0])  # best case: same ratio
    code, _, err = cli("distill", "ratios", "--student-params", 5e8, "--target-loss", 2.3,
                       "--draws", 1)  # fmt: skip
    assert code == 2 and "--draws" in err


def test_crossover_interval_over_parameter_draws(cli):
    from lmforecast.distill.versus_supervised import crossover_compute, crossover_interval

    m = DistillationScalingLaw.from_preset()
    N = [1e9, 3e9]
    point = crossover_compute(m, N, "best-case", n_grid=13, bisections=8)
    lo, hi = crossover_interval(m, N, "best-case", 0.9, max_draws=8, n_grid=13, bisections=8)
    assert lo.shape == (2,) and np.all(lo < point) and np.all(point < hi)
    # draws equal to the point estimate collapse the interval onto the point crossover
    m.result_.bootstrap = [list(m.result_.theta)] * 4
    lo1, hi1 = crossover_interval(m, N, "best-case", 0.9, n_grid=13, bisections=8)
    assert np.allclose(lo1, point) and np.allclose(hi1, point)
    # a draw that never crosses within the range counts as beyond it (inf), not as missing
    lo2, hi2 = crossover_interval(m, [1e9], "best-case", 0.9, c_range=(1e18, 1e19),
                                  n_grid=5, bisections=4)  # fmt: skip
    assert np.isinf(lo2[0]) and np.isinf(hi2[0])
    code, out, _ = cli("distill", "crossover", "--student-params", 1e9, "--draws", 4, "--json")
    got = json.loads(out)
    assert code == 0 and len(got["interval"]) == 2 and got["level"] == 0.9
    lo_c, hi_c = (float(v) for v in got["interval"])
    assert lo_c <= got["crossover_flops"] <= hi_c
