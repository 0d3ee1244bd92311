"""App. C.4 robustness sweep (test fraction 60% -> 5%, AUE) of observational scaling laws."""

from __future__ import annotations

import json
import warnings

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from lmforecast.errors import DomainWarning, InputError
from lmforecast.osl import (
    ObservationalScalingLaw,
    RobustnessResult,
    RobustnessSweep,
    aue,
    paper_base_models,
    read_benchmarks,
    robustness_sweep,
    sweep_fractions,
    threshold_split,
)
from lmforecast.osl.data import FAMILY, FLOPS, MODEL, SIZE
from lmforecast.plots import osl as plots


# ---- definitions, by hand ------------------------------------------------------------------
def test_default_fractions_are_60_to_5_percent_in_5_point_steps():
    f = sweep_fractions()
    assert f.size == 12 and f[0] == 0.6 and f[-1] == 0.05
    assert np.allclose(np.diff(f), -0.05)


def test_threshold_split_by_hand():
    key = np.array([1.0, 2, 2, 3, 3, 3, 4, 5])  # n = 8; cutoffs 1, 2, 3, 4 leave 7, 5, 2, 1 test
    test, c = threshold_split(key, 0.5)  # 4 wanted: 5 (dist 1) beats 2 (dist 2)
    assert c == 2 and test.sum() == 5 and np.array_equal(test, key > 2)
    test, c = threshold_split(key, 0.4)  # 3.2 wanted: 2 (dist 1.2) beats 5 (dist 1.8)
    assert c == 3 and test.sum() == 2
    test, c = threshold_split(key, 0.4375)  # 3.5 wanted: 5 and 2 tie -> the larger test set
    assert c == 2 and test.sum() == 5
    test, c = threshold_split(key, 0.01)  # never an empty test set
    assert c == 4 and test.sum() == 1
    test, c = threshold_split(key, 0.99)  # never an empty training set
    assert c == 1 and test.sum() == 7
    test, c = threshold_split(np.arange(10.0)[::-1], 0.3)  # table order does not matter
    assert c == 6 and test.sum() == 3 and test[:3].all()
    with pytest.raises(InputError, match="same cutoff key"):
        threshold_split(np.ones(5), 0.5)


def test_aue_is_the_trapezoid_over_test_fractions():
    # 0.25 * (1 + 2) / 2 + 0.25 * (2 + 3) / 2 = 1.0, whatever the order of the points
    assert aue([0.6, 0.35, 0.1], [3.0, 2.0, 1.0]) == pytest.approx(1.0)
    assert aue([0.1, 0.6, 0.35], [1.0, 3.0, 2.0]) == pytest.approx(1.0)
    assert aue(sweep_fractions(), np.full(12, 2.0)) == pytest.approx(0.55 * 2.0)
    assert np.isnan(aue([0.5, 0.1], [np.nan, 1.0]))


# ---- a tiny synthetic table ----------------------------------------------------------------
BENCH = [f"B{j}" for j in range(5)]


def _tiny_table(n: int = 12, seed: int = 0) -> pd.DataFrame:
    """n models with distinct FLOPs 10^(21 + i/4), 5 benchmarks driven by log FLOPs plus noise,
    and targets that are exact sigmoids of log10 FLOPs and of log10 size."""
    rng = np.random.default_rng(seed)
    logc = 21 + np.arange(n) / 4  # log10 FLOPs
    size = 10 ** (0.5 * (logc - 21)) * rng.uniform(0.5, 2, n)  # billions, not tied to FLOPs
    cols = {}
    for j in range(5):
        z = (logc - 22.0) * (0.8 + 0.2 * j) + rng.normal(0, 0.3, n)
        cols[f"B{j}"] = 0.25 + 0.7 / (1 + np.exp(-z))
    df = pd.DataFrame({MODEL: [f"m{i}" for i in range(n)], FAMILY: "f", FLOPS: 10 ** (logc - 21)})
    df[SIZE] = size
    for k, v in cols.items():
        df[k] = v
    df["y_flops"] = 0.1 + 0.9 / (1 + np.exp(-3.0 * (logc - 22.5)))
    df["y_size"] = 0.1 + 0.9 / (1 + np.exp(-2.0 * (np.log10(size) - 0.4)))
    return df.sample(frac=1.0, random_state=seed).reset_index(drop=True)  # order irrelevant


