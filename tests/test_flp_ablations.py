"""FLP-M ablations: the Sec. 6.2 loss -> performance candidates (Fig. 8 / Table 4) and the
Sec. 6.3 single-distribution check (Fig. 9), on hand-built tables, on simulated studies and on
the small-model zoo."""

import warnings

import numpy as np
import pandas as pd
import pytest

from lmforecast.errors import InputError
from lmforecast.flp import (
    CANDIDATES,
    FLP,
    LossToPerformanceComparison,
    SingleDistributionCheck,
    compare_loss_to_performance,
    single_distribution_check,
)
from lmforecast.flp.mixture import FLPM
from lmforecast.flp.simulate import (
    FLP_SAMPLING,
    FLP_TARGETS,
    simulate_flpm,
    simulate_single_distribution,
)
from lmforecast.flp.study import read_targets, tasks_from_text

SEEDS = (0, 1, 2)
TASKS = ("ARC", "RACE", "HumanEval")


# ---- hand-built tables ----------------------------------------------------------------------
def exact_tables(alphas=(0.08, -0.02, 0.03), log_b=-1.2):
    """Runs at three computes x three code shares, 10 checkpoints each, and two targets whose
    score follows Eq. 5 *exactly* in FLOPs spent per source: P = e^b C^aC Cg^a1 Cc^a2."""
    rng = np.random.default_rng(5)

    def score(Cg, Cc):
        return np.exp(log_b + alphas[0] * np.log(Cg + Cc) + alphas[1] * np.log(Cg)
                      + alphas[2] * np.log(Cc))  # fmt: skip

    def losses(C, r):
        x = C / 1e19
        return {
            "loss_text": 3.0 * x**-0.05 * (1 + 0.2 * r) + rng.normal(0, 0.01),
            "loss_code": 2.0 * x**-0.06 * (1.3 - r) + rng.normal(0, 0.01),
        }

    runs, ck, tg = [], [], []
    for C in (1e19, 4e19, 1.6e20):
        for r in (0.1, 0.3, 0.5):
            name = f"C{C:.0e}-r{r}"
            for k in range(1, 11):
                f = k / 10
                Cg, Cc = (1 - r) * C * f, r * C * f
                row = {"model": name, "step": k, "C_general": Cg, "C_code": Cc,
                       **losses(C * f, r), "toy": score(Cg, Cc)}  # fmt: skip
                ck.append(row)
            runs.append({k: v for k, v in row.items() if k != "step"})
    for r in (0.2, 0.4):
        C = 6.4e20
        tg.append({"model": f"target-r{r}", "C_general": (1 - r) * C, "C_code": r * C,
                   **losses(C, r), "toy": score((1 - r) * C, r * C)})  # fmt: skip
    return pd.DataFrame(runs), pd.DataFrame(ck), pd.DataFrame(tg)


def test_flops_candidate_is_eq5_on_flops_per_source():
    """Scores that follow Eq. 5 exactly: the FLOPs candidate recovers the exponents and predicts
    the targets to rounding; the other candidates reuse FLP's Eq. 2 and FLPM's regressions on
    the same retained checkpoints (checked against direct least squares)."""
    runs, ck, tg = exact_tables()
    res = compare_loss_to_performance(runs, ck, tg, "toy", chance=0.0, steps=200)
    ident = res.diagnostics["flops_candidate_identified"]["toy"]
    assert ident["alpha_C"] == pytest.approx(0.08, abs=1e-7)
    assert ident["alpha_general"] == pytest.approx(-0.02, abs=1e-7)
    assert ident["alpha_code"] == pytest.approx(0.03, abs=1e-7)
    p = res.predictions.set_index(["method", "target"])
    assert p.loc["FLOPs", "relative_error"].max() < 1e-8
    # Average = least squares of P on the average loss (here the mean of the two domains)
    Lck = ck[["loss_text", "loss_code"]].to_numpy()
    w1, w0 = np.polyfit(Lck.mean(1), ck["toy"], 1)
    Lt = tg[["loss_text", "loss_code"]].to_numpy()
    np.testing.assert_allclose(p.loc["Average", "predicted"], w0 + w1 * Lt.mean(1), rtol=1e-8)
    A = np.column_stack([np.ones(len(ck)), Lck])
    coef = np.linalg.lstsq(A, ck["toy"], rcond=None)[0]
    np.testing.assert_allclose(
        p.loc["Domain-Linear", "predicted"], coef[0] + Lt @ coef[1:], rtol=1e-8
    )
    np.testing.assert_allclose(p.loc["Constant", "predicted"], ck["toy"].mean(), rtol=1e-12)
    assert res.diagnostics["average_loss"] == "mean of loss_text, loss_code"
    assert res.diagnostics["n_points"] == {"toy": 90}


