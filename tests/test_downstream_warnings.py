"""What `downstream` warns about and refuses: forecasts outside the
fitted compute range or below chance are warned about, task averages refuse a task counted
twice and name each forecast's metric, a misspelt task gets its nearest name, and a chance
level above every model's score is warned about."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from lmforecast.data.evals import load_pythia
from lmforecast.downstream import DownstreamForecaster, ForecastReachWarning
from lmforecast.downstream.aggregate import task_average
from lmforecast.downstream.backtest import backtest
from lmforecast.errors import InputError

MODELS = ["pythia-70m", "pythia-160m", "pythia-410m", "pythia-1b", "pythia-1.4b"]
M = ",".join(MODELS)


@pytest.fixture(scope="module")
def table():
    e = load_pythia()
    keep = e["model"].isin(MODELS + ["pythia-2.8b"]) & e["task"].isin(
        ["piqa", "lambada_openai", "arc_easy"]
    )
    return e[keep].reset_index(drop=True)


@pytest.fixture(scope="module")
def piqa(table):
    return DownstreamForecaster(bootstrap=20).fit(table, task="piqa", models=MODELS)


@pytest.fixture(scope="module")
def files(table, tmp_path_factory):
    d = tmp_path_factory.mktemp("fits")
    ev = d / "evals.csv"
    table.to_csv(ev, index=False)
    out = {}
    for name, task, metric in (("piqa", "piqa", "acc"), ("piqa_n", "piqa", "acc_norm"),
                               ("arc", "arc_easy", "acc")):  # fmt: skip
        est = DownstreamForecaster(bootstrap=20).fit(ev, task=task, metric=metric, models=MODELS)
        out[name] = d / f"{name}.json"
        est.save(out[name])
    out["evals"] = ev
    return out


def _reach(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        value = fn()
    return value, [str(x.message) for x in w if issubclass(x.category, ForecastReachWarning)]


# ---- extrapolation and below-chance warnings ---------------------------------------------------
def test_below_the_smallest_model_and_below_chance_are_warned(piqa):
    est = DownstreamForecaster.from_dict(piqa.to_dict())  # fresh: warnings once per estimator
    P, msgs = _reach(lambda: est.predict(1e15))
    assert P < est.chance_  # 19.31 points on a 2-choice task
    assert len(msgs) == 2, msgs
    assert any("below the smallest fitted model's compute (pythia-70m" in m for m in msgs)
    assert any("below the task's chance level 50" in m for m in msgs)
    assert all("\n" not in m and "np." not in m for m in msgs)


def test_far_above_the_largest_model_is_warned_and_near_it_is_not(piqa):
    est = DownstreamForecaster.from_dict(piqa.to_dict())
    big = est.largest_["C"]
    _, msgs = _reach(lambda: est.predict([big, 3 * big, 7 * big]))
    assert msgs == []  # inside e^2 ~ 7.4x the largest fitted compute: no warning
    _, msgs = _reach(lambda: est.predict(1e26))
    assert len(msgs) == 1 and "x the largest fitted model's compute (pythia-1.4b" in msgs[0]
    assert "3.93e+04x" in msgs[0]


def test_inside_the_fitted_range_is_silent(piqa):
    est = DownstreamForecaster.from_dict(piqa.to_dict())
    C = np.geomspace(est.smallest_["C"], est.largest_["C"], 5)
    _, msgs = _reach(lambda: est.predict(C))
    assert msgs == []


def test_saved_fit_keeps_the_smallest_model_and_reads_one_format(piqa):
    d = piqa.to_dict()
    assert d["format_version"] == 1 and d["fitted"]["smallest"]["model"] == "pythia-70m"
    other = json.loads(json.dumps(d))
    other["format_version"] = 2
    with pytest.raises(InputError, match="unknown version of a saved DownstreamForecaster"):
        DownstreamForecaster.from_json(json.dumps(other))
    bad = json.loads(json.dumps(d))
    bad["fitted"]["smallest"]["C"] = 10 * bad["fitted"]["largest"]["C"]
    with pytest.raises(InputError, match="fitted.smallest.C"):
        DownstreamForecaster.from_json(json.dumps(bad))
    missing = json.loads(json.dumps(d))
    del missing["fitted"]["smallest"]
    with pytest.raises(InputError, match="fitted.smallest"):
        DownstreamForecaster.from_json(json.dumps(missing))


def test_cli_predict_warns_in_both_directions(cli, files):
    code, out, err = cli("downstream", "predict", "--fit", files["piqa"], "--flops", "1e15")
    assert code == 0 and "piqa acc (ensemble)" in out
    assert "below the smallest fitted model's compute" in err and "chance level 50" in err
    code, out, err = cli("downstream", "predict", "--fit", files["piqa"], "--flops", "1e26")
    assert code == 0 and "x the largest fitted model's compute" in err
    code, out, err = cli("downstream", "predict", "--fit", files["piqa"], "--flops", "5e21")
    assert code == 0 and "warning" not in err


def test_backtests_extrapolate_on_purpose_without_warnings(table):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        bt = backtest(table, fit_models=MODELS[:2], target_model="pythia-2.8b", tasks=["piqa"],
                      methods=["ensemble"], bootstrap=0)  # fmt: skip
    assert not bt.rows["refused"].any()
    assert not [x for x in w if issubclass(x.category, ForecastReachWarning)]


# ---- task averages -----------------------------------------------------------------------------
def test_same_fit_twice_is_refused_naming_both_files(cli, files):
    p = str(files["piqa"])
    code, out, err = cli("downstream", "predict", "--fit", f"{p},{p}", "--flops", "5e21")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert err.count("piqa.json") == 2 and "'piqa' acc" in err and "twice" in err


def test_one_task_under_two_metrics_is_refused(cli, files):
    fits = f"{files['piqa']},{files['piqa_n']}"
    code, _, err = cli("downstream", "predict", "--fit", fits, "--flops", "5e21")
    assert code == 2 and "piqa.json" in err and "piqa_n.json" in err
    assert "acc and acc_norm" in err


def test_metric_is_in_text_and_json_output(cli, files):
    fits = f"{files['piqa']},{files['arc']}"
    code, out, err = cli("downstream", "predict", "--fit", fits, "--flops", "5e21")
    assert code == 0, err
    assert "piqa acc (ensemble)" in out and "arc_easy acc (ensemble)" in out
    assert "average of 2 tasks (piqa acc, arc_easy acc)" in out
    code, out, _ = cli("downstream", "predict", "--fit", fits, "--flops", "5e21", "--json")
    res = json.loads(out)
    assert [r["metric"] for r in res["forecasts"]] == ["acc", "acc"]
    assert res["average"]["metrics"] == ["acc", "acc"]
    code, out, _ = cli("downstream", "predict", "--fit", files["piqa_n"], "--flops", "5e21",
                       "--json")  # fmt: skip
    assert json.loads(out)["metric"] == "acc_norm"


def test_python_task_average_refuses_a_task_twice(piqa):
    with pytest.raises(InputError, match="both fit task 'piqa'"):
        task_average([piqa, piqa], 5e21)


# ---- --task typo, --chance above every score ---------------------------------------------------
def test_misspelt_task_names_the_nearest(cli, files):
    code, _, err = cli("downstream", "fit", "--evals", files["evals"], "--task", "piqaa")
    assert code == 2 and "did you mean 'piqa'?" in err
    with pytest.raises(InputError, match="did you mean 'lambada_openai'"):
        DownstreamForecaster().fit(load_pythia(), task="piqa", loss_task="lambada_opnai")


def test_chance_above_every_score_is_warned(table):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        DownstreamForecaster(bootstrap=0, chance=75).fit(table, task="piqa", models=MODELS)
    msgs = [str(x.message) for x in w]
    assert any("chance level 75 points" in m and "above every fitted model's" in m for m in msgs)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        DownstreamForecaster(bootstrap=0, chance=50).fit(table, task="piqa", models=MODELS)
    assert not [x for x in w if "chance level" in str(x.message)]


# ---- the below-chance floor and loaded fits ----------------------------------------------------
LQ = ["pythia-70m", "pythia-160m"]  # logiqa: pythia-160m (19.05) scores below pythia-70m (21.04)


@pytest.fixture(scope="module")
def logiqa():
    e = load_pythia()
    keep = e["model"].isin(LQ) & e["task"].isin(["logiqa", "lambada_openai"])
    return e[keep].reset_index(drop=True)


@pytest.mark.parametrize("method", ["trend", "persistence"])
def test_a_measured_point_is_not_below_every_fitted_score(logiqa, method):
    est = DownstreamForecaster(method=method).fit(logiqa, task="logiqa", models=LQ)
    assert est.lowest_["model"] == "pythia-160m" and est.lowest_["score"] < 19.1
    P, msgs = _reach(lambda: est.predict(est.largest_["C"]))
    assert abs(P - est.largest_["score"]) < 1e-6  # pythia-160m's own measured score
    assert msgs == []  # was: "below pythia-70m's own score 21.04: no fitted model scored there"


def test_below_the_lowest_fitted_score_names_that_model(logiqa):
    est = DownstreamForecaster(method="trend").fit(logiqa, task="logiqa", models=LQ)
    P, msgs = _reach(lambda: est.predict(5.84e20))
    assert P < est.lowest_["score"] - est.eval_sd_
    assert len(msgs) == 1 and "chance level 25" in msgs[0]
    assert "lowest: pythia-160m, 19.05" in msgs[0] and "pythia-70m" not in msgs[0]


def test_a_loaded_fit_warns_like_a_fresh_one(cli, logiqa, tmp_path):
    ev = tmp_path / "lq.csv"
    logiqa.to_csv(ev, index=False)
    fit = tmp_path / "lq.json"
    code, _, err = cli("downstream", "fit", "--evals", ev, "--task", "logiqa", "--models",
                       ",".join(LQ), "--method", "trend", "--out", fit)  # fmt: skip
    assert code == 0, err
    code, out, err = cli("downstream", "predict", "--fit", fit, "--flops", "5.84e20")
    assert code == 0 and "17.39 points" in out
    assert "below the task's chance level 25" in err and "lowest: pythia-160m" in err
    d = json.loads(fit.read_text())
    assert d["format_version"] == 1 and d["fitted"]["lowest"]["model"] == "pythia-160m"


def test_the_load_check_marks_no_warning_as_said(logiqa):
    """from_json's check prediction (at the largest fitted compute, warnings ignored) must not
    use up the once-per-estimator warning: here it falls below chance itself."""
    d = DownstreamForecaster(method="trend", bootstrap=0).fit(logiqa, task="logiqa", models=LQ)
    d = d.to_dict()
    slope = d["fitted"]["members"]["trend"]["params"][0]
    d["fitted"]["members"]["trend"]["params"][1] = 5.0 - slope * np.log(
        d["fitted"]["largest"]["C"] / 1e18
    )  # 5 points at the largest fitted compute
    est = DownstreamForecaster.from_json(json.dumps(d))
    P, msgs = _reach(lambda: est.predict(est.largest_["C"]))
    assert abs(P - 5.0) < 1e-6
    assert len(msgs) == 1 and "below the task's chance level 25" in msgs[0]


def test_a_forecaster_without_its_lowest_score_uses_its_ends(logiqa):
    d = DownstreamForecaster(method="trend").fit(logiqa, task="logiqa", models=LQ).to_dict()
    est = DownstreamForecaster.from_json(json.dumps(d))
    est.lowest_ = None  # as a member view has it
    _, msgs = _reach(lambda: est.predict(est.largest_["C"]))
    assert msgs == []  # the floor is pythia-160m's (largest) 19.05, not pythia-70m's 21.04
    _, msgs = _reach(lambda: est.predict(5.84e20))
    assert len(msgs) == 1 and "lowest: pythia-160m" in msgs[0]
    for edit, field in ((lambda f: f.pop("lowest"), "fitted.lowest"),
                        (lambda f: f["lowest"].update(score=99.0), "fitted.lowest.score"),
                        (lambda f: f["lowest"].update(extra=1), "fitted.lowest")):  # fmt: skip
        bad = json.loads(json.dumps(d))
        edit(bad["fitted"])
        with pytest.raises(InputError, match=field):
            DownstreamForecaster.from_json(json.dumps(bad))