def test_tiny_sweep_counts_cutoffs_and_pool():
    t = _tiny_table()
    extra = pd.DataFrame(
        {MODEL: ["noflops", "notarget"], FAMILY: "f", FLOPS: [np.nan, 5.0], SIZE: [3.0, 3.0]}
    )
    for j in range(5):
        extra[f"B{j}"] = [0.5, 0.6]
    extra["y_flops"] = [0.5, np.nan]
    t = pd.concat([t, extra], ignore_index=True)
    with pytest.warns(DomainWarning, match="1 model\\(s\\) lacking 'FLOPs \\(1E21\\)'"):
        res = robustness_sweep(
            t, "y_flops", predictors=["pcs:1", "pcs:2", "flops"], fractions=[0.5, 0.25, 0.1],
            metrics=BENCH,
        )  # fmt: skip
    assert res.n_models == {"y_flops": 12} and res.dropped == {"y_flops": ["noflops"]}
    c = res.curves
    assert len(c) == 9 and set(c["predictor"]) == {"pcs:1", "pcs:2", "flops"}
    by_f = c.groupby("fraction").first()
    # 12 pool models: 6, 3 and 1.2 -> 1 test models; cutoff = the largest training FLOPs
    assert by_f.loc[0.5, ["n_train", "n_test"]].tolist() == [6, 6]
    assert by_f.loc[0.25, ["n_train", "n_test"]].tolist() == [9, 3]
    assert by_f.loc[0.1, ["n_train", "n_test"]].tolist() == [11, 1]
    for f, n_train in [(0.5, 6), (0.25, 9), (0.1, 11)]:
        assert by_f.loc[f, "cutoff"] == pytest.approx(10 ** (21 + (n_train - 1) / 4), rel=1e-12)
        assert by_f.loc[f, "test_fraction"] == pytest.approx((12 - n_train) / 12)
    # the target is an exact sigmoid of log FLOPs: the FLOPs law recovers it at every cutoff
    fl = c[c["predictor"] == "flops"]
    assert fl["test_mse"].max() < 1e-10 and res.aue["y_flops"]["flops"] < 1e-10
    assert res.best() == {"y_flops": "flops"}
    assert res.head_to_head("flops", "pcs:1")["y_flops"] == 1.0
    with pytest.raises(InputError, match="'size' is not in this sweep"):
        res.head_to_head("size", "flops")


def test_tiny_sweep_size_target_and_accuracy_split():
    t = _tiny_table(14, seed=1)
    res = robustness_sweep(
        t, ["y_size", "y_flops"], predictors=["pcs:1", "flops", "size"], split="accuracy",
        fractions=sweep_fractions(4, 0.5, 0.2), metrics=BENCH,
    )  # fmt: skip
    assert res.best() == {"y_size": "size", "y_flops": "flops"}
    c = res.curves
    size_pts = c[(c["target"] == "y_size") & (c["predictor"] == "size")]
    assert size_pts["test_mse"].max() < 1e-6  # points^2 (1e-10 as fractions)
    # accuracy cutoff (points): the test models are exactly the best on the target
    y = 100 * t["y_size"].to_numpy()
    for _, r in size_pts.iterrows():
        assert r["cutoff"] == np.sort(y)[r["n_train"] - 1]
        assert (y > r["cutoff"]).sum() == r["n_test"]
    assert res.rank().loc["size", "y_size"] == 1


def test_too_few_training_models_give_nan_and_a_warning():
    t = _tiny_table(8)
    with pytest.warns(DomainWarning, match="too few training models"):
        res = robustness_sweep(
            t, "y_flops", predictors=["pcs:3", "flops"], fractions=[0.6, 0.1], metrics=BENCH
        )
    c = res.curves.set_index(["predictor", "fraction"])
    assert c.loc[("pcs:3", 0.6), "n_train"] == 3 and np.isnan(c.loc[("pcs:3", 0.6), "test_mse"])
    assert np.isnan(res.aue["y_flops"]["pcs:3"]) and np.isfinite(res.aue["y_flops"]["flops"])


def test_bad_inputs():
    t = _tiny_table()
    with pytest.raises(InputError, match="unknown predictor 'pcs:0'"):
        robustness_sweep(t, "y_flops", predictors=["pcs:0"])
    with pytest.raises(InputError, match="unknown predictor 'loss'"):
        robustness_sweep(t, "y_flops", predictors=["loss"])
    with pytest.raises(InputError, match="--split"):
        robustness_sweep(t, "y_flops", split="size")
    with pytest.raises(InputError, match="outside \\(0, 1\\)"):
        robustness_sweep(t, "y_flops", fractions=[0.5, 1.2])
    with pytest.raises(InputError, match="at least 2"):
        robustness_sweep(t, "y_flops", fractions=[0.5])
    with pytest.raises(InputError, match="unknown target 'nope'"):
        robustness_sweep(t, ["y_flops", "nope"])
    with pytest.raises(InputError, match="pcs:6 needs at least 6 benchmark metrics"):
        robustness_sweep(t, "y_flops", predictors=["pcs:6"], metrics=BENCH)
    bad = t.assign(y_flops=t["y_flops"] * 1000)  # neither fractions nor points
    with pytest.raises(InputError, match=r"column 'y_flops' row \d+ .*outside \[0, 100\]"):
        robustness_sweep(bad, "y_flops")


