"""What the command line prints comes from the library: a notebook user calling the estimator
gets the same warning as a CLI user, and the `cli/` package holds no numerical code."""

from __future__ import annotations

import warnings

import pytest

from lmforecast.cli.main import main
from lmforecast.data.evals import load_pythia
from lmforecast.downstream import DownstreamForecaster

MODELS = ["pythia-70m", "pythia-160m", "pythia-410m", "pythia-1b"]


@pytest.fixture(scope="module")
def piqa():
    e = load_pythia()
    return e[e["model"].isin(MODELS) & e["task"].isin(["piqa", "lambada_openai"])]


def _computed_once(monkeypatch, module, name):
    """Replace `module.name` (a library answer function the command imports when it runs) by
    one that computes each distinct call once: a later call with the same arguments (equal
    pickles: the same model state, numbers and options) gets a deep copy of the first result,
    as a recomputation of the deterministic function would. The test's own call and the
    command's `--json` and text runs ask the same question, so it is answered once instead of
    three times; a command that asked anything else (another model, level or draw count) is
    computed afresh and compared as before. A call that warns is never reused (its warnings
    are raised again, as a recomputation would)."""
    import copy
    import importlib
    import pickle

    mod = importlib.import_module(module)
    real, done = getattr(mod, name), {}

    def once(*args, **kw):
        try:
            key = pickle.dumps((args, sorted(kw.items())))
        except Exception:  # noqa: BLE001 - not picklable: no reuse
            return real(*args, **kw)
        if key not in done:
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                got = real(*args, **kw)
            for x in w:
                warnings.warn_explicit(x.message, x.category, x.filename, x.lineno)
            if w:
                return got
            done[key] = got
        return copy.deepcopy(done[key])

    monkeypatch.setattr(mod, name, once)


def _fit_messages(table, bootstrap):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        est = DownstreamForecaster(bootstrap=bootstrap).fit(table, task="piqa")
    return est, [str(x.message) for x in w]


def test_few_replicates_warn_from_the_library(piqa):
    est, msgs = _fit_messages(piqa, 5)
    rough = [m for m in msgs if "are rough" in m]
    assert len(rough) == 1 and "5 replicates" in rough[0] and "--bootstrap" in rough[0]
    lo, hi = est.predict_interval(1e21)  # the rough interval still exists and holds the point
    assert lo <= est.predict(1e21) <= hi
    _, msgs = _fit_messages(piqa, 20)
    assert not [m for m in msgs if "are rough" in m]


