"""Observational scaling laws (Ruan et al. 2024): data, capability space, law, holdouts."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from lmforecast.errors import InputError
from lmforecast.laws import get_law
from lmforecast.laws.sigmoid import ObservationalSigmoid
from lmforecast.osl import (
    BASE_METRICS,
    EVAL_FAMILIES,
    CapabilitySpace,
    ObservationalScalingLaw,
    OSLResult,
    family_fits,
    load_table_b1,
    load_table_b2,
    paper_base_models,
    pca_impute,
    post_training_gap,
    read_benchmarks,
)
from lmforecast.osl.data import FAMILY, FLOPS, MODEL

B1_METRICS = ["MMLU", "ARC-C", "HellaSwag", "Winograd", "TruthfulQA", "XWinograd", "HumanEval"]


@pytest.fixture(scope="module")
def full(shared_dir):
    return read_benchmarks(shared_dir / "data/obsscaling/base_llm_benchmark_eval.csv")


@pytest.fixture(scope="module")
def paper77(full):
    return paper_base_models(full)


# ---- data ---------------------------------------------------------------------------------------
def test_bundled_b1_matches_authors_csv(full):
    b1 = load_table_b1()
    assert len(b1) == 77 and b1[FAMILY].nunique() == 21
    assert "GSM8K" not in b1.columns  # printed table lacks it (METHODS 4.7 item 1)
    short = full.assign(short=full[MODEL].str.split("/").str[-1]).set_index("short")
    csv = short.loc[b1[MODEL]]
    for m in B1_METRICS:
        a, b = b1[m].to_numpy(), csv[m].to_numpy()
        both = np.isfinite(a) & np.isfinite(b)
        assert (np.isfinite(a) == np.isfinite(b)).all(), m
        assert np.max(np.abs(a[both] - b[both])) <= 5.01e-5, m  # printed to 4 decimals
    assert (b1[FAMILY].to_numpy() == csv[FAMILY].to_numpy()).all()
    f_b1, f_csv = b1[FLOPS].to_numpy(), csv[FLOPS].to_numpy()
    ok = np.isfinite(f_csv)
    assert np.allclose(f_b1[ok], f_csv[ok], atol=5.01e-3)
    assert b1[MODEL][~ok].tolist() == ["Mistral-7B-v0.1", "Mixtral-8x7B-v0.1"]


def test_bundled_b2_instruct_models():
    b2 = load_table_b2()
    assert len(b2) == 27
    assert b2.loc[b2[MODEL] == "gpt-4-0613", "HumanEval"].item() == pytest.approx(0.8720)
    assert b2["Arena-Elo"].max() == pytest.approx(1189.5486)


def test_paper_filter_leaves_the_77_models_of_table_b1(full, paper77):
    assert len(full) == 148
    assert len(paper77) == 77
    assert set(paper77[FAMILY]) == set(EVAL_FAMILIES)
    short = set(paper77[MODEL].str.split("/").str[-1])
    assert short == set(load_table_b1()[MODEL])


def test_long_table_pivots_to_wide(paper77):
    wide = paper77.head(6)[[MODEL, FAMILY, FLOPS, "MMLU", "GSM8K"]]
    long = wide.melt(id_vars=[MODEL, FAMILY, FLOPS], var_name="benchmark", value_name="score")
    back = read_benchmarks(long)
    assert back[MODEL].tolist() == wide[MODEL].tolist()
    assert np.allclose(back["GSM8K"], wide["GSM8K"]) and np.allclose(back["MMLU"], wide["MMLU"])


def test_dash_is_missing(tmp_path):
    p = tmp_path / "b.csv"
    p.write_text("Model,Model Family,FLOPs (1E21),MMLU,ARC-C\na,f,1,0.3,-\nb,f,-,0.4,0.5\n")
    t = read_benchmarks(p)
    assert np.isnan(t.loc[0, "ARC-C"]) and np.isnan(t.loc[1, FLOPS])


# ---- capability space ---------------------------------------------------------------------------
def test_pca_on_bundled_b1_matches_sec_3_2_and_fig_3():
    b1 = load_table_b1()
    space = CapabilitySpace(3).fit(b1, B1_METRICS)
    ev = space.explained_variance_ratio_
    assert 0.75 < ev[0] < 0.85  # "nearly 80%"
    assert ev.sum() > 0.96  # "~97%"
    assert np.all(space.components_[0] > 0)  # PC-1: a weighted average of all benchmarks
    assert np.argmax(space.components_[1]) == B1_METRICS.index("HumanEval")
    fits = family_fits(b1, space.transform(b1))
    pc1 = fits[fits["pc"] == "PC-1"]
    assert len(pc1) == 14 and (pc1["n_models"] >= 3).all()
    assert (pc1["r2"] > 0.9).all()


def test_pca_77_and_47_models_match_methods_calc(paper77):
    ev = CapabilitySpace(3).fit(paper77, list(BASE_METRICS)).explained_variance_ratio_
    assert np.allclose(ev, [0.802, 0.120, 0.046], atol=1.5e-3)
    train = paper77[paper77[FLOPS] <= 84]
    assert len(train) == 47
    ev = CapabilitySpace(3).fit(train, list(BASE_METRICS)).explained_variance_ratio_
    assert np.allclose(ev, [0.621, 0.265, 0.060], atol=1.5e-3)


def _reference_impute(X, n_iter=1000):
    """App. B.3 spelled out: standardise, mean-fill, 1000 rank-1 reconstructions, unscale, clip."""
    X = np.array(X, float)
    miss = np.isnan(X)
    mu, sd = np.nanmean(X, 0), np.nanstd(X, 0)
    Z = (X - mu) / sd
    Z[miss] = np.take(np.nanmean(Z, 0), np.nonzero(miss)[1])
    for _ in range(n_iter):
        m = Z.mean(0)
        _, _, vt = np.linalg.svd(Z - m, full_matrices=False)
        R = m + np.outer((Z - m) @ vt[0], vt[0])
        Z[miss] = R[miss]
    return np.clip(Z * sd + mu, 0, 1)


def test_imputation_equals_app_b3_loop(paper77):
    X = paper77[list(BASE_METRICS)].to_numpy(float)
    assert np.isnan(X).sum() == 6  # Llama-3 ARC-C x2, Falcon HumanEval x4
    ours, _ = pca_impute(X)
    ref = _reference_impute(X)
    assert np.max(np.abs(ours - ref)) < 1e-8
    obs = ~np.isnan(X)
    assert np.array_equal(ours[obs], X[obs])
    assert np.all((ours >= 0) & (ours <= 1))


def test_imputation_recovers_a_rank_one_table():
    rng = np.random.default_rng(0)
    u, v = rng.uniform(0.2, 1, 30), rng.uniform(0.2, 0.9, 6)
    X = 0.05 + 0.1 * v[None, :] + np.outer(u, v) * 0.5
    Xm = X.copy()
    Xm[3, 2] = Xm[17, 5] = np.nan
    out, _ = pca_impute(Xm)  # stops once the whole matrix is within tol=1e-4 (standardised)
    assert out[3, 2] == pytest.approx(X[3, 2], abs=1e-4)
    assert out[17, 5] == pytest.approx(X[17, 5], abs=1e-4)


def test_imputation_of_test_rows_uses_training_fit_only(paper77):
    X = paper77[list(BASE_METRICS)].to_numpy(float)
    tr, te = X[:50], X[50:].copy()
    te[0, 0] = np.nan
    a_train, a_test = pca_impute(tr, te)
    b_train, b_test = pca_impute(tr, te[:3])
    assert np.array_equal(a_train, b_train)  # test rows never influence the training fit
    assert np.allclose(a_test[:3], b_test, atol=1e-4, rtol=0)  # nor each other (up to tol)
    assert abs(a_test[0, 0] - X[50, 0]) < 0.1


def test_all_missing_metric_is_an_input_error():
    X = np.full((5, 2), 0.5)
    X[:, 1] = np.nan
    with pytest.raises(InputError, match="all missing"):
        pca_impute(X)


# ---- the law -----------------------------------------------------------------------------------
def test_sigmoid_law_jacobian_and_registry():
    law = get_law("osl-sigmoid", k=2)
    theta = np.array([[0.9, -0.5, 1.5, -2.0]])
    X = {"x1": np.linspace(-2, 2, 7), "x2": np.linspace(1, -1, 7)}
    _, J = law.predict_and_jacobian(theta, X)
    Jfd = super(ObservationalSigmoid, law).jacobian(theta, X)
    assert np.allclose(J, Jfd, atol=1e-7)
    y = law.predict({"h": 0.9, "alpha": 0.0, "beta1": 0.0, "beta2": 0.0}, x1=[0.0], x2=[0.0])
    assert y[0] == pytest.approx(0.1 + 0.9 * 0.5)  # (1-h) + h sigma(0)


def _synthetic_targets(table, space, h, alpha, beta):
    S = space.transform(table)
    z = alpha + S @ np.asarray(beta)
    return (1 - h) + h / (1 + np.exp(-z))


def test_estimator_recovers_eq6_parameters(paper77):
    metrics = [m for m in BASE_METRICS if m != "GSM8K"]
    space = CapabilitySpace(3).fit(paper77, metrics)
    t = paper77.copy()
    t["synthetic"] = _synthetic_targets(t, space, 0.9, -1.0, [3.0, 5.0, -2.0])
    est = ObservationalScalingLaw(holdout="none", exclude_metrics=("GSM8K",)).fit(t, "synthetic")
    p = est.result_.params
    assert p["h"] == pytest.approx(0.9, abs=1e-5)
    assert p["alpha"] == pytest.approx(-1.0, abs=1e-4)
    assert np.allclose(p["beta"], [3.0, 5.0, -2.0], atol=1e-3)
    assert est.result_.train_mse < 1e-12


def test_gsm8k_pc_law_beats_compute_baselines(paper77):
    """Sec. 4 holdout: 47 train / 30 test at Llama-2-7B's FLOPs; PCs beat FLOPs and size."""
    mse = {}
    for x in ("pcs", "flops", "size"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = ObservationalScalingLaw(x=x).fit(paper77, "GSM8K").result_
        mse[x] = r.test_mse
        assert r.n_train == 47
        assert r.n_test == (30 if x != "flops" else 28)  # Mistral/Mixtral have no FLOPs
    assert mse["pcs"] < 0.5 * mse["flops"] and mse["pcs"] < 0.1 * mse["size"]
    assert mse["pcs"] < 100  # points^2 (0.01 as fractions)


@pytest.mark.parametrize("target", ["GSM8K", "HellaSwag", "Winograd", "TruthfulQA"])
def test_pc_law_beats_flops_on_the_148_model_table(full, target):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pcs = ObservationalScalingLaw(x="pcs").fit(full, target).result_
        flops = ObservationalScalingLaw(x="flops").fit(full, target).result_
    assert pcs.test_mse < flops.test_mse


def test_holdout_top_rounds_down_and_takes_the_best(paper77):
    r = ObservationalScalingLaw(holdout="top", holdout_top=0.1).fit(paper77, "GSM8K").result_
    assert r.n_test == 7 and r.n_train == 70  # int(0.1 * 77)
    best = paper77.sort_values("GSM8K", ascending=False)[MODEL].head(7).tolist()
    assert sorted(r.heldout) == sorted(best)


def test_models_missing_target_are_dropped(paper77):
    r = ObservationalScalingLaw().fit(paper77, "HumanEval").result_
    assert r.n_train + r.n_test == 73  # four Falcon models lack HumanEval
    assert not any("falcon" in p[MODEL] for p in r.predictions)


def test_explicit_holdout_list(paper77):
    names = ["meta-llama/Llama-2-70b-hf", "tiiuae/falcon-180B"]
    r = ObservationalScalingLaw(holdout="list", heldout=names).fit(paper77, "GSM8K").result_
    assert sorted(r.heldout) == sorted(names) and r.n_train == 75
    with pytest.raises(InputError, match="not in the table"):
        ObservationalScalingLaw(holdout="list", heldout=["nope"]).fit(paper77, "GSM8K")


def test_f_equivalent_flops_and_weights_are_reparametrisations(paper77):
    r = ObservationalScalingLaw().fit(paper77, "GSM8K").result_
    pf = r.predictions_frame()
    # Alg. 1: the C-bar form gives the same predictions as the PC form
    y_cbar = r.predict_from_log_flops_equiv(pf["log10_flops_equiv"].to_numpy())
    assert np.allclose(y_cbar, pf["y_pred"], atol=1e-12)
    # Llama-2 sits near its own FLOPs on its own axis (3 points, nearly linear in log C)
    llama2 = pf[pf[FAMILY] == "Llama-2"]
    assert np.max(np.abs(llama2["log10_flops_equiv"] - llama2["log10_flops"])) < 0.1
    # beta^T gamma on raw scores reproduces the logit for models without missing scores
    w = r.benchmark_weights()
    B = paper77.set_index(MODEL).loc[pf[MODEL], r.metrics].to_numpy()
    ok = ~np.isnan(B).any(axis=1)
    z = B[ok] @ w[r.metrics].to_numpy() + w["intercept"]
    z_pc = r.params["alpha"] + pf[["x1", "x2", "x3"]].to_numpy()[ok] @ r.params["beta"]
    assert np.allclose(z, z_pc, atol=1e-10)
    # same C-bar slope as the paper's preregistered GSM CoT form (Table C.1: 2.04 log10 C - 5.53)
    assert r.reference["w"] == pytest.approx(2.04, abs=0.15)


def test_result_json_round_trip_is_exact(paper77):
    r = ObservationalScalingLaw().fit(paper77, "GSM8K").result_
    text = r.to_json()
    back = OSLResult.from_json(text)
    assert back.to_json() == text
    assert back.fit.theta == r.fit.theta and back.summary() == r.summary()
    assert "test MSE" in r.summary()


def test_post_training_gap_recovers_known_curves(paper77):
    metrics = [m for m in BASE_METRICS if m != "GSM8K"]
    space = CapabilitySpace(3).fit(paper77, metrics)
    t = paper77[[MODEL, FAMILY, FLOPS, *metrics]].copy()
    t["naive"] = _synthetic_targets(t, space, 1.0, -3.0, [2.0, 1.0, 0.0])
    t["cot"] = _synthetic_targets(t, space, 1.0, -2.5, [3.5, 2.0, 0.0])
    gap = post_training_gap(t, "naive", "cot", holdout="none")
    c = gap.curve
    assert np.allclose(c["gap"], c["y_with"] - c["y_without"])
    # the technique's curve is steeper in f-equivalent FLOPs (Fig. 6: CoT scales more steeply)
    assert gap.with_.reference["w"] > gap.without.reference["w"]
    assert c["gap"].iloc[-1] > c["gap"].iloc[0]
    assert "Post-training gap" in gap.summary()


def test_bad_inputs(paper77):
    with pytest.raises(InputError, match="unknown target"):
        ObservationalScalingLaw().fit(paper77, "nope")
    t = paper77.copy()
    t["pct"] = t["GSM8K"] * 1000  # neither fractions nor points
    with pytest.raises(InputError, match=r"column 'pct' row \d+ .*outside \[0, 100\]"):
        ObservationalScalingLaw().fit(t, "pct")
    with pytest.raises(InputError, match="need at least"):
        ObservationalScalingLaw(cutoff_flops=1e20).fit(paper77, "GSM8K")
    with pytest.raises(InputError, match="unknown metric"):
        ObservationalScalingLaw(metrics=["MMLU", "Nope", "ARC-C"]).fit(paper77, "GSM8K")
    t = paper77.copy()
    t["empty"] = np.nan
    with pytest.raises(InputError, match="all missing"):
        ObservationalScalingLaw(metrics=["MMLU", "ARC-C", "HellaSwag", "empty"]).fit(t, "GSM8K")


def test_read_benchmarks_rejects_duplicates_and_text():
    df = pd.DataFrame({MODEL: ["a", "a"], "MMLU": [0.2, 0.3]})
    with pytest.raises(InputError, match="repeats model 'a'"):
        read_benchmarks(df)
    df = pd.DataFrame({MODEL: ["a", "b"], "MMLU": [0.2, "x"]})
    with pytest.raises(InputError, match="'MMLU' row 2"):
        read_benchmarks(df)


@pytest.mark.parametrize("target", ["GSM8K", "TruthfulQA", "HumanEval"])
def test_fit_matches_bounded_curve_fit_from_the_authors_start(paper77, target):
    """The reference procedure: curve_fit of (1-b) sigma([1, S] p) + b, b in [0, 0.2], from
    p = (0, 0.01, 0.01, 0.01), b = 0. Our multi-start fit reaches the same optimum."""
    from scipy.optimize import curve_fit

    r = ObservationalScalingLaw().fit(paper77, target).result_
    pf = r.predictions_frame()
    tr = (pf["split"] == "train").to_numpy()
    X = np.column_stack([np.ones(len(pf)), pf[["x1", "x2", "x3"]].to_numpy()])

    def f(x, *p):
        b = p[-1]
        return (1 - b) / (1 + np.exp(-(x @ np.asarray(p[:-1])))) + b

    p0 = [0.0, 0.01, 0.01, 0.01, 0.0]
    bounds = ([-np.inf] * 4 + [0.0], [np.inf] * 4 + [0.2])
    y = pf["y"].to_numpy() / 100  # the reference fits fractions; our MSEs are points^2
    popt, _ = curve_fit(f, X[tr], y[tr], p0=p0, maxfev=10000, bounds=bounds)
    y_ref = f(X, *popt)
    ref_test = 1e4 * float(np.mean((y_ref[~tr] - y[~tr]) ** 2))
    ref_train = 1e4 * float(np.mean((y_ref[tr] - y[tr]) ** 2))
    assert r.train_mse <= ref_train * (1 + 1e-6)
    assert r.test_mse == pytest.approx(ref_test, rel=1e-3)
    assert r.params["h"] == pytest.approx(1 - popt[-1], abs=1e-3)


def test_predict_new_models_matches_fit_predictions(paper77):
    est = ObservationalScalingLaw().fit(paper77, "GSM8K")
    pf = est.result_.predictions_frame()
    assert np.allclose(est.predict(paper77), pf["y_pred"], atol=1e-12)
    with pytest.raises(InputError, match="no column 'MMLU', a benchmark the fit uses"):
        est.predict(paper77.drop(columns=["MMLU"]))


def test_fit_result_rebuilds_the_law_from_json(paper77):
    r = ObservationalScalingLaw().fit(paper77, "GSM8K").result_
    pf = r.predictions_frame()
    back = OSLResult.from_json(r.to_json()).fit
    assert back.law == "osl-sigmoid" and back.meta["law_options"] == {"k": 3}
    y = back.predict(x1=pf["x1"].to_numpy(), x2=pf["x2"].to_numpy(), x3=pf["x3"].to_numpy())
    assert np.allclose(100 * y, pf["y_pred"], atol=1e-12)  # the law on fractions, records points


def test_flops_baseline_warns_about_models_without_flops(paper77):
    from lmforecast.errors import DomainWarning

    with pytest.warns(DomainWarning, match="2 model"):
        r = ObservationalScalingLaw(x="flops").fit(paper77, "GSM8K").result_
    assert sorted(r.dropped) == ["mistralai/Mistral-7B-v0.1", "mistralai/Mixtral-8x7B-v0.1"]