# ---- the paper's 77 models (authors' CSV, 8 benchmarks) -------------------------------------
@pytest.fixture(scope="module")
def paper77(shared_dir):
    full = read_benchmarks(shared_dir / "data/obsscaling/base_llm_benchmark_eval.csv")
    return paper_base_models(full)


def test_sweep_point_equals_the_estimator_at_that_holdout(paper77):
    """With n_polish=16 each point is ObservationalScalingLaw with the same held-out models
    (same imputation, PCA and multi-start fit)."""
    f = [0.4, 0.15]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DomainWarning)
        res = robustness_sweep(
            paper77, "GSM8K", predictors=["pcs:2", "pcs:3", "size"], fractions=f, n_polish=16
        )
    pool = paper77[paper77[FLOPS].notna()].reset_index(drop=True)
    c = res.curves
    assert res.n_models["GSM8K"] == 75 == len(pool)
    for _, r in c[c["fraction"] == 0.4].iterrows():
        held = pool.loc[pool[FLOPS] * 1e21 > r["cutoff"], MODEL].tolist()
        assert len(held) == r["n_test"] == 30  # 0.4 x 75
        x, k = ("pcs", int(r["predictor"][4:])) if r["predictor"] != "size" else ("size", 1)
        est = ObservationalScalingLaw(k, x=x, holdout="list", heldout=held).fit(pool, "GSM8K")
        assert est.result_.test_mse == pytest.approx(r["test_mse"], rel=1e-9, abs=1e-15)
        assert est.result_.train_mse == pytest.approx(r["train_mse"], rel=1e-9, abs=1e-15)


@pytest.mark.slow
def test_paper_findings_on_three_base_targets(paper77):
    """What holds robustly (docs/osl.md): a PC law with K = 2 or 3 has a lower AUE than both
    compute baselines on GSM8K and TruthfulQA (each from the other 7 benchmarks), K = 3 beats
    K = 1, and the size baseline is the worst. HumanEval is the documented exception: FLOPs
    beats the K = 3 law at most cutoffs; only two blow-ups of the FLOPs fit at the 55-60%
    holdouts give the PC law the lower AUE. Not asserted, as it does not hold: K = 3 best."""
    targets = ["GSM8K", "TruthfulQA", "HumanEval"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DomainWarning)
        res = robustness_sweep(paper77, targets)  # default n_polish=4
    t = res.aue_table()
    assert res.n_models == {"GSM8K": 75, "TruthfulQA": 75, "HumanEval": 71}
    for pc in ("pcs:2", "pcs:3"):
        for base in ("flops", "size"):
            assert (t.loc[pc, ["GSM8K", "TruthfulQA"]] < t.loc[base, ["GSM8K", "TruthfulQA"]]).all()
    assert (t.loc["pcs:3"] < t.loc["pcs:1"]).all()
    assert t.loc["pcs:3", "GSM8K"] < 0.5 * t.loc["flops", "GSM8K"]
    assert res.head_to_head("pcs:3", "size")[["GSM8K", "TruthfulQA"]].min() >= 0.75
    assert res.head_to_head("flops", "pcs:3")["HumanEval"] >= 0.5
    c = res.curves
    assert len(c) == 3 * 12 * 6 and c["converged"].all()
    counts = c[(c["target"] == "GSM8K") & (c["predictor"] == "flops")]
    assert counts["n_test"].tolist() == [45, 41, 37, 34, 30, 26, 23, 19, 15, 11, 8, 4]
    assert (counts["n_train"] + counts["n_test"] == 75).all()


# ---- persistence, CLI, plots --------------------------------------------------------------
def test_json_round_trip_is_exact():
    t = _tiny_table()
    res = robustness_sweep(t, ["y_flops", "y_size"], predictors=["pcs:2", "size"],
                           fractions=[0.5, 0.3, 0.1], metrics=BENCH)  # fmt: skip
    text = res.to_json()
    back = RobustnessResult.from_json(text)
    assert back.to_json() == text and back.aue == res.aue
    assert back.curves.equals(res.curves) and back.summary() == res.summary()
    assert "lowest AUE" in res.summary() and "y_size (n=12)" in res.summary()
    with pytest.raises(InputError, match="not a RobustnessResult"):
        RobustnessResult.from_dict({**json.loads(text), "kind": "OSLResult"})


