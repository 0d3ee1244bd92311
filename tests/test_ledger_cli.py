"""`--ledger PATH --label NAME` on forecasting verbs registers exactly what the verb prints;
`lmforecast ledger add|resolve|score|show|export` from the command line."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd
import pytest

from lmforecast.ledger import Ledger

B1 = str(
    Path(__file__).resolve().parents[1] / "src/lmforecast/data/bundled/osl/table_b1_base_models.csv"
)


def test_supervised_predict_registers_what_it_prints(cli, tmp_path):
    db = tmp_path / "L.db"
    code, out, err = cli("supervised", "predict", "--preset", "hoffmann2022", "--params",
                         "7e10", "--tokens", "1.4e12", "--json", "--ledger", db, "--label",
                         "c70b")  # fmt: skip
    assert code == 0, err
    printed = json.loads(out)
    code, out2, err = cli("--ledger", db, "supervised", "allocate", "--preset", "hoffmann2022",
                          "--flops", "1e22", "--json")  # fmt: skip
    assert code == 0, err
    alloc = json.loads(out2)
    with Ledger(db) as L:
        df = L.records()
    r = df.iloc[0]
    assert (r["method"], r["form"], r["label"], r["task"]) == ("supervised", "hoffmann2022",
                                                              "c70b", "loss")  # fmt: skip
    assert (r["N"], r["D"], r["point"]) == (7e10, 1.4e12, printed["loss"])
    assert [r["lo"], r["hi"]] == printed["interval"] and r["level"] == printed["level"]
    a = df.iloc[1]
    assert (a["N"], a["D"], a["budget"], a["point"]) == (alloc["N"], alloc["D"], 1e22,
                                                         alloc["loss"])  # fmt: skip
    assert f"registered record(s) 2 in {db}" in err


def test_downstream_predict_records_fit_hash_and_osl_records_every_model(cli, tmp_path):
    fit = tmp_path / "piqa.json"
    code, _, err = cli("downstream", "fit", "--evals", "pythia", "--task", "piqa", "--models",
                       "pythia-70m,pythia-160m,pythia-410m,pythia-1b", "--bootstrap", "20",
                       "--out", fit)  # fmt: skip
    assert code == 0, err
    db = tmp_path / "L.db"
    code, out, err = cli("downstream", "predict", "--fit", fit, "--params", "1.2e9", "--tokens",
                         "3e11", "--json", "--ledger", db)  # fmt: skip
    assert code == 0, err
    printed = json.loads(out)
    code, out, err = cli("osl", "predict", "--preset", "gsm-cot", "--benchmarks", B1, "--json",
                         "--ledger", db, "--label", "osl")  # fmt: skip
    assert code == 0, err
    preds = [p for p in json.loads(out)["predictions"] if p["y_pred"] is not None]
    with Ledger(db) as L:
        df = L.records()
    d = df.iloc[0]
    assert d["fit_sha256"] == hashlib.sha256(fit.read_bytes()).hexdigest()
    assert (d["task"], d["point"], d["form"]) == ("piqa", printed["performance"],
                                                  printed["method"])  # fmt: skip
    assert [d["lo"], d["hi"]] == printed["interval"]
    osl = df[df["label"] == "osl"]
    assert len(osl) == len(preds) > 10
    assert osl["run"].tolist() == [p["model"] for p in preds]
    assert osl["point"].tolist() == [p["y_pred"] for p in preds]
    assert osl["input_sha256"].iloc[0] == hashlib.sha256(open(B1, "rb").read()).hexdigest()


def test_ledger_verbs_round_trip(cli, tmp_path):
    db = tmp_path / "L.db"
    for p, lo, hi in [(2.0, 1.9, 2.1), (3.0, 2.9, 3.1)]:
        code, _, err = cli("ledger", "add", "--ledger", db, "--method", "m", "--point", p,
                           "--lo", lo, "--hi", hi, "--level", "0.8", "--label", "x")  # fmt: skip
        assert code == 0, err
    assert cli("ledger", "resolve", "1", "--ledger", db, "--observed", "2.3")[0] == 0
    assert cli("ledger", "resolve", "2", "--ledger", db, "--observed", "3.05")[0] == 0
    # a correction of record 1: a new record; record 1 stays as it was and leaves the score
    code, _, err = cli("ledger", "add", "--ledger", db, "--method", "m", "--point", "2.2",
                       "--corrects", "1")  # fmt: skip
    assert code == 0, err
    code, out, _ = cli("ledger", "score", "--ledger", db, "--json")
    s = json.loads(out)["overall"]
    assert s["n_resolved"] == 1 and s["coverage"] == 1.0
    assert s["winkler"] == pytest.approx(0.2) and s["n_open"] == 1
    code, out, _ = cli("ledger", "show", "--ledger", db, "--json")
    rows = json.loads(out)
    assert [r["superseded_by"] for r in rows] == [3, None, None] and rows[0]["observed"] == 2.3
    assert cli("ledger", "export", "--ledger", db, "--out", tmp_path / "e.csv")[0] == 0
    e = pd.read_csv(tmp_path / "e.csv")
    assert e["point"].tolist() == [2.0, 3.0, 2.2] and e["corrects"].iloc[2] == 1


def test_resolve_from_a_table_is_all_or_nothing(cli, tmp_path):
    db = tmp_path / "L.db"
    for p in (1.0, 2.0, 3.0):
        assert cli("ledger", "add", "--ledger", db, "--method", "m", "--point", p)[0] == 0
    assert cli("ledger", "resolve", "2", "--ledger", db, "--observed", "2.5")[0] == 0
    bad = tmp_path / "obs.csv"
    bad.write_text("id,observed,source\n1,1.1,run log\n2,2.2,run log\n3,3.3,run log\n")
    code, _, err = cli("ledger", "resolve", "--ledger", db, "--table", bad)
    assert code == 2 and "record 2 is already resolved" in err
    with Ledger(db) as L:
        assert L.records()["observed"].isna().tolist() == [True, False, True]  # nothing landed
    good = tmp_path / "obs2.csv"
    good.write_text("id,observed,source\n1,1.1,run log\n3,3.3,run log\n")
    code, out, err = cli("ledger", "resolve", "--ledger", db, "--table", good, "--json")
    assert code == 0, err
    with Ledger(db) as L:
        df = L.records()
    assert df["observed"].tolist() == [1.1, 2.5, 3.3] and df["source"].tolist()[0] == "run log"


def test_form_and_task_read_from_saved_fits(tmp_path):
    # FLP/FLP-M fits keep them under "config", supervised/distillation fits name the "law"
    from lmforecast.ledger.forecasts import fit_info as _fit_info

    f = tmp_path / "flp.json"
    f.write_text(json.dumps({"kind": "FLPM", "config": {"task": "HumanEval", "form": "M4"}}))
    assert _fit_info(str(f)) == {"form": "M4", "task": "HumanEval"}
    f.write_text(json.dumps({"law": "chinchilla-gamma", "meta": {"source": "x"}}))
    assert _fit_info(str(f)) == {"form": "chinchilla-gamma"}


def test_salience_predict_registers_every_model(cli, tmp_path):
    """`salience predict --ledger`: one record per model of the loss file, the printed predicted
    accuracy and interval, the fit's and the loss file's hashes."""
    from lmforecast.examples import path as example_path

    ex = {k: str(example_path(f"salience/{k}")) for k in
          ("texts.jsonl", "losses.jsonl", "scores.csv", "new_losses.jsonl")}  # fmt: skip
    fit = tmp_path / "fit.json"
    code, _, err = cli("salience", "fit", "--texts", ex["texts.jsonl"], "--losses",
                       ex["losses.jsonl"], "--scores", ex["scores.csv"], "--task", "reasoning",
                       "--chance", "0", "--steps", "20", "--bootstrap", "5",
                       "--out", fit)  # fmt: skip
    assert code == 0, err
    db = tmp_path / "L.db"
    code, out, err = cli("salience", "predict", "--fit", fit, "--losses", ex["new_losses.jsonl"],
                         "--json", "--ledger", db, "--label", "sal")  # fmt: skip
    assert code == 0, err
    preds = json.loads(out)["predictions"]
    with Ledger(db) as L:
        df = L.records()
    assert len(df) == len(preds) > 0
    assert df["method"].unique().tolist() == ["salience"] and set(df["label"]) == {"sal"}
    assert df["run"].tolist() == [p["model"] for p in preds]
    assert df["point"].tolist() == [p["predicted"] for p in preds]
    assert [[r.lo, r.hi] for r in df.itertuples()] == [p["interval"] for p in preds]
    assert df["fit_sha256"].iloc[0] == hashlib.sha256(fit.read_bytes()).hexdigest()
    with open(ex["new_losses.jsonl"], "rb") as fh:
        assert df["input_sha256"].iloc[0] == hashlib.sha256(fh.read()).hexdigest()


def test_show_and_export_json_keep_full_precision_and_integer_ids(cli, tmp_path):
    db = tmp_path / "l.db"
    point, lo, hi = 1.9366454705587173, 1.9012345678901234, 1.9734567890123457
    add = ["--point", repr(point), "--lo", repr(lo), "--hi", repr(hi), "--level", "0.9"]
    code, _, err = cli("ledger", "add", "--ledger", db, "--method", "supervised", *add)
    assert code == 0, err
    code, out, err = cli("ledger", "show", "--ledger", db, "--json")
    assert code == 0, err
    rec = json.loads(out)[0]
    assert (rec["point"], rec["lo"], rec["hi"]) == (point, lo, hi)  # pandas' to_json kept 10 digits
    assert rec["id"] == 1 and isinstance(rec["id"], int) and rec["superseded_by"] is None
    code, _, err = cli("ledger", "export", "--ledger", db, "--out", tmp_path / "e.jsonl")
    assert code == 0, err
    line = json.loads((tmp_path / "e.jsonl").read_text().splitlines()[0])
    assert line["point"] == point and line["id"] == 1
