"""The nested downstream protocol: bootstrap stages pair up, the benchmark scripts run at HEAD
(reduced size), the task's own loss as stage 1, bounded intervals, trajectories and the task
average, on real small Pythia ladders (bundled table) and Gemstones (shared suite)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

from bench_scripts import load
from lmforecast.data.evals import load_pythia
from lmforecast.downstream import DownstreamForecaster
from lmforecast.downstream.aggregate import task_average, trajectory
from lmforecast.downstream.tables import resolve_loss_task, task_data

REPO = Path(__file__).resolve().parents[1]
LADDER = ["pythia-70m", "pythia-160m", "pythia-410m", "pythia-1b"]


@pytest.fixture(scope="module")
def evals():
    return load_pythia()


@pytest.fixture(scope="module")
def ladder_fits(evals):
    """Default forecaster, 200 replicates (seed 2), per task on the 4-model ladder: fitted once
    for the tests that read forecasts, intervals and task averages off these fits."""
    tasks = ("piqa", "arc_easy", "sciq", "winogrande")
    return {t: DownstreamForecaster(bootstrap=200, seed=2).fit(evals, task=t, models=LADDER)
            for t in tasks}  # fmt: skip


def _script(name):
    return load(name)


def test_bootstrap_closed_form_returns_every_replicate():
    """4 finals: some resamples draw one x value only; they are redrawn, not dropped, so both
    FLP stages carry exactly n_boot replicates (the IndexError of members.py)."""
    from lmforecast.flp.fitting import bootstrap_closed_form, fit_from_closed_form
    from lmforecast.flp.model import FLP

    e = load_pythia()
    td = task_data(e, task="piqa", models=LADDER, loss_task="lambada_openai")
    runs = td.runs[["model", "C", "loss"]]
    ck = td.checkpoints[["model", "step", "C", "loss", "score"]]
    est = FLP("score", method="flp", chance=50.0, bootstrap=64, seed=3).fit(runs, ck)
    assert len(est.stage1_.bootstrap) == len(est.stage2_.bootstrap) == 64
    # the resamples of 4 points include constant ones: P = 4 * (1/4)^4 each, 64 draws
    x = runs["C"].to_numpy()
    res = fit_from_closed_form(est.stage1_.law_, {"C": x}, runs["loss"].to_numpy(),
                               np.asarray(est.stage1_.theta))  # fmt: skip
    for seed in range(20):
        bootstrap_closed_form(est.stage1_.law_, {"C": x}, runs["loss"].to_numpy(), res,
                              n_boot=64, seed=seed)  # fmt: skip
        assert len(res.bootstrap) == 64 and np.all(np.isfinite(res.bootstrap))


def test_fp_member_interval_on_four_models(evals):
    """The path that crashed the backtest benchmark: `fp`/`flp` replicates on 4 real models."""
    td = task_data(evals, task="arc_easy", models=LADDER)
    for m in ("flp", "fp"):
        est = DownstreamForecaster(m, bootstrap=40, seed=1).fit_task_data(td)
        lo, hi = est.predict_interval(5e21)
        assert np.isfinite(lo).all() and np.isfinite(hi).all() and 0 <= lo[0] <= hi[0] <= 100


def test_backtest_benchmark_runs_quick(tmp_path):
    warnings.filterwarnings("ignore")
    out = tmp_path / "bt.md"
    argv = ["--quick", "--bootstrap", "3", "--out", str(out)]
    assert _script("downstream_backtest").main(argv) == 0
    text = out.read_text()
    assert "reduced size" in text and "persistence" in text
    assert (tmp_path / "bt.csv").exists()


def test_nested_benchmark_runs_quick(shared_dir, capsys, monkeypatch):
    mod = _script("downstream_nested")
    # every 5th gain_sd of the grid (0, 0.5, ..., 3): the checks below hold for any gain grid
    # (the knobs are read back from the rows; the eval weight's effect is per gain setting)
    full = mod.nested.evaluate
    gains = mod.nested.GAIN_GRID[::5]
    monkeypatch.setattr(mod.nested, "evaluate", lambda cases: full(cases, gains=gains))
    rows, chosen, default, traj, avg = mod.run(8, True, shared_dir / "data/suites/gemstones")
    assert set(rows["split"]) == {"select", "report"}
    assert set(rows["suite"]) == {"pythia-acc", "gemstones"}
    # every interval inside [0, 100]; the knobs come from the select rows only
    assert (rows["lo"] >= 0).all() and (rows["hi"] <= 100).all()
    assert chosen["method"] in rows["method"].unique()
    sel = rows[(rows["split"] == "select") & (rows["method"] == default["method"])]
    knobs = ["spread_weight", "gain_sd", "eval_weight", "centre"]
    cov = sel.groupby(knobs)["covered"].mean()
    key = tuple(default[k] for k in knobs)
    assert np.isclose(cov.loc[key], default["select_coverage"])
    # the eval-noise weight is a real knob: a smaller weight never widens an interval
    hw = sel[sel["centre"] == "none"].groupby("eval_weight")["half_width"].mean()
    assert hw.index.tolist() == [0.25, 0.5, 1.0] and hw.is_monotonic_increasing
    assert hw.iloc[0] < hw.iloc[-1]
    assert len(traj) > len(avg) > 0 and (traj["hi"] <= 100).all()


def test_task_losses_are_the_default_stage1(evals):
    """A task's own bits-per-byte (here: a stand-in column) wins over LAMBADA in `auto`;
    an OLMo-style `<task>_bpb` task too; else LAMBADA."""
    e = evals[evals["model"].isin(LADDER)]
    assert resolve_loss_task(e, "piqa")[0] == "lambada_openai"
    lam = e[(e["task"] == "lambada_openai") & (e["metric"] == "ppl")]
    bpb = lam.assign(task="piqa", metric="bits_per_byte",
                     value=np.log(lam["value"].to_numpy()) / np.log(2) / 4)  # fmt: skip
    own = __import__("pandas").concat([e, bpb], ignore_index=True)
    assert resolve_loss_task(own, "piqa") == ("piqa", list(resolve_loss_task(own, "piqa")[1]))
    td = task_data(own, task="piqa")
    ref = task_data(e, task="piqa", loss_task="lambada_openai")
    # bits per byte is a loss already (not a perplexity): taken as is
    np.testing.assert_allclose(td.checkpoints["loss"], ref.checkpoints["loss"] / np.log(2) / 4)
    est = DownstreamForecaster(bootstrap=10).fit(own, task="piqa")
    assert est.loss_task_ == "piqa"
    olmo = __import__("pandas").concat([e, bpb.assign(task="piqa_bpb", metric="loss")])
    assert task_data(olmo, task="piqa").loss_task == "piqa_bpb"


def test_intervals_bounded_near_the_ceiling(evals):
    """sciq sits near 90 points: a wide interval is clipped at 100, never beyond."""
    td = task_data(evals, task="sciq", models=LADDER)
    est = DownstreamForecaster(bootstrap=30, gain_sd=3.0).fit_task_data(td)
    lo, hi = est.predict_interval(np.array([1e22, 1e24, 1e26]))
    assert (hi <= 100).all() and (lo >= 0).all() and (hi > lo).all()
    reps = est.replicates(np.array([1e26]))  # the far extrapolation reaches the ceiling:
    assert reps.max() == 100.0 and (reps <= 100).all()  # replicates clipped there, not beyond


def test_trajectory_and_task_average(ladder_fits):
    ests = [ladder_fits[t] for t in ("piqa", "arc_easy", "sciq")]
    N = 2.775e9
    D = np.array([3e10, 1e11, 3e11])
    tr = trajectory(ests[0], N, D)
    np.testing.assert_allclose(tr["score"], ests[0].predict(N=np.full(3, N), D=D))
    assert (tr["lo"] <= tr["score"]).all() and (tr["score"] <= tr["hi"]).all()
    assert tr["score"].is_monotonic_increasing  # more tokens, lower loss, higher score
    p, lo, hi = task_average(ests, N=N, D=3e11)
    each = [e.predict(N=N, D=3e11) for e in ests]
    assert np.isclose(p[0], np.mean(each)) and lo[0] < p[0] < hi[0]
    pw, _, _ = task_average(ests, N=N, D=3e11, weights=[1, 0, 0])
    assert np.isclose(pw[0], each[0])


def test_task_average_draws_each_tasks_evaluation_noise_apart(ladder_fits):
    """The average's replicates: shared bootstrap and gain/checkpoint draw, each task's harness
    noise in its own order (independent items), so it averages down over tasks; built by hand
    from the pieces and compared exactly."""
    from lmforecast.downstream import noise as nz

    ests = [ladder_fits[t] for t in ("piqa", "arc_easy", "sciq", "winogrande")]
    C = np.array([2.5e21])  # the 1.4B: near the ladder, where harness noise matters
    z = nz.noise_draws(200, 2)
    ze = [nz.task_noise_draws(200, 2, e.task_) for e in ests]
    # normal scores in a different order per task, and not the shared draw's order
    assert all(np.array_equal(np.sort(x, 0), np.sort(z, 0)) for x in ze)
    assert not np.array_equal(ze[0], z) and not np.array_equal(ze[0], ze[1])
    by_hand = []
    for e, x in zip(ests, ze):
        R, var, spread, point, gain = e.interval_parts(flops=C)
        g = nz.gain_sd_for(e.selected_)
        reps = nz.centred(R, point, nz.CENTRE) + x * np.sqrt(nz.EVAL_WEIGHT * var) + z * g * gain
        by_hand.append(np.clip(reps, 0, 100))
        np.testing.assert_array_equal(e.replicates(flops=C, eval_apart=True), by_hand[-1])
    R = np.mean(by_hand, axis=0)
    p, lo, hi = task_average(ests, flops=C)
    np.testing.assert_allclose([lo[0], hi[0]], np.quantile(R, [0.05, 0.95]))
    # narrower than one draw for every term (one shared draw for all tasks), which
    # counts the four tasks' independent harness noise as if it were one
    shared = np.mean([e.replicates(flops=C) for e in ests], axis=0)
    s_lo, s_hi = np.quantile(shared, [0.05, 0.95])
    assert hi[0] - lo[0] < s_hi - s_lo and lo[0] < p[0] < hi[0]
    # one task alone: the same spread either way (the split leaves a single forecast's total
    # variance unchanged), within the resolution of 200 draws
    w1 = np.ptp(np.quantile(by_hand[0], [0.05, 0.95]))
    w0 = np.ptp(np.quantile(ests[0].replicates(flops=C), [0.05, 0.95]))
    assert abs(w1 / w0 - 1) < 0.25


@pytest.mark.parametrize("bootstrap", [0, 6])
def test_every_method_round_trips_and_predicts(evals, bootstrap):
    """Each method's saved fit on a real 4-model ladder loads back equal and forecasts the
    same (bootstrap 0 included: no interval, still loadable)."""
    from lmforecast.downstream import METHODS

    td = task_data(evals, task="piqa", models=LADDER)
    for m in METHODS:
        est = DownstreamForecaster(m, bootstrap=bootstrap).fit_task_data(td)
        back = DownstreamForecaster.from_json(est.to_json())
        assert back.to_dict() == est.to_dict(), m
        np.testing.assert_array_equal(back.predict(5e21), est.predict(5e21))
        if bootstrap or m == "persistence":
            lo, hi = back.predict_interval(5e21)
            assert 0 <= lo[0] <= hi[0] <= 100, m  # 6 replicates: the point may sit outside


def test_width_signals_benchmark_runs_quick(shared_dir, capsys, monkeypatch):
    _script("downstream_nested")  # its sibling import, as when run from benchmarks/
    mod = _script("downstream_width_signals")
    df = mod.signal_rows(quick=True)
    assert set(df["split"]) == {"select", "report"} and (df["error"] >= 0).all()
    cor = mod.correlations(df)
    assert set(cor["signal"]) == set(mod.SIGNALS)
    assert cor["spearman"].dropna().between(-1, 1).all()
    # `--quick` asks for the same rows (no resampling: deterministic), so main gets these
    asked = []
    monkeypatch.setattr(mod, "signal_rows", lambda quick=False: asked.append(quick) or df)
    assert mod.main(["--quick"]) == 0 and "spearman" in capsys.readouterr().out
    assert asked == [True]


def test_generated_downstream_docs_carry_todays_interval_constants():
    """The committed, generated forecasts and nested tables were made with the package's current
    interval knobs: changing a constant without re-running the scripts fails here."""
    from lmforecast.downstream.noise import constants_line

    want = constants_line()
    for doc in ("downstream_forecasts.md", "downstream_validation.md"):
        assert want in (REPO / "docs" / doc).read_text(), doc


def test_hindsight_bound_picks_the_narrowest_setting_per_coverage():
    """The report-side bound: among settings reaching each report coverage, the smallest
    half-width / MAE; its select coverage is carried beside (rows built with known answers)."""
    import pandas as pd

    from lmforecast.downstream.nested import hindsight_bound

    rows = []
    # gain 0.1: narrow, covers 8 of 10 report rows; gain 0.5: covers all, 3x wider; both MAE 1
    for gain, n_cov, width, sel_cov in ((0.1, 8, 1.0, 6), (0.5, 10, 3.0, 9)):
        for split, k in (("report", n_cov), ("select", sel_cov)):
            for i in range(10):
                rows.append({"method": "ensemble", "split": split, "spread_weight": 0.0,
                             "gain_sd": gain, "eval_weight": 1.0, "centre": "median",
                             "covered": i < k, "half_width": width, "abs_error": 1.0})  # fmt: skip
    rows.append({**rows[0], "method": "trend", "half_width": 0.01, "covered": True})
    b = hindsight_bound(pd.DataFrame(rows), "ensemble", coverages=(0.9, 0.75)).set_index(
        "min_report_coverage"
    )
    assert b.loc[0.9, "gain_sd"] == 0.5 and b.loc[0.9, "report_half_width_over_mae"] == 3.0
    assert b.loc[0.9, "select_coverage"] == 0.9 and b.loc[0.9, "report_coverage"] == 1.0
    assert b.loc[0.75, "gain_sd"] == 0.1 and b.loc[0.75, "report_half_width_over_mae"] == 1.0
    assert b.loc[0.75, "select_coverage"] == 0.6
    # only the wide setting covers every report row
    assert len(hindsight_bound(pd.DataFrame(rows), "ensemble", coverages=(1.0,))) == 1


def test_task_average_of_different_ladders_warns_and_one_ladder_is_quiet(evals, ladder_fits):
    """A Pythia fit averaged with a Gemstones fit says which fits differ: the fits' largest
    fitted models differ, so one warning names them; fits of one ladder: no warning."""
    from lmforecast.errors import DomainWarning

    a, c = ladder_fits["piqa"], ladder_fits["sciq"]
    b = DownstreamForecaster(bootstrap=10).fit(evals, task="arc_easy", models=LADDER[:3])
    with pytest.warns(DomainWarning, match=r"pythia-1b \(piqa\); pythia-410m \(arc_easy\)"):
        task_average([a, b], flops=5e21)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DomainWarning)
        task_average([a, c], flops=5e21)


def test_cli_average_with_a_bootstrap_0_fit_gives_its_point_without_interval(cli, tmp_path):
    """One fit without replicates in an average: the CLI still gives the average line and JSON
    key, with the average's point and no interval."""
    import json

    for task, boot in (("winogrande", "0"), ("piqa", "20")):
        code, _, err = cli("downstream", "fit", "--evals", "pythia", "--task", task,
                           "--bootstrap", boot, "--models", ",".join(LADDER), "--quiet",
                           "--out", tmp_path / f"{task}.json")  # fmt: skip
        assert code == 0, err
    fits = f"{tmp_path / 'winogrande.json'},{tmp_path / 'piqa.json'}"
    code, out, err = cli("downstream", "predict", "--fit", fits, "--params", "2.8e9",
                         "--tokens", "3e11", "--json")  # fmt: skip
    assert code == 0, err
    d = json.loads(out)
    each = [f["performance"] for f in d["forecasts"]]
    (avg,) = d["average"]["forecasts"]
    assert avg["interval"] is None and np.isclose(avg["performance"], np.mean(each))
    code, out, _ = cli("downstream", "predict", "--fit", fits, "--params", "2.8e9",
                       "--tokens", "3e11")  # fmt: skip
    assert code == 0 and "average of 2 tasks" in out and "no interval" in out