def test_the_cli_prints_the_library_warning(piqa, tmp_path, capsys):
    path = tmp_path / "evals.csv"
    piqa.to_csv(path, index=False)
    code = main(["downstream", "fit", "--evals", str(path), "--task", "piqa",
                 "--bootstrap", "5", "--json"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 0
    assert "warning: bootstrap=5 (CLI: --bootstrap 5): the interval's ends come from 5" in err


def test_a_saved_fit_says_its_kind(piqa, tmp_path):
    from lmforecast.store.registry import saved_kind

    path = DownstreamForecaster(bootstrap=0).fit(piqa, task="piqa").save(tmp_path / "d.json")
    assert saved_kind(path) == "DownstreamForecaster"
    # the kind is read from the parsed JSON, wherever the writer put the field
    (tmp_path / "moved.json").write_text('{"x": "' + "y" * 300 + '", "kind": "FLPM"}')
    assert saved_kind(tmp_path / "moved.json") == "FLPM"
    assert saved_kind(tmp_path / "missing.json") is None
    (tmp_path / "bad.json").write_text("not json")
    assert saved_kind(tmp_path / "bad.json") is None


def test_mixture_scan_notes_come_from_the_library():
    """FLP-M's Sec. 6.1 scan: ties, a flat (saturated) scan and a best share at the end of the
    scan are said by the `MixtureCurve` the library returns, as `flpm optimize-mixture` prints."""
    import numpy as np

    from lmforecast.flp.mixture_scan import MixtureCurve, ratio_grid

    grid = ratio_grid(2, 0.1, 0.3, 0.1)  # shares 0.1, 0.2, 0.3 of the second source
    tied = MixtureCurve(("a", "b"), grid, np.array([100.0, 100.0, 90.0]), 1e21, target="arc")
    assert tied.best_ratio == 0.1 and tied.at_scan_edge
    assert tied.tie_note.startswith("2 of 3 scanned mixtures tie at 100.00 points (forecasts")
    assert tied.edge_advice == "widen the scanned ratios (CLI: --ratios)"
    assert tied.notes == ["best ratio at the end of the scanned range: " + tied.edge_advice,
                          tied.tie_note]  # fmt: skip
    inner = MixtureCurve(("a", "b"), grid, np.array([1.0, 3.0, 2.0]), 1e20)
    assert not inner.at_scan_edge and inner.notes == []
    # the sampling models reached share 0.3 at most: the optimum may lie beyond the sample
    top = MixtureCurve(("a", "b"), grid, np.array([1.0, 2.0, 3.0]), 1e20,
                       share_range={"a": [0.7, 0.9], "b": [0.1, 0.3]})  # fmt: skip
    assert "may lie beyond what was sampled" in top.edge_advice
    flat = MixtureCurve(("a", "b"), grid, np.full(3, 100.0), 1e26, target="arc")
    assert flat.best_ratio is None and not flat.at_scan_edge
    assert flat.notes == [flat.tie_note] and "saturated" in flat.tie_note


def test_osl_missing_scores_are_counted_or_refused_by_the_library():
    """App. B.3: Table B.1 has empty cells; the library counts them (the note `osl` prints)
    among the models that have the target, or refuses the table with missing="refuse"."""
    import numpy as np

    from lmforecast.errors import InputError
    from lmforecast.osl.data import default_metrics, load_table_b1
    from lmforecast.osl.missing import missing_notes

    table = load_table_b1()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        metrics = default_metrics(table)
    empty = int(np.isnan(table[metrics].to_numpy(float)).sum())
    assert empty > 0
    notes = missing_notes(table)
    assert [n for n in notes if n.startswith(f"benchmarks: {empty} empty cell(s) in ")]
    with pytest.raises(InputError, match=r"is empty and missing='refuse' \(CLI: --missing"):
        missing_notes(table, missing="refuse")
    full = table.dropna(subset=metrics)
    assert not [n for n in missing_notes(full, missing="refuse") if "empty" in n]
    with pytest.raises(InputError, match="missing must be one of 'impute', 'refuse'"):
        missing_notes(table, missing="guess")


def test_distill_verdict_and_interval_come_from_the_library(tmp_path, capsys):
    """Eq. 8 with the paper's coefficients: the library's student forecast is the JSON that
    `distill predict` prints (interval, verdict), for a measured and a size-given teacher."""
    import json

    from lmforecast.distill import DistillationScalingLaw
    from lmforecast.distill.verdicts import student_forecast

    m = DistillationScalingLaw.from_preset()  # the CLI's default coefficients
    by_size = ["--teacher-params", "7e9", "--teacher-tokens", "1.4e11"]
    cases = (({"teacher_loss": 2.3}, ["--teacher-loss", "2.3"]),
             ({"teacher_params": 7e9, "teacher_tokens": 1.4e11}, by_size))  # fmt: skip
    for teacher, flags in cases:
        f = student_forecast(m, 1e9, 2e10, level=0.9, **teacher)
        lo, hi = f.interval
        assert lo <= f.student_loss <= hi and f.notes == []
        assert f.verdict == (
            "distill"
            if hi < f.supervised_loss
            else "train supervised"
            if lo > f.supervised_loss
            else "too close to call"
        )
        assert main(["distill", "predict", "--student-params", "1e9", "--student-tokens", "2e10",
                     *flags, "--json"]) == 0  # fmt: skip
        assert json.loads(capsys.readouterr().out) == f.to_dict()
    with pytest.raises(Exception, match="give teacher_loss, or teacher_params"):
        student_forecast(m, 1e9, 2e10)


# (file, the fit line with --json and --out): the printed JSON is the fit's `contract()`, so a
# notebook user gets what the command prints. The distillation line pins two coefficients
# (its fit then polishes 7 free ones, ~4x faster; the contract is the same function of the fit),
# and the test also checks that --fix reaches the library's `fixed` and the printed values
DISTILL_FIXED = {"gamma'": 0.764, "c1": 1.0}
FIT_LINES = {
    "supervised": ("sup.json", "supervised fit --runs supervised/runs.csv --bootstrap 4 "
                   "--jobs 1 --quiet --json --out sup.json"),
    "distill": ("dist.json", "distill fit --runs distill/distill_runs.csv --supervised paper "
                "--bootstrap 0 --fix gamma'=0.764 --fix c1=1 --jobs 1 --quiet --json "
                "--out dist.json"),
    "salience": ("csv.json", "salience fit --texts salience/texts.jsonl --losses "
                 "salience/losses.jsonl --scores salience/scores.csv --task reasoning "
                 "--chance 0 --json --out csv.json"),
    "flp": ("flp.json", "flp fit --runs flp/runs.csv --checkpoints flp/checkpoints.csv "
            "--task ARC --bootstrap 20 --quiet --json --out flp.json"),
    "flpm": ("flpm.json", "flpm fit --runs flp/mixture_runs.csv --checkpoints "
             "flp/mixture_checkpoints.csv --task HumanEval --bootstrap 10 --quiet --json "
             "--out flpm.json"),
    "downstream": ("down.json", "downstream fit --evals pythia --task piqa --models "
                   "pythia-70m,pythia-160m,pythia-410m,pythia-1b --bootstrap 5 --quiet --json "
                   "--out down.json"),
    "data-constrained": ("dc.json", "supervised fit --runs dataconstrained/runs.csv --form "
                         "data-constrained --bootstrap 4 --jobs 1 --quiet --json --out dc.json"),
    "curves": ("curves.json", "curves fit --runs curves/curves.csv --bootstrap 20 --json "
               "--out curves.json"),
}  # fmt: skip


@pytest.mark.parametrize("name", list(FIT_LINES))
def test_fit_json_is_the_library_s_contract(name, tmp_path, monkeypatch, capsys):
    import json

    import lmforecast
    from cli_lines import run_in_examples
    from lmforecast.store import to_jsonable

    fname, line = FIT_LINES[name]
    kept = []
    if name == "distill":  # a saved distillation fit keeps no runs: keep the fit in memory
        from lmforecast.distill import DistillationScalingLaw

        real_fit = DistillationScalingLaw.fit

        def keep(self, data=None, **kw):
            got = real_fit(self, data, **kw)
            # what a notebook user holds right after `fit`, before the command prints anything
            kept.append((self.get_params(), data.copy(), kw, to_jsonable(self.contract())))
            return got

        monkeypatch.setattr(DistillationScalingLaw, "fit", keep)
    capsys.readouterr()
    assert run_in_examples(tmp_path, monkeypatch, line) == 0
    printed = json.loads(capsys.readouterr().out)
    fit = lmforecast.load(tmp_path / fname)
    expected = None
    if name == "distill":
        # the one fit the command made is the library's fit of the file's rows with the
        # library's settings for these flags and its default columns, so it is not repeated
        import pandas as pd

        from lmforecast.data.io import read_table

        monkeypatch.setattr(DistillationScalingLaw, "fit", real_fit)
        [(params, data, kw, contract)] = kept
        lib = DistillationScalingLaw(
            supervised="paper", bootstrap=0, n_jobs=1, progress=False, fixed=DISTILL_FIXED
        )
        assert params == lib.get_params()
        assert {k: contract["params"][k] for k in DISTILL_FIXED} == DISTILL_FIXED
        cols = {"ns_col": "N_S", "ds_col": "D_S", "lt_col": "L_T", "ls_col": "L_S"}
        assert set(kw) <= set(cols) and all(kw[k] == cols[k] for k in kw), kw
        runs = read_table("distill/distill_runs.csv")
        pd.testing.assert_frame_equal(data, runs, check_exact=True)
        expected = json.loads(json.dumps(contract))
    printed.pop("models_note", None)  # the --family choice of the command, not of the fit
    if name == "curves":
        assert printed.pop("source") == "fitted to curves/curves.csv"  # the file it read
    if expected is None:
        expected = json.loads(json.dumps(to_jsonable(fit.contract())))
    assert printed == expected and len(expected) >= 3


def test_supervised_forecasts_print_what_the_library_returns(tmp_path, cli):
    import json

    from lmforecast.examples import path as example
    from lmforecast.supervised import SupervisedScalingLaw

    fit = tmp_path / "sup.json"

    code, _, err = cli("supervised", "fit", "--runs", example("supervised/runs.csv"),
                       "--bootstrap", "8", "--jobs", "1", "--quiet", "--out", fit)  # fmt: skip
    assert code == 0, err
    law = SupervisedScalingLaw.load(fit)
    point = law.forecast_one(7e9, 1.4e11, level=0.8)
    lo, hi = point.interval
    assert lo < point.value < hi and point.value == law.predict(7e9, 1.4e11)
    assert point.fields["compute_law_loss"] > 0 and point.level == 0.8
    best = law.allocation(1e22, level=0.8)
    assert best.fields["N"] * best.fields["D"] * 6 == pytest.approx(1e22, rel=1e-9)
    assert best.notes and best.notes[0] == best.fields["allocation_interval_note"]
    for fc, argv in (
        (point, ["predict", "--params", "7e9", "--tokens", "1.4e11"]),
        (best, ["allocate", "--flops", "1e22"]),
    ):
        code, out, err = cli("supervised", *argv, "--fit", fit, "--level", "0.8", "--json")
        assert code == 0, err
        assert json.loads(out) == json.loads(json.dumps(fc.contract()))
        code, out, err = cli("supervised", *argv, "--fit", fit, "--level", "0.8")
        assert out.strip() == fc.summary()


def test_distill_plan_and_units_notes_come_from_the_library(capsys, monkeypatch):
    """`distill plan` prints `plan_answer` (Eq. 10 with its intervals and search bounds), and
    `distill predict`'s units warning is the library's, naming the input as it was given."""
    import json

    _computed_once(monkeypatch, "lmforecast.distill.student_answers", "plan_answer")
    from lmforecast.distill import DistillationScalingLaw
    from lmforecast.distill.planning import get_scenario
    from lmforecast.distill.student_answers import plan_answer, predict_answer
    from lmforecast.errors import DomainWarning

    m = DistillationScalingLaw.from_preset()
    ans = plan_answer(m, 1e9, 1e21, get_scenario("best-case"), 0.9)
    d = ans.contract()
    assert d["verdict"] and set(d["at_search_bound"]) <= {"student_tokens", "teacher_params",
                                                        "teacher_tokens"}  # fmt: skip
    assert main(["distill", "plan", "--student-params", "1e9", "--flops", "1e21", "--scenario",
                 "best-case", "--json"]) == 0  # fmt: skip
    assert json.loads(capsys.readouterr().out) == json.loads(json.dumps(d))
    assert main(["distill", "plan", "--student-params", "1e9", "--flops", "1e21", "--scenario",
                 "best-case"]) == 0  # fmt: skip
    assert capsys.readouterr().out.strip() == ans.summary()
    with pytest.warns(DomainWarning, match="^student_params 1000 is below"):
        predict_answer(m, 1e3, 2e10, level=0.9, teacher_loss=2.3)
    assert main(["distill", "predict", "--student-params", "1e3", "--student-tokens", "2e10",
                 "--teacher-loss", "2.3"]) == 0  # fmt: skip
    assert "--student-params 1000 is below" in capsys.readouterr().err


def test_distill_refusals_and_teacher_ranking_come_from_the_library(tmp_path, capsys):
    """`predict_answer` refuses a teacher below E and a size without tokens, naming the input
    as the caller gave it; `choose_teacher_answer` ranks the teachers, warns where `top` cuts
    the list, and is what `distill choose-teacher` prints."""
    import json

    import pandas as pd

    from lmforecast.distill import DistillationScalingLaw
    from lmforecast.distill.student_answers import choose_teacher_answer, predict_answer
    from lmforecast.errors import DomainWarning, InputError

    m = DistillationScalingLaw.from_preset()
    with pytest.raises(InputError, match=r"^teacher_loss 1 is at or below the irreducible loss"):
        predict_answer(m, 1e9, 2e10, level=0.9, teacher_loss=1.0)
    with pytest.raises(InputError, match="^teacher_params needs teacher_tokens"):
        predict_answer(m, 1e9, 2e10, level=0.9, teacher_params=7e9)
    assert main(["distill", "predict", "--student-params", "1e9", "--student-tokens", "2e10",
                 "--teacher-loss", "1"]) == 2  # fmt: skip
    assert "--teacher-loss 1 is at or below" in capsys.readouterr().err
    teachers = pd.DataFrame({"N_T": [1e9, 3e9, 7e9], "D_T": [2e10, 6e10, 1.4e11]})
    with pytest.warns(DomainWarning, match="best 2 of 3 teachers"):
        ans = choose_teacher_answer(m, teachers, 5e8, D_S=2e10, top=2)
    ranking = ans.contract()["ranking"]
    assert len(ranking) == 2 and ranking[0]["L_S"] <= ranking[1]["L_S"]
    path = tmp_path / "t.csv"
    teachers.to_csv(path, index=False)
    assert main(["distill", "choose-teacher", "--student-params", "5e8", "--student-tokens",
                 "2e10", "--teachers", str(path), "--top", "2", "--json"]) == 0  # fmt: skip
    cap = capsys.readouterr()
    assert json.loads(cap.out) == json.loads(json.dumps(ans.contract()))
    assert "(--top to change)" in cap.err


def test_salience_predict_prints_the_library_s_answer(tmp_path, monkeypatch, capsys):
    """`salience predict` is `salience.answers.predict_answer`: JSON, table and, for a fit
    without bootstrap refits, the note and warning that there is no interval."""
    import json

    from cli_lines import run_in_examples, run_main
    from lmforecast.errors import DomainWarning
    from lmforecast.salience.answers import predict_answer
    from lmforecast.salience.records import read_loss_records
    from lmforecast.salience.result import SalienceFit

    fit_line = (
        "salience fit --texts salience/texts.jsonl --losses salience/losses.jsonl "
        "--scores salience/scores.csv --task reasoning --chance 0 --out f.json"
    )
    for boot in ("200", "0"):
        assert run_in_examples(tmp_path, monkeypatch, f"{fit_line} --bootstrap {boot}") == 0
        fit = SalienceFit.from_json(tmp_path / "f.json")
        recs = read_loss_records("salience/losses.jsonl")
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            ans, df = predict_answer(fit, recs, 0.8)
        preds = ans.contract()["predictions"]
        assert len(preds) == len(df) > 3
        if boot == "0":
            assert ans.notes and all(p["interval"] is None for p in preds)
            assert any(isinstance(x.message, DomainWarning) for x in w)
        else:
            assert not ans.notes and all(
                p["interval"][0] <= p["predicted"] <= p["interval"][1] for p in preds
            )
        capsys.readouterr()
        argv = ["salience", "predict", "--fit", "f.json", "--losses", "salience/losses.jsonl",
                "--level", "0.8"]  # fmt: skip
        assert run_main([*argv, "--json"]) == 0
        assert json.loads(capsys.readouterr().out) == json.loads(json.dumps(ans.contract()))
        assert run_main(argv) == 0
        assert capsys.readouterr().out.strip() == ans.summary()


def test_osl_pca_and_selection_print_the_library_s_answers(capsys):
    """`osl pca` and `osl select` print `osl.answers.pca_answer` / `selection_answer`: the
    capability space (its variance shares sum to at most 1) and a V-optimal subset whose
    objective is no worse than the random baseline's median."""
    import json

    from lmforecast.examples import path as example
    from lmforecast.osl.answers import pca_answer, selection_answer
    from lmforecast.osl.data import read_benchmarks
    from lmforecast.osl.selection import SubsetSelector
    from lmforecast.store import to_jsonable

    src = str(example("osl/base_models.csv"))
    table = read_benchmarks(src)
    pca = pca_answer(table, 3)
    ev = pca.fields["explained_variance"]
    assert len(ev) == 3 and 0.5 < sum(ev) <= 1.0 and list(ev) == sorted(ev, reverse=True)
    sel = selection_answer(SubsetSelector(3).fit(table), 8, n_random=20, seed=0)
    med = sorted(r["objective"] for r in sel.fields["random"])[10]  # 20 draws: upper median
    assert len(sel.fields["models"]) <= 8 and sel.fields["objective"] <= med
    cases = [
        (pca, ["pca", "--benchmarks", src, "--pcs", "3"]),
        (sel, ["select", "--benchmarks", src, "--budget", "8", "--random", "20"]),
    ]
    for ans, argv in cases:
        assert main(["osl", *argv, "--json"]) == 0
        assert json.loads(capsys.readouterr().out) == json.loads(
            json.dumps(to_jsonable(ans.contract()))
        )
        assert main(["osl", *argv]) == 0
        assert capsys.readouterr().out.strip() == ans.summary()


def test_distill_crossover_and_ratios_print_the_library_s_answers(capsys, monkeypatch):
    """`distill crossover` and `distill ratios` print `distill.answers`: the crossover with its
    interval over parameter draws (holding the point), and the ratio table with its note."""
    import json

    for name in ("crossover_answer", "ratios_answer"):
        _computed_once(monkeypatch, "lmforecast.distill.answers", name)
    from lmforecast.distill import DistillationScalingLaw
    from lmforecast.distill.answers import RATIO_NOTE, crossover_answer, ratios_answer

    m = DistillationScalingLaw.from_preset()
    cross = crossover_answer(m, 1e9, "best-case", 0.9, 8)  # 8 draws: the interval of 16
    c, (lo, hi) = cross.fields["crossover_flops"], cross.fields["interval"]
    hi = float("inf") if hi == "inf" else hi
    assert lo <= c <= hi and cross.fields["interval_basis"].startswith("confidence interval")
    ratios = ratios_answer(m, 1e9, [2.6, 2.8], "best-case", 0.9, 0)
    rows = ratios.fields["rows"]
    assert [r["target_loss"] for r in rows] == [2.6, 2.8] and ratios.notes == (RATIO_NOTE,)
    assert all(r["compute_ratio"] is None or r["compute_ratio"] == "inf" or r["compute_ratio"] > 0
               for r in rows)  # fmt: skip
    base = ["--student-params", "1e9", "--scenario", "best-case"]
    for ans, argv in ((cross, ["crossover", *base, "--draws", "8"]),
                      (ratios, ["ratios", *base, "--target-loss", "2.6", "2.8"])):  # fmt: skip
        assert main(["distill", *argv, "--json"]) == 0
        assert json.loads(capsys.readouterr().out) == json.loads(json.dumps(ans.contract()))
        assert main(["distill", *argv]) == 0
        assert capsys.readouterr().out.strip() == ans.summary()
