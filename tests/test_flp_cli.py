"""The `lmforecast flp` / `flpm` command contract, including bad input (exit 2, no output)."""

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from lmforecast import examples

EX = examples.path("flp/runs.csv").parent


@pytest.fixture(scope="module")
def flp_fit_file(tmp_path_factory):
    from lmforecast.cli.main import main

    out = tmp_path_factory.mktemp("flp") / "fit.json"
    code = main(
        [
            "flp",
            "fit",
            "--runs",
            str(EX / "runs.csv"),
            "--checkpoints",
            str(EX / "checkpoints.csv"),
            "--task",
            "ARC",
            "--bootstrap",
            "60",
            "--out",
            str(out),
            "--json",
        ]
    )
    assert code == 0
    return out


@pytest.fixture(scope="module")
def flpm_fit_file(tmp_path_factory):
    from lmforecast.cli.main import main

    out = tmp_path_factory.mktemp("flpm") / "fit.json"
    code = main(
        [
            "flpm",
            "fit",
            "--runs",
            str(EX / "mixture_runs.csv"),
            "--checkpoints",
            str(EX / "mixture_checkpoints.csv"),
            "--task",
            "HumanEval",
            "--out",
            str(out),
            "--json",
        ]
    )
    assert code == 0
    return out


def test_flp_fit_json(cli, tmp_path):
    code, out, err = cli(
        "flp",
        "fit",
        "--runs",
        EX / "runs.csv",
        "--checkpoints",
        EX / "checkpoints.csv",
        "--task",
        "ARC",
        "--bootstrap",
        "0",
        "--json",
    )
    assert code == 0, err
    d = json.loads(out)
    assert d["chance"] == 25.0
    assert set(d["stage1"]) == {"C_N", "alpha"} and set(d["stage2"]) == {"w0", "w1"}
    assert d["stage2"]["w1"] < 0 and d["checkpoints"]["kept"] >= 2


def test_flp_predict_contract(cli, flp_fit_file):
    targets = pd.read_csv(EX / "targets.csv")
    C, actual = targets["C"][0], targets["ARC"][0]
    code, out, err = cli(
        "flp", "predict", "--fit", flp_fit_file, "--flops", C, "--actual", actual, "--json"
    )
    assert code == 0, err
    d = json.loads(out)
    assert set(d) == {"loss", "performance", "interval", "level", "relative_error"}
    assert d["level"] == 0.9  # the interval says its level
    lo, hi = d["interval"]
    assert lo < d["performance"] < hi
    assert d["relative_error"] == pytest.approx(abs(d["performance"] - actual) / actual)
    assert d["relative_error"] < 0.05  # 7B from sampling models <= 3B (Fig. 3 band)
    code, out, _ = cli("flp", "predict", "--fit", flp_fit_file, "--flops", C)
    assert code == 0 and "points" in out and "PI" in out


def test_flp_baseline_by_name(cli):
    code, out, err = cli(
        "flp",
        "fit",
        "--runs",
        EX / "runs.csv",
        "--checkpoints",
        EX / "checkpoints.csv",
        "--task",
        "ARC",
        "--method",
        "fp",
        "--bootstrap",
        "0",
        "--json",
    )
    assert code == 0, err
    d = json.loads(out)
    assert d["method"] == "fp" and d["stage1"] is None and d["stage2"]["alpha"] > 0