def test_checkpoint_flops_split_by_the_models_ratio():
    """Without per-source checkpoint columns, a checkpoint's FLOPs C is split in its model's
    final mixing ratio: same FLOPs-candidate fit as with the explicit columns."""
    runs, ck, tg = exact_tables()
    ck2 = ck.assign(C=ck["C_general"] + ck["C_code"]).drop(columns=["C_general", "C_code"])
    a = compare_loss_to_performance(runs, ck, tg, "toy", chance=0.0, steps=50)
    b = compare_loss_to_performance(runs, ck2, tg, "toy", chance=0.0, steps=50)
    fa, fb = (r.predictions.query("method == 'FLOPs'")["predicted"].to_numpy() for r in (a, b))
    np.testing.assert_allclose(fa, fb, rtol=1e-9)
    with pytest.raises(InputError, match="FLOPs spent so far"):
        compare_loss_to_performance(runs, ck2.drop(columns=["C"]), tg, "toy",
                                    chance=0.0)  # fmt: skip


def test_candidate_with_too_few_points_is_reported_not_fitted():
    """Seven retained checkpoints: too few for Eq. 5's six constants, enough for the others."""
    runs, ck, tg = exact_tables()
    few = ck[ck["step"] == 10].iloc[:7]
    runs7 = runs[runs["model"].isin(few["model"])]
    res = compare_loss_to_performance(runs7, few.iloc[:5], tg, "toy", chance=0.0,
                                      steps=50)  # fmt: skip
    e = res.errors()
    assert np.isnan(e.loc["FLOPs", "toy"]) and np.isfinite(e.loc["Domain-Neural", "toy"])
    assert "FLOPs" in res.diagnostics["skipped"]["toy"]
    assert "n/a" in res.summary() and "not fitted: toy FLOPs" in res.summary()
    back = LossToPerformanceComparison.from_json(res.to_json())
    assert back.to_json() == res.to_json()


def test_bad_inputs_are_one_line_errors():
    runs, ck, tg = exact_tables()
    kw = dict(chance=0.0, steps=20)
    with pytest.raises(InputError, match="losses must be one of"):
        compare_loss_to_performance(runs, ck, tg, "toy", losses="true", **kw)
    with pytest.raises(InputError, match=r"targets: missing column\(s\) 'loss_code'"):
        compare_loss_to_performance(runs, ck, tg.drop(columns=["loss_code"]), "toy", **kw)
    with pytest.raises(InputError, match="targets: no score column for task 'toy'"):
        compare_loss_to_performance(runs, ck, tg.drop(columns=["toy"]), "toy", **kw)
    with pytest.raises(InputError, match="task 'toy' given twice"):
        compare_loss_to_performance(runs, ck, tg, ["toy", "toy"], **kw)
    with pytest.raises(InputError, match="targets: row 1: model 'C1e\\+19-r0.1' is also a"):
        compare_loss_to_performance(runs, ck, runs.iloc[:1], "toy", **kw)
    with pytest.raises(InputError, match="targets: no rows"):
        compare_loss_to_performance(runs, ck, tg.iloc[:0], "toy", **kw)
    with pytest.raises(InputError, match="runs: row 2: mixing shares"):
        single_distribution_check(runs, ck, tg, "toy", **kw)
    # a partial average-loss column is not mixed with the domain mean: warn and use the mean
    with pytest.warns(UserWarning, match="targets lack"):
        res = compare_loss_to_performance(
            runs.assign(loss=1.0), ck.assign(loss=1.0), tg, "toy", **kw
        )
    assert res.diagnostics["average_loss"].startswith("mean of")


