"""`lmforecast osl fit|select|pca` per the issue's CLI contract, including bad input."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from lmforecast.osl import OSLResult, paper_base_models, read_benchmarks
from lmforecast.osl.data import _bundled

B1 = str(_bundled("table_b1_base_models.csv"))


@pytest.fixture(scope="module")
def paper_csv(shared_dir, tmp_path_factory):
    t = paper_base_models(
        read_benchmarks(shared_dir / "data/obsscaling/base_llm_benchmark_eval.csv")
    )
    p = tmp_path_factory.mktemp("osl") / "paper77.csv"
    t.to_csv(p, index=False)
    return p


def test_fit_json_contract(cli, paper_csv):
    code, out, err = cli("osl", "fit", "--benchmarks", paper_csv, "--target", "GSM8K", "--json")
    assert code == 0, err
    d = json.loads(out)
    keys = {"train_mse", "test_mse", "n_train", "n_test", "heldout", "params"}
    assert set(d) == keys | {"explained_variance", "level", "param_intervals", "forecasts",
                             "heldout_check"}  # fmt: skip
    assert d["heldout_check"]["n"] == 30
    assert set(d["params"]) == {"h", "alpha", "beta"} and len(d["params"]["beta"]) == 3
    assert (d["n_train"], d["n_test"]) == (47, 30) and len(d["heldout"]) == 30
    assert 0.8 <= d["params"]["h"] <= 1.0
    assert len(d["explained_variance"]) == 3 and d["test_mse"] < 100  # points^2


def test_fit_targets_join_baselines_and_out(cli, paper_csv, tmp_path):
    t = pd.read_csv(paper_csv)
    targets = tmp_path / "t.csv"
    t[["Model", "GSM8K"]].rename(columns={"GSM8K": "gsm_pct"}).assign(
        gsm_pct=lambda d: d["gsm_pct"] * 100
    ).to_csv(targets, index=False)
    bench = tmp_path / "b.csv"
    t.drop(columns=["GSM8K"]).to_csv(bench, index=False)
    out = tmp_path / "fit.json"
    args = ["osl", "fit", "--benchmarks", bench, "--targets", targets, "--target", "gsm_pct"]
    code, stdout, err = cli(*args, "--json")  # percentages are points: no --scale needed
    assert code == 0, err
    as_points = json.loads(stdout)
    code, stdout, err = cli(*args, "--scale", "100", "--out", out, "--json")
    assert code == 0, err
    pcs = json.loads(stdout)  # --scale 100 makes them fractions: the same fit, in points
    assert as_points["test_mse"] == pytest.approx(pcs["test_mse"], rel=1e-9)
    assert [f["y"] for f in as_points["forecasts"]] == pytest.approx(
        [f["y"] for f in pcs["forecasts"]], rel=1e-12
    )
    saved = OSLResult.from_json(out)
    assert saved.test_mse == pcs["test_mse"] and saved.to_json() == out.read_text()
    code, stdout, _ = cli(*args, "--scale", "100", "--x", "flops", "--json")
    assert code == 0 and json.loads(stdout)["test_mse"] > pcs["test_mse"]
    code, stdout, _ = cli(*args, "--scale", "100", "--holdout-top", "0.1", "--json")
    assert code == 0 and json.loads(stdout)["n_test"] == 7
    code, stdout, _ = cli(*args, "--scale", "100", "--pcs", "2", "--json")
    assert code == 0 and len(json.loads(stdout)["params"]["beta"]) == 2


def test_fit_text_summary(cli):
    code, out, err = cli("osl", "fit", "--benchmarks", B1, "--target", "HumanEval")
    assert code == 0, err
    assert "test MSE" in out and "C-bar form" in out


def test_select_json_reproduces_table_1(cli, paper_csv):
    code, out, err = cli(
        "osl", "select", "--benchmarks", paper_csv, "--budget", "12", "--include", "Llama-2",
        "--json",
    )  # fmt: skip
    assert code == 0, err
    d = json.loads(out)
    assert set(d) == {"families", "models", "objective"}
    assert set(d["families"]) == {"Llama-2", "Llama-3", "DeepSeek-Coder", "Falcon"}
    assert len(d["models"]) == 12 and d["objective"] > 0


def test_select_text_with_random_baseline(cli, paper_csv):
    code, out, err = cli(
        "osl", "select", "--benchmarks", paper_csv, "--budget", "8", "--include", "Llama-2",
        "--random", "5",
    )  # fmt: skip
    assert code == 0, err
    assert "Mixtral" in out and "random baseline" in out


def test_pca_json_and_text(cli):
    code, out, err = cli("osl", "pca", "--benchmarks", B1, "--json")
    assert code == 0, err
    d = json.loads(out)
    assert 0.75 < d["explained_variance"][0] < 0.85 and sum(d["explained_variance"]) > 0.96
    assert len(d["loadings"]) == 3 and len(d["scores"]) == 77
    assert all(v > 0.9 for v in d["pc1_flops_r2"].values())
    code, out, _ = cli("osl", "pca", "--benchmarks", B1)
    assert code == 0 and "explained variance" in out and "Llama-2" in out


@pytest.mark.parametrize(
    "args, needle",
    [
        (["fit", "--target", "Nope"], "unknown target 'Nope'"),
        (["fit", "--target", "MMLU", "--metrics", "ARC-C,Bogus"], "unknown metric 'Bogus'"),
        (["fit", "--target", "MMLU", "--exclude-metric", "Bogus"], "unknown metric 'Bogus'"),
        (["fit", "--target", "MMLU", "--cutoff-flops", "1e20"], "need at least"),
        (["fit", "--target", "MMLU", "--pcs", "0"], "--pcs"),
        (["select", "--budget", "8", "--include", "Nope"], "'Nope' is not in the table"),
        (["select", "--budget", "8", "--metrics", "MMLU,Bogus"], "unknown metric 'Bogus'"),
        (["pca", "--metrics", "MMLU,Bogus"], "unknown metric 'Bogus'"),
    ],
)
def test_bad_input_exits_2_with_one_line(cli, args, needle):
    code, out, err = cli("osl", args[0], "--benchmarks", B1, *args[1:])
    assert code == 2
    assert needle in err and err.count("\n") == 1 and "Traceback" not in err


def test_all_missing_column_and_no_partial_output(cli, tmp_path):
    t = pd.read_csv(B1)
    t["Empty"] = "-"
    bench = tmp_path / "b.csv"
    t.to_csv(bench, index=False)
    out = tmp_path / "fit.json"
    code, _, err = cli(
        "osl", "fit", "--benchmarks", bench, "--target", "MMLU", "--metrics",
        "ARC-C,HellaSwag,Empty", "--out", out,
    )  # fmt: skip
    assert code == 2 and "'Empty' is all missing" in err
    assert not out.exists() and list(tmp_path.iterdir()) == [bench]


def test_unwritable_output_fails_before_work(cli, tmp_path):
    code, _, err = cli(
        "osl", "fit", "--benchmarks", B1, "--target", "MMLU", "--out", tmp_path / "no/f.json"
    )
    assert code == 2 and "does not exist" in err


def test_gap_verb(cli, paper_csv, tmp_path):
    t = pd.read_csv(paper_csv)
    targets = tmp_path / "t.csv"
    # a "technique" that adds a fixed logit shift to GSM8K: the gap must be positive everywhere
    y = t["GSM8K"].clip(1e-3, 1 - 1e-3)
    z = np.log(y / (1 - y)) + 1.0
    pd.DataFrame({"Model": t["Model"], "gsm_tech": 1 / (1 + np.exp(-z))}).to_csv(
        targets, index=False
    )
    code, out, err = cli(
        "osl", "gap", "--benchmarks", paper_csv, "--targets", targets, "--without", "GSM8K",
        "--with", "gsm_tech", "--json",
    )  # fmt: skip
    assert code == 0, err
    d = json.loads(out)
    assert d["without"]["n_train"] == 47 and d["with"]["n_train"] == 47
    gap = np.array(d["curve"]["gap"])
    assert gap.max() > 0.15 and np.all(gap[len(gap) // 2 :] > 0)  # positive where it matters
    code, _, err = cli(
        "osl", "gap", "--benchmarks", paper_csv, "--without", "GSM8K", "--with", "Nope"
    )
    assert code == 2 and "unknown target 'Nope'" in err


def test_instruct_table_pca_matches_app_c1(cli, shared_dir):
    code, out, err = cli(
        "osl", "pca", "--json", "--benchmarks",
        shared_dir / "data/obsscaling/instruct_llm_benchmark_eval.csv",
    )  # fmt: skip
    assert code == 0, err
    d = json.loads(out)
    assert "Arena-Elo" not in d["metrics"] and len(d["metrics"]) == 7
    assert sum(d["explained_variance"]) == pytest.approx(0.986, abs=3e-3)  # App. C.1: ~98.6%
