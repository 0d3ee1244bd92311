"""The library side of `osl fit|predict|gap|pca|robustness`: the benchmark table from
--benchmarks or --evals, targets joined and scaled (`osl.inputs`), the refusals the estimator
and the answers make themselves, the saved-fit forecasts as a file and the gap's contract."""

from __future__ import annotations

import io
import json
import warnings

import numpy as np
import pandas as pd
import pytest

from lmforecast.errors import InputError
from lmforecast.osl import ObservationalScalingLaw
from lmforecast.osl.answers import predictions_file_text, preset_answer
from lmforecast.osl.data import load_table_b1
from lmforecast.osl.inputs import parse_evals_metric, read_benchmark_source, with_targets
from lmforecast.osl.posttraining import PostTrainingGap
from lmforecast.osl.presets import PRESETS, get_preset


def test_parse_evals_metric():
    assert parse_evals_metric(" acc ") == "acc"
    assert parse_evals_metric("acc, arc_challenge=acc_norm,") == {
        "*": "acc",
        "arc_challenge": "acc_norm",
    }
    with pytest.raises(InputError, match=r"--evals-metric: '=acc' is not task=metric"):
        parse_evals_metric("=acc")


def test_read_benchmark_source_one_of_two(tmp_path):
    b1 = load_table_b1()
    b1.to_csv(tmp_path / "b.csv", index=False)
    assert read_benchmark_source(tmp_path / "b.csv")["MMLU"].tolist() == b1["MMLU"].tolist()
    for kw, msg in [
        ({}, "exactly one of --benchmarks and --evals"),
        ({"benchmarks": tmp_path / "b.csv", "evals": "pythia"}, "exactly one of"),
        ({"benchmarks": tmp_path / "b.csv", "step": 1000}, "--step applies to --evals only"),
    ]:
        with pytest.raises(InputError, match=msg):
            read_benchmark_source(**kw)
    acc = read_benchmark_source(evals="pythia")
    norm = read_benchmark_source(evals="pythia", evals_metric="acc,arc_easy=acc_norm")
    assert len(acc) == len(norm) > 5
    assert not np.allclose(acc["arc_easy"], norm["arc_easy"])  # the per-task metric is used
    np.testing.assert_array_equal(acc["piqa"], norm["piqa"])


def test_with_targets_joins_and_scales(tmp_path):
    b1 = load_table_b1()
    models = b1["Model"].tolist()[:3]
    pd.DataFrame({"Model": models, "T": [50.0, 60.0, 70.0]}).to_csv(tmp_path / "t.csv")
    t = with_targets(b1.copy(), tmp_path / "t.csv", ["T", "absent"], 100.0)
    assert t.set_index("Model").loc[models, "T"].tolist() == [0.5, 0.6, 0.7]
    assert t["T"].isna().sum() == len(b1) - 3
    same = with_targets(b1.copy(), None, ["MMLU"])
    assert same["MMLU"].tolist() == b1["MMLU"].tolist()


def test_the_estimator_refuses_pcs_with_a_single_predictor():
    with pytest.raises(InputError, match=r"^--pcs \(n_components=\) applies to --x pcs, not --x"):
        ObservationalScalingLaw(2, x="flops").fit(load_table_b1(), "GSM8K")


def test_preset_answer_refuses_a_level():
    name = next(iter(PRESETS))
    law = get_preset(name)
    table = pd.DataFrame([{"Model": "m", **{c: 0.5 for c in law.metrics}}])
    assert preset_answer(law, table).fields["predictions"][0]["interval"] is None
    with pytest.raises(InputError, match=r"^--level applies to --fit; a --preset"):
        preset_answer(law, table, 0.8)


def test_predictions_file_text_flattens_the_interval():
    rows = [
        {"model": "a", "y_pred": 0.5, "interval": [0.4, 0.6]},
        {"model": "b", "y_pred": None, "interval": None},
    ]
    csv = pd.read_csv(io.StringIO(predictions_file_text(rows, ".CSV")))
    assert list(csv.columns) == ["model", "y_pred", "lower", "upper"]
    assert csv.loc[0, ["lower", "upper"]].tolist() == [0.4, 0.6] and np.isnan(csv.loc[1, "lower"])
    recs = json.loads(predictions_file_text(rows, ".json"))
    assert recs[0] == {"model": "a", "y_pred": 0.5, "lower": 0.4, "upper": 0.6}


def test_gap_contract():
    b1 = load_table_b1()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = ObservationalScalingLaw().fit(b1, "HumanEval").result_
    curve = pd.DataFrame({"log10_flops_equiv": [21.0, 22.0], "gap": [0.1, 0.2]})
    c = PostTrainingGap(res, res, curve).contract()
    assert list(c) == ["without", "with", "curve"]
    assert c["curve"] == {"log10_flops_equiv": [21.0, 22.0], "gap": [0.1, 0.2]}
    assert c["with"] == res.contract()
