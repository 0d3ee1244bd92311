"""`lmforecast report` on the user's own files: --runs (a held-out check and the planner on a fit
to those runs), --fit (the planner plans with it), --ledger (never silently dropped), the
headline on real data first, and the simulated studies labelled apart."""

from __future__ import annotations

import json

import numpy as np
import pytest

from lmforecast.ledger import Ledger


@pytest.fixture(scope="module")
def runs_csv(tmp_path_factory):
    """The zoo's 13 really trained supervised runs, as a user's runs table."""
    from lmforecast.zoo import load_zoo

    r = load_zoo().runs
    r = r[r["kind"] == "supervised"][["N", "D", "loss"]].reset_index(drop=True)
    path = tmp_path_factory.mktemp("runs") / "my_runs.csv"
    r.to_csv(path, index=False)
    return path, r


@pytest.fixture(scope="module")
def ledger_db(tmp_path_factory):
    path = tmp_path_factory.mktemp("ledger") / "forecasts.db"
    with Ledger(path, create=True) as L:
        for p, lo, hi, y in [(2.0, 1.9, 2.1, 2.05), (3.0, 2.9, 3.1, 3.3), (2.5, 2.4, 2.6, 2.55)]:
            L.resolve(L.add(method="supervised", point=p, lo=lo, hi=hi, level=0.9), y)
    return path


@pytest.fixture(scope="module")
def report(tmp_path_factory, runs_csv, ledger_db):
    """What the user typed: their runs and ledger, with only the planner asked for."""
    from lmforecast.cli.main import main

    out = tmp_path_factory.mktemp("report")
    code = main(["report", "--out", str(out), "--runs", str(runs_csv[0]), "--ledger",
                 str(ledger_db), "--sections", "planner,isoflop", "--quick", "--quiet",
                 "--jobs", "1"])  # fmt: skip
    assert code == 0
    return out, json.loads((out / "report.json").read_text())


@pytest.mark.slow  # the module's report fits the user's runs (about 25 s, once)
def test_planner_plans_with_a_fit_to_the_users_runs(report, runs_csv, tmp_path):
    from lmforecast.supervised import SupervisedScalingLaw

    out, rep = report
    _, runs = runs_csv
    p = rep["sections"]["planner"]
    assert "your 13 runs" in p["origin"]
    fit = tmp_path / "fit.json"
    fit.write_text(json.dumps(p["fit"]))
    law = SupervisedScalingLaw.load(fit)
    assert law.result_.n_obs == len(runs)
    # the planner's law describes these runs (the bundled example fit is off by tens of %)
    rel = np.abs(law.predict(runs["N"], runs["D"]) / runs["loss"] - 1)
    assert rel.mean() < 0.05, rel
    # the page starts at a budget above the user's largest run, not at the example's 1e22
    html = (out / "report.html").read_text()
    c_max = float((6 * runs["N"] * runs["D"]).max())
    start = float(html.split("id='plan-C' value='")[1].split("'")[0])
    assert c_max < start <= 100 * c_max


@pytest.mark.slow  # the module's report fits the user's runs (about 25 s, once)
def test_held_out_check_on_the_users_runs(report, runs_csv):
    out, rep = report
    _, runs = runs_csv
    y = rep["sections"]["yours"]["held_out"]
    c = 6 * runs["N"] * runs["D"]
    largest = set(np.round(runs["loss"][c >= np.sort(c)[-y["n_heldout"]]], 12))
    assert y["n_heldout"] == 3 and y["n_fit"] == 10
    assert {round(r["loss"], 12) for r in y["runs"]} == largest  # the largest compute held out
    errs = [abs(r["forecast"] / r["loss"] - 1) for r in y["runs"]]
    assert y["mean_abs_rel_error"] == pytest.approx(np.mean(errs))
    assert y["coverage"] == pytest.approx(np.mean([r["covered"] for r in y["runs"]]))
    for r in y["runs"]:
        assert r["lower"] <= r["forecast"] <= r["upper"]
        assert r["covered"] == (r["lower"] <= r["loss"] <= r["upper"])
    # a real result: within 10% on average on runs up to 9x beyond the fitted compute, and
    # better than persistence
    assert y["mean_abs_rel_error"] < 0.10
    assert y["mean_abs_rel_error"] < y["errors"]["baseline:persistence"]


@pytest.mark.slow  # the module's report fits the user's runs (about 25 s, once)
def test_headline_puts_the_users_data_first_and_simulated_studies_apart(report):
    out, rep = report
    head = rep["headline"]
    assert [e["section"] for e in head["entries"]][:2] == ["yours", "ledger"]
    assert all(e["yours"] for e in head["entries"][:2])
    assert head["inputs"]["runs"].endswith("my_runs.csv")
    assert "isoflop" not in {e["section"] for e in head["entries"]}  # simulated: not a headline
    sim = [r["simulated"] for r in rep["summary"]]
    assert sim == sorted(sim) and any(sim) and not all(sim)  # real rows first, then simulated
    html = (out / "report.html").read_text()
    assert html.index("id='headline'") < html.index("id='summary'") < html.index("<nav>")
    assert "summary-real" in html and "summary-simulated" in html and "SIMULATED" in html


