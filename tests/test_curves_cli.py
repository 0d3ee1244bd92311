"""`lmforecast curves fit|predict|plan` and the learning-rate column of `runs import`: the CLI
gives the library's numbers, continues a run with logged losses and forecasts a new run from its
model's shared parameters, registers final-step forecasts in the ledger, and keeps the learning
rate of W&B, JSONL and TensorBoard logs."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from lmforecast.data.logs import import_logs


# ---- runs import: the learning-rate column ---------------------------------------------------
def _lr(step):
    """A cosine-like decay with a 20-step warmup (the values a log would hold)."""
    s = np.asarray(step, float)
    return np.where(s < 20, 1e-3 * s / 20, 1e-4 + 0.9e-3 * 0.5 * (1 + np.cos(np.pi * s / 400)))


def _jsonl(path, key="lr"):
    with open(path, "w") as f:
        for s in range(10, 410, 10):
            f.write(json.dumps({"step": s, "tokens": s * 4096, "train_loss": 5 - s / 200,
                                key: float(_lr(s))}) + "\n")  # fmt: skip
            if s % 50 == 0:  # evaluations on their own lines, without a learning rate
                f.write(json.dumps({"step": s, "eval_loss": 5.1 - s / 200}) + "\n")


def test_jsonl_learning_rate_round_trips_into_the_curves_table(tmp_path, cli):
    _jsonl(tmp_path / "r1.jsonl")
    code, out, err = cli("runs", "import", tmp_path / "r1.jsonl", "--format", "jsonl",
                         "--params", "1e8", "--out", tmp_path / "runs.csv",
                         "--curves-out", tmp_path / "curves.csv", "--json")  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["columns"]["lr"] == "lr"
    cv = pd.read_csv(tmp_path / "curves.csv")
    assert list(cv.columns) == ["run", "step", "lr", "loss", "tokens", "N"]
    assert len(cv) == 40 and (cv["run"] == "r1").all()  # every logged lr, losses where evaluated
    np.testing.assert_allclose(cv["lr"], _lr(cv["step"]), rtol=1e-12)
    ev = cv[cv["loss"].notna()]
    assert list(ev["step"]) == list(range(50, 401, 50))
    np.testing.assert_allclose(ev["loss"], 5.1 - ev["step"] / 200)
    assert (cv["N"] == 1e8).all() and (cv["tokens"] == cv["step"] * 4096).all()
    from lmforecast.curves import read_curves

    assert len(read_curves(tmp_path / "curves.csv")) == 40  # the table `curves fit` reads


def test_curves_out_alone_needs_neither_params_nor_tokens(tmp_path, cli):
    with open(tmp_path / "r2.jsonl", "w") as f:  # no tokens column, no parameter count
        for s in range(10, 410, 10):
            f.write(json.dumps({"step": s, "lr": float(_lr(s))}) + "\n")
            if s % 50 == 0:
                f.write(json.dumps({"step": s, "eval_loss": 5.1 - s / 200}) + "\n")
    code, out, err = cli("runs", "import", tmp_path / "r2.jsonl", "--format", "jsonl",
                         "--curves-out", tmp_path / "curves.csv")  # fmt: skip
    assert code == 0, err
    cv = pd.read_csv(tmp_path / "curves.csv")
    assert list(cv.columns) == ["run", "step", "lr", "loss"] and len(cv) == 40
    np.testing.assert_allclose(cv["lr"], _lr(cv["step"]), rtol=1e-12)
    ev = cv[cv["loss"].notna()]
    np.testing.assert_allclose(ev["loss"], 5.1 - ev["step"] / 200)
    # the runs table still needs them: asked for, it is refused and nothing is written
    code, _, err = cli(
        "runs",
        "import",
        tmp_path / "r2.jsonl",
        "--format",
        "jsonl",
        "--out",
        tmp_path / "runs.csv",
        "--curves-out",
        tmp_path / "c2.csv",
    )
    assert code == 2 and "tokens" in err
    assert not (tmp_path / "runs.csv").exists() and not (tmp_path / "c2.csv").exists()


def test_wandb_history_export_keeps_optim_learning_rate_group0(tmp_path):
    steps = np.arange(0, 300, 25)
    df = pd.DataFrame({"_step": steps, "_runtime": steps * 0.1, "tokens": steps * 1024.0,
                       "optim/learning_rate_group0": _lr(steps),
                       "eval/loss": 4 - steps / 500})  # fmt: skip
    df.loc[df.index % 3 == 1, "eval/loss"] = np.nan  # not evaluated at every logged step
    df.to_csv(tmp_path / "run-a.csv", index=False)
    res = import_logs([tmp_path / "run-a.csv"], "wandb", params=3e7)
    assert res.columns["lr"] == "optim/learning_rate_group0"
    cv = res.curves
    np.testing.assert_allclose(cv["lr"], _lr(steps))
    assert cv["loss"].isna().sum() == 4 and (cv["run"] == "run-a").all()
    np.testing.assert_allclose(res.checkpoints["lr"], _lr(res.checkpoints["step"]))


def test_an_evaluation_between_logged_learning_rates_takes_the_interpolated_value(tmp_path):
    rows = [{"step": 0, "tokens": 0, "learning_rate": 1e-3},
            {"step": 100, "tokens": 100, "learning_rate": 5e-4},
            {"step": 60, "tokens": 60, "eval_loss": 3.0}]  # fmt: skip
    rows = sorted(rows, key=lambda r: r["step"])
    (tmp_path / "r.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    res = import_logs([tmp_path / "r.jsonl"], "jsonl", params=1e6)
    got = res.curves.set_index("step")
    assert got.loc[60, "lr"] == pytest.approx(1e-3 - 0.6 * 5e-4)


def test_tensorboard_learning_rate_scalars(tmp_path):
    pytest.importorskip("tensorboard")
    from tensorboard.compat.proto.event_pb2 import Event
    from tensorboard.compat.proto.summary_pb2 import Summary
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    w = EventFileWriter(str(tmp_path / "tb" / "r1"))
    for s in range(10, 201, 10):
        vals = [Summary.Value(tag="learning_rate", simple_value=float(_lr(s))),
                Summary.Value(tag="tokens", simple_value=s * 2048.0)]  # fmt: skip
        if s % 40 == 0:
            vals.append(Summary.Value(tag="eval/loss", simple_value=4.0 - s / 1000))
        w.add_event(Event(step=s, wall_time=1.7e9 + s, summary=Summary(value=vals)))
    w.close()
    res = import_logs([tmp_path / "tb"], "tensorboard", params=1e7)
    cv = res.curves
    assert res.columns["lr"] == "learning_rate" and len(cv) == 20
    np.testing.assert_allclose(cv["lr"], _lr(cv["step"]), rtol=1e-6)  # float32 storage
    assert cv["loss"].notna().sum() == 5


def test_tensorboard_lr_and_eval_loss_in_subfolders_of_one_run_are_one_run(tmp_path):
    pytest.importorskip("tensorboard")
    from tensorboard.compat.proto.event_pb2 import Event
    from tensorboard.compat.proto.summary_pb2 import Summary
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    for run, a in (("r1", 4.0), ("r2", 3.5)):
        lr = EventFileWriter(str(tmp_path / "tb" / run / "train"))
        ev = EventFileWriter(str(tmp_path / "tb" / run / "eval"))
        for s in range(10, 201, 10):
            v = Summary.Value(tag="learning_rate", simple_value=float(_lr(s)))
            lr.add_event(Event(step=s, summary=Summary(value=[v])))
            if s % 40 == 0:
                v = Summary.Value(tag="eval/loss", simple_value=a - s / 1000)
                ev.add_event(Event(step=s, summary=Summary(value=[v])))
        lr.close()
        ev.close()
    res = import_logs([tmp_path / "tb"], "tensorboard", curves_only=True)
    cv = res.curves
    assert sorted(cv["run"].unique()) == ["r1", "r2"] and len(cv) == 40
    assert list(cv.columns) == ["run", "step", "lr", "loss"]  # no tokens, no N: not needed
    np.testing.assert_allclose(cv["lr"], _lr(cv["step"]), rtol=1e-6)
    for run, a in (("r1", 4.0), ("r2", 3.5)):
        ev = cv[(cv["run"] == run) & cv["loss"].notna()]
        assert list(ev["step"]) == [40, 80, 120, 160, 200]
        np.testing.assert_allclose(ev["loss"], a - ev["step"] / 1000, rtol=1e-6)


def test_curves_out_without_a_learning_rate_is_refused_and_nothing_written(tmp_path, cli):
    (tmp_path / "r.jsonl").write_text(
        "".join(
            json.dumps({"step": s, "tokens": s, "loss": 3 - s / 100}) + "\n" for s in range(1, 5)
        )  # fmt: skip
    )
    code, out, err = cli("runs", "import", tmp_path / "r.jsonl", "--format", "jsonl",
                         "--params", "1e6", "--out", tmp_path / "runs.csv",
                         "--curves-out", tmp_path / "curves.csv")  # fmt: skip
    assert code == 2 and err.count("\n") == 1 and "learning-rate column" in err
    assert not (tmp_path / "runs.csv").exists() and not (tmp_path / "curves.csv").exists()


def test_a_run_without_any_learning_rate_beside_one_with_is_named(tmp_path):
    _jsonl(tmp_path / "a.jsonl")
    _jsonl(tmp_path / "b.jsonl", key="momentum")  # run b logs no learning rate
    from lmforecast.errors import InputError

    with pytest.raises(InputError, match=r"run 'b' logs losses but no learning rate"):
        import_logs([tmp_path / "a.jsonl", tmp_path / "b.jsonl"], "jsonl", params=1e6)


def test_a_negative_learning_rate_is_refused_by_row(tmp_path):
    (tmp_path / "r.jsonl").write_text(
        "".join(
            json.dumps({"step": s, "tokens": s, "loss": 3.0, "lr": 1e-3 - s * 1e-3}) + "\n"
            for s in range(0, 4)
        )  # fmt: skip
    )
    from lmforecast.errors import InputError

    with pytest.raises(InputError, match=r"row 3: column 'lr' \(--lr\) holds -0.001"):
        import_logs([tmp_path / "r.jsonl"], "jsonl", params=1e6)


# ---- curves fit / predict / plan -------------------------------------------------------------
@pytest.fixture(scope="module")
def work(tmp_path_factory):
    """The example curves and schedule, and a fit saved by `curves fit`."""
    import shutil

    from lmforecast import examples
    from lmforecast.cli.main import main

    d = tmp_path_factory.mktemp("curves")
    for name in ("curves.csv", "schedule.csv"):
        shutil.copy(examples.path(f"curves/{name}"), d / name)
    code = main(["curves", "fit", "--runs", str(d / "curves.csv"), "--out", str(d / "fit.json")])
    assert code == 0
    return d


def _forecasts(out):
    d = json.loads(out)
    return pd.DataFrame([{**r, "lo": r["interval"][0], "hi": r["interval"][1]}
                         if r["interval"] else {**r, "lo": np.nan, "hi": np.nan}
                         for r in d["forecasts"]]), d  # fmt: skip


def test_predict_prints_the_libraries_forecast_one_record_per_row(work, cli):
    from lmforecast.curves import CurveLaw, read_schedule

    code, out, err = cli("curves", "predict", "--fit", work / "fit.json", "--schedule",
                         work / "schedule.csv", "--json")  # fmt: skip
    assert code == 0, err
    got, d = _forecasts(out)
    sched = read_schedule(work / "schedule.csv")
    assert len(got) == len(sched) and list(got["run"]) == list(sched["run"])
    want = CurveLaw.load(work / "fit.json").forecast(sched, level=0.9).table
    np.testing.assert_array_equal(got["loss"], want["loss"])
    np.testing.assert_array_equal(got["lo"], want["lo"])
    np.testing.assert_array_equal(got["step"], want["step"])
    ok = got["lo"].notna()
    assert ((got["lo"] <= got["loss"]) & (got["loss"] <= got["hi"]))[ok].all()
    assert d["level"] == 0.9 and isinstance(d["notes"], list)


def test_a_run_with_logged_losses_is_continued_and_a_new_one_uses_shared_parameters(work, cli):
    from lmforecast.curves import CurveLaw

    est = CurveLaw.load(work / "fit.json")
    sched = pd.read_csv(work / "schedule.csv")
    past = pd.read_csv(work / "curves.csv").query("run == 'wsd_16k' and step <= 6000")
    renamed = pd.concat([past[sched.columns], sched], ignore_index=True)  # the whole schedule
    renamed["run"] = renamed["run"].replace({"wsd_16k": "wsd_16k_again"})
    renamed.to_csv(work / "renamed.csv", index=False)
    _, out1, _ = cli("curves", "predict", "--fit", work / "fit.json", "--schedule",
                     work / "schedule.csv", "--json", "--final")  # fmt: skip
    _, out2, _ = cli("curves", "predict", "--fit", work / "fit.json", "--schedule",
                     work / "renamed.csv", "--json", "--final")  # fmt: skip
    a = _forecasts(out1)[0].set_index("run")
    b = _forecasts(out2)[0].set_index("run")
    # the continued run keeps its own offset over the shared curve; the renamed run has none
    off = est.runs_["wsd_16k"]["offset"]
    assert off != 0
    assert a.loc["wsd_16k", "loss"] / b.loc["wsd_16k_again", "loss"] == pytest.approx(
        np.exp(off), rel=1e-12
    )
    assert a.loc["cosine_16k", "loss"] == b.loc["cosine_16k", "loss"]  # same shared parameters
    # and the continued forecast lands near the truth the example was simulated from
    import importlib.util
    import sys
    from pathlib import Path

    spec = importlib.util.spec_from_file_location(
        "make_curves_examples", Path(__file__).parents[1] / "scripts" / "make_curves_examples.py"
    )
    mod = importlib.util.module_from_spec(spec)
    sys.modules["make_curves_examples"] = mod
    spec.loader.exec_module(mod)
    from lmforecast.curves import schedules, simulate_curves

    wsd = schedules.wsd(16000, mod.PEAK, mod.FLOOR, 0.2, mod.WARMUP, every=100).assign(run="t")
    true_final = simulate_curves(wsd, mod.TRUTH)["loss"].iloc[-1]
    assert a.loc["wsd_16k", "lo"] <= true_final <= a.loc["wsd_16k", "hi"]
    assert abs(a.loc["wsd_16k", "loss"] / true_final - 1) < 0.01


def test_final_gives_one_row_per_run_the_last_of_the_full_forecast(work, cli):
    _, full, _ = cli("curves", "predict", "--fit", work / "fit.json", "--schedule",
                     work / "schedule.csv", "--json")  # fmt: skip
    _, fin, _ = cli("curves", "predict", "--fit", work / "fit.json", "--schedule",
                    work / "schedule.csv", "--json", "--final", "--level", "0.8")  # fmt: skip
    f, _ = _forecasts(full)
    g, d = _forecasts(fin)
    assert list(g["run"]) == ["wsd_16k", "cosine_16k"] and (g["step"] == 16000).all()
    last = f.groupby("run", sort=False).tail(1).set_index("run")
    np.testing.assert_array_equal(g.set_index("run")["loss"], last["loss"])
    assert d["level"] == 0.8  # a narrower interval than the 90% one
    assert (g["hi"] - g["lo"]).to_numpy()[0] < (last["hi"] - last["lo"]).to_numpy()[0]


def test_predict_out_csv_and_json_and_the_text_table(work, cli):
    code, out, err = cli("curves", "predict", "--fit", work / "fit.json", "--schedule",
                         work / "schedule.csv", "--final", "--out", work / "fc.csv")  # fmt: skip
    assert code == 0 and "wrote 2 forecast(s)" in out
    t = pd.read_csv(work / "fc.csv")
    assert list(t.columns) == ["run", "step", "loss", "lo", "hi"] and len(t) == 2
    code, out, _ = cli("curves", "predict", "--fit", work / "fit.json", "--schedule",
                       work / "schedule.csv", "--final", "--out", work / "fc.json")  # fmt: skip
    d = json.loads((work / "fc.json").read_text())
    assert [r["run"] for r in d["forecasts"]] == list(t["run"])
    np.testing.assert_allclose([r["loss"] for r in d["forecasts"]], t["loss"], rtol=1e-15)
    code, out, err = cli("curves", "predict", "--fit", work / "fit.json", "--schedule",
                         work / "schedule.csv", "--final")  # fmt: skip
    assert code == 0 and "cosine_16k" in out and "90% interval" in out
    assert "lmforecast: note:" in err  # the library's notes (far past the fitted steps)


def test_the_ledger_records_the_final_step_forecasts(work, cli):
    db = work / "ledger.db"
    code, out, err = cli("curves", "predict", "--fit", work / "fit.json", "--schedule",
                         work / "schedule.csv", "--json", "--ledger", db,
                         "--label", "midrun")  # fmt: skip
    assert code == 0 and "registered record(s) 1, 2" in err
    f, _ = _forecasts(out)
    last = f.groupby("run", sort=False).tail(1).set_index("run")
    code, shown, _ = cli("ledger", "show", "--ledger", db, "--json")
    recs = {r["run"]: r for r in json.loads(shown)}
    assert set(recs) == {"wsd_16k", "cosine_16k"}
    for run, r in recs.items():
        assert r["method"] == "curves" and r["form"] == "mpl" and r["label"] == "midrun"
        assert r["point"] == last.loc[run, "loss"] and r["N"] == 2.5e7 and r["task"] == "loss"
        assert [r["lo"], r["hi"]] == [last.loc[run, "lo"], last.loc[run, "hi"]]
    rid = recs["wsd_16k"]["id"]
    assert cli("ledger", "resolve", rid, "--ledger", db, "--observed", "3.36")[0] == 0
    code, sc, _ = cli("ledger", "score", "--ledger", db, "--json")
    assert code == 0 and json.loads(sc)


def test_fit_json_summary_and_plan_json(work, cli):
    from lmforecast.curves import CurveLaw, plan_schedules

    code, out, err = cli("curves", "fit", "--runs", work / "curves.csv", "--law", "power",
                         "--json")  # fmt: skip
    d = json.loads(out)
    assert code == 0 and d["law"] == "power"
    assert set(d["runs"]) == {"constant_8k", "cosine_8k", "wsd_8k", "wsd_16k"}
    assert set(next(iter(d["models"].values()))["params"]) == {"L0", "A", "alpha"}
    code, out, err = cli("curves", "plan", "--fit", work / "fit.json", "--steps", "16K", "--json")
    assert code == 0, err
    p = json.loads(out)
    want = plan_schedules(CurveLaw.load(work / "fit.json"), 16_000).to_dict()
    assert p["best_cooldown"] == want["best_cooldown"] and p["schedules"] == want["schedules"]
    assert p["steps"] == 16_000 and p["warmup_steps"] == 400 and p["peak_lr"] == 3e-4
    # the example's complete decaying runs identify the decay response: the best cooldown is in
    # the WSD literature's 10-30% range and within 0.05 of the simulated law's own best fraction
    from lmforecast.curves import schedules, simulate_curves
    from lmforecast.report.sections.curves import EXAMPLE_TRUTH

    fs = np.round(np.arange(0.05, 0.5, 0.025), 4)
    plans = pd.concat([schedules.wsd(16_000, 3e-4, 3e-5, f, 400, every=200).assign(run=str(f))
                       for f in fs])  # fmt: skip
    true = simulate_curves(plans, EXAMPLE_TRUTH).groupby("run", sort=False)["loss"].last()
    f_true = fs[int(np.argmin(true.to_numpy()))]
    assert 0.10 <= p["best_cooldown"]["fraction"] <= 0.30
    assert abs(p["best_cooldown"]["fraction"] - f_true) <= 0.05
    rows = {r["schedule"]: r for r in p["schedules"]}
    assert not rows["constant"]["indistinguishable_from_best"]


# ---- report section and plot -----------------------------------------------------------------
def test_report_section_on_the_example_and_on_the_users_curves(tmp_path):
    from lmforecast.report.builder import ReportContext
    from lmforecast.report.sections.curves import build_section

    sec = build_section(ReportContext(quick=True, progress=False))
    finals = pd.DataFrame(sec.numbers["finals"]).set_index("run")
    assert set(finals.index) == {"constant_8k", "cosine_8k", "wsd_8k", "wsd_16k", "cosine_16k"}
    assert finals.loc["wsd_16k", "kind"] == "continued"
    assert finals.loc["wsd_16k", "final step"] == 16000
    assert finals.loc["cosine_16k", "kind"].startswith("new schedule")
    w = finals.loc["wsd_16k"]  # the mid-run forecast beats persistence against the known truth
    truth = w["true final"]
    assert abs(w["forecast"] / truth - 1) < 0.01 < abs(w["last logged loss"] / truth - 1)
    assert w["lo"] <= w["true final"] <= w["hi"]
    v = sec.verdicts[0]
    assert v["simulated"] and v["error"] < v["baseline_error"] and v["coverage"] == 1.0
    assert sec.numbers["plan"]["best_cooldown"]["fraction"] > 0
    from lmforecast.report.sections.curves import DOCS

    if (DOCS / "curves_backtests.csv").is_file():  # the real-curve backtests, summarised
        bt = pd.read_csv(DOCS / "curves_backtests.csv")
        real = sec.verdicts[1]
        assert not real["simulated"] and real["n"] == int(
            ((bt["size"] != "25M") & bt["with_others"].astype(bool)).sum()
        )
        rows = pd.DataFrame(sec.numbers["backtests"])
        assert rows["forecasts"].sum() == len(bt)
    assert any("<img" in b for b in sec.blocks)
    # the user's curves instead of the example
    from lmforecast import examples

    t = pd.read_csv(examples.path("curves/curves.csv"))
    t = t[~t["run"].isin(["cosine_8k", "wsd_8k"])]
    t.to_csv(tmp_path / "mine.csv", index=False)
    mine = build_section(ReportContext(quick=True, progress=False,
                                       inputs={"curves": str(tmp_path / "mine.csv")}))  # fmt: skip
    assert mine.numbers["source"] == str(tmp_path / "mine.csv")
    assert not any(v["simulated"] for v in mine.verdicts)  # no truth for the user's curves
    assert {r["run"] for r in mine.numbers["finals"]} == {"constant_8k", "wsd_16k"}


def test_plot_curves_draws_each_run_and_its_band():
    from lmforecast import examples
    from lmforecast.curves import CurveLaw, read_curves
    from lmforecast.plots.curves import plot_curves, plot_schedules

    t = read_curves(examples.path("curves/curves.csv"))
    est = CurveLaw(n_boot=20).fit(t)
    sched = t[["run", "step", "lr", "N"]]
    fc = est.forecast(sched)
    fig = plot_curves(t, fc, schedule=sched, level=0.9)
    ax = fig.axes[0]
    assert len(ax.collections) == 4  # one band per run
    lines = [ln for ln in ax.get_lines() if ln.get_linestyle() == "-"]
    assert len(lines) == 4 and all(ln.get_xdata().min() >= 400 for ln in lines)  # after warmup
    assert len(plot_schedules(t).axes[0].get_lines()) == 4


def test_the_example_files_are_the_scripts_simulation():
    import importlib.util
    import sys
    from pathlib import Path

    from lmforecast import examples

    spec = importlib.util.spec_from_file_location(
        "make_curves_examples_", Path(__file__).parents[1] / "scripts" / "make_curves_examples.py"
    )
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    curves, sched = mod.tables()
    for got, name in ((curves, "curves.csv"), (sched, "schedule.csv")):
        shipped = pd.read_csv(examples.path(f"curves/{name}"))
        assert list(shipped.columns) == list(got.columns)
        pd.testing.assert_frame_equal(shipped, got.reset_index(drop=True), check_dtype=False,
                                      rtol=1e-5)  # fmt: skip


def test_wandb_chart_export_and_a_learning_rate_column_named_with_lr(tmp_path, cli):
    # a W&B chart-panel export: Step and "<run> - <key>" columns (MIN/MAX companions dropped)
    steps = np.arange(100, 1100, 100)
    df = pd.DataFrame({"Step": steps})
    for run, a in (("r-a", 4.0), ("r-b", 3.5)):
        df[f"{run} - lr-AdamW"] = _lr(steps / 3)
        df[f"{run} - lr-AdamW__MIN"] = 0.0
        df[f"{run} - val_loss"] = a - steps / 1e4
        df[f"{run} - tokens"] = steps * 512.0
    df.to_csv(tmp_path / "panel.csv", index=False)
    code, out, err = cli("runs", "import", tmp_path / "panel.csv", "--format", "wandb",
                         "--params", "2e7", "--lr", "lr-AdamW", "--out", tmp_path / "runs.csv",
                         "--curves-out", tmp_path / "curves.csv")  # fmt: skip
    assert code == 0, err
    cv = pd.read_csv(tmp_path / "curves.csv")
    assert sorted(cv["run"].unique()) == ["r-a", "r-b"] and len(cv) == 20
    for run, a in (("r-a", 4.0), ("r-b", 3.5)):
        g = cv[cv["run"] == run]
        np.testing.assert_allclose(g["lr"], _lr(g["step"] / 3))
        np.testing.assert_allclose(g["loss"], a - g["step"] / 1e4)


def test_fit_without_resamples_gives_no_interval_and_plan_compares_by_overlap(work, cli):
    code, _, err = cli("curves", "fit", "--runs", work / "curves.csv", "--bootstrap", "0",
                       "--out", work / "fit0.json")  # fmt: skip
    assert code == 0, err
    code, out, _ = cli("curves", "predict", "--fit", work / "fit0.json", "--schedule",
                       work / "schedule.csv", "--final", "--json")  # fmt: skip
    d = json.loads(out)
    assert all(r["interval"] is None for r in d["forecasts"])
    assert any("interval not identified" in n for n in d["notes"])
    code, out, _ = cli("curves", "plan", "--fit", work / "fit0.json", "--steps", "9000", "--json")
    assert code == 0 and json.loads(out)["comparison"] == "overlap"


def test_curves_predict_imports_no_scipy(work):
    """`curves predict` loads numpy and pandas only: scipy.optimize (about half a second per
    call) is imported inside the fit and the plan's monotone search."""
    import subprocess
    import sys

    code = (
        "import sys\nfrom lmforecast.cli.main import main\n"
        f"rc = main(['curves', 'predict', '--fit', {str(work / 'fit.json')!r}, '--schedule', "
        f"{str(work / 'schedule.csv')!r}, '--final', '--json'])\n"
        "print(rc, sorted(m for m in sys.modules if m.startswith('scipy')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    rc, mods = out.stdout.strip().splitlines()[-1].split(" ", 1)
    assert rc == "0" and mods == "[]", mods[:200]
