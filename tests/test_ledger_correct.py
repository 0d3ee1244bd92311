"""`ledger correct ID`: a correction keeps every field of the record it corrects, changes only
what is given, and scores use it instead of the corrected record."""

from __future__ import annotations

import json

import pytest

from lmforecast.errors import InputError
from lmforecast.ledger import Ledger


def _resolved(path):
    with Ledger(path, create=True) as L:
        rid = L.add(method="supervised", point=2.31, lo=2.25, hi=2.38, level=0.9, label="q3",
                    form="chinchilla", run="r1", task="loss", N=1e9, D=2e10, budget=1.2e20,
                    fit_sha256="ab" * 32, inputs={"k": 1})  # fmt: skip
        L.resolve(rid, 2.29, source="eval")
    return rid


KEPT = ["label", "method", "form", "run", "task", "N", "D", "budget", "point", "lo", "hi",
        "level", "fit_sha256", "input_sha256", "inputs"]  # fmt: skip


def test_correct_observed_keeps_every_other_field(tmp_path):
    db = tmp_path / "l.db"
    rid = _resolved(db)
    with Ledger(db) as L:
        new = L.correct(rid, observed=2.27)
        df = L.records().set_index("id")
        assert L.verify_digests() == []
    old, cor = df.loc[rid], df.loc[new]
    for k in KEPT:
        assert cor[k] == old[k], k
    assert cor["corrects"] == rid and old["superseded_by"] == new
    assert cor["observed"] == 2.27 and old["observed"] == 2.29


def test_correct_the_point_keeps_the_observed_value(tmp_path):
    db = tmp_path / "l.db"
    rid = _resolved(db)
    with Ledger(db) as L:
        new = L.correct(rid, point=2.30)
        r = L.records(ids=[new]).iloc[0]
    assert r["point"] == 2.30 and r["observed"] == 2.29 and r["source"] == "eval"
    assert r["lo"] == 2.25 and r["run"] == "r1"


def test_correct_refuses_nothing_to_change_a_second_correction_and_bad_values(tmp_path):
    db = tmp_path / "l.db"
    rid = _resolved(db)
    with Ledger(db) as L:
        with pytest.raises(InputError, match="nothing to correct"):
            L.correct(rid, observed=2.29)
        with pytest.raises(InputError, match="a loss must be a positive number"):
            L.correct(rid, observed=-1.0)
        with pytest.raises(InputError, match="outside its interval"):
            L.correct(rid, point=3.0)
        new = L.correct(rid, observed=2.27)
        with pytest.raises(InputError, match=f"already corrected by record {new}"):
            L.correct(rid, observed=2.28)
        assert len(L) == 2  # the refused corrections wrote nothing


def test_cli_correct_and_score_uses_the_correction(cli, tmp_path):
    db = tmp_path / "l.db"
    rid = _resolved(db)
    code, out, err = cli("ledger", "correct", rid, "--ledger", db, "--observed", "2.50",
                         "--json")  # fmt: skip
    assert code == 0, err
    assert json.loads(out) == {"id": 2, "corrects": 1, "ledger": str(db)}
    code, out, _ = cli("ledger", "score", "--ledger", db, "--json")
    s = json.loads(out)["overall"]
    assert s["n_records"] == 1 and s["coverage"] == 0.0  # 2.50 lies above hi = 2.38
    assert s["mean_abs_error"] == pytest.approx(0.19)
