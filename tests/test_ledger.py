"""The forecast ledger: records, resolution, scores checked by hand, concurrency, SIGKILL,
migration from schema version 1."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from hashlib import sha256
from pathlib import Path

import numpy as np
import pytest

from lmforecast.errors import InputError
from lmforecast.ledger import Ledger, create_v1, score_records, score_table, winkler_score
from lmforecast.ledger.schema import SCHEMA_VERSION

SRC = str(Path(__file__).resolve().parents[1] / "src")


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    return env


def test_record_fields_and_hashes(tmp_path):
    fit = tmp_path / "fit.json"
    fit.write_text('{"law": "chinchilla"}')
    table = tmp_path / "runs.csv"
    table.write_text("N,D,loss\n1,2,3\n")
    with Ledger(tmp_path / "l.db", create=True) as L:
        rid = L.add(method="supervised", form="chinchilla", point=2.5, lo=2.4, hi=2.7,
                    level=0.9, N=1e9, D=2e10, fit=fit, inputs_table=table, label="plan-a",
                    run="big")  # fmt: skip
        r = L.records().iloc[0]
    import hashlib

    assert rid == 1 and r["label"] == "plan-a" and r["form"] == "chinchilla"
    assert r["fit_sha256"] == hashlib.sha256(fit.read_bytes()).hexdigest()
    assert r["input_sha256"] == hashlib.sha256(table.read_bytes()).hexdigest()
    assert (r["N"], r["D"], r["point"], r["lo"], r["hi"], r["level"]) == (
        1e9, 2e10, 2.5, 2.4, 2.7, 0.9)  # fmt: skip
    assert r["lmforecast_version"] and r["created"].endswith("+00:00")


def test_scores_match_hand_computation(tmp_path):
    # four resolved forecasts (two methods) + one open one + one superseded one
    rows = [  # method, point, lo, hi, level, observed
        ("a", 2.0, 1.8, 2.2, 0.9, 2.1),  # covered, |e| .1, W = .4
        ("a", 3.0, 2.9, 3.1, 0.8, 3.3),  # above: W = .2 + (2/.2)*.2 = 2.2, |e| .3
        ("b", 1.0, 0.5, 1.5, 0.5, 0.0),  # below: W = 1 + (2/.5)*.5 = 3.0, |e| 1
        ("b", 4.0, None, None, None, 4.5),  # no interval: not covered, no W, |e| .5
    ]
    with Ledger(tmp_path / "l.db", create=True) as L:
        for m, p, lo, hi, lv, y in rows:
            rid = L.add(method=m, point=p, lo=lo, hi=hi, level=lv)
            L.resolve(rid, y)
        L.add(method="a", point=9.0, lo=8, hi=10, level=0.9)  # open
        old = L.add(method="b", point=7.0, lo=6, hi=8, level=0.9)
        L.resolve(old, 100.0)  # ... then corrected: superseded, not scored
        L.add(method="b", point=7.5, corrects=old)
        res = score_records(L.records())
    a, b, allr = res["groups"]["a"], res["groups"]["b"], res["overall"]
    assert a["coverage"] == pytest.approx(0.5) and b["coverage"] == pytest.approx(0.0)
    assert a["mean_abs_error"] == pytest.approx(0.2)
    assert a["winkler"] == pytest.approx((0.4 + 2.2) / 2)
    assert b["winkler"] == pytest.approx(3.0) and b["n_no_interval"] == 1
    assert allr["n_resolved"] == 4 and allr["n_open"] == 2 and allr["n_records"] == 6
    assert allr["coverage"] == pytest.approx(0.25)
    assert allr["mean_abs_error"] == pytest.approx((0.1 + 0.3 + 1 + 0.5) / 4)
    assert allr["median_abs_error"] == pytest.approx((0.3 + 0.5) / 2)
    assert allr["winkler"] == pytest.approx((0.4 + 2.2 + 3.0) / 3)
    t = score_table(res)
    assert list(t["group"]) == ["a", "b", "(all)"]


def test_non_finite_interval_is_a_failure():
    w = winkler_score([1.0, -np.inf], [2.0, np.inf], [1.5, 1.5], [0.9, 0.9])
    assert w[0] == pytest.approx(1.0) and np.isnan(w[1])


def test_selection_by_label_and_date(tmp_path):
    with Ledger(tmp_path / "l.db", create=True) as L:
        L.add(method="a", point=1.0, label="x")
        L.add(method="a", point=1.0, label="y")
        assert list(L.records(label="y")["id"]) == [2]
        assert len(L.records(since="2000-01-01")) == 2
        assert len(L.records(until="2000-01-01")) == 0


def test_resolved_record_is_never_changed(tmp_path):
    with Ledger(tmp_path / "l.db", create=True) as L:
        rid = L.add(method="a", point=1.0)
        L.resolve(rid, 1.5)
        with pytest.raises(InputError, match="already resolved"):
            L.resolve(rid, 2.0)
        with pytest.raises(InputError, match="no record 99"):
            L.resolve(99, 2.0)
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            L._con.execute("UPDATE forecasts SET point = 0")
        with pytest.raises(sqlite3.IntegrityError, match="final"):
            L._con.execute("DELETE FROM resolutions")
        assert L.records()["observed"].tolist() == [1.5]
        assert L.verify() == {"integrity": "ok", "bad_forecasts": [], "bad_resolutions": []}


WRITER = """
import os, sys, time
from lmforecast.ledger import Ledger
path, tag, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
L = Ledger(path, create=True)
open(path + "." + tag + ".ready", "w").close()
while not os.path.exists(path + ".go"):  # start together
    time.sleep(0.005)
