"""What `evals import` and the ledger refuse: `evals import --metric` with a current-layout
`metric,filter` key; the ledger refusing impossible observed values and a second correction."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from lmforecast.errors import InputError
from lmforecast.ledger import Ledger


def _harness(folder):
    folder.mkdir()
    doc = {
        "results": {
            "gsm8k": {
                "alias": "gsm8k",
                "exact_match,strict-match": 0.02,
                "exact_match_stderr,strict-match": 0.004,
                "exact_match,flexible-extract": 0.03,
            },
            "piqa": {"alias": "piqa", "acc,none": 0.6, "acc_norm,none": 0.61},
        },
        "n-shot": {"gsm8k": 5, "piqa": 0},
        "config": {"model_args": {"pretrained": "EleutherAI/pythia-160m", "revision": "step1000"}},
    }
    (folder / "x.json").write_text(json.dumps(doc))
    return folder


def test_metric_with_a_filter_is_one_name(cli, tmp_path):
    src, out = _harness(tmp_path / "odd"), tmp_path / "f.csv"
    code, _, err = cli("evals", "import", src, "--task", "gsm8k", "--metric",
                       "exact_match,strict-match", "--out", out)  # fmt: skip
    assert code == 0, err
    df = pd.read_csv(out)
    assert df["metric"].tolist() == ["exact_match,strict-match"]
    assert df["value"].tolist() == [0.02] and df["stderr"].tolist() == [0.004]


def test_metric_list_still_splits_on_commas(cli, tmp_path):
    src, out = _harness(tmp_path / "odd"), tmp_path / "f.csv"
    code, _, err = cli("evals", "import", src, "--metric", "acc,acc_norm", "--out", out)
    assert code == 0, err
    assert sorted(pd.read_csv(out)["metric"]) == ["acc", "acc_norm"]
    # a list mixing a plain metric and a filtered one (spaces allowed), and `acc,none`
    code, _, err = cli("evals", "import", src, "--metric", "acc, exact_match, flexible-extract",
                       "--out", out)  # fmt: skip
    assert code == 0, err
    assert sorted(pd.read_csv(out)["metric"]) == ["acc", "exact_match,flexible-extract"]
    code, _, err = cli("evals", "import", src, "--metric", "acc,none", "--out", out)
    assert code == 0, err
    assert pd.read_csv(out)["metric"].tolist() == ["acc"]


def test_bare_filtered_base_is_still_refused_with_a_typeable_suggestion(cli, tmp_path):
    src, out = _harness(tmp_path / "odd"), tmp_path / "f.csv"
    code, _, err = cli("evals", "import", src, "--metric", "exact_match", "--out", out)
    assert code == 2 and not out.exists()
    assert "did you mean 'exact_match,strict-match'" in err
    code, _, err = cli("evals", "import", src, "--metric", "exact_match,strict-match",
                       "--out", out)  # fmt: skip
    assert code == 0, err  # the suggestion, typed, works


# ---- ledger: impossible observed values ------------------------------------------------
def _ledger(tmp_path):
    db = tmp_path / "f.db"
    with Ledger(db, create=True) as L:
        L.add(method="supervised", task="loss", point=1.94, lo=1.8, hi=2.1, level=0.9)  # 1
        L.add(method="downstream", task="piqa", point=72.6, lo=70.1, hi=75.4, level=0.9)  # 2
        L.add(method="mine", point=1.0)  # 3: a method the ledger knows nothing about
    return db


@pytest.mark.parametrize(
    "rid, value, words",
    [
        ("1", "-2.0", "a loss must be a positive number"),
        ("1", "0", "a loss must be a positive number"),
        ("2", "150", "[0, 100] points"),
        ("2", "-1", "[0, 100] points"),
    ],
)
def test_resolve_refuses_impossible_observed(cli, tmp_path, rid, value, words):
    db = _ledger(tmp_path)
    code, out, err = cli("ledger", "resolve", rid, "--ledger", db, "--observed", value)
    assert code == 2 and out == "" and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert f"record {rid}" in err and words in err
    assert f"{float(value):g}" in err
    with Ledger(db) as L:
        assert L.records()["observed"].isna().all()  # nothing written


def test_resolve_accepts_possible_values(cli, tmp_path):
    db = _ledger(tmp_path)
    for rid, value in (("1", "2.0"), ("2", "73.88"), ("3", "-2.0")):
        code, _, err = cli("ledger", "resolve", rid, "--ledger", db, "--observed", value)
        assert code == 0, err
    with Ledger(db) as L:
        assert L.records()["observed"].tolist() == [2.0, 73.88, -2.0]


def test_resolve_table_with_an_impossible_value_writes_nothing(cli, tmp_path):
    db = _ledger(tmp_path)
    t = tmp_path / "t.csv"
    t.write_text("id,observed\n2,73.9\n1,-2\n")
    code, _, err = cli("ledger", "resolve", "--ledger", db, "--table", t)
    assert code == 2 and "record 1" in err and "-2" in err
    with Ledger(db) as L:
        assert L.records()["observed"].isna().all()


def test_python_resolve_refuses_non_finite_naming_the_record(tmp_path):
    db = _ledger(tmp_path)
    with Ledger(db) as L:
        for bad in (math.nan, math.inf):
            with pytest.raises(InputError, match=r"record 3: observed must be a finite number"):
                L.resolve(3, bad)
        with pytest.raises(InputError, match=r"record 1 \(supervised, task loss\).*-2"):
            L.resolve(1, -2.0)


# ---- ledger: a record is corrected once ------------------------------------------------
def test_second_correction_is_refused_naming_the_first(cli, tmp_path):
    db = _ledger(tmp_path)
    add = ("ledger", "add", "--ledger", db, "--method", "supervised", "--point")
    assert cli(*add, "2.0", "--corrects", "1")[0] == 0  # record 4 corrects 1
    code, out, err = cli(*add, "2.1", "--corrects", "1")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "record 1 is already corrected by record 4" in err and "--corrects 4" in err
    with Ledger(db) as L:
        assert len(L) == 4
    # correcting the correction is the way; a later try on 1 names the chain's end
    assert cli(*add, "2.1", "--corrects", "4")[0] == 0  # record 5
    code, _, err = cli(*add, "2.2", "--corrects", "1")
    assert code == 2 and "corrected by record 4" in err and "--corrects 5" in err
    with Ledger(db) as L:
        recs = L.records()
    assert recs["superseded_by"].fillna(0).tolist() == [4, 0, 0, 5, 0]


def test_second_correction_in_one_batch_is_refused(tmp_path):
    db = _ledger(tmp_path)
    with Ledger(db) as L:
        L.add(method="mine", point=2.0, corrects=3)
        with pytest.raises(InputError, match="already corrected by record 4"):
            L.add(method="mine", point=2.5, corrects=3)
        assert len(L) == 4