# ---- Sec. 6.2 on the simulated FLP-M study ---------------------------------------------------
@pytest.fixture(scope="module")
def sim_comparisons():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {
            s: compare_loss_to_performance(
                (m := simulate_flpm(tasks=TASKS, seed=s)).runs, m.checkpoints, m.targets, TASKS
            )
            for s in SEEDS
        }


@pytest.mark.slow
def test_sec62_findings_on_the_simulated_study(sim_comparisons):
    """METHODS 3.6: FLOPs-only is worst, domain losses beat the average loss, the network beats
    the linear map. What holds for seeds 0-2: all three on the mean over tasks; FLOPs worst on
    ARC and HumanEval (on RACE it ties with Average); a domain-loss map beats Average on every
    task; the network beats Domain-Linear on HumanEval (nonlinear code skill), not on every
    task (ARC, seed 0: 1.25% vs 0.79%), like the paper's own Table 4 (BBH, HumanEval)."""
    for s, res in sim_comparisons.items():
        f, e = res.findings(), res.errors()
        assert f.loc["mean"].all(), (s, f)
        assert f.loc[["ARC", "HumanEval"], "flops_worst"].all(), s
        assert f["domain_beats_average"].all(), s
        assert f.loc["HumanEval", "neural_beats_linear"], s
        assert e.loc["Domain-Neural", "HumanEval"] < 0.5 * e.loc["Average", "HumanEval"], s
        # every loss-based candidate is far better than a constant predictor
        for m in CANDIDATES[1:]:
            assert (e.loc[m, list(TASKS)] < 0.2 * e.loc["Constant", list(TASKS)]).all(), (s, m)
        assert res.diagnostics["n_points"]["ARC"] > 250


def test_comparison_round_trips_and_prints_table4_layout(sim_comparisons):
    res = sim_comparisons[0]
    text = res.to_json()
    back = LossToPerformanceComparison.from_json(text)
    assert back.to_json() == text
    pd.testing.assert_frame_equal(back.errors(), res.errors())
    s = res.summary()
    for name in (*CANDIDATES, "Constant", "Sec. 6.2", *TASKS):
        assert name in s
    assert list(res.errors().index) == [*CANDIDATES, "Constant"]
    assert set(res.predictions.columns) == {
        "task", "method", "target", "actual", "predicted", "relative_error"
    }  # fmt: skip
    with pytest.raises(InputError, match="not a saved LossToPerformanceComparison"):
        LossToPerformanceComparison.from_json('{"kind": "FLPM"}')


def test_comparison_contract_and_file_text(sim_comparisons):
    """What `flpm compare` prints (--json) and writes (--out .csv / .json), from the result."""
    res = sim_comparisons[0]
    c = res.contract()
    assert c["losses"] == "actual" and c["retained_checkpoints"] == res.diagnostics["n_points"]
    e, f = res.errors(), res.findings()
    assert c["relative_error_pct"]["FLOPs"]["mean"] == pytest.approx(e.loc["FLOPs", "mean"])
    assert set(c["findings"]) == set(f.columns)
    assert c["findings"]["domain_beats_average"] == f["domain_beats_average"].to_dict()
    csv = res.file_text(".CSV").splitlines()
    assert csv[0] == "task,method,target,actual,predicted,relative_error"
    assert len(csv) == len(res.predictions) + 1
    assert res.file_text(".json") == res.to_json()


def test_single_distribution_contract(sim_checks):
    res = sim_checks[0]
    c = res.contract()
    assert list(c["shares"].values()) == pytest.approx([0.95, 0.05])
    assert c["design_rank"] == 1 and c["flpm_worse"] == res.flpm_worse().to_dict()
    assert set(c["relative_error_pct"]) == {"FLP", "FLP-M"}