@pytest.mark.slow  # the module's report fits the user's runs (about 25 s, once)
def test_ledger_given_with_other_sections_is_reported_not_dropped(report, capsys, cli, tmp_path,
                                                                  ledger_db):  # fmt: skip
    out, rep = report
    assert rep["sections"]["ledger"]["scores"]["overall"]["n_resolved"] == 3
    assert any("ledger" in n for n in rep["headline"]["notes"])
    # another section asked for (shape: the cheapest to build) and the ledger given
    code, stdout, err = cli("report", "--out", tmp_path / "r", "--ledger", ledger_db,
                            "--sections", "shape", "--quick", "--jobs", "1")  # fmt: skip
    assert code == 0, err
    assert "section 'ledger' added: it reads --ledger" in stdout
    sections = json.loads((tmp_path / "r" / "report.json").read_text())["sections"]
    assert {"ledger", "shape"} <= set(sections)


@pytest.mark.parametrize("argv,msg", [
    (["--sections", "ledger"], "--sections ledger needs --ledger PATH"),
    (["--sections", "yours"], "--sections yours needs --runs PATH or --fit PATH"),
    (["--runs", "missing.csv"], "--runs missing.csv: no such file"),
])  # fmt: skip
def test_sections_asked_for_without_their_data_say_so(cli, tmp_path, monkeypatch, argv, msg):
    monkeypatch.chdir(tmp_path)
    code, out, err = cli("report", "--out", tmp_path / "r", *argv, "--quick", "--quiet")
    assert code == 2 and msg in err, err
    assert not (tmp_path / "r").exists()


@pytest.mark.slow  # the module's report fits the user's runs (about 25 s, once)
def test_planner_plans_with_the_users_saved_fit(report, cli, tmp_path):
    """--fit: the planner's numbers come from that fit, bit for bit (no refit)."""
    _, rep = report
    fit = tmp_path / "fit.json"
    fit.write_text(json.dumps(rep["sections"]["planner"]["fit"]))
    code, _, err = cli("report", "--out", tmp_path / "r", "--fit", fit, "--sections", "planner",
                       "--quick", "--quiet", "--jobs", "1")  # fmt: skip
    assert code == 0, err
    got = json.loads((tmp_path / "r" / "report.json").read_text())["sections"]
    assert got["planner"]["planner"]["theta"] == rep["sections"]["planner"]["planner"]["theta"]
    assert got["planner"]["planner"]["draws"] == rep["sections"]["planner"]["planner"]["draws"]
    assert got["planner"]["origin"].startswith("your fit")
    assert "yours" in got and "held-out" not in json.dumps(got["yours"].get("held_out", ""))


@pytest.mark.slow  # a downstream backtest on the user's table (about 10 s)
def test_report_on_the_users_evaluations(cli, tmp_path):
    """--evals: the largest model's scores forecast from the smaller ones of one family."""
    from lmforecast.data.evals import load_pythia

    e = load_pythia()
    path = tmp_path / "my_evals.csv"
    e.to_csv(path, index=False)
    code, _, err = cli("report", "--out", tmp_path / "r", "--evals", path, "--sections", "yours",
                       "--quick", "--quiet", "--jobs", "1")  # fmt: skip
    assert code == 0, err
    rep = json.loads((tmp_path / "r" / "report.json").read_text())
    ev = rep["sections"]["yours"]["evals"]
    assert ev["target"] == "pythia-2.8b"
    assert ev["fit_models"] == ["pythia-70m", "pythia-160m", "pythia-410m", "pythia-1b",
                                "pythia-1.4b"]  # one family, smallest first  # fmt: skip
    # a real result: the ensemble beats persistence (the 1.4B's own score) on 2.8B
    assert ev["mae"]["ensemble"] < ev["mae"]["persistence"]
    assert 0 <= ev["coverage"] <= 1
    head = rep["headline"]["entries"][0]
    assert head["section"] == "yours" and "pythia-2.8b" in head["what"]
    # a table the backtest cannot use is reported with its reason, not dropped
    e[["model", "task", "value"]].to_csv(tmp_path / "bad.csv", index=False)
    code, _, err = cli("report", "--out", tmp_path / "r2", "--evals", tmp_path / "bad.csv",
                       "--sections", "yours", "--quick", "--quiet", "--jobs", "1")  # fmt: skip
    assert code == 0, err
    ev = json.loads((tmp_path / "r2" / "report.json").read_text())["sections"]["yours"]["evals"]
    assert "missing column(s) 'params'" in ev["refused"]


def test_held_out_split_keeps_seed_replicates_together():
    """Runs at one compute (seed replicates) are held out together or fitted together."""
    from lmforecast.report.sections.yours import held_out_mask

    C = np.array([1.0, 2, 3, 4, 5, 6, 7, 8, 9, 9, 9])  # a fifth: 2 runs, but 9 is run 3 times
    held = held_out_mask(C)
    assert held.tolist() == [False] * 8 + [True] * 3
    assert held_out_mask(np.arange(1.0, 14.0)).sum() == 3  # the largest fifth of 13 runs
