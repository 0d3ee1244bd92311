"""Paths a new user takes through `downstream`/`flp --evals`: saved `--stage1 nd` and
`--bootstrap 0` fits load and predict, FP intervals hold their own point, table rows are neither
dropped nor renumbered silently, and no flag is accepted only to do nothing."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from lmforecast.data.evals import load_pythia
from lmforecast.downstream import DownstreamForecaster
from lmforecast.downstream.backtest import backtest
from lmforecast.errors import DomainWarning, InputError

MODELS = ["pythia-70m", "pythia-160m", "pythia-410m", "pythia-1b", "pythia-1.4b"]
M = ",".join(MODELS)


def _err(cli, *argv, must=(), out=None):
    code, _, err = cli(*argv)
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1, err
    for w in must:
        assert w in err, (w, err)
    if out is not None:
        assert not out.exists()
    return err


@pytest.fixture(scope="module")
def table():
    e = load_pythia()
    keep = e["model"].isin(MODELS + ["pythia-2.8b"]) & e["task"].isin(
        ["piqa", "lambada_openai", "arc_challenge"]
    )
    return e[keep].reset_index(drop=True)


def test_a_saved_stage1_nd_fit_loads_and_forecasts_at_params_and_tokens(cli, tmp_path):
    out = tmp_path / "nd.json"
    code, _, err = cli("downstream", "fit", "--evals", "pythia", "--task", "piqa", "--stage1",
                       "nd", "--bootstrap", "10", "--models", M, "--out", out)  # fmt: skip
    assert code == 0, err
    code, stdout, err = cli("downstream", "predict", "--fit", out, "--params", "2.8e9",
                            "--tokens", "3e11", "--json")  # fmt: skip
    assert code == 0, err
    res = json.loads(stdout)
    lo, hi = res["interval"]
    assert 0 <= lo <= res["performance"] <= hi <= 100
    est = DownstreamForecaster.load(out)  # Python too
    assert est.predict(N=2.8e9, D=3e11) == pytest.approx(res["performance"], abs=0)


def test_a_bootstrap_0_fit_forecasts_without_interval_and_1_is_refused(cli, tmp_path):
    for method in ("ensemble", "trend"):
        out = tmp_path / f"b0_{method}.json"
        code, _, err = cli("downstream", "fit", "--evals", "pythia", "--task", "piqa",
                           "--bootstrap", "0", "--method", method, "--out", out)  # fmt: skip
        assert code == 0, err
        code, stdout, err = cli("downstream", "predict", "--fit", out, "--flops", "5e21", "--json")
        assert code == 0, err
        res = json.loads(stdout)
        assert res["interval"] is None and 50 < res["performance"] < 100
    out = tmp_path / "b1.json"
    _err(cli, "downstream", "fit", "--evals", "pythia", "--task", "piqa", "--bootstrap", "1",
         "--out", out, must=["bootstrap", ">= 2"], out=out)  # fmt: skip


def test_fp_interval_contains_its_point_on_a_near_chance_task(table):
    # arc_challenge stays near chance up to 1.4B: FP's refits end on bounds; their percentile
    # range once lay entirely below the point (22.3 vs [0, 17.9])
    est = DownstreamForecaster("fp", bootstrap=100).fit(table, task="arc_challenge",
                                                        models=MODELS)  # fmt: skip
    C = np.logspace(17, 26, 30)
    p = est.predict(C)
    lo, hi = est.predict_interval(C)
    assert np.all((lo <= p + 1e-9) & (p <= hi + 1e-9))
    assert np.all(hi - lo > 0)


def test_a_missing_score_is_refused_with_the_files_row_number(cli, table, tmp_path):
    t = table.copy()
    i = int(t.index[(t.model == "pythia-1b") & (t.task == "piqa") & (t.metric == "acc")
                    & (t.step == t.step.max())][0])  # fmt: skip
    t.loc[i, "value"] = np.nan
    path = tmp_path / "t.csv"
    t.to_csv(path, index=False)
    err = _err(cli, "downstream", "fit", "--evals", path, "--task", "piqa", "--models",
               "pythia-1b,pythia-1.4b,pythia-410m")  # fmt: skip
    assert f"row {i + 1} " in err and "'value'" in err and "not a number" in err


def test_a_negative_stderr_is_refused(cli, table, tmp_path):
    t = table.copy()
    t.loc[3, "stderr"] = -0.3
    path = tmp_path / "t.csv"
    t.to_csv(path, index=False)
    must = ["row 4 column 'stderr'"]
    _err(cli, "downstream", "fit", "--evals", path, "--task", "piqa", must=must)


def test_gzipped_tables_are_read_like_plain_ones(cli, table, tmp_path):
    table.to_csv(tmp_path / "t.csv.gz", index=False)
    table.to_csv(tmp_path / "t.csv", index=False)
    res = []
    for name in ("t.csv.gz", "t.csv"):
        code, stdout, err = cli("downstream", "fit", "--evals", tmp_path / name, "--task", "piqa",
                                "--bootstrap", "0", "--json")  # fmt: skip
        assert code == 0, err
        res.append(json.loads(stdout))
    assert res[0] == res[1]


def test_a_model_asked_for_but_without_usable_rows_is_named(cli, table, tmp_path):
    t = table[~((table.model == "pythia-1b") & (table.task == "piqa"))]
    path = tmp_path / "t.csv"
    t.to_csv(path, index=False)
    _err(cli, "downstream", "fit", "--evals", path, "--task", "piqa", "--models", M,
         must=["'pythia-1b'", "--models"])  # fmt: skip


def test_points_or_fractions_come_from_the_whole_table_not_the_fitted_models(table):
    t = table[table.task.isin(["lambada_openai"])].copy()
    sc = t[t.metric == "acc"].copy()
    # a points-scale metric whose small models score below 1 point (10 a^4 points)
    sc = sc.assign(task="hardbench", metric="score", stderr=np.nan,
                   value=10.0 * sc["value"].to_numpy(float) ** 4)  # fmt: skip
    both = pd.concat([t, sc], ignore_index=True)
    small = ["pythia-70m", "pythia-160m", "pythia-410m"]
    assert both.loc[both.task.eq("hardbench") & both.model.isin(small), "value"].max() < 1
    assert both.loc[both.task.eq("hardbench"), "value"].max() > 1
    a = DownstreamForecaster("trend", chance=0, bootstrap=0).fit(
        both, task="hardbench", metric="score", models=small
    )
    b = DownstreamForecaster("trend", chance=0, bootstrap=0).fit(
        both, task="hardbench", metric="score", models=MODELS
    )
    assert a.largest_["score"] < 1 and b.largest_["score"] < 100  # points, never x100


def test_flags_that_did_nothing_are_refused_or_work(cli, tmp_path):
    _err(cli, "flp", "fit", "--evals", "pythia", "--task", "piqa", "--method", "flp",
         "--threshold", "30", must=["--threshold"])  # fmt: skip
    # evals-only flags on a --runs fit
    from lmforecast import examples

    examples.copy(tmp_path)
    _err(cli, "flp", "fit", "--runs", tmp_path / "flp" / "runs.csv", "--checkpoints",
         tmp_path / "flp" / "checkpoints.csv", "--task", "ARC", "--models", "foo",
         must=["--models", "--evals"])  # fmt: skip
    # flp fit --evals takes the flag its own chance error names
    code, _, err = cli("flp", "fit", "--evals", "pythia", "--task", "piqa", "--chance", "50",
                       "--bootstrap", "0")  # fmt: skip
    assert code == 0, err
    code, _, err = cli("downstream", "backtest", "--evals", "pythia", "--task", "piqa",
                       "--fit-models", "pythia-70m,pythia-160m", "--target", "pythia-410m",
                       "--models", "pythia-70m")  # fmt: skip
    assert code == 2 and "--models" in err


def test_flp_refusal_names_the_task(table):
    with pytest.raises(InputError, match="task 'arc_challenge'"):
        DownstreamForecaster("flp", bootstrap=0).fit(table, task="arc_challenge", models=MODELS[:3])


def test_python_takes_one_name_as_a_string_and_validates_chance(table):
    bt = backtest(table, fit_models=MODELS[:4], target_model="pythia-1.4b", tasks="piqa",
                  methods=["ensemble"], bootstrap=0)  # fmt: skip
    assert set(bt.rows["task"]) == {"piqa"}
    assert {"fp", "persistence"} <= set(bt.rows["method"])
    assert "persistence" in bt.summary()
    assert "from pythia-1b and smaller" in bt.summary()
    bt2 = backtest(table, fit_models=list(reversed(MODELS[:4])), target_model="pythia-1.4b",
                   tasks="piqa", methods="trend", bootstrap=0)  # fmt: skip
    assert "from pythia-1b and smaller" in bt2.summary()  # the largest, not the last listed
    with pytest.raises(InputError, match=">= 2 models"):  # the model, not its characters
        DownstreamForecaster("trend", bootstrap=0).fit(table, task="piqa", models="pythia-70m")
    est = DownstreamForecaster("trend", bootstrap=0).fit(table, task="piqa", models=MODELS)
    with pytest.raises(InputError, match="not both"):
        est.predict(5e21, N=1e3, D=1e3)
    with pytest.raises(InputError, match="same length"):
        est.predict(N=[1e9, 2e9], D=[1e10, 2e10, 3e10])
    for bad in (150, -20):
        with pytest.raises(InputError, match="chance"):
            DownstreamForecaster("sigmoid-chance", chance=bad)


def test_backtest_chance_is_per_task_and_a_bare_value_for_several_is_refused(cli, table, tmp_path):
    t = pd.concat([table, table[table.task == "piqa"].assign(task="my_task")], ignore_index=True)
    src = tmp_path / "e.csv"
    t.to_csv(src, index=False)
    base = ["downstream", "backtest", "--evals", src, "--task", "piqa,my_task", "--fit-models",
            ",".join(MODELS[:4]), "--target", "pythia-1.4b", "--bootstrap", "0", "--methods",
            "sigmoid-chance", "--json"]  # fmt: skip
    _err(cli, *base, "--chance", "50", must=["TASK=P"])
    _err(cli, *base, must=["'my_task'", "--chance my_task=P"])
    code, stdout, err = cli(*base, "--chance", "my_task=30")
    assert code == 0, err
    rows = {r["task"]: r for r in json.loads(stdout)["rows"] if r["method"] == "sigmoid-chance"}
    one = cli(*[a if a != "piqa,my_task" else "piqa" for a in base])
    piqa_alone = {r["task"]: r for r in json.loads(one[1])["rows"]
                  if r["method"] == "sigmoid-chance"}  # fmt: skip
    # piqa keeps its bundled chance (50): the same forecast as in a backtest of piqa alone
    assert rows["piqa"]["predicted"] == piqa_alone["piqa"]["predicted"]
    assert rows["my_task"]["predicted"] != rows["piqa"]["predicted"]  # my_task at 30


def test_evals_import_names_a_misspelt_task_and_warns_on_text_values(cli, tmp_path):
    src = tmp_path / "r.json"
    src.write_text(json.dumps({
        "results": {"piqa": {"acc,none": None, "acc_norm,none": 0.6, "acc_stderr,none": 0.01}},
        "config": {"model_args": "pretrained=EleutherAI/pythia-160m,revision=step1000"},
    }))  # fmt: skip
    ok = tmp_path / "ok.json"
    ok.write_text(src.read_text().replace("null", "0.7"))
    _err(cli, "evals", "import", ok, "--task", "piqa,piqaa", "--out", tmp_path / "a.csv",
         must=["'piqaa'"], out=tmp_path / "a.csv")  # fmt: skip
    code, _, err = cli("evals", "import", src, "--out", tmp_path / "b.csv")
    assert code == 0 and "warning" in err and "'acc' = None" in err, err
    err = _err(cli, "evals", "import", src, "--metric", "acc", "--out", tmp_path / "c.csv")
    assert "is there but None is not a number" in err


def test_rows_of_two_n_shot_settings_say_so(table):
    t = pd.concat([table, table.assign(n_shot=5, value=table["value"] * 0.99)], ignore_index=True)
    with pytest.raises(InputError, match="differ in n_shot"):
        DownstreamForecaster("trend", bootstrap=0).fit(t, task="piqa")


def test_fractions_mixed_with_points_under_a_custom_metric_are_warned(table):
    from lmforecast.downstream.tables import task_data

    t = table[(table["task"] == "piqa") & (table["metric"] == "acc")].copy()
    t["metric"] = "accuracy"  # a name the harness's fraction metrics do not protect
    big = t["model"].isin(["pythia-1b", "pythia-1.4b"])
    t.loc[big, "value"] = t.loc[big, "value"] * 100
    both = pd.concat([t, table[table["task"] == "lambada_openai"]], ignore_index=True)
    with pytest.warns(UserWarning, match=r"'pythia-1b'.*fractions mixed with points"):
        task_data(both, task="piqa", metric="accuracy", loss_task="lambada_openai", models=MODELS)
    t.loc[big, "value"] = t.loc[big, "value"] / 100  # all fractions again: no warning
    both = pd.concat([t, table[table["task"] == "lambada_openai"]], ignore_index=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        task_data(both, task="piqa", metric="accuracy", loss_task="lambada_openai", models=MODELS)


def test_cli_forecasts_a_trajectory_and_a_task_average(cli, table, tmp_path):
    from lmforecast.downstream.aggregate import task_average, trajectory

    ev = tmp_path / "ev.csv"
    table.to_csv(ev, index=False)
    fits = []
    for t in ("piqa", "arc_challenge"):
        fits.append(tmp_path / f"{t}.json")
        code, _, err = cli("downstream", "fit", "--evals", ev, "--task", t, "--models", M,
                           "--bootstrap", "20", "--out", fits[-1])  # fmt: skip
        assert code == 0, err
    code, out, err = cli("downstream", "predict", "--fit", fits[0], "--params", "2.8e9",
                         "--tokens", "3e10,3e11", "--json")  # fmt: skip
    assert code == 0, err
    rows = json.loads(out)["forecasts"]
    est = DownstreamForecaster.from_json(fits[0])
    ref = trajectory(est, N=2.8e9, D=[3e10, 3e11])
    assert [r["D"] for r in rows] == [3e10, 3e11]
    assert np.allclose([r["performance"] for r in rows], ref["score"])
    assert np.allclose([r["interval"] for r in rows], ref[["lo", "hi"]].to_numpy())
    code, out, err = cli("downstream", "predict", "--fit", f"{fits[0]},{fits[1]}", "--flops",
                         "5e21", "--json")  # fmt: skip
    assert code == 0, err
    avg = json.loads(out)["average"]
    p, lo, hi = task_average([DownstreamForecaster.from_json(f) for f in fits], 5e21)
    assert avg["tasks"] == ["piqa", "arc_challenge"]
    assert avg["forecasts"][0]["performance"] == pytest.approx(float(np.ravel(p)[0]))
    assert avg["forecasts"][0]["interval"] == pytest.approx([float(np.ravel(lo)[0]),
                                                             float(np.ravel(hi)[0])])  # fmt: skip
    _err(cli, "downstream", "predict", "--fit", f"{fits[0]},{fits[1]}", "--flops", "5e21",
         "--actual", "60", must=("--actual",))  # fmt: skip


def test_an_interval_does_not_depend_on_the_other_points_asked_for(table):
    est = DownstreamForecaster(bootstrap=30).fit(table, task="piqa", models=MODELS)
    lo1, hi1 = est.predict_interval(5e21)
    lo3, hi3 = est.predict_interval([1e21, 5e21, 2e22])
    assert lo3[1] == lo1[0] and hi3[1] == hi1[0]  # it did: the noise draws followed the shape


def test_missing_stderr_is_warned_and_backtest_names_misspelt_task_and_small_target(
    cli, table, tmp_path
):
    t = table.copy()
    t["stderr"] = np.nan
    with pytest.warns(
        UserWarning, match=r"no 'stderr' for the largest fitted model \(pythia-1.4b\)"
    ):
        est = DownstreamForecaster(bootstrap=5).fit(t, task="piqa", models=MODELS)
    assert est.eval_sd_ == 1.0
    ev = tmp_path / "ev.csv"
    table.to_csv(ev, index=False)
    # misspelt: named as such (it used to ask for a chance level, then say it was absent)
    _err(cli, "downstream", "backtest", "--evals", ev, "--task", "piqa,arc_chalenge",
         "--fit-models", "pythia-160m,pythia-410m", "--target", "pythia-1b",
         must=("'arc_chalenge' is not in column 'task'",
               "did you mean 'arc_challenge'"))  # fmt: skip
    _err(cli, "downstream", "backtest", "--evals", ev, "--task", "piqa", "--fit-models",
         "pythia-160m,pythia-1b", "--target", "pythia-70m",
         must=("--target 'pythia-70m'", "not larger than fitted model 'pythia-1b'"))  # fmt: skip


def test_backtest_summary_marks_fp_fallback_and_counts_refusals_without_numpy_noise():
    from lmforecast.data.evals import load_pythia

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # overflow in exp leaked as a warning
        bt = backtest(load_pythia(), fit_models=["pythia-160m", "pythia-410m", "pythia-1b"],
                      target_model="pythia-1.4b", tasks=["piqa", "arc_challenge"],
                      methods=["flp", "fp"], bootstrap=20)  # fmt: skip
    text = bt.summary()
    rows = bt.rows
    fb = set(rows.loc[(rows["method"] == "fp") & (rows["fallback"] == True), "task"])  # noqa: E712
    for t in fb:  # the header's "*" is printed beside each fallback's error
        line = next(ln for ln in text.splitlines() if ln.startswith(t))
        assert "*" in line, line
    nref = int(rows.loc[rows["method"] == "flp", "refused"].sum())
    if nref:
        assert f"({nref} refused)" in bt.markdown(rows["scenario"].iloc[0])
        assert f"over {2 - nref} of 2 tasks: {nref} refused" in text


def test_predict_warns_below_persistence_few_replicates_and_a_fractional_actual(
    cli, table, tmp_path
):
    ev = tmp_path / "ev.csv"
    table.to_csv(ev, index=False)
    fit = tmp_path / "flp.json"
    code, _, err = cli("flp", "fit", "--evals", ev, "--task", "piqa", "--method", "flp",
                       "--models", "pythia-160m,pythia-410m,pythia-1b", "--bootstrap", "5",
                       "--out", fit)  # fmt: skip
    assert code == 0 and "--bootstrap 5" in err and "rough" in err
    est = DownstreamForecaster.from_json(fit)
    code, out, err = cli("flp", "predict", "--fit", fit, "--flops", "5e21", "--json")
    assert code == 0, err
    P = json.loads(out)["performance"]
    below = P < est.largest_["score"] - max(est.eval_sd_, 1.0)
    assert below and "below pythia-1b's own score" in err, (P, est.largest_, err)
    code, _, err = cli("downstream", "predict", "--fit", fit, "--flops", "5e21", "--actual",
                       "0.7")  # fmt: skip
    assert code == 0 and "actual 0.7 is read in points" in err and "give 70" in err
    with pytest.warns(DomainWarning, match="actual 0.7 is read in points"):  # the library says it
        est.forecast_one(5e21, actual=0.7)


def test_predict_registers_one_point_and_every_point_of_a_list_in_the_ledger(cli, table, tmp_path):
    # a list of --tokens broke `--ledger` for one point too ("D must be a number, got (3e11,)")
    from lmforecast.ledger import Ledger

    ev = tmp_path / "ev.csv"
    table.to_csv(ev, index=False)
    fit, db = tmp_path / "piqa.json", tmp_path / "l.db"
    assert cli("downstream", "fit", "--evals", ev, "--task", "piqa", "--models", M,
               "--bootstrap", "20", "--out", fit)[0] == 0  # fmt: skip
    code, _, err = cli("downstream", "predict", "--fit", fit, "--params", "2.5e9", "--tokens",
                       "3e11", "--ledger", db)  # fmt: skip
    assert code == 0, err
    code, _, err = cli("downstream", "predict", "--fit", fit, "--params", "2.5e9", "--tokens",
                       "3e10,3e11", "--ledger", db)  # fmt: skip
    assert code == 0 and "registered record(s) 2, 3" in err, err
    with Ledger(db) as L:
        recs = L.records()
    assert list(recs["D"]) == [3e11, 3e10, 3e11] and set(recs["task"]) == {"piqa"}
    assert recs["point"].iloc[0] == pytest.approx(recs["point"].iloc[2])


def test_a_list_of_points_from_a_fit_without_bootstrap_gives_points_without_intervals(
    cli, table, tmp_path
):
    ev, fit = tmp_path / "ev.csv", tmp_path / "b0.json"
    table.to_csv(ev, index=False)
    assert cli("downstream", "fit", "--evals", ev, "--task", "piqa", "--models", M,
               "--bootstrap", "0", "--out", fit)[0] == 0  # fmt: skip
    code, out, err = cli("downstream", "predict", "--fit", fit, "--params", "2.8e9", "--tokens",
                         "3e10,3e11", "--json")  # fmt: skip
    assert code == 0, err
    rows = json.loads(out)["forecasts"]
    assert [r["interval"] for r in rows] == [None, None] and rows[1]["performance"] > 50