def test_study_inputs_tasks_and_targets(tmp_path):
    assert tasks_from_text(" ARC, ,HumanEval ") == ["ARC", "HumanEval"]
    with pytest.raises(InputError, match=r"^--task: no task name in ' , '$"):
        tasks_from_text(" , ")
    m = simulate_single_distribution(tasks=TASKS, seed=0)
    m.targets.to_csv(tmp_path / "t.csv", index=False)
    back = read_targets(tmp_path / "t.csv")
    assert list(back.columns) == list(m.targets.columns) and len(back) == len(m.targets)
    pd.concat([m.targets, m.targets.iloc[:1]]).to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(InputError, match="^targets: .*each final model appears once in targets"):
        read_targets(tmp_path / "bad.csv")


def test_plots_of_the_ablations(sim_comparisons, sim_checks):
    import matplotlib.pyplot as plt

    from lmforecast.plots import flp as plots

    f1 = plots.loss_to_performance_candidates(sim_comparisons[0])
    f2 = plots.single_distribution(sim_checks[0])
    assert len(f1.axes[0].patches) == 5 * (len(TASKS) + 1)  # methods x (tasks + mean)
    assert f1.axes[0].get_yscale() == "log"  # FLOPs vs Domain-Neural span > 50x
    assert len(f2.axes[0].patches) == 2 * (len(TASKS) + 1)
    plt.close(f1)
    plt.close(f2)


def test_predicted_losses_mode_is_flp_and_flpm_end_to_end():
    """losses="predicted": Average is FLP's forecast from total FLOPs, Domain-Neural is
    FLP-M's from FLOPs per source (Sec. 4), with the same settings."""
    m = simulate_flpm(tasks=("HumanEval",), seed=0)
    res = compare_loss_to_performance(
        m.runs, m.checkpoints, m.targets, "HumanEval", losses="predicted", steps=300
    )
    p = res.predictions.set_index("method")
    flp = FLP("HumanEval", bootstrap=0).fit(m.runs, m.checkpoints)
    np.testing.assert_allclose(p.loc["Average", "predicted"], flp.predict(m.targets["C"]))
    net = FLPM("HumanEval", steps=300).fit(m.runs, m.checkpoints)
    F = m.targets[["C_general", "C_code"]].to_numpy()
    np.testing.assert_allclose(p.loc["Domain-Neural", "predicted"], net.predict(F))
    # on mixtures, FLP-M's end-to-end error is well below FLP's (the contrast to Sec. 6.3)
    e = res.errors()
    assert e.loc["Domain-Neural", "HumanEval"] < 0.5 * e.loc["Average", "HumanEval"]


# ---- Sec. 6.3 on the simulated single-distribution study ------------------------------------
def test_single_distribution_simulator_design():
    s = simulate_single_distribution(tasks=("ARC",), ratio=0.05, seed=0)
    assert s.runs["model"].str.split("-").str[0].tolist() == list(FLP_SAMPLING)
    assert s.targets["model"].str.split("-").str[0].tolist() == list(FLP_TARGETS)
    share = pd.concat([s.runs, s.targets]).eval("C_code / C")
    np.testing.assert_allclose(share, 0.05)
    assert len(s.checkpoints) == 30 * len(FLP_SAMPLING)
    with pytest.raises(InputError, match="ratio must be in"):
        simulate_single_distribution(ratio=1.5)


@pytest.fixture(scope="module")
def sim_checks():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {
            s: single_distribution_check(
                (m := simulate_single_distribution(tasks=TASKS, seed=s)).runs,
                m.checkpoints,
                m.targets,
                TASKS,
            )
            for s in SEEDS
        }


@pytest.mark.slow
def test_single_distribution_collinearity_and_no_flpm_advantage(sim_checks):
    """One mixing ratio: Eq. 5's compute terms are collinear (design rank 1), so M4's stage 1
    is exactly M1 (one power law in total FLOPs per domain), and the domain losses move
    together. Both methods forecast 7B/13B within the paper's 5%; FLP-M keeps no advantage:
    its mean error is at least 0.6x FLP's on every seed (on mixtures, HumanEval, below 0.5x).
    The paper's "FLP-M significantly worse" does not hold here: FLP-M is worse on seed 0 only
    (the simulated truth is smooth and low-noise; see docs/flp.md)."""
    worse = []
    for s, res in sim_checks.items():
        d = res.diagnostics
        assert d["design_rank"] == 1
        assert d["form_vs_m1_max_rel_diff"] < 1e-9
        assert d["min_domain_loss_correlation"] > 0.99
        e = res.errors()
        assert e.loc[["FLP", "FLP-M"], list(TASKS)].to_numpy().max() < 5.0, s
        assert e.loc["FLP-M", "mean"] >= 0.6 * e.loc["FLP", "mean"], s
        worse.append(bool(res.flpm_worse()["mean"]))
    assert worse[0]


