"""`osl predict --fit`: forecast new models from a saved fit, with intervals;
a preset forecast says why it has no interval."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from lmforecast.errors import InputError
from lmforecast.examples import path as example_path
from lmforecast.osl import ObservationalScalingLaw, OSLResult, read_benchmarks


def test_predict_from_a_saved_fit_equals_the_estimator(cli, tmp_path):
    table = pd.read_csv(example_path("osl/base_models.csv"))
    train, new = table.iloc[:-3], table.iloc[-3:].drop(columns="HumanEval")
    train.to_csv(tmp_path / "train.csv", index=False)
    new.to_csv(tmp_path / "new.csv", index=False)
    fit = tmp_path / "fit.json"
    code, _, err = cli("osl", "fit", "--benchmarks", tmp_path / "train.csv", "--target",
                       "HumanEval", "--out", fit, "--quiet")  # fmt: skip
    assert code == 0, err
    code, out, err = cli("osl", "predict", "--fit", fit, "--benchmarks", tmp_path / "new.csv",
                         "--level", "0.8", "--json")  # fmt: skip
    assert code == 0, err
    res = json.loads(out)
    law = ObservationalScalingLaw(3).fit(read_benchmarks(tmp_path / "train.csv"), "HumanEval")
    new_b = read_benchmarks(tmp_path / "new.csv")
    lo, hi = law.predict_interval(new_b, level=0.8)
    assert res["level"] == 0.8 and [r["model"] for r in res["predictions"]] == list(new["Model"])
    np.testing.assert_allclose([r["y_pred"] for r in res["predictions"]], law.predict(new_b),
                               rtol=1e-12)  # fmt: skip
    np.testing.assert_allclose([r["interval"] for r in res["predictions"]], np.c_[lo, hi],
                               rtol=1e-12, atol=1e-15)  # fmt: skip
    assert all(r["interval"][1] > r["y_pred"] for r in res["predictions"])

    # a missing benchmark cell: imputed from the saved App. B.3 state, so the
    # forecast equals the in-memory estimator's, which imputes it from its training table
    new.loc[new.index[1], "MMLU"] = np.nan
    new.to_csv(tmp_path / "gap.csv", index=False)
    code, out, err = cli("osl", "predict", "--fit", fit, "--benchmarks", tmp_path / "gap.csv",
                         "--level", "0.8", "--json")  # fmt: skip
    assert code == 0 and "lack" not in err, err
    gap = json.loads(out)["predictions"]
    gap_b = read_benchmarks(tmp_path / "gap.csv")
    lo, hi = law.predict_interval(gap_b, level=0.8)
    np.testing.assert_allclose([r["y_pred"] for r in gap], law.predict(gap_b), rtol=1e-12)
    np.testing.assert_allclose([r["interval"] for r in gap], np.c_[lo, hi], rtol=1e-12,
                               atol=1e-15)  # fmt: skip
    assert gap[1]["y_pred"] != res["predictions"][1]["y_pred"]  # MMLU was imputed, not kept
    assert gap[0] == res["predictions"][0] and gap[2] == res["predictions"][2]

    # one new model alone, missing a cell (its MMLU column is all missing): still imputed
    new.iloc[[1]].to_csv(tmp_path / "one.csv", index=False)
    code, out, err = cli("osl", "predict", "--fit", fit, "--benchmarks", tmp_path / "one.csv",
                         "--level", "0.8", "--json")  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["predictions"][0] == gap[1]
    one_b = read_benchmarks(tmp_path / "one.csv")
    np.testing.assert_allclose(law.predict(one_b), [gap[1]["y_pred"]], rtol=1e-12)


def test_saved_imputation_state_is_validated_on_load(cli, tmp_path):
    table = pd.read_csv(example_path("osl/base_models.csv"))
    table.to_csv(tmp_path / "b.csv", index=False)
    fit = tmp_path / "fit.json"
    code, _, err = cli("osl", "fit", "--benchmarks", tmp_path / "b.csv", "--target",
                       "HumanEval", "--out", fit, "--quiet")  # fmt: skip
    assert code == 0, err
    d = json.loads(fit.read_text())
    assert OSLResult.from_dict(d).to_json() == fit.read_text()  # round trip, bit for bit
    for key, value, needle in [
        ("scale_sd", [0.0] * len(d["metrics"]), "imputation.scale_sd"),
        ("fill", d["imputation"]["fill"][:-1], "imputation.fill"),
        ("pca_axes", [[1.0, "x"]], "imputation.pca_axes"),
    ]:
        bad = json.loads(fit.read_text())
        bad["imputation"][key] = value
        with pytest.raises(InputError, match=needle):
            OSLResult.from_dict(bad)
        (tmp_path / "bad.json").write_text(json.dumps(bad))
        code, out, err = cli("osl", "predict", "--fit", tmp_path / "bad.json", "--benchmarks",
                             tmp_path / "b.csv")  # fmt: skip
        assert code == 2 and needle in err and out == ""
    # every PC fit writes its imputation state: a file without it is refused, naming the field
    bad = json.loads(fit.read_text())
    del bad["imputation"]
    with pytest.raises(InputError, match="field 'imputation': is missing"):
        OSLResult.from_dict(bad)
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    code, out, err = cli("osl", "predict", "--fit", tmp_path / "bad.json", "--benchmarks",
                         tmp_path / "b.csv")  # fmt: skip
    assert code == 2 and err.count("\n") == 1 and "'imputation': is missing" in err and out == ""


def test_preset_forecast_says_why_it_has_no_interval(cli, tmp_path):
    code, out, err = cli("osl", "predict", "--preset", "gsm-cot", "--benchmarks",
                         example_path("osl/base_models.csv"), "--json")  # fmt: skip
    assert code == 0, err
    res = json.loads(out)
    assert all(r["interval"] is None for r in res["predictions"])
    assert "no interval" in res["interval_note"]


def _fit_json(cli, *argv) -> dict:
    code, out, err = cli("osl", "fit", *map(str, argv), "--json")
    assert code == 0, err
    return json.loads(out)


def test_holdout_none_and_heldout_models_without_the_target(cli, tmp_path):
    table = pd.read_csv(example_path("osl/base_models.csv"))
    new = "Llama-2-70b-hf"
    table.loc[table["Model"] == new, "HumanEval"] = np.nan  # the model to forecast
    table.to_csv(tmp_path / "b.csv", index=False)
    b = ["--benchmarks", tmp_path / "b.csv", "--target", "HumanEval"]
    none = _fit_json(cli, *b, "--holdout", "none", "--out", tmp_path / "fit.json")
    assert none["n_test"] == 0 and none["n_train"] > 60  # every usable model with the target
    # --heldout naming a model without the target: fitted on the same models, and forecast
    held = _fit_json(cli, *b, "--heldout", new)
    assert held["params"] == none["params"] and held["n_test"] == 0
    assert held["n_train"] == none["n_train"]
    (row,) = held["new_models"]
    assert row["model"] == new and row["interval"][0] <= row["y_pred"] <= row["interval"][1]
    # the same forecast as `osl predict --fit` on that model's (complete) scores
    table[table["Model"] == new].to_csv(tmp_path / "new.csv", index=False)
    code, out, err = cli("osl", "predict", "--fit", tmp_path / "fit.json", "--benchmarks",
                         tmp_path / "new.csv", "--json")  # fmt: skip
    assert code == 0, err
    (p,) = json.loads(out)["predictions"]
    assert p["y_pred"] == pytest.approx(row["y_pred"], rel=1e-12)
    assert p["interval"] == pytest.approx(row["interval"], rel=1e-12, abs=1e-15)
    # a missing benchmark cell of that model is imputed as the fit imputes, not refused
    table.loc[table["Model"] == new, "ARC-C"] = np.nan
    table.to_csv(tmp_path / "b2.csv", index=False)
    held2 = _fit_json(cli, "--benchmarks", tmp_path / "b2.csv", "--target", "HumanEval",
                      "--heldout", new)  # fmt: skip
    (row2,) = held2["new_models"]
    assert np.isfinite(row2["y_pred"]) and row2["y_pred"] != row["y_pred"]


def test_flops_fit_warning_does_not_blame_the_imputation_state(cli, tmp_path):
    """A compute predictor is never imputed: models without FLOPs are named, and the warning
    says nothing of imputation."""
    fit = tmp_path / "flops.json"
    code, _, err = cli("osl", "fit", "--benchmarks", example_path("osl/base_models.csv"),
                       "--target", "HumanEval", "--x", "flops", "--out", fit)  # fmt: skip
    assert code == 0, err
    code, out, err = cli("osl", "predict", "--fit", fit, "--benchmarks",
                         example_path("osl/base_models.csv"), "--json")  # fmt: skip
    assert code == 0, err
    assert "lack a positive" in err and "Mistral-7B-v0.1" in err
    assert "imputation" not in err
