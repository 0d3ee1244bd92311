"""What the distillation verbs warn about (docs/distill.md, "What the distillation verbs warn
about"): range and units warnings in predict/plan/choose-teacher for presets and fits, no
zero-width intervals, verdicts the interval leaves open, fit statuses without a bootstrap,
suspicious runs, choose-teacher's teacher below E, and how the output reads."""

from __future__ import annotations

import copy
import json
import warnings

import numpy as np
import pandas as pd
import pytest

from lmforecast.distill import DistillationScalingLaw, simulate_distillation_runs
from lmforecast.errors import DomainWarning, InputError

P = ["distill", "predict"]
SMALL_GRID = {
    "log_A'": [7.7], "log_B'": [10.1], "alpha'": [0.32], "beta'": [0.64], "gamma'": [0.76],
    "c0": [2.5], "c1": [522.6], "f1": [0.09], "log_d1": [0.27],
}  # fmt: skip


def warnings_of(err: str) -> list[str]:
    return [ln for ln in err.splitlines() if ln.startswith("lmforecast: warning:")]


@pytest.fixture(scope="module")
def preset():
    return DistillationScalingLaw.from_preset()


@pytest.fixture(scope="module")
def runs():
    return simulate_distillation_runs(n_runs=60, seed=4)


@pytest.fixture(scope="module")
def fitted(runs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return DistillationScalingLaw("busbridge2025", grid=SMALL_GRID, bootstrap=0).fit(runs)


@pytest.fixture
def fit_json(fitted, tmp_path):
    p = tmp_path / "fit.json"
    p.write_text(fitted.to_json())
    return p


# ---- 1. outside the fitted/published range, and units -------------------------------------
def test_predict_warns_outside_the_papers_runs_one_line_per_problem(cli):
    code, out, err = cli(*P, "--student-params", 1e9, "--student-tokens", 1e6,
                         "--teacher-loss", 2.0)  # fmt: skip
    w = warnings_of(err)
    assert code == 0 and len(w) == 1, err
    assert "--student-tokens = 1e+06" in w[0] and "paper's runs" in w[0]
    assert "extrapolates Eq. 8" in w[0]
    code, out, err = cli(*P, "--student-params", 1e11, "--student-tokens", 1e8,
                         "--teacher-loss", 2.0)  # fmt: skip
    w = warnings_of(err)
    assert len(w) == 2 and "--student-params = 1e+11" in w[0] and "--student-tokens" in w[1]


def test_predict_inside_the_papers_runs_says_nothing(cli):
    code, _, err = cli(*P, "--student-params", 1e9, "--student-tokens", 2e10, "--teacher-loss", 2.2)
    assert code == 0 and warnings_of(err) == [], err


def test_predict_units_mistake_names_the_flag(cli):
    code, _, err = cli(*P, "--student-params", 1, "--student-tokens", 20, "--teacher-loss", 2.0)
    w = warnings_of(err)
    assert code == 0
    assert any("--student-params 1 is below 10000 parameters" in x for x in w), err
    code, _, err = cli(*P, "--student-params", 1e9, "--student-tokens", 20, "--teacher-loss", 2.0)
    assert any("--student-tokens 20 is fewer than 0.001 tokens per parameter" in x
               for x in warnings_of(err)), err  # fmt: skip


def test_a_fit_keeps_its_runs_ranges_and_forecasts_check_them(cli, fitted, runs, fit_json):
    r = fitted.result_.meta["ranges"]
    assert r["N_S"] == [runs.N_S.min(), runs.N_S.max()]
    assert r["L_T"] == [runs.L_T.min(), runs.L_T.max()]
    assert r["D_S/N_S"][1] == pytest.approx((runs.D_S / runs.N_S).max())
    assert r["N"][1] >= runs.N_T.max()  # the table's N_T column counts as model sizes
    loaded = DistillationScalingLaw.load(fit_json)
    assert loaded.result_.meta["ranges"] == r
    base = [*P, "--coefficients", fit_json, "--student-params", 1e9]
    code, _, err = cli(*base, "--student-tokens", 2e10, "--teacher-loss", 2.3)
    assert code == 0 and warnings_of(err) == [], err
    # a teacher stronger than any fitted run's
    code, _, err = cli(*base, "--student-tokens", 2e10, "--teacher-loss", 1.5)
    w = warnings_of(err)
    assert len(w) == 1 and "--teacher-loss = 1.5" in w[0] and "fitted runs" in w[0], err
    # N_S and D_S inside their ranges, D_S/N_S not (1e9 on 3e12 tokens: 3000 per parameter)
    lo, hi = r["D_S"]
    code, _, err = cli(*P, "--coefficients", fit_json, "--student-params", r["N_S"][0],
                       "--student-tokens", hi, "--teacher-loss", 2.3)  # fmt: skip
    assert any("D_S/N_S" in x for x in warnings_of(err)), err


def test_plan_with_a_fit_warns_about_teacher_and_tokens(cli, fit_json):
    code, _, err = cli("distill", "plan", "--coefficients", fit_json, "--student-params", 1e11,
                       "--flops", 1e26)  # fmt: skip
    w = " | ".join(warnings_of(err))
    assert code == 0
    for what in ("N_S = 1e+11", "D_S* =", "L_T* =", "N_T* ="):
        assert what in w, (what, err)
    assert len(warnings_of(err)) == len(set(warnings_of(err)))


def test_a_saved_fit_without_ranges_is_refused_naming_the_field(cli, fit_json, tmp_path):
    d = json.loads(fit_json.read_text())
    del d["meta"]["ranges"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(d))
    with pytest.raises(InputError, match="field 'meta.ranges': is missing") as ei:
        DistillationScalingLaw.load(bad)
    assert "\n" not in str(ei.value)
    code, out, err = cli(*P, "--coefficients", bad, "--student-params", 1e9, "--student-tokens",
                         2e10, "--teacher-loss", 1.5)  # fmt: skip
    assert code == 2 and out == "" and "'meta.ranges': is missing" in err


def test_a_saved_preset_needs_no_ranges(tmp_path):
    p = DistillationScalingLaw.from_preset()
    assert "ranges" not in p.result_.meta
    p.save(tmp_path / "preset.json")
    back = DistillationScalingLaw.load(tmp_path / "preset.json")
    assert back.to_json() == p.to_json()


def test_a_hand_edited_range_is_refused_on_load(fit_json):
    d = json.loads(fit_json.read_text())
    d["meta"]["ranges"]["N_S"] = [5.0, 1.0]
    fit_json.write_text(json.dumps(d))
    with pytest.raises(InputError, match="meta.ranges.N_S"):
        DistillationScalingLaw.load(fit_json)


def test_choose_teacher_warns_once_for_teachers_outside_the_range(cli, tmp_path):
    t = tmp_path / "t.csv"
    t.write_text("N_T,D_T\n3e10,6e11\n5e10,1e12\n3e9,6e10\n")
    code, _, err = cli("distill", "choose-teacher", "--student-params", 1e9, "--student-tokens",
                       2e10, "--teachers", t)  # fmt: skip
    w = [x for x in warnings_of(err) if "teacher N_T" in x]
    assert code == 0 and len(w) == 1 and "(2 of 3 values)" in w[0], err


# ---- 2. no zero-width interval ---------------------------------------------------------------
def test_weak_teacher_gives_no_zero_width_interval(cli, preset):
    # a measured teacher loss past the capacity-gap break: every draw gives L_S = L_T
    L_T = float(preset.teacher_loss(1e8, 2e9))
    args = [*P, "--student-params", 7e9, "--student-tokens", 2e10, "--teacher-loss", repr(L_T)]
    code, out, _ = cli(*args)
    assert code == 0 and "interval 3.0063 to 3.0063" not in out
    assert "no interval: Eq. 8 puts L_S at the teacher's loss" in out
    code, out, _ = cli(*args, "--json")
    d = json.loads(out)
    assert d["interval"] is None and "capacity-gap break" in d["interval_note"]
    # the same teacher given by size and tokens: its loss is a forecast of the supervised law,
    # drawn from that law's interval, so L_S = L_T gets the teacher's own (non-zero) width
    by_size = [*P, "--student-params", 7e9, "--student-tokens", 2e10, "--teacher-params", 1e8,
               "--teacher-tokens", 2e9, "--json"]  # fmt: skip
    d = json.loads(cli(*by_size)[1])
    lo, hi = d["interval"]
    assert lo < d["student_loss"] < hi and hi - lo > 0.02 * d["student_loss"]
    assert "teacher loss L_T drawn from the supervised law" in d["interval_basis"]


def test_choose_teacher_marks_pinned_intervals(cli, preset, tmp_path):
    from lmforecast.distill.planning import choose_teacher

    t = pd.DataFrame({"N_T": [1e8, 2e8, 7e9], "D_T": [2e9, 4e9, 1.4e11]})
    # forecast teacher losses carry the supervised law's uncertainty: no pinned interval
    assert not choose_teacher(preset, t, 7e9, D_S=2e10)["interval_pinned"].any()
    t["L_T"] = preset.teacher_loss(t["N_T"].to_numpy(), t["D_T"].to_numpy())  # measured
    r = choose_teacher(preset, t, 7e9, D_S=2e10)
    pinned = r.set_index("N_T")["interval_pinned"]
    assert pinned[1e8] and pinned[2e8] and not pinned[7e9]
    p = tmp_path / "t.csv"
    t.iloc[:2].to_csv(p, index=False, float_format="%.17g")
    code, out, _ = cli("distill", "choose-teacher", "--student-params", 7e9, "--student-tokens",
                       2e10, "--teachers", p)  # fmt: skip
    assert code == 0 and "-: no interval" in out
    code, out, _ = cli("distill", "choose-teacher", "--student-params", 7e9, "--student-tokens",
                       2e10, "--teachers", p, "--json")  # fmt: skip
    assert json.loads(out)["interval"] is None


@pytest.fixture(scope="module")
def plan_interval_cache():
    return {}


@pytest.fixture
def plan_interval_once(monkeypatch, plan_interval_cache):
    """`distill plan` with its `plan_interval` computed once per (law, N_S, C, scenario, level)
    in this module: a plan line run as text and again as --json (and the library call of the
    same plan) get the same deterministic intervals (fixed draws and teacher scores), so only
    the first call runs the draws; every answer still goes through the CLI's own code."""
    from lmforecast.distill import plan_intervals, student_answers

    def once(model, N_S, C, scenario="best-case", level=0.9):
        name = getattr(scenario, "name", scenario)
        key = (model.to_json(), float(N_S), float(C), name, float(level))
        if key not in plan_interval_cache:
            plan_interval_cache[key] = plan_intervals.plan_interval(model, N_S, C, scenario, level)
        return copy.deepcopy(plan_interval_cache[key])

    monkeypatch.setattr(student_answers, "plan_interval", once)
    return once


# ---- 4. verdicts the interval leaves open ------------------------------------------------
@pytest.mark.usefixtures("plan_interval_once")
def test_plan_too_close_to_call(cli):
    code, out, _ = cli("distill", "plan", "--student-params", 1e9, "--flops", 1e22)
    assert code == 0 and "-> distill" not in out
    assert "too close to call at the 90% level (supervised 2.1348 inside the interval)" in out
    code, out, _ = cli("distill", "plan", "--student-params", 1e9, "--flops", 1e22, "--json")
    assert json.loads(out)["verdict"] == "too close to call"


def test_clear_verdicts_stay(cli):
    code, out, _ = cli(*P, "--student-params", 1e9, "--student-tokens", 2e10, "--teacher-loss", 2.0)
    assert "distillation helps" in out
    code, out, _ = cli(*P, "--student-params", 1e9, "--student-tokens", 2e10, "--teacher-loss",
                       2.0, "--json")  # fmt: skip
    assert json.loads(out)["verdict"] == "distill"


def test_verdict_function_and_plan_field(preset, plan_interval_once):
    from lmforecast.distill.checks import verdict
    from lmforecast.distill.planning import plan_distillation

    assert verdict(2.0, 2.1) == "distill" and verdict(2.2, 2.1) == "train supervised"
    assert verdict(2.0, 2.1, 1.9, 2.2) == "too close to call"
    assert verdict(2.0, 2.1, 1.95, 2.05) == "distill"
    assert list(verdict([2.0, np.nan], [2.1, 2.1])) == ["distill", None]
    p = plan_distillation(preset, 1e9, 1e22)
    assert p.verdict == "distill"  # the point values alone
    p.student_loss_lo, p.student_loss_hi = plan_interval_once(preset, 1e9, 1e22)["student_loss"]
    assert p.verdict == "too close to call"


# ---- 5. fit statuses -------------------------------------------------------------------------
def test_no_bootstrap_means_unknown_status_never_blank(fitted):
    tab = fitted.coefficient_table()
    assert (tab["status"] != "").all()
    assert not (tab["status"] == "identified").any()
    assert tab.loc["c0", "status"] == "unknown (no bootstrap)"
    assert tab.loc["gamma' log A'", "status"] == "unknown (no bootstrap)"


@pytest.fixture(scope="module")
def boot3(runs):
    """A fit with 3 resamples (its intervals are edited by hand below, so their size does not
    matter), shared: each test edits a deep copy."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return DistillationScalingLaw("busbridge2025", grid=SMALL_GRID, fixed={"c1": 522.6},
                                      bootstrap=3, n_jobs=1).fit(runs)  # fmt: skip


def test_estimate_outside_its_own_interval_is_marked(boot3):
    m = copy.deepcopy(boot3)
    tab = m.coefficient_table()
    assert (tab["status"] != "").all()  # combinations included
    c0 = m.params_["c0"]
    m.result_.ci["c0"] = [c0 + 1.0, c0 + 2.0]
    tab = m.coefficient_table()
    assert tab.loc["c0", "outside_interval"] and not tab.loc["d1", "outside_interval"]
    text = m.coefficient_text()
    c0_line = next(ln for ln in text.splitlines() if ln.startswith("c0 "))
    assert c0_line.endswith(" *")
    foot = text.splitlines()[-1]
    assert foot.startswith("* estimate outside its own bootstrap interval (") and "c0" in foot


# ---- 6. suspicious runs ---------------------------------------------------------------------
def test_bad_runs_warn_naming_the_row(runs):
    bad = runs.reset_index(drop=True).copy()
    bad.loc[4, "L_S"] = 1.0  # below E = 1.22
    bad.loc[7, "L_S"] = bad.loc[7, "L_T"] - 0.3
    with pytest.warns(DomainWarning) as rec:
        DistillationScalingLaw("busbridge2025", grid=SMALL_GRID, bootstrap=0).fit(bad)
    msgs = [str(w.message) for w in rec]
    assert any("row 5" in m and "irreducible loss E" in m for m in msgs), msgs
    assert any("row 5" in m and "below its teacher" in m and "(2 rows)" in m for m in msgs), msgs
    units = runs.assign(N_S=runs.N_S / 1e9)
    with pytest.warns(DomainWarning, match="'N_S' row 1: .* below 10000 parameters"):
        DistillationScalingLaw("busbridge2025", grid=SMALL_GRID, bootstrap=0).fit(units)


def test_student_slightly_below_teacher_is_not_flagged(runs):
    ok = runs.copy()
    ok.loc[ok.index[0], "L_S"] = ok.loc[ok.index[0], "L_T"] - 0.05  # weak-to-strong, E.7
    with warnings.catch_warnings():
        warnings.simplefilter("error", DomainWarning)
        DistillationScalingLaw("busbridge2025", grid=SMALL_GRID, bootstrap=0).fit(ok)


def test_student_loss_column_equal_to_teacher_loss_column_is_refused(runs):
    with pytest.raises(InputError, match="--ls-col 'L_T' is the same column as --lt-col"):
        DistillationScalingLaw("busbridge2025").fit(runs, ls_col="L_T")


# ---- 7, 8. choose-teacher -------------------------------------------------------------------
def test_choose_teacher_refuses_a_teacher_below_E(cli, preset, tmp_path):
    from lmforecast.distill.planning import choose_teacher

    with pytest.raises(InputError, match="row 2: 1 is at or below the irreducible loss E"):
        choose_teacher(preset, pd.DataFrame({"L_T": [2.2, 1.0]}), 1e9, D_S=2e10)
    p = tmp_path / "t.csv"
    p.write_text("L_T\n2.2\n1.0\n")
    code, out, err = cli("distill", "choose-teacher", "--student-params", 1e9, "--student-tokens",
                         2e10, "--teachers", p)  # fmt: skip
    assert code == 2 and out == "" and "row 2" in err and "Eq. 8 needs L_T > E" in err


def test_choose_teacher_token_mode_says_no_teacher_beats_supervised(cli, tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("N_T,D_T\n1e8,2e9\n2e8,4e9\n")
    code, _, err = cli("distill", "choose-teacher", "--student-params", 7e9, "--student-tokens",
                       2e10, "--teachers", p)  # fmt: skip
    assert code == 0 and "no teacher beats training the student supervised on the same" in err


# ---- 3. how the teacher loss from size and tokens enters the interval ---------------------
def test_basis_says_how_the_teacher_loss_enters(cli):
    # since the teacher's uncertainty is propagated (tests/test_distill_teacher_uncertainty.py)
    # a teacher given by size and tokens is drawn, and the basis says so with its sd
    args = [*P, "--student-params", 1e9, "--student-tokens", 2e10, "--json"]
    by_size = json.loads(cli(*args, "--teacher-params", 7e9, "--teacher-tokens", 1.4e11)[1])
    by_loss = json.loads(cli(*args, "--teacher-loss", 2.0)[1])
    assert (
        "teacher loss L_T drawn from the supervised law's 90% prediction interval"
        in (by_size["interval_basis"])
    )
    assert "(log-normal above the law's E, sd 0.03 on log(L_T - E))" in by_size["interval_basis"]
    assert "teacher loss" not in by_loss["interval_basis"]
    assert "supervised law (L~_S) at its point estimate" in by_loss["interval_basis"]


# ---- 9. cosmetic ---------------------------------------------------------------------------
def test_huge_teacher_loss_prints_short_numbers(cli):
    code, out, _ = cli(*P, "--student-params", 1e9, "--student-tokens", 2e10,
                       "--teacher-loss", 1e308)  # fmt: skip
    assert code == 0 and "1e+308" in out and "0000000000" not in out


@pytest.mark.usefixtures("plan_interval_once")
def test_plan_bounds_are_exact_and_explained(cli):
    args = ["distill", "plan", "--student-params", 1e9, "--flops", 1e22, "--scenario",
            "teacher-inference"]  # fmt: skip
    code, out, _ = cli(*args)
    assert code == 0 and "(at the search bound, App. D.4)" in out and "1.000000000000001" not in out
    d = json.loads(cli(*args, "--json")[1])
    assert d["intervals"]["teacher_tokens"] == [1e17, 1e17]
    assert d["at_search_bound"] == ["teacher_tokens"]


def test_ratios_trivial_target_is_nan_not_inf(cli, preset):
    from lmforecast.distill.versus_supervised import distillation_vs_supervised_ratios

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # was "divide by zero" and inf
        df = distillation_vs_supervised_ratios(preset, 1e9, [1e308, 2.3])
    assert np.isnan(df["compute_ratio"].iloc[0]) and np.isfinite(df["compute_ratio"].iloc[1])
    code, out, _ = cli("distill", "ratios", "--student-params", 1e9, "--target-loss", 1e308,
                       "--scenario", "best-case", "--json")  # fmt: skip
    assert json.loads(out)["rows"][0]["compute_ratio"] is None


def test_unknown_supervised_law_lists_the_paper_alias(cli, tmp_path, runs):
    p = tmp_path / "r.csv"
    runs.to_csv(p, index=False)
    code, _, err = cli("distill", "fit", "--runs", p, "--supervised", "pape")
    assert code == 2 and "paper (= busbridge2025)" in err and "did you mean 'paper'" in err


def test_choose_teacher_text_shows_level_and_basis(cli, tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("N_T,D_T\n3e9,6e10\n7e9,1.4e11\n")
    code, out, _ = cli("distill", "choose-teacher", "--student-params", 1e9, "--student-tokens",
                       2e10, "--teachers", p, "--level", 0.8)  # fmt: skip
    assert code == 0 and "80% prediction interval of L_S" in out
    assert "draws from the published intervals" in out


# ---- choose-teacher range notes, fitted-teacher checks ------------------------------------------
def test_choose_teacher_range_notes_count_only_forecast_teachers(cli):
    """Three of the example teachers cost more than --flops 3e21 (teacher-pretraining): their
    rows are empty, so the two above the paper's 12.6B are not 'outside' anything forecast."""
    from lmforecast import examples

    teachers = examples.path("distill/teachers.csv")
    args = ["distill", "choose-teacher", "--student-params", 1e9, "--scenario",
            "teacher-pretraining", "--teachers", teachers]  # fmt: skip
    code, out, err = cli(*args, "--flops", 3e21)
    assert code == 0 and "rows are empty" in err, err
    assert "teacher N_T" not in err and "teacher L_T" not in err, err
    code, _, err = cli(*args, "--flops", 3e23)  # every teacher forecast: both are counted
    w = [x for x in warnings_of(err) if "teacher N_T" in x]
    assert code == 0 and len(w) == 1 and "(2 of 5 values)" in w[0], err


def test_choose_teacher_mixed_rows_count_the_forecast_ones(cli, tmp_path):
    t = tmp_path / "t.csv"  # 3e10 is forecast, 5e10 is over the budget
    t.write_text("N_T,D_T\n3e10,6e11\n5e10,1e13\n1e9,2e10\n")
    code, _, err = cli("distill", "choose-teacher", "--student-params", 1e9, "--scenario",
                       "teacher-pretraining", "--teachers", t, "--flops", 3e23)  # fmt: skip
    assert code == 0 and "1 teacher(s) cost more than --flops" in err, err
    w = [x for x in warnings_of(err) if "teacher N_T" in x]
    assert len(w) == 1 and "teacher N_T = 3e+10 (1 of 2 values)" in w[0], err


def test_estimate_outside_its_interval_is_not_identified_in_json_and_python(boot3):
    m = copy.deepcopy(boot3)
    c0 = m.params_["c0"]
    m.result_.ci["c0"] = [c0 + 1.0, c0 + 2.0]
    tab = m.coefficient_table()
    assert tab.loc["c0", "outside_interval"]
    want = "not identified (estimate outside its bootstrap interval)"
    assert tab.loc["c0", "status"] == want and m.identifiability()["c0"] == want
    out = tab.index[tab["outside_interval"]]
    assert all(tab.loc[k, "status"].startswith("not identified") for k in out)
    assert tab.loc["c1", "status"] == "fixed"
    c0_line = next(ln for ln in m.coefficient_text().splitlines() if ln.startswith("c0 "))
    assert c0_line.endswith(f"{want} *")


def test_fit_json_says_not_identified_where_the_text_marks_a_star(cli):
    from lmforecast import examples

    runs_csv = examples.path("distill/distill_runs.csv")
    # --jobs 1: the same fit as the default --jobs -1 (the parallel bootstrap is tested in
    # test_parallel.py), without starting a worker pool inside the test process
    code, out, err = cli("distill", "fit", "--runs", runs_csv, "--supervised", "paper",
                         "--bootstrap", 4, "--jobs", 1, "--json")  # fmt: skip
    assert code == 0, err
    d = json.loads(out)
    # docs/distill.md's fit (4 resamples): c0, gamma' log A', alpha' gamma' and break L_T/L~_S
    # lie outside their intervals
    assert d["outside_interval"], d["identifiability"]
    for k in d["outside_interval"]:
        assert d["identifiability"][k].startswith("not identified"), (k, d["identifiability"])


def test_predict_level_help_says_the_interval_can_be_null(cli):
    for verb in ("predict", "plan", "choose-teacher"):
        code, out, _ = cli("distill", verb, "--help")
        flat = " ".join(out.split())
        assert code == 0 and '"interval": null' in flat and '"interval_note"' in flat, verb
        assert "zero-width" in flat and "--bootstrap 0" in flat, verb