def test_single_distribution_result_round_trip_and_summary(sim_checks):
    res = sim_checks[0]
    text = res.to_json()
    assert SingleDistributionCheck.from_json(text).to_json() == text
    s = res.summary()
    assert "Sec. 6.3" in s and "collinear" in s and "code 0.05" in s
    assert list(res.errors().index) == ["FLP", "FLP-M"]
    np.testing.assert_allclose(res.diagnostics["shares"], [0.95, 0.05])


# ---- the small-model zoo -------------------------------------------------------------------
@pytest.fixture(scope="module")
def zoo():
    from lmforecast.zoo.tables import load_zoo

    try:
        return load_zoo()
    except InputError as exc:
        pytest.skip(f"no zoo tables: {exc}")


@pytest.mark.slow
def test_zoo_loss_to_performance(zoo):
    """Zoo, Sec. 5.1-shaped split (targets: the largest mixture size at code shares 0.1, 0.25,
    0.6). Robust over seeds: FLOPs is the worst candidate on the mean over tasks (and on arith
    and hellaswag_like) and the numbers are finite; on arith (the one task that moves far from
    chance) the network and Average beat a constant predictor. On the near-chance tasks
    (code_mc, hellaswag_like) no candidate beats the constant by more than noise, so that is
    not asserted (numbers in docs/flp.md)."""
    from lmforecast.flp.zoo_data import loss_to_performance_split, zoo_chance, zoo_tasks

    runs, ck, tg = loss_to_performance_split(zoo)
    tasks = zoo_tasks(zoo)
    rp = {t: zoo_chance(zoo, t) for t in tasks}
    assert sorted(tg["code_share"]) == [0.1, 0.25, 0.6]
    for seed in (0, 1):
        res = compare_loss_to_performance(runs, ck, tg, tasks, chance=rp, seed=seed)
        e = res.errors()
        assert np.isfinite(e.to_numpy()).all()
        # FLOPs worst on the mean, the emergent task and hellaswag_like; on code_mc it is
        # second worst (13.3% vs Domain-Linear 13.6% on the shipped zoo tables, docs/flp.md)
        assert res.findings().loc[["mean", "arith", "hellaswag_like"], "flops_worst"].all(), seed
        for m in ("Average", "Domain-Neural"):
            assert e.loc[m, "arith"] < e.loc["Constant", "arith"], (seed, m)


@pytest.mark.slow
def test_zoo_single_distribution_flpm_worse(zoo):
    """Zoo supervised runs (all at code share 0.4; targets the largest size): FLP-M is worse
    than FLP on the mean over tasks for seeds 0-2, and on hellaswag_like for each seed: the
    paper's Fig. 9 finding, with ~10 retained checkpoints for the network."""
    from lmforecast.flp.zoo_data import (
        single_distribution_split,
        zoo_chance,
        zoo_tasks,
    )

    runs, ck, tg = single_distribution_split(zoo)
    tasks = zoo_tasks(zoo)
    rp = {t: zoo_chance(zoo, t) for t in tasks}
    for seed in SEEDS:
        res = single_distribution_check(runs, ck, tg, tasks, chance=rp, seed=seed)
        e, d = res.errors(), res.diagnostics
        assert np.isfinite(e.to_numpy()).all()
        assert res.flpm_worse()[["mean", "hellaswag_like"]].all(), (seed, e)
        assert d["design_rank"] == 1 and d["form_vs_m1_max_rel_diff"] < 1e-4
        np.testing.assert_allclose(d["shares"], [0.6, 0.4], atol=1e-5)
