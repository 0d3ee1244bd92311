"""`supervised predict --table`: one forecast per row with its interval, the held-out check
(mean relative error, coverage) where the rows give the loss, JSON and CSV out; the library's
`supervised.batch.forecast_table` behind it."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from lmforecast.errors import InputError
from lmforecast.examples import path
from lmforecast.supervised import SupervisedScalingLaw
from lmforecast.supervised.batch import forecast_table, table_answer


@pytest.fixture(scope="module")
def split(tmp_path_factory):
    """The example runs split by size: fit below 2e9 parameters, the larger runs held out."""
    tmp = tmp_path_factory.mktemp("batch")
    runs = pd.read_csv(path("supervised/runs.csv"))
    train, held = runs[runs["N"] < 2e9], runs[runs["N"] >= 2e9]
    train.to_csv(tmp / "train.csv", index=False)
    held.assign(run=[f"run-{i}" for i in range(len(held))]).to_csv(tmp / "held.csv", index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = SupervisedScalingLaw(progress=False).fit(train)
    (tmp / "fit.json").write_text(model.to_json())
    return tmp, model, held


def test_rows_match_single_forecasts_and_the_summary_scores_the_truth(split):
    _, model, held = split
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows, summary = forecast_table(model, held, level=0.9)
    assert len(rows) == len(held) and rows["row"].tolist() == list(range(1, len(held) + 1))
    N, D, y = (held[c].to_numpy(float) for c in ("N", "D", "loss"))
    np.testing.assert_allclose(rows["forecast"], model.predict(N, D), rtol=1e-12)
    lo, hi = model.predict_interval(N, D, level=0.9)
    np.testing.assert_allclose(rows["lower"], lo, rtol=1e-12)
    err = np.abs(model.predict(N, D) / y - 1)
    assert summary["n"] == len(held)
    assert summary["mean_rel_error"] == pytest.approx(err.mean(), rel=1e-12)
    assert summary["coverage"] == pytest.approx(np.mean((lo <= y) & (y <= hi)), rel=1e-12)
    # a real held-out check: the larger runs forecast within a few percent, mostly covered
    assert summary["mean_rel_error"] < 0.03 and summary["coverage"] >= 0.7
    assert (rows["lower"] <= rows["forecast"]).all() and (rows["forecast"] <= rows["upper"]).all()


def test_rows_by_flops_and_without_truth(split):
    _, model, held = split
    t = pd.DataFrame({"params": held["N"], "flops": 6 * held["N"] * held["D"]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows, summary = forecast_table(model, t)
    assert summary is None and rows["loss"].isna().all()
    np.testing.assert_allclose(rows["D"], held["D"], rtol=1e-12)
    for bad, msg in ((t.drop(columns="flops"), "need columns N and D"),
                     (t.assign(params="x"), "'x' is not a number"),
                     (t.iloc[:0], "empty table")):  # fmt: skip
        with pytest.raises(InputError, match=msg):
            forecast_table(model, bad)


def test_cli_table_prints_each_row_and_the_held_out_check(cli, split):
    tmp, model, held = split
    code, out, err = cli("supervised", "predict", "--fit", tmp / "fit.json", "--table",
                         tmp / "held.csv")  # fmt: skip
    assert code == 0, err
    lines = out.strip().splitlines()
    assert sum(line.startswith("run-") for line in lines) == len(held)
    assert lines[-1].startswith(f"held-out check: {len(held)} row(s) with a loss; mean relative")
    code, out, _ = cli("supervised", "predict", "--fit", tmp / "fit.json", "--table",
                       tmp / "held.csv", "--json", "--out", tmp / "rows.csv")  # fmt: skip
    d = json.loads(out)
    assert code == 0 and len(d["forecasts"]) == len(held)
    assert d["summary"]["n"] == len(held) and 0 <= d["summary"]["coverage"] <= 1
    back = pd.read_csv(tmp / "rows.csv")
    np.testing.assert_allclose(back["forecast"], [r["forecast"] for r in d["forecasts"]])
    assert back["label"].tolist() == [f"run-{i}" for i in range(len(held))]
    code, _, _ = cli("supervised", "predict", "--fit", tmp / "fit.json", "--table",
                     tmp / "held.csv", "--out", tmp / "rows.json", "--quiet")  # fmt: skip
    assert code == 0 and len(json.loads((tmp / "rows.json").read_text())) == len(held)
    # what the command prints is the library's answer (`supervised.batch.table_answer`)
    loaded = SupervisedScalingLaw.load(tmp / "fit.json")
    ans, _ = table_answer(loaded, pd.read_csv(tmp / "held.csv"), level=0.9)
    assert d == json.loads(json.dumps(ans.contract()))
    code, out, _ = cli("supervised", "predict", "--fit", tmp / "fit.json", "--table",
                       tmp / "held.csv")  # fmt: skip
    assert out.strip() == ans.summary()


@pytest.mark.parametrize("extra, msg", [
    (["--params", "1e9"], "--table gives the forecast points: drop --params"),
    (["--out", "x.png"], "--out"),
])  # fmt: skip
def test_cli_table_refuses_what_it_would_ignore(cli, split, extra, msg):
    tmp, _, _ = split
    code, out, err = cli("supervised", "predict", "--fit", tmp / "fit.json", "--table",
                         tmp / "held.csv", *extra)  # fmt: skip
    assert code == 2 and out == "" and msg in err


def test_cli_table_neither_registers_nor_overwrites_its_input(cli, split):
    tmp, _, _ = split
    before = (tmp / "held.csv").read_bytes()
    code, _, err = cli("supervised", "predict", "--fit", tmp / "fit.json", "--table",
                       tmp / "held.csv", "--ledger", tmp / "l.db")  # fmt: skip
    assert code == 2 and "--ledger registers one forecast" in err and not (tmp / "l.db").exists()
    code, _, err = cli("supervised", "predict", "--fit", tmp / "fit.json", "--table",
                       tmp / "held.csv", "--out", tmp / "held.csv")  # fmt: skip
    assert code == 2 and (tmp / "held.csv").read_bytes() == before


def test_cli_single_forecast_needs_its_point(cli):
    code, _, err = cli("supervised", "predict", "--preset", "hoffmann2022", "--params", "7e9")
    assert code == 2 and "give --params with --tokens or --flops, or --table" in err
    code, _, err = cli("supervised", "predict", "--preset", "hoffmann2022", "--params", "7e9",
                       "--tokens", "1e11", "--out", "x.csv")  # fmt: skip
    assert code == 2 and "--out applies to --table" in err
