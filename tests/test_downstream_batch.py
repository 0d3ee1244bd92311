"""Downstream forecasts for a known model (`--model`, any case, a typo named) and for a whole
targets table (`downstream predict --table`): one forecast per row with its interval and, where
the table holds the truth, the held-out MAE and coverage (`uncertainty.coverage.truth_summary`)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from lmforecast.data.evals import load_pythia, lookup_model
from lmforecast.downstream import DownstreamForecaster
from lmforecast.downstream.batch import forecast_table
from lmforecast.errors import InputError

SMALL = ["pythia-70m", "pythia-160m", "pythia-410m", "pythia-1b", "pythia-1.4b"]


@pytest.fixture(scope="module")
def pythia():
    return load_pythia()


@pytest.fixture(scope="module")
def fit_path(tmp_path_factory, pythia):
    est = DownstreamForecaster(bootstrap=30, seed=0).fit(pythia, task="piqa", models=SMALL)
    path = tmp_path_factory.mktemp("ds") / "piqa.json"
    path.write_text(est.to_json())
    return path


def final_score(evals: pd.DataFrame, model: str, task: str = "piqa") -> float:
    d = evals[(evals["model"] == model) & (evals["task"] == task) & (evals["metric"] == "acc")]
    return 100 * float(d.loc[d["step"].astype(float).idxmax(), "value"])


def test_model_flag_is_the_registry_point_in_any_case(cli, fit_path):
    row = lookup_model("pythia-6.9b")
    code, by_nd, err = cli(
        "downstream",
        "predict",
        "--fit",
        fit_path,
        "--params",
        f"{row['params']:.0f}",
        "--tokens",
        f"{row['tokens']:.0f}",
        "--json",
    )
    assert code == 0, err
    code, by_name, err = cli(
        "downstream", "predict", "--fit", fit_path, "--model", "Pythia-6.9B", "--json"
    )
    assert code == 0, err
    a, b = json.loads(by_nd), json.loads(by_name)
    assert b["model"] == "pythia-6.9b"
    assert a["performance"] == b["performance"] and a["interval"] == b["interval"]


def test_model_typo_names_the_nearest(cli, fit_path):
    code, out, err = cli("downstream", "predict", "--fit", fit_path, "--model", "pythia-41m")
    assert code == 2 and out == ""
    assert "did you mean 'pythia-410m'" in err and len(err.strip().splitlines()) == 1


def test_model_from_a_user_models_table(cli, fit_path, tmp_path):
    models = tmp_path / "models.csv"
    models.write_text("model,params,tokens\nmy-3b,3e9,6e11\n")
    code, out, err = cli(
        "downstream", "predict", "--fit", fit_path, "--model", "MY-3B", "--models", models, "--json"
    )
    assert code == 0, err
    code, ref, err = cli(
        "downstream", "predict", "--fit", fit_path, "--params", "3e9", "--tokens", "6e11", "--json"
    )
    assert json.loads(out)["performance"] == json.loads(ref)["performance"]


def test_table_forecasts_every_row_and_scores_the_truth(cli, fit_path, pythia, tmp_path):
    truth = {m: final_score(pythia, m) for m in ("pythia-2.8b", "pythia-2.8b-deduped")}
    targets = tmp_path / "targets.csv"
    pd.DataFrame({"model": ["pythia-2.8b", "PYTHIA-2.8B-deduped", None, None],
                  "params": [None, None, 1e9, None], "tokens": [None, None, 3e11, None],
                  "flops": [None, None, None, 1e22],
                  "score": [truth["pythia-2.8b"], truth["pythia-2.8b-deduped"], None, None]}
                 ).to_csv(targets, index=False)  # fmt: skip
    out = tmp_path / "rows.csv"
    code, text, err = cli(
        "downstream", "predict", "--fit", fit_path, "--table", targets, "--out", out, "--json"
    )
    assert code == 0, err
    res = json.loads(text)
    rows = pd.read_csv(out)
    assert len(res["forecasts"]) == 4 == len(rows)
    # each row is the one-point forecast at the same place
    code, one, err = cli(
        "downstream", "predict", "--fit", fit_path, "--params", "1e9", "--tokens", "3e11", "--json"
    )
    one = json.loads(one)
    assert res["forecasts"][2]["performance"] == pytest.approx(one["performance"], abs=1e-9)
    assert res["forecasts"][2]["interval"] == pytest.approx(one["interval"], abs=1e-9)
    for r in res["forecasts"]:
        assert r["interval"][0] <= r["performance"] <= r["interval"][1]
    # the held-out check: the 2.8B models forecast from <= 1.4B, scored against their truth
    err_ = [abs(r["performance"] - r["score"]) for r in res["forecasts"][:2]]
    (s,) = res["summary"]
    assert s["n"] == 2 and s["mae"] == pytest.approx(np.mean(err_))
    cov = np.mean([r["interval"][0] <= r["score"] <= r["interval"][1]
                   for r in res["forecasts"][:2]])  # fmt: skip
    assert s["coverage"] == pytest.approx(cov)
    assert s["mae"] < 3.0  # piqa 2.8B from <= 1.4B: within a few points of the truth
    assert rows["abs_error"].iloc[:2].to_numpy() == pytest.approx(err_)
    code, text, err = cli("downstream", "predict", "--fit", fit_path, "--table", targets)
    assert code == 0 and "held-out check" in text and f"MAE {s['mae']:.2f}" in text


def test_table_with_several_fits_needs_a_task(pythia):
    a = DownstreamForecaster(bootstrap=0).fit(pythia, task="piqa", models=SMALL)
    b = DownstreamForecaster(bootstrap=0).fit(pythia, task="arc_easy", models=SMALL)
    with pytest.raises(InputError, match="task"):
        forecast_table([a, b], pd.DataFrame({"model": ["pythia-2.8b"]}))
    truth = [final_score(pythia, "pythia-2.8b"), final_score(pythia, "pythia-2.8b", "arc_easy")]
    targets = pd.DataFrame({"model": ["pythia-2.8b"] * 2, "task": ["piqa", "ARC_EASY"],
                            "score": truth})  # fmt: skip
    rows, summary = forecast_table([a, b], targets)
    assert rows["task"].tolist() == ["piqa", "arc_easy"]
    assert rows["lower"].isna().all()  # bootstrap 0: no interval, so no coverage
    assert summary["task"].tolist() == ["arc_easy", "piqa", "all"] or \
        summary["task"].tolist() == ["piqa", "arc_easy", "all"]  # fmt: skip
    assert float(summary["coverage"].iloc[-1]) == 0.0


def test_table_refuses_rows_without_a_point(cli, fit_path, tmp_path):
    targets = tmp_path / "t.csv"
    targets.write_text("model,score\n,50\n")
    code, out, err = cli("downstream", "predict", "--fit", fit_path, "--table", targets)
    assert code == 2 and out == "" and "row 1" in err


def test_table_speed_benchmark_runs_and_both_paths_agree(capsys):
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "downstream_table_speed.py"
    spec = importlib.util.spec_from_file_location("downstream_table_speed", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.main(["--rows", "6", "--bootstrap", "10", "--repeat", "1"])  # exits on disagreement
    assert "speed ratio (per row / table)" in capsys.readouterr().out


def test_several_points_and_fits_answer_as_the_cli_prints_it(pythia):
    """`aggregate.forecasts_answer`: each fit at each point, and the task average at each point
    equal to the mean of the tasks' points; one line per forecast plus the level line."""
    from lmforecast.downstream.aggregate import forecasts_answer

    ests = [
        DownstreamForecaster(bootstrap=20, seed=0).fit(pythia, task=t) for t in ("piqa", "sciq")
    ]
    points = [{"flops": 1e21}, {"flops": 4e21}]
    ans = forecasts_answer(ests, points, level=0.8)
    rows, avg = ans.fields["forecasts"], ans.fields["average"]["forecasts"]
    assert len(rows) == 4 and len(avg) == 2 and ans.fields["level"] == 0.8
    for i, c in enumerate((1e21, 4e21)):
        mine = [r["performance"] for r in rows if r["flops"] == c]
        assert mine == [e.predict(flops=c) for e in ests]
        assert avg[i]["performance"] == pytest.approx(np.mean(mine))
        lo, hi = avg[i]["interval"]
        assert lo < avg[i]["performance"] < hi
    assert len(ans.summary().splitlines()) == 4 + 2 + 1


def test_known_scores_outside_points_are_refused_by_the_library(pythia):
    est = DownstreamForecaster(bootstrap=0).fit(pythia, task="piqa")
    with pytest.raises(InputError, match=r"actual.*\[0, 100\] points"):
        est.forecast_one(1e21, actual=-5)
    fc = est.forecast_one(1e21, actual=60.0)
    assert fc.fields["abs_error"] == pytest.approx(abs(fc.value - 60.0))