for i in range(n):
    L.add(method="m", point=float(i), label=tag, run=f"{tag}-{i}")
    if i % 50 == 49:  # let the other writer in: SQLite's busy handler can starve a waiter
        time.sleep(0.005)
L.close()
"""


@pytest.mark.slow
def test_two_concurrent_writer_processes(tmp_path):
    path = tmp_path / "l.db"
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(path), tag, "1000"], env=_env())
        for tag in ("p1", "p2")
    ]
    t0 = time.time()
    while not all(Path(f"{path}.{t}.ready").exists() for t in ("p1", "p2")):
        assert time.time() - t0 < 120 and all(p.poll() is None for p in procs)
        time.sleep(0.01)
    Path(f"{path}.go").touch()
    assert [p.wait(timeout=300) for p in procs] == [0, 0]
    with Ledger(path) as L:
        df = L.records()
        assert L.verify()["bad_forecasts"] == []
    assert len(df) == 2000 and df["id"].tolist() == list(range(1, 2001))
    switches = int((df["label"] != df["label"].shift()).sum()) - 1
    assert switches >= 2  # the writers really interleaved
    for tag in ("p1", "p2"):
        runs = set(df.loc[df["label"] == tag, "run"])
        assert runs == {f"{tag}-{i}" for i in range(1000)}


KILLED = """
import sys
from lmforecast.ledger import Ledger
L = Ledger(sys.argv[1], create=True)
rec = dict(method="m", point=1.0, lo=0.5, hi=1.5, level=0.9, created="t",
           lmforecast_version="v", label="batch", inputs="{}")
k = 0
while True:  # batches of 25 records, one transaction each
    L.add_many([dict(rec, run=f"r{k}-{j}") for j in range(25)])
    k += 1
    print(k, flush=True)