def test_estimator_contract():
    sweep = RobustnessSweep(["flops"], fractions=[0.5, 0.2])
    assert sweep.fit(_tiny_table(), "y_flops") is sweep and hasattr(sweep, "result_")
    assert sweep.predictors == ["flops"]  # config untouched by fit


def test_plots_return_figures():
    res = robustness_sweep(_tiny_table(), ["y_flops", "y_size"], predictors=["pcs:1", "flops",
                           "size"], fractions=[0.5, 0.3, 0.1], metrics=BENCH)  # fmt: skip
    fig = plots.robustness_curves(res)
    ax = fig.axes[0]
    assert len(ax.lines) == 3 and ax.get_xlim()[0] > ax.get_xlim()[1]  # 60% -> 5%, left to right
    assert "AUE" in ax.get_legend().get_texts()[0].get_text()
    plt.close(fig)
    fig = plots.aue_bars(res)
    assert len(fig.axes[0].patches) == 6
    plt.close(fig)
    with pytest.raises(ValueError, match="not in this sweep"):
        plots.robustness_curves(res, ["nope"])


def _tiny_csv(tmp_path):
    p = tmp_path / "tiny.csv"
    _tiny_table().to_csv(p, index=False)
    return p


def test_cli_json_out_and_text(cli, tmp_path):
    bench = _tiny_csv(tmp_path)
    out = tmp_path / "sweep.json"
    args = ["osl", "robustness", "--benchmarks", bench, "--target", "y_flops,y_size"]
    code, stdout, err = cli(*args, "--predictors", "pcs:1,flops,size", "--n-fractions", "4",
                            "--out", out, "--json")  # fmt: skip
    assert code == 0, err
    d = json.loads(stdout)
    assert set(d) == {"split", "fractions", "aue", "best", "n_models", "points"}
    assert d["best"] == {"y_flops": "flops", "y_size": "size"}
    assert np.allclose(d["fractions"], [0.6, 0.4166666, 0.2333333, 0.05], atol=1e-6)
    assert len(d["points"]) == 2 * 3 * 4
    saved = RobustnessResult.from_json(out)
    assert saved.aue == d["aue"] and saved.to_json() == out.read_text()
    code, stdout, err = cli(*args, "--predictors", "flops", "--split", "accuracy",
                            "--n-fractions", "3")  # fmt: skip
    assert code == 0, err
    assert "target accuracy" in stdout and "lowest AUE" in stdout


def test_cli_scale(cli, tmp_path):
    t = _tiny_table()
    t["pct"] = t["y_flops"] * 100
    bench = tmp_path / "b.csv"
    t.to_csv(bench, index=False)
    args = ["osl", "robustness", "--benchmarks", bench, "--target", "pct", "--predictors",
            "flops", "--n-fractions", "3", "--json"]  # fmt: skip
    code, stdout, err = cli(*args)  # percentages are read as points
    assert code == 0 and json.loads(stdout)["aue"]["pct"]["flops"] < 1e-6  # points^2
    code, stdout, err = cli(*args, "--scale", "100")  # fractions: the same sweep
    assert code == 0 and json.loads(stdout)["aue"]["pct"]["flops"] < 1e-6


@pytest.mark.parametrize(
    "extra, needle",
    [
        (["--target", "nope"], "unknown target 'nope'"),
        (["--target", "y_flops", "--predictors", "pcs:3,bogus"], "unknown predictor 'bogus'"),
        (["--target", "y_flops", "--n-fractions", "1"], "--n-fractions must be at least 2"),
        (["--target", "y_flops", "--min-fraction", "0.7"], "0 < smallest < largest < 1"),
        (["--target", "y_flops", "--metrics", "B0,Bogus"], "unknown metric 'Bogus'"),
        (["--target", "y_flops", "--n-polish", "0"], "n_polish must be >= 1"),
    ],
)
def test_cli_bad_input_exits_2_and_leaves_no_file(cli, tmp_path, extra, needle):
    bench = _tiny_csv(tmp_path)
    out = tmp_path / "sweep.json"
    code, stdout, err = cli("osl", "robustness", "--benchmarks", bench, *extra, "--out", out)
    assert code == 2 and needle in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["tiny.csv"]


def test_cli_unwritable_output_fails_before_work(cli, tmp_path):
    bench = _tiny_csv(tmp_path)
    code, _, err = cli("osl", "robustness", "--benchmarks", bench, "--target", "y_flops",
                       "--out", tmp_path / "no" / "s.json")  # fmt: skip
    assert code == 2 and "does not exist" in err