def test_flpm_predict_and_optimize_contract(cli, flpm_fit_file):
    code, out, err = cli(
        "flpm", "predict", "--fit", flpm_fit_file, "--flops-per-source", "6.7e21,2.9e21", "--json"
    )
    assert code == 0, err
    d = json.loads(out)
    assert set(d["losses"]) == {"math", "code", "scientific", "wikipedia", "general"}
    assert 0 < d["performance"] < 100
    lo, hi = d["interval"]
    assert lo < d["performance"] < hi
    code, out, err = cli(
        "flpm", "optimize-mixture", "--fit", flpm_fit_file, "--flops", "9.76e20", "--json"
    )
    assert code == 0, err
    d = json.loads(out)
    assert set(d) == {"best_ratio", "performance", "curve", "at_scan_edge", "interval",
                      "best_ratio_interval", "level", "interval_basis"}  # fmt: skip
    assert len(d["curve"]) == 51 and d["curve"][0][0] == 0.0 and d["curve"][-1][0] == 0.5
    assert d["performance"] == max(p for _, p in d["curve"])
    lo, hi = d["interval"]
    assert lo < d["performance"] < hi and d["level"] == 0.9
    rlo, rhi = d["best_ratio_interval"]
    assert 0.0 <= rlo <= rhi <= 0.5
    code, out, _ = cli(
        "flpm",
        "optimize-mixture",
        "--fit",
        flpm_fit_file,
        "--flops",
        "1e21",
        "--ratios",
        "0:0.3:0.1",
        "--json",
    )
    assert [r for r, _ in json.loads(out)["curve"]] == [0.0, 0.1, 0.2, 0.3]


def test_flpm_ratio_table_equivalent(cli, tmp_path):
    code, out, err = cli(
        "flpm",
        "fit",
        "--runs",
        EX / "mixture_runs_ratio.csv",
        "--checkpoints",
        EX / "mixture_checkpoints.csv",
        "--task",
        "HumanEval",
        "--mapper",
        "average",
        "--json",
    )
    assert code == 0, err
    d = json.loads(out)
    assert d["sources"] == ["general", "code"]
    ident = d["stage1_identified"]["code"]
    assert set(ident) == {"alpha_C", "alpha_general", "alpha_code", "log_intercept"}
    assert ident["alpha_C"] < 0  # more compute, lower code loss


# ---- bad input ---------------------------------------------------------------------------


def _write(tmp_path, name, df):
    p = tmp_path / name
    df.to_csv(p, index=False)
    return p