"""


def test_sigkill_mid_write_leaves_a_readable_ledger(tmp_path):
    path = tmp_path / "l.db"
    p = subprocess.Popen([sys.executable, "-c", KILLED, str(path)], env=_env(),
                         stdout=subprocess.PIPE, text=True)  # fmt: skip
    done = 0
    while done < 20:
        line = p.stdout.readline()
        assert line, "the writer died early"
        done = int(line)
    time.sleep(0.05)  # let it get inside another write
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    with Ledger(path) as L:
        df = L.records()
        assert L.verify() == {"integrity": "ok", "bad_forecasts": [], "bad_resolutions": []}
    n = len(df)
    assert n >= 20 * 25 and n % 25 == 0  # whole batches only: no partial record or batch
    assert df["point"].notna().all() and (df["hi"] == 1.5).all()


def test_migration_from_version_1(tmp_path):
    path = tmp_path / "old.db"
    create_v1(path)
    con = sqlite3.connect(path)
    con.executemany(
        "INSERT INTO forecasts (created, version, label, method, N, D, task, point, lo, hi,"
        " level, fit_sha256, observed, resolved) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
        [
            (
                "2025-01-02T00:00:00+00:00",
                "0.0.1",
                "q1",
                "supervised",
                1e9,
                2e10,
                "loss",
                2.5,
                2.4,
                2.6,
                0.9,
                "ab" * 32,
                2.55,
                "2025-03-01T00:00:00+00:00",
            ),
            (
                "2025-01-03T00:00:00+00:00",
                "0.0.1",
                "q1",
                "supervised",
                2e9,
                4e10,
                "loss",
                2.3,
                2.2,
                2.4,
                0.9,
                "cd" * 32,
                None,
                None,
            ),
        ],  # fmt: skip
    )
    con.commit()
    con.close()
    with Ledger(path) as L:
        assert L.backup_ == tmp_path / "old.db.v1.bak"
        df = L.records()
        assert L.verify()["bad_forecasts"] == []
        assert L._con.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        L.resolve(2, 2.35)  # the migrated ledger works as a current one
    bak = sqlite3.connect(tmp_path / "old.db.v1.bak")  # the backup is the old file, as it was
    assert bak.execute("PRAGMA user_version").fetchone()[0] == 1
    assert bak.execute("SELECT observed FROM forecasts ORDER BY id").fetchall() == [
        (2.55,),
        (None,),
    ]
    bak.close()
    assert df["observed"].tolist()[0] == 2.55 and np.isnan(df["observed"].tolist()[1])
    assert df["fit_sha256"].tolist() == ["ab" * 32, "cd" * 32]
    assert df["lmforecast_version"].tolist() == ["0.0.1", "0.0.1"]


def test_refuses_files_that_are_not_ledgers(tmp_path):
    other = tmp_path / "other.db"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE runs (N REAL, loss REAL)")
    con.commit()
    con.close()
    before = other.read_bytes()
    with pytest.raises(InputError, match=r"not an lmforecast ledger \(its tables: runs\)"):
        Ledger(other, create=True)
    assert other.read_bytes() == before
    csv = tmp_path / "runs.csv"
    csv.write_text("N,loss\n1,2\n")
    with pytest.raises(InputError, match="not an SQLite database"):
        Ledger(csv, create=True)
    with pytest.raises(InputError, match="no such ledger"):
        Ledger(tmp_path / "missing.db")


def test_a_ledger_locked_by_another_writer_fails_in_one_line(tmp_path, monkeypatch):
    import lmforecast.ledger.schema as schema

    path = tmp_path / "l.db"
    Ledger(path, create=True).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    monkeypatch.setattr(schema, "BUSY_TIMEOUT_S", 0.2)
    try:
        with Ledger(path) as L, pytest.raises(InputError, match="cannot write the ledger"):
            L.add(method="m", point=1.0)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    with Ledger(path) as L:
        assert len(L) == 0 and L.add(method="m", point=1.0) == 1


def test_open_waits_out_a_lock_that_sqlite_reports_without_waiting(tmp_path, monkeypatch):
    # Two processes creating one ledger can both hold a shared lock while switching to WAL;
    # SQLite then answers one of them "database is locked" at once (CI saw it). Opening retries.
    from lmforecast.ledger import schema

    real, calls = schema._ensure_current, []

    def flaky(con, p, create):
        calls.append(1)
        if len(calls) < 3:
            raise sqlite3.OperationalError("database is locked")
        return real(con, p, create)

    monkeypatch.setattr(schema, "_ensure_current", flaky)
    with Ledger(tmp_path / "l.db", create=True) as L:
        L.add(method="m", point=1.0)
        assert len(L.records()) == 1
    assert len(calls) >= 3  # two refusals waited out (creation, then the open)
    monkeypatch.setattr(schema, "BUSY_TIMEOUT_S", 0.05)

    def locked(con, p, create):
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(schema, "_ensure_current", locked)
    with pytest.raises(InputError, match="cannot use the ledger .database is locked"):
        Ledger(tmp_path / "m.db", create=True)


# ---- the library behind `--ledger` and the `ledger` verbs ------------------------------------
#: `supervised predict --preset hoffmann2022 --params 7e9 --tokens 1.4e11 --json`, as printed
PREDICT_OUT = {
    "loss": 2.1835417931054084,
    "interval": [2.153637715007625, 2.21386110069172],
    "level": 0.9,
}


def test_forecast_records_of_a_printed_forecast(tmp_path):
    from lmforecast.ledger.forecasts import fit_info, forecast_records, register_forecasts

    fit = tmp_path / "fit.json"
    fit.write_text('{"law": "chinchilla", "meta": {"task": "ignored-after-law"}}')
    assert fit_info(fit) == {"form": "chinchilla", "task": "ignored-after-law"}
    recs = forecast_records(
        "supervised",
        "predict",
        PREDICT_OUT,
        fit=fit,
        label="7b",
        N=7e9,
        D=1.4e11,
        tables=[None, str(tmp_path / "missing.csv")],
    )
    assert len(recs) == 1
    r = recs[0]
    assert (r["method"], r["form"], r["task"], r["label"]) == (
        "supervised",
        "chinchilla",
        "ignored-after-law",
        "7b",
    )
    assert (r["point"], r["lo"], r["hi"], r["level"]) == (
        2.1835417931054084,
        2.153637715007625,
        2.21386110069172,
        0.9,
    )
    assert (r["N"], r["D"], r["budget"], r["run"]) == (7e9, 1.4e11, None, None)
    assert r["input_sha256"] is None and r["fit_sha256"] == sha256(fit.read_bytes()).hexdigest()
    # a preset's name is no file: the form is the preset, the task of a loss law is `loss`
    (p,) = forecast_records(
        "supervised", "predict", PREDICT_OUT, fit="hoffmann2022", preset="hoffmann2022"
    )
    assert (p["form"], p["task"], p["fit_sha256"]) == ("hoffmann2022", "loss", None)
    ids = register_forecasts(tmp_path / "l.db", recs + [p])
    assert ids == [1, 2]
    with Ledger(tmp_path / "l.db") as L:
        got, bad = L.records(), L.verify_digests()
    assert got["form"].tolist() == ["chinchilla", "hoffmann2022"] and bad == []
    assert got["lmforecast_version"].notna().all() and got["created"].notna().all()


def test_forecast_records_one_per_item_and_flpm_budget(tmp_path):
    from lmforecast.ledger.forecasts import forecast_records

    out = {
        "method": "M4",
        "level": 0.8,
        "predictions": [
            {"model": "a", "flops": 1e21, "performance": 41.5, "interval": [39.0, 44.0]},
            {"model": "b", "flops": 2e21, "performance": 47.25},
            {"model": "c", "flops": 3e21},
        ],
    }
    table = tmp_path / "bench.csv"
    table.write_text("model,score\na,1\n")
    recs = forecast_records(
        "flpm", "predict", out, flops_per_source="1e20,3e20", tables=[str(table)]
    )
    assert [r["run"] for r in recs] == ["a", "b"]  # no point, no record
    assert [r["budget"] for r in recs] == [1e21, 2e21]
    assert (recs[0]["lo"], recs[0]["hi"], recs[0]["level"]) == (39.0, 44.0, 0.8)
    assert (recs[1]["lo"], recs[1]["level"]) == (None, None)
    assert recs[0]["inputs"] == '{"flops_per_source": "1e20,3e20"}'
    assert recs[0]["input_sha256"] == sha256(table.read_bytes()).hexdigest()
    (only,) = forecast_records(
        "flpm", "predict", {"performance": 40.0}, flops_per_source="1e20,3e20"
    )
    assert only["budget"] == 4e20


def test_add_forecast_refuses_a_point_outside_its_interval(tmp_path):
    from lmforecast.ledger.forecasts import add_forecast

    db = tmp_path / "l.db"
    with pytest.raises(InputError, match="point 3 lies outside its interval"):
        add_forecast(db, method="m", point=3.0, lo=1.0, hi=2.0, level=0.9)
    assert not db.exists()
    assert add_forecast(db, method="m", point=1.5, lo=1.0, hi=2.0, level=0.9, label="x") == 1


def test_views_select_resolve_and_write_records(tmp_path):
    from lmforecast.ledger.forecasts import add_forecast
    from lmforecast.ledger.views import (
        digest_warning,
        export_text,
        json_records,
        observations,
        resolve_records,
        select_records,
        show_frame,
    )

    db = tmp_path / "l.db"
    for p in (1.25, 2.5):
        add_forecast(db, method="m", point=p, label="a" if p < 2 else "b")
    obs = tmp_path / "obs.csv"
    obs.write_text("id,observed\n2,2.75\n")
    items = observations(obs, source="eval")
    assert [(int(i), float(o), s) for i, o, s in items] == [(2, 2.75, "eval")]
    resolve_records(db, items)
    df, bad = select_records(db, label="b")
    assert bad == [] and df["id"].tolist() == [2] and df["observed"].tolist() == [2.75]
    (rec,) = json_records(df)
    assert rec["id"] == 2 and rec["superseded_by"] is None and rec["point"] == 2.5
    shown = show_frame(df)
    assert shown.columns[0] == "id" and len(shown["created"].iloc[0]) == 19
    assert shown["lo"].iloc[0] == ""
    assert json.loads(export_text(df, "x.jsonl"))["source"] == "eval"
    assert export_text(df, "x.csv").splitlines()[0].startswith("id,created,")
    with pytest.raises(InputError, match="use a .csv or .jsonl file name"):
        export_text(df, "x.txt")
    assert digest_warning(db, []) is None
    assert digest_warning("l.db", list(range(1, 13))) == (
        "l.db: record(s) 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 2 more do not match their digest: "
        "edited outside lmforecast, behind the ledger's append-only rules"
    )
    obs.write_text("id,observed\n4.5,1\n")
    with pytest.raises(InputError, match=r"column 'id' row 1: 4.5 is not a record id"):
        observations(obs)
