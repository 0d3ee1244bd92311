"""OSL forecasts of several held-out models in one command: `osl fit --heldout M1,M2` lists each
forecast in text mode, `--train-models` fits a chosen subset and scores every other model,
`osl predict --fit` scores a table holding the truth (MAE, coverage; CSV/JSON out); model names
match ignoring case and a typo names the nearest model."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from lmforecast.errors import InputError
from lmforecast.osl.data import read_benchmarks
from lmforecast.osl.splits import list_split, train_complement

TARGET = ["--target", "ARC-C", "--exclude-metric", "ARC-C"]
TRAIN = ("pythia-70m-deduped,pythia-160m-deduped,pythia-410m-deduped,pythia-1b-deduped,"
         "pythia-1.4b-deduped,pythia-2.8b-deduped,opt-125m,opt-350m,opt-1.3b,opt-2.7b,opt-6.7b,"
         "llama-7b,llama-13b,Llama-2-7b-hf")  # fmt: skip


@pytest.fixture(scope="module")
def bench():
    from lmforecast.examples import path

    return path("osl/base_models.csv")


def test_heldout_models_are_printed_with_their_truth(cli, bench):
    code, text, err = cli("osl", "fit", "--benchmarks", bench, *TARGET,
                          "--heldout", "LLAMA-2-70b-hf,Falcon-40b")  # fmt: skip
    assert code == 0, err
    code, js, err = cli("osl", "fit", "--benchmarks", bench, *TARGET,
                        "--heldout", "Llama-2-70b-hf,falcon-40b", "--json")  # fmt: skip
    res = json.loads(js)
    assert [f["model"] for f in res["forecasts"]] == ["Llama-2-70b-hf", "falcon-40b"]
    for f in res["forecasts"]:  # each forecast is printed, with its truth
        assert f"{f['model']}: ARC-C {f['y_pred']:.2f}" in text  # points
        assert f"actual {f['y']:.2f}" in text
    check = res["heldout_check"]
    errs = [abs(f["y_pred"] - f["y"]) for f in res["forecasts"]]
    assert check["n"] == 2 and check["mae"] == pytest.approx(np.mean(errs))
    assert check["mae"] < 5  # ARC-C of two large models from the rest, within 5 points
    assert f"MAE {check['mae']:.2f} points" in text


def test_heldout_typo_names_the_nearest_model(cli, bench):
    code, out, err = cli("osl", "fit", "--benchmarks", bench, *TARGET,
                         "--heldout", "llama-2-70-hf")  # fmt: skip
    assert code == 2 and out == "" and "did you mean 'Llama-2-70b-hf'" in err


def test_train_models_fits_the_subset_and_scores_the_rest(cli, bench):
    code, js, err = cli("osl", "fit", "--benchmarks", bench, *TARGET,
                        "--train-models", TRAIN, "--json")  # fmt: skip
    assert code == 0, err
    res = json.loads(js)
    table = read_benchmarks(bench)
    assert res["n_train"] == 14
    assert 55 <= res["n_test"] <= len(table) - 14  # every other model the fit can use
    held = {f["model"] for f in res["forecasts"]}
    assert not held & set(TRAIN.split(","))
    check = res["heldout_check"]
    assert check["n"] == res["n_test"]
    assert check["mae"] < 5 and check["coverage"] >= 0.8  # 61 held-out models, points
    cov = np.mean([f["interval"][0] <= f["y"] <= f["interval"][1] for f in res["forecasts"]])
    assert check["coverage"] == pytest.approx(cov)


def test_name_matching_in_the_library():
    t = pd.DataFrame({"Model": ["opt-1.3b", "Llama-2-7b-hf", "x"], "y": [0.5, 0.6, np.nan]})
    assert list_split(t, ["OPT-1.3B"]).tolist() == [True, False, False]
    assert train_complement(t, "y", ["llama-2-7B-hf", "OPT-1.3b"]) == []
    with pytest.raises(InputError, match="did you mean 'opt-1.3b'"):
        list_split(t, ["opt-13b"])
    with pytest.raises(InputError, match="no 'y' score"):
        train_complement(t, "y", ["x", "opt-1.3b"])


def test_predict_scores_a_table_holding_the_truth(cli, bench, tmp_path):
    fit = tmp_path / "osl.json"
    code, _, err = cli("osl", "fit", "--benchmarks", bench, *TARGET, "--out", fit)
    assert code == 0, err
    out = tmp_path / "rows.csv"
    code, js, err = cli("osl", "predict", "--fit", fit, "--benchmarks", bench, "--out", out,
                        "--json")  # fmt: skip
    assert code == 0, err
    res = json.loads(js)
    rows = pd.read_csv(out)
    truth = 100 * read_benchmarks(bench).set_index("Model")["ARC-C"]  # fractions -> points
    scored = rows.dropna(subset=["y"])
    assert scored["y"].to_numpy() == pytest.approx(truth.loc[scored["model"]].to_numpy())
    err_ = (scored["y_pred"] - scored["y"]).abs()
    assert res["heldout_check"]["mae"] == pytest.approx(err_.mean())
    inside = (scored["lower"] <= scored["y"]) & (scored["y"] <= scored["upper"])
    assert res["heldout_check"]["coverage"] == pytest.approx(inside.mean())
