"""Paths a new user takes through `osl` (and one `salience` output): no confident forecast for
a model without scores, no columns left out or refused in silence, and messages that name the
right value and flag."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from lmforecast.errors import InputError
from lmforecast.osl import ObservationalScalingLaw, read_benchmarks

BENCH = ["MMLU", "ARC-C", "HellaSwag", "Winograd", "TruthfulQA", "XWinograd", "HumanEval"]


@pytest.fixture(scope="module")
def base(shared_dir):
    return shared_dir / "data/obsscaling/base_llm_benchmark_eval.csv"


def _err(cli, *argv, must=()):
    code, _, err = cli(*argv)
    assert code == 2, err
    assert err.strip().splitlines()[-1].startswith("lmforecast: error:"), err
    for w in must:
        assert w in err, (w, err)
    return err


def test_a_model_without_any_benchmark_score_is_refused_not_forecast(cli, base, tmp_path):
    s = pd.read_csv(base)
    new = s.tail(3).copy()
    new.loc[new.index[1], BENCH] = np.nan
    new.to_csv(tmp_path / "new.csv", index=False)
    fit = tmp_path / "g.json"
    code, _, err = cli("osl", "fit", "--benchmarks", base, "--target", "GSM8K", "--out", fit,
                       "--quiet")  # fmt: skip
    assert code == 0, err
    name = new["Model"].iloc[1]
    _err(cli, "osl", "predict", "--fit", fit, "--benchmarks", tmp_path / "new.csv",
         must=[repr(name), "no score on any benchmark"])  # fmt: skip
    # a model missing some scores is imputed, and the user is told which
    new.iloc[[0, 2]].assign(MMLU=[np.nan, 0.5]).to_csv(tmp_path / "holes.csv", index=False)
    code, out, err = cli("osl", "predict", "--fit", fit, "--benchmarks", tmp_path / "holes.csv")
    assert code == 0 and "imputed" in err and new["Model"].iloc[0] in err, err
    # fitting on such models is refused too
    t = read_benchmarks(base)
    t.loc[:4, BENCH] = np.nan
    with pytest.raises(InputError, match="no score on any benchmark"):
        ObservationalScalingLaw().fit(t, "GSM8K")


def test_numeric_columns_beside_the_papers_are_named_and_text_columns_kept(base):
    s = read_benchmarks(base)
    custom = s[["Model", "Model Family", "MMLU", "ARC-C", "HellaSwag", "GSM8K"]].rename(
        columns={"ARC-C": "MyArc"}
    )
    with pytest.warns(UserWarning, match="'MyArc'"):
        ObservationalScalingLaw(n_components=2, holdout="none").fit(custom, "GSM8K")
    raw = pd.read_csv(base).assign(Notes="a note")
    law = ObservationalScalingLaw(metrics=["MMLU", "ARC-C", "HellaSwag"]).fit(raw, "GSM8K")
    assert law.result_.metrics == ["MMLU", "ARC-C", "HellaSwag"]
    with pytest.raises(InputError, match="'Notes' holds text"):
        ObservationalScalingLaw(metrics=["MMLU", "Notes"]).fit(raw, "GSM8K")


def test_the_target_is_no_benchmark_for_missing_cells(cli, base, tmp_path):
    s = pd.read_csv(base).dropna(subset=["ARC-C", "XWinograd"])
    s.to_csv(tmp_path / "t.csv", index=False)
    code, _, err = cli("osl", "fit", "--benchmarks", tmp_path / "t.csv", "--target", "HumanEval",
                       "--missing", "refuse", "--quiet")  # fmt: skip
    assert code == 0, err  # HumanEval's empty cells are models without the target, not holes


def test_targets_tables_never_lose_a_column_or_a_model_silently(cli, base, tmp_path):
    s = pd.read_csv(base)
    t = pd.DataFrame({"Model": s["Model"], "GSM8K": 0.5})
    t.to_csv(tmp_path / "clash.csv", index=False)
    _err(cli, "osl", "fit", "--benchmarks", base, "--targets", tmp_path / "clash.csv",
         "--target", "GSM8K", must=["'GSM8K'", "also in the benchmarks"])  # fmt: skip
    t = pd.DataFrame({"Model": [*s["Model"][:60], "not-a-model"], "y": 0.3})
    t.to_csv(tmp_path / "extra.csv", index=False)
    code, _, err = cli("osl", "fit", "--benchmarks", base, "--targets", tmp_path / "extra.csv",
                       "--target", "y", "--holdout", "none", "--quiet")  # fmt: skip
    assert "not-a-model" in err and "ignored" in err, err


def test_messages_name_the_users_value_and_a_fix_that_exists(cli, base, tmp_path):
    err = _err(cli, "osl", "fit", "--benchmarks", base, "--target", "GSM8K", "--metric-range",
               "0.1,0.5")  # fmt: skip
    assert "value 0.540561" in err  # the cell as written, not (y - LO) / (HI - LO) = 1.1014
    pct = pd.read_csv(base)
    pct["MMLU"] = pct["MMLU"] * 100  # one column in points: read as points (each column's unit)
    pct.to_csv(tmp_path / "pct.csv", index=False)
    code, js, err = cli("osl", "fit", "--benchmarks", tmp_path / "pct.csv", "--target", "GSM8K",
                        "--json", "--quiet")  # fmt: skip
    code0, js0, _ = cli("osl", "fit", "--benchmarks", base, "--target", "GSM8K", "--json",
                        "--quiet")  # fmt: skip
    assert code == code0 == 0, err
    assert json.loads(js)["test_mse"] == pytest.approx(json.loads(js0)["test_mse"], rel=1e-9)
    pct["MMLU"] = pct["MMLU"] * 10  # neither fractions nor points: refused, naming the cell
    pct.to_csv(tmp_path / "pct.csv", index=False)
    err = _err(cli, "osl", "fit", "--benchmarks", tmp_path / "pct.csv", "--target", "GSM8K")
    assert "column 'MMLU' row" in err and "outside [0, 100]" in err and "--scale" not in err
    no_fam = pd.read_csv(base).drop(columns=["Model Family"])
    no_fam.to_csv(tmp_path / "nofam.csv", index=False)
    _err(cli, "osl", "select", "--benchmarks", tmp_path / "nofam.csv", "--budget", "12",
         must=["'Model Family'"])  # fmt: skip


def test_outputs_are_refused_under_another_formats_name(cli, base, tmp_path):
    _err(cli, "osl", "fit", "--benchmarks", base, "--target", "GSM8K", "--out",
         tmp_path / "o.png", must=["writes JSON", "o.json"])  # fmt: skip
    assert not (tmp_path / "o.png").exists()
    code, out, err = cli("osl", "fit", "--benchmarks", base, "--target", "GSM8K", "--out",
                         tmp_path / "o.json", "--quiet")  # fmt: skip
    assert code == 0 and json.loads((tmp_path / "o.json").read_text())


def test_python_and_flag_paths_that_were_silent_or_raw(cli, base, tmp_path):
    from lmforecast.osl import OSLResult, forecast_saved_fit

    law = ObservationalScalingLaw().fit(read_benchmarks(base), "GSM8K")
    res = OSLResult.from_json(law.result_.to_json())
    new = read_benchmarks(base).tail(3)
    with pytest.raises(InputError, match="forecast_saved_fit"):
        res.predict_interval(new)
    rows = forecast_saved_fit(res, new, 0.9)
    assert len(rows) == 3 and all(r["interval"][0] <= r["y_pred"] <= r["interval"][1] for r in rows)
    long = pd.DataFrame({"model": ["a", "a", "b", "b"], "benchmark": ["MMLU", "ARC-C"] * 2,
                         "score": [0.5, 0.6, 0.4, 0.3]})  # fmt: skip
    assert list(read_benchmarks(long)["Model"]) == ["a", "b"]  # `model` read as `Model`
    _err(cli, "osl", "fit", "--benchmarks", base, "--target", "GSM8K", "--x", "flops", "--pcs",
         "5", must=["--pcs"])  # fmt: skip


def test_flags_that_a_preset_or_a_fit_figure_cannot_use_are_refused(cli, base, tmp_path):
    from lmforecast import examples

    _err(cli, "osl", "predict", "--preset", "gsm-cot", "--benchmarks", base, "--level", "0.5",
         must=["--level", "--preset"])  # fmt: skip
    ex = examples.path("salience/texts.jsonl").parent
    fit = tmp_path / "s.json"
    code, _, err = cli("salience", "fit", "--texts", ex / "texts.jsonl", "--losses",
                       ex / "losses.jsonl", "--scores", ex / "scores.csv", "--task", "reasoning",
                       "--chance", "25", "--steps", "0", "--out", fit)  # fmt: skip
    assert code == 0, err
    code, _, err = cli("salience", "plot", "--fit", fit, "--kind", "fit", "--texts",
                       ex / "texts.jsonl", "--out", tmp_path / "f.png")  # fmt: skip
    assert code == 0 and "warning: --texts and --text-id apply to --kind weights" in err, err


def test_predict_from_a_saved_fit_registers_its_forecasts_in_the_ledger(cli, tmp_path):
    # only the --preset path recorded; `osl predict --fit ... --ledger` wrote nothing silently
    from lmforecast.examples import path as example_path
    from lmforecast.ledger import Ledger

    bench = example_path("osl/base_models.csv")
    fit, db = tmp_path / "osl.json", tmp_path / "o.db"
    assert cli("osl", "fit", "--benchmarks", bench, "--target", "MMLU", "--out", fit)[0] == 0
    code, out, err = cli("osl", "predict", "--fit", fit, "--benchmarks", bench, "--ledger", db,
                         "--json")  # fmt: skip
    assert code == 0 and "registered record(s)" in err, err
    rows = [r for r in json.loads(out)["predictions"] if r["y_pred"] is not None]
    with Ledger(db) as L:
        recs = L.records()
    assert len(recs) == len(rows) and set(recs["task"]) == {"MMLU"}
    assert np.allclose(recs["point"], [r["y_pred"] for r in rows])


def test_a_text_target_or_a_text_cell_in_targets_is_one_line_not_a_crash(cli, tmp_path):
    from lmforecast.examples import path as example_path

    bench = example_path("osl/base_models.csv")
    # a text column as the target crashed (exit 1, "could not convert string to float")
    _err(cli, "osl", "fit", "--benchmarks", bench, "--target", "Model Family",
         must=("column 'Model Family' row 1", "is text, not a score"))  # fmt: skip
    b = pd.read_csv(bench)
    t = b[["Model", "HumanEval"]].rename(columns={"HumanEval": "HE"}).astype({"HE": object})
    t.loc[2, "HE"] = "good"  # a typo'd cell dropped that model without a word
    (tmp_path / "b.csv").write_text(b.drop(columns=["HumanEval"]).to_csv(index=False))
    t.to_csv(tmp_path / "t.csv", index=False)
    _err(cli, "osl", "fit", "--benchmarks", tmp_path / "b.csv", "--targets", tmp_path / "t.csv",
         "--target", "HE", must=("column 'HE' row 3", "'good' is not a number"))  # fmt: skip


def test_a_cutoff_split_without_flops_names_the_column_and_a_tiny_holdout_warns(cli, tmp_path):
    from lmforecast.examples import path as example_path

    b = pd.read_csv(example_path("osl/base_models.csv"))
    b.drop(columns=["FLOPs (1E21)"]).to_csv(tmp_path / "b.csv", index=False)
    # it said "0 training models with target 'HumanEval'; need at least PCs + 2 = 5"
    _err(cli, "osl", "fit", "--benchmarks", tmp_path / "b.csv", "--target", "HumanEval",
         must=("needs column 'FLOPs (1E21)'", "--holdout-top"))  # fmt: skip
    code, _, err = cli("osl", "fit", "--benchmarks", tmp_path / "b.csv", "--target", "HumanEval",
                       "--holdout-top", "0.2")  # fmt: skip
    assert code == 0, err
    code, _, err = cli("osl", "fit", "--benchmarks", example_path("osl/base_models.csv"),
                       "--target", "HumanEval", "--holdout-top", "0.01")  # fmt: skip
    assert code == 0 and "rounds down to none held out" in err


def test_scale_on_a_target_already_in_fractions_warns(cli):
    from lmforecast.examples import path as example_path

    code, _, err = cli("osl", "fit", "--benchmarks", example_path("osl/base_models.csv"),
                       "--target", "HumanEval", "--scale", "100")  # fmt: skip
    assert code == 0 and "--scale 100: column 'HumanEval' is already in [0, 1]" in err


def test_no_score_row_is_the_row_of_the_users_table(cli, tmp_path):
    # models without the target were skipped before counting: 'ghost' on data row 78 was
    # called row 74
    from lmforecast.examples import path as example_path

    b = pd.read_csv(example_path("osl/base_models.csv"))
    ghost = b.iloc[:1].copy()
    ghost["Model"] = "ghost"
    ghost[[c for c in BENCH if c != "HumanEval" and c in b.columns]] = np.nan
    pd.concat([b, ghost]).to_csv(tmp_path / "g.csv", index=False)
    _err(cli, "osl", "fit", "--benchmarks", tmp_path / "g.csv", "--target", "HumanEval",
         must=(f"row {len(b) + 1} (model 'ghost')",))  # fmt: skip


def test_a_reference_family_not_in_the_table_is_named_with_the_nearest(shared_dir):
    # the instruct table has 'Llama-2-Chat', not the default 'Llama-2': every fit warned without
    # saying so
    t = read_benchmarks(shared_dir / "data/obsscaling/instruct_llm_benchmark_eval.csv")
    with pytest.warns(UserWarning, match=r"not in column 'Model Family'; did you mean "
                                         r"'Llama-2-Chat'\?"):  # fmt: skip
        ObservationalScalingLaw().fit(t, "MMLU")


def test_python_predict_says_which_new_model_was_imputed():
    import numpy as np

    from lmforecast.osl import ObservationalScalingLaw, load_table_b1

    t = load_table_b1()
    est = ObservationalScalingLaw().fit(t, "MMLU")
    new = t.head(2).copy()
    new.loc[new.index[0], "ARC-C"] = np.nan  # imputed silently before (the CLI said so)
    with pytest.warns(UserWarning, match=r"1 empty benchmark cell\(s\) imputed.*Llama-2-7b"):
        est.predict(new)
