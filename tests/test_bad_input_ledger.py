"""Bad input to `runs import` and `ledger`: one stderr line naming the problem,
exit status 2, and no file written or changed."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest


def _snapshot(folder: Path) -> dict:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.fixture
def work(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "log.jsonl").write_text(
        "".join(
            json.dumps({"step": s, "loss": 4 - s / 100, "tokens": s * 10}) + "\n"
            for s in (10, 20, 30)
        )  # fmt: skip
    )
    (tmp_path / "back.jsonl").write_text(
        "".join(json.dumps({"step": s, "loss": 3.0, "tokens": s}) + "\n" for s in (10, 20, 15))
    )
    con = sqlite3.connect(tmp_path / "other.db")
    con.execute("CREATE TABLE experiments (name TEXT, loss REAL)")
    con.commit()
    con.close()
    from lmforecast.ledger import Ledger

    with Ledger(tmp_path / "L.db", create=True) as L:
        rid = L.add(method="supervised", point=2.0, lo=1.9, hi=2.1, level=0.9)
        L.resolve(rid, 2.05)
        L.add(method="supervised", point=2.2)
    return tmp_path


CASES = {
    "log-without-named-column": (
        ["runs", "import", "log.jsonl", "--format", "jsonl", "--loss", "val_loss",
         "--params", "1e6", "--out", "runs.csv"],
        r"no column 'val_loss' \(--loss\); the log has columns: step, loss, tokens",
    ),
    "log-without-named-tokens-column": (
        ["runs", "import", "log.jsonl", "--format", "jsonl", "--step", "tokens", "--loss",
         "step", "--tokens", "nope", "--params", "1e6", "--out", "runs.csv"],
        r"no column 'nope' \(--tokens\); the log has columns: step, loss, tokens",
    ),
    "steps-go-backwards": (
        ["runs", "import", "back.jsonl", "--format", "jsonl", "--params", "1e6",
         "--out", "runs.csv", "--checkpoints-out", "ck.csv"],
        r"back.jsonl: run 'back': row 3: step goes backwards \(15 after 20\)",
    ),
    "non-ledger-sqlite-file": (
        ["ledger", "show", "--ledger", "other.db"],
        r"other.db: an SQLite database but not an lmforecast ledger \(its tables: experiments\)",
    ),
    "non-ledger-sqlite-file-on-a-forecasting-verb": (
        ["supervised", "predict", "--preset", "hoffmann2022", "--params", "1e9", "--tokens",
         "2e10", "--ledger", "other.db"],
        r"not an lmforecast ledger",
    ),
    "non-sqlite-file": (
        ["ledger", "add", "--ledger", "log.jsonl", "--method", "m", "--point", "1"],
        r"log.jsonl: not an lmforecast ledger \(not an SQLite database\)",
    ),
    "resolve-unknown-record": (
        ["ledger", "resolve", "7", "--ledger", "L.db", "--observed", "2.0"],
        r"ledger: no record 7",
    ),
    "second-resolve": (
        ["ledger", "resolve", "1", "--ledger", "L.db", "--observed", "2.0"],
        r"record 1 is already resolved \(observed 2.05\)",
    ),
    "interval-without-level": (
        ["ledger", "add", "--ledger", "L.db", "--method", "m", "--point", "1", "--lo", "0.5",
         "--hi", "1.5"],
        r"an interval needs its level in \(0, 1\)",
    ),
    "ledger-on-a-verb-that-does-not-forecast": (
        ["supervised", "fit", "--runs", "log.jsonl", "--ledger", "L.db"],
        r"--ledger: `supervised fit` makes no forecast to register",
    ),
    "failing-forecast-creates-no-ledger": (
        ["supervised", "predict", "--preset", "nope", "--params", "1e9", "--tokens", "2e10",
         "--ledger", "new.db"],
        r"nope",
    ),
    "bad-record-creates-no-ledger": (
        ["ledger", "add", "--ledger", "new.db", "--method", "m", "--point", "1", "--lo", "2",
         "--hi", "1", "--level", "0.9"],
        r"interval lo 2 is above hi 1",
    ),
    "correction-of-unknown-record": (
        ["ledger", "add", "--ledger", "L.db", "--method", "m", "--point", "1", "--corrects",
         "42"],
        r"ledger: no record 42",
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_one_line_exit_2_nothing_written(case, work, cli):
    argv, pattern = CASES[case]
    before = _snapshot(work)
    code, out, err = cli(*argv)
    assert code == 2, (case, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lmforecast: error: "), err
    import re

    assert re.search(pattern, lines[0]), lines[0]
    assert _snapshot(work) == before, case