def _bad(cli, tmp_path, *argv):
    out = tmp_path / "fit.json"
    code, stdout, err = cli(*argv, "--out", out)
    assert code == 2
    assert err.startswith("lmforecast: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    assert not out.exists()
    return err


def test_checkpoint_without_final_model(cli, tmp_path):
    ck = pd.read_csv(EX / "checkpoints.csv")
    ck.loc[3, "model"] = "ghost"
    p = _write(tmp_path, "ck.csv", ck)
    err = _bad(
        cli, tmp_path, "flp", "fit", "--runs", EX / "runs.csv", "--checkpoints", p, "--task", "ARC"
    )
    assert "row 4: model 'ghost' has no final model" in err


def test_no_emerged_checkpoint_says_how_many_dropped(cli, tmp_path):
    err = _bad(
        cli,
        tmp_path,
        "flp",
        "fit",
        "--runs",
        EX / "runs.csv",
        "--checkpoints",
        EX / "checkpoints.csv",
        "--task",
        "ARC",
        "--threshold",
        "60",
    )
    assert "0 checkpoint(s) usable of 120" in err and "not emerged" not in err
    assert "dropped: score below random 25 + 60" in err


def test_fraction_scores_and_unknown_task(cli, tmp_path):
    from lmforecast.flp import FLP

    ck = pd.read_csv(EX / "checkpoints.csv")
    ck["ARC"] = ck["ARC"] / 100
    p = _write(tmp_path, "ck.csv", ck)
    fits = {}
    for name, table in (("points", EX / "checkpoints.csv"), ("fraction", p)):
        out = tmp_path / f"{name}.json"
        argv = ("flp", "fit", "--runs", EX / "runs.csv", "--checkpoints", table, "--task", "ARC")
        code, _, err = cli(*argv, "--bootstrap", "40", "--out", out, "--json")
        assert code == 0, err
        fits[name] = FLP.load(out)
    C = [1e21, 1e22, 1e23]
    a, b = fits["points"], fits["fraction"]
    np.testing.assert_allclose(b.predict(C), a.predict(C), rtol=1e-9)
    for x, y in zip(b.predict_interval(C), a.predict_interval(C)):
        np.testing.assert_allclose(x, y, rtol=1e-9)
    assert b.filter_.counts() == a.filter_.counts()
    ck = pd.read_csv(EX / "checkpoints.csv").rename(columns={"ARC": "MMLU"})
    p = _write(tmp_path, "ck2.csv", ck)
    err = _bad(
        cli, tmp_path, "flp", "fit", "--runs", EX / "runs.csv", "--checkpoints", p, "--task", "MMLU"
    )
    assert "unknown task 'MMLU'" in err and "--chance" in err
    code, _, err = cli(
        "flp",
        "fit",
        "--runs",
        EX / "runs.csv",
        "--checkpoints",
        p,
        "--task",
        "MMLU",
        "--chance",
        "25",
        "--bootstrap",
        "0",
        "--json",
    )
    assert code == 0, err


def test_nonpositive_flops_and_losses(cli, tmp_path):
    runs = pd.read_csv(EX / "runs.csv")
    runs.loc[2, "C"] = -1.0
    p = _write(tmp_path, "runs.csv", runs)
    err = _bad(
        cli,
        tmp_path,
        "flp",
        "fit",
        "--runs",
        p,
        "--checkpoints",
        EX / "checkpoints.csv",
        "--task",
        "ARC",
    )
    assert "column 'C' row 3: value -1 must be > 0" in err
    runs = pd.read_csv(EX / "runs.csv")
    runs.loc[0, "loss"] = 0.0
    p = _write(tmp_path, "runs2.csv", runs)
    err = _bad(
        cli,
        tmp_path,
        "flp",
        "fit",
        "--runs",
        p,
        "--checkpoints",
        EX / "checkpoints.csv",
        "--task",
        "ARC",
    )
    assert "column 'loss' row 1" in err


def test_mixing_ratios_not_summing_to_one(cli, tmp_path):
    runs = pd.read_csv(EX / "mixture_runs_ratio.csv")
    runs = runs.rename(columns={"ratio": "ratio_code"})
    runs.insert(1, "ratio_general", 1 - runs["ratio_code"])
    runs.loc[5, "ratio_general"] = 0.2
    p = _write(tmp_path, "runs.csv", runs)
    err = _bad(
        cli,
        tmp_path,
        "flpm",
        "fit",
        "--runs",
        p,
        "--checkpoints",
        EX / "mixture_checkpoints.csv",
        "--task",
        "HumanEval",
    )
    assert "row 6: mixing ratios" in err and "not 1" in err


def test_predict_bad_inputs(cli, tmp_path, flpm_fit_file, flp_fit_file):
    code, _, err = cli("flp", "predict", "--fit", tmp_path / "none.json", "--flops", "1e22")
    assert code == 2 and "no such file" in err
    code, _, err = cli("flp", "predict", "--fit", flp_fit_file, "--flops", "-3")
    assert code == 2 and "--flops" in err
    code, _, err = cli("flp", "predict", "--fit", flpm_fit_file, "--flops", "1e22")
    assert code == 2 and "holds a FLPM fit, not a FLP: load it with lmforecast.load" in err
    code, _, err = cli("flpm", "predict", "--fit", flpm_fit_file, "--flops-per-source", "1e21")
    assert code == 2 and "need FLOPs for 2 sources" in err
    code, _, err = cli("flpm", "predict", "--fit", flpm_fit_file, "--flops-per-source", "1e21,x")
    assert code == 2 and "'x' is not a number" in err
    code, _, err = cli(
        "flpm", "optimize-mixture", "--fit", flpm_fit_file, "--flops", "1e21", "--ratios", "0:0.5"
    )
    assert code == 2 and "START:STOP:STEP" in err


def test_unwritable_out_fails_before_work(cli, tmp_path):
    code, _, err = cli(
        "flp",
        "fit",
        "--runs",
        EX / "runs.csv",
        "--task",
        "ARC",
        "--out",
        tmp_path / "missing" / "fit.json",
    )
    assert code == 2 and "does not exist" in err


def test_forecast_below_emergence_warns_and_runs_only_mode(cli, tmp_path):
    out = tmp_path / "fit.json"
    code, _, err = cli(
        "flp",
        "fit",
        "--runs",
        EX / "runs.csv",
        "--task",
        "ARC",
        "--threshold",
        "1",
        "--bootstrap",
        "0",
        "--out",
        out,
    )
    assert code == 0, err  # RUNS rows double as checkpoints when --checkpoints is omitted
    code, out_, err = cli("flp", "predict", "--fit", out, "--flops", "1e18", "--json")
    assert code == 0
    assert err.startswith("lmforecast: warning: ") and "non-emergent phase" in err
    assert json.loads(out_)["interval"] is None


def test_ratio_scan_never_passes_stop(cli, flpm_fit_file):
    # 0:0.5:0.3 scanned 0, 0.3 and 0.6 (and reported 0.6 as the best share)
    for spec, want in (("0:0.5:0.3", [0.0, 0.3]), ("0:1:0.3", [0.0, 0.3, 0.6, 0.9])):
        code, out, err = cli("flpm", "optimize-mixture", "--fit", flpm_fit_file, "--flops",
                             "9.76e20", "--ratios", spec, "--json")  # fmt: skip
        assert code == 0, err
        assert [r for r, _ in json.loads(out)["curve"]] == want


def test_checkpoint_order_comes_from_step_or_compute_never_the_file_order(tmp_path):
    from lmforecast.flp import FLP

    runs = pd.read_csv(EX / "runs.csv")
    ck = pd.read_csv(EX / "checkpoints.csv")
    ref = FLP("ARC", bootstrap=0).fit(runs, ck)
    shuffled = ck.drop(columns="step").sample(frac=1, random_state=0)
    est = FLP("ARC", bootstrap=0).fit(runs, shuffled)  # ordered by C: the same checkpoints
    assert est.n_points_ == ref.n_points_ == 11
    assert est.predict([5e22])[0] == pytest.approx(ref.predict([5e22])[0], rel=1e-9)
    from lmforecast.errors import InputError

    with pytest.raises(InputError, match="'step'"):
        FLP("ARC", bootstrap=0).fit(runs, shuffled.drop(columns="C").assign(D=1e9))


def test_stage1_flag_is_refused_with_runs_whatever_its_value(cli):
    for law in ("power", "saturating"):  # saturating (the default's name) was silently ignored
        code, _, err = cli("flp", "fit", "--runs", EX / "runs.csv", "--checkpoints",
                           EX / "checkpoints.csv", "--task", "ARC", "--stage1", law)  # fmt: skip
        assert code == 2 and "--stage1" in err and "--evals" in err


def test_an_interval_does_not_depend_on_the_other_points_asked_for():
    from lmforecast.flp import FLP, FLPM

    runs, ck = pd.read_csv(EX / "runs.csv"), pd.read_csv(EX / "checkpoints.csv")
    est = FLP("ARC", bootstrap=40).fit(runs, ck)
    one = np.array(est.predict_interval([1e21]))[:, 0]
    two = np.array(est.predict_interval([1e21, 5e22]))[:, 0]
    rev = np.array(est.predict_interval([5e22, 1e21]))[:, 1]
    # the same to rounding (they differed by ~0.3 points when the noise followed the shape)
    assert np.allclose(one, two, rtol=1e-12) and np.allclose(one, rev, rtol=1e-12)
    m = FLPM("HumanEval", bootstrap=20, steps=300).fit(
        pd.read_csv(EX / "mixture_runs.csv"), pd.read_csv(EX / "mixture_checkpoints.csv")
    )
    F = np.array([[6.7e21, 2.9e21], [1e21, 1e21]])
    a = np.array(m.predict_interval(F[:1]))[:, 0]
    b = np.array(m.predict_interval(F))[:, 0]
    assert np.allclose(a, b, rtol=1e-12)


def test_flpm_forecast_lies_inside_its_own_interval_across_a_scan():
    # each bootstrap network is one seeded start, the main one the best of five: uncentred, the
    # ensemble missed its own forecast on 30 of 99 scanned points (the 3B-r0.00 target: 44.8 vs
    # [45.0, 50.4])
    from lmforecast.flp import FLPM

    m = FLPM("HumanEval", steps=600, bootstrap=30).fit(
        pd.read_csv(EX / "mixture_runs.csv"), pd.read_csv(EX / "mixture_checkpoints.csv")
    )
    C, r = np.meshgrid(np.logspace(20, 23, 7), np.linspace(0, 0.5, 6))
    F = np.column_stack([(C * (1 - r)).ravel(), (C * r).ravel()])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = m.predict(F)
        lo, hi = m.predict_interval(F)
    assert np.all((lo - 1e-9 <= p) & (p <= hi + 1e-9))
    assert np.median(hi - lo) > 0.5  # and not by collapsing the interval


def test_flpm_predict_warns_outside_the_sampled_shares(cli, flpm_fit_file):
    # 90% code; the sampling models had 0-50%
    code, _, err = cli("flpm", "predict", "--fit", flpm_fit_file, "--flops-per-source",
                       "1e21,9e21")  # fmt: skip
    assert code == 0 and "leaves the sampling models' shares" in err and "code 0.9 " in err
    code, _, err = cli("flpm", "predict", "--fit", flpm_fit_file, "--flops-per-source",
                       "6.7e21,2.9e21")  # fmt: skip
    assert code == 0 and "shares" not in err


def test_flp_predict_actual_given_as_a_fraction_is_named(cli, flp_fit_file):
    code, out, err = cli("flp", "predict", "--fit", flp_fit_file, "--flops", "5.09208e22",
                         "--actual", "0.45", "--json")  # fmt: skip
    assert code == 0 and "a fraction? (give 45)" in err


def test_a_final_model_listed_twice_is_refused_and_nan_flops_too():
    from lmforecast.errors import InputError
    from lmforecast.flp import FLP, FLPM

    runs, ck = pd.read_csv(EX / "runs.csv"), pd.read_csv(EX / "checkpoints.csv")
    with pytest.raises(InputError, match="row 13 duplicates row 1"):  # weighed double before
        FLP("ARC", bootstrap=0).fit(pd.concat([runs, runs.iloc[:1]]), ck)
    mix = pd.read_csv(EX / "mixture_runs.csv")
    with pytest.raises(InputError, match="duplicates row 1"):
        FLPM("HumanEval", bootstrap=0, steps=50).fit(
            pd.concat([mix, mix.iloc[:1]]), pd.read_csv(EX / "mixture_checkpoints.csv")
        )
    est = FLP("ARC", bootstrap=0).fit(runs, ck)
    with pytest.raises(InputError, match="got nan"):
        est.predict([float("nan")])  # forecast nan before


def test_a_domain_only_the_checkpoints_have_is_named():
    from lmforecast.errors import DomainWarning
    from lmforecast.flp import FLPM

    runs = pd.read_csv(EX / "mixture_runs.csv").drop(columns="loss_math")
    ck = pd.read_csv(EX / "mixture_checkpoints.csv")
    with pytest.warns(DomainWarning, match="'loss_math' are not in runs: FLP-M uses the 4"):
        m = FLPM("HumanEval", bootstrap=0, steps=50).fit(runs, ck)  # dropped silently before
    assert "math" not in m.domains_ and len(m.domains_) == 4


def test_a_missing_target_task_lists_the_users_columns_only(cli):
    code, _, err = cli("flpm", "compare", "--runs", EX / "mixture_runs.csv", "--checkpoints",
                       EX / "mixture_checkpoints.csv", "--targets", EX / "mixture_targets.csv",
                       "--task", "HumanEval,ARC")  # fmt: skip
    line = next(ln for ln in err.splitlines() if "error:" in ln)
    assert code == 2 and "no score column for task 'ARC'" in line
    assert "'HumanEval'" in line and "'C'," not in line and "'loss'" not in line  # added inside


def test_one_final_run_is_one_line_without_a_numpy_warning(cli, tmp_path):
    runs = pd.read_csv(EX / "runs.csv").tail(1)
    ck = pd.read_csv(EX / "checkpoints.csv")
    runs.to_csv(tmp_path / "r.csv", index=False)
    ck[ck["model"].isin(runs["model"])].to_csv(tmp_path / "c.csv", index=False)
    code, _, err = cli("flp", "fit", "--runs", tmp_path / "r.csv", "--checkpoints",
                       tmp_path / "c.csv", "--task", "ARC")  # fmt: skip
    assert code == 2 and "1 usable row(s)" in err
    assert "Polyfit" not in err and len(err.strip().splitlines()) == 1


def test_one_table_as_runs_and_checkpoints_is_not_a_duplicate():
    from lmforecast.flp import FLP

    ck = pd.read_csv(EX / "checkpoints.csv")  # many rows per model: checkpoints, not duplicates
    assert np.isfinite(FLP("ARC", method="fp", bootstrap=0).fit(ck).predict([1e23])[0])


def test_a_total_c_that_disagrees_with_the_per_source_flops_is_named():
    from lmforecast.errors import DomainWarning
    from lmforecast.flp.tables import source_flops

    runs = pd.read_csv(EX / "mixture_runs.csv")
    bad = runs.assign(C=3 * (runs["C_general"] + runs["C_code"]))  # ignored silently before
    with pytest.warns(DomainWarning, match="row 1: column 'C'.*disagrees with C_general, C_code"):
        source_flops(bad)
    share = runs["C_code"] / (runs["C_general"] + runs["C_code"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        source_flops(runs.assign(C=runs["C_general"] + runs["C_code"], ratio=share))


def test_score_unit_flag_is_honoured(cli, tmp_path):
    """--score-unit fraction on a points table: one line naming table, column, row and value."""
    base = ("--runs", EX / "runs.csv", "--checkpoints", EX / "checkpoints.csv", "--task", "ARC")
    err = _bad(cli, tmp_path, "flp", "fit", *base, "--score-unit", "fraction")
    ck = pd.read_csv(EX / "checkpoints.csv")
    i = int(ck["ARC"].to_numpy().argmax())
    assert f"checkpoints: column 'ARC' row {i + 1}: value {ck['ARC'][i]:g} is outside [0, 1]" in err
    code, _, err = cli("flp", "fit", *base, "--score-unit", "points", "--bootstrap", "0", "--json")
    assert code == 0, err
    mix = ("--runs", EX / "mixture_runs.csv", "--checkpoints", EX / "mixture_checkpoints.csv")
    err = _bad(
        cli, tmp_path, "flpm", "fit", *mix, "--task", "HumanEval", "--score-unit", "fraction"
    )
    assert "checkpoints: column 'HumanEval' row" in err and "outside [0, 1]" in err
    study = (*mix, "--targets", EX / "mixture_targets.csv", "--task", "HumanEval")
    code, out, err = cli("flpm", "compare", *study, "--score-unit", "fraction")
    errors = [line for line in err.splitlines() if line.startswith("lmforecast: error: ")]
    assert code == 2 and out == "" and len(errors) == 1 and "Traceback" not in err
    assert "targets: column 'HumanEval' row" in errors[0] and "outside [0, 1]" in errors[0]
    evals = ("--evals", "pythia", "--task", "piqa")
    err = _bad(cli, tmp_path, "flp", "fit", *evals, "--score-unit", "points")
    assert "--score-unit applies to --runs/--checkpoints fits" in err