def test_flops_in_another_unit_than_params_and_tokens_warns_at_fit(evals):
    """An evals table whose FLOPs are in GFLOPs (params, tokens right) is warned about at fit,
    not only by a later predict's "1.96e+09x outside". The bundled table (6 N D exactly) is
    quiet."""
    from lmforecast.errors import DomainWarning

    g = evals[evals["model"].isin(LADDER)]
    with pytest.warns(DomainWarning, match=r"column 'flops' is 1e-09 x 6 x params x tokens"):
        DownstreamForecaster(bootstrap=4).fit(g.assign(flops=g["flops"] / 1e9), task="piqa")
    with warnings.catch_warnings():
        warnings.simplefilter("error", DomainWarning)
        DownstreamForecaster(bootstrap=4).fit(g, task="piqa")


def test_sigmoid_floor_on_its_bound_is_said_in_the_summary(shared_dir):
    """Gemstones arc_easy's sigmoid floor sits on its upper bound ("floor 35 [35, 35]", chance
    25 + 10): the summary says so, as the supervised fits flag a parameter on its bound."""
    from lmforecast.data.evals import read_evals_table
    from lmforecast.downstream.maps import SigmoidMap

    m = SigmoidMap(25.0)
    assert "upper bound" in m.bound_note([0.5, 2.0, 35.0])
    assert "lower bound" in m.bound_note([0.5, 2.0, 0.0])
    assert (
        m.bound_note([0.5, 2.0, 30.0]) == ""
        and SigmoidMap(25.0, "chance").bound_note([0.5, 2.0]) == ""
    )
    g = read_evals_table(shared_dir / "data/suites/gemstones/evals.csv")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = DownstreamForecaster(bootstrap=10, chance=25).fit(
            g, task="arc_easy", loss_task="fineweb_edu", metric="acc_norm"
        )
    line = next(x for x in est.summary().splitlines() if x.strip().startswith("sigmoid:"))
    assert "floor 35" in line and "floor on its upper bound, chance + 10" in line
