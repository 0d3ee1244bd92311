"""`osl predict --fit`: forecast new models from a saved fit, with intervals (issue 26, item 3);
a preset forecast says why it has no interval (item 7)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from lmforecast.examples import path as example_path
from lmforecast.osl import ObservationalScalingLaw, read_benchmarks


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

    # a missing benchmark cell: that model gets no forecast and a warning names it; the others
    # are unchanged
    missing = new["Model"].iloc[1]
    new.loc[new.index[1], "MMLU"] = np.nan
    new.to_csv(tmp_path / "gap.csv", index=False)
    code, out, err = cli("osl", "predict", "--fit", fit, "--benchmarks", tmp_path / "gap.csv",
                         "--level", "0.8", "--json")  # fmt: skip
    assert code == 0 and "1 model(s) lack" in err and missing in err
    gap = json.loads(out)["predictions"]
    assert gap[1] == {"model": missing, "y_pred": None, "interval": None}
    assert gap[0] == res["predictions"][0] and gap[2] == res["predictions"][2]


def test_preset_forecast_says_why_it_has_no_interval(cli, tmp_path):
    code, out, err = cli("osl", "predict", "--preset", "gsm-cot", "--benchmarks",
                         example_path("osl/base_models.csv"), "--json")  # fmt: skip
    assert code == 0, err
    res = json.loads(out)
    assert all(r["interval"] is None for r in res["predictions"])
    assert "no interval" in res["interval_note"]
