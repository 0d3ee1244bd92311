"""Ledger files a careless or hostile user may name: links to missing files, devices, immutable
or damaged files, records edited behind the append-only rules, and many processes creating one
ledger at once. Each is refused in one line (exit 2) with nothing written beside it, or read
without writing anything."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys

import pytest

from lmforecast.ledger import Ledger


def _one_line_error(code, err, *needles):
    assert code == 2, err
    lines = [x for x in err.splitlines() if x.startswith("lmforecast: error:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    for n in needles:
        assert n in lines[0], lines[0]


ADD = ("--method", "supervised", "--point", "2.0")


def test_dangling_symlink_is_not_created_through(cli, tmp_path):
    outside = tmp_path / "outside" / "led.db"
    outside.parent.mkdir()
    (tmp_path / "work").mkdir()
    link = tmp_path / "work" / "l.db"
    link.symlink_to(outside)
    code, _, err = cli("ledger", "add", "--ledger", link, *ADD)
    _one_line_error(code, err, "symbolic link to a missing file")
    assert not outside.exists() and list(outside.parent.iterdir()) == []
    code, _, err = cli("--follow-symlinks", "ledger", "add", "--ledger", link, *ADD)
    assert code == 0, err
    assert outside.is_file() and link.is_symlink()


@pytest.mark.parametrize("dev", ["/dev/null", "/dev/full", "link"])
def test_device_ledger_is_refused_and_leaves_no_journal(cli, tmp_path, dev):
    path = dev
    if dev == "link":
        path = tmp_path / "d.db"
        path.symlink_to("/dev/null")
    before = set(os.listdir("/dev"))
    code, _, err = cli("ledger", "add", "--ledger", path, *ADD)
    _one_line_error(code, err, "not a regular file")
    assert set(os.listdir("/dev")) == before
    assert sorted(os.listdir(tmp_path)) == (["d.db"] if dev == "link" else [])


def test_read_only_ledger_is_read_without_side_files_and_refused_for_writes(cli, tmp_path):
    db = tmp_path / "l.db"
    with Ledger(db, create=True) as L:
        L.add(method="supervised", point=2.0)
    os.chmod(db, 0o444)
    if os.access(db, os.W_OK):  # root writes anything: make the file immutable instead
        if subprocess.run(["chattr", "+i", str(db)], capture_output=True).returncode != 0:
            pytest.skip("cannot make a file unwritable here")
    try:
        code, out, err = cli("ledger", "show", "--ledger", db, "--json")
        assert code == 0, err
        code, _, err = cli("ledger", "add", "--ledger", db, *ADD)
        _one_line_error(code, err, "read-only")
        assert sorted(os.listdir(tmp_path)) == ["l.db"]
    finally:
        subprocess.run(["chattr", "-i", str(db)], capture_output=True)


def _damaged(tmp_path):
    db = tmp_path / "big.db"
    with Ledger(db, create=True) as L:
        for i in range(300):
            L.add(method="supervised", point=2.0 + i * 1e-3, lo=1.9, hi=2.5, level=0.9,
                  label="x" * 50)  # fmt: skip
    with open(db, "r+b") as fh:  # page 20: a b-tree page of the records, overwritten
        fh.seek(4096 * 19)
        fh.write(bytes(range(256)) * 16)
    return db


def test_damaged_ledger_is_refused_by_every_verb(cli, tmp_path):
    db = _damaged(tmp_path)
    before = db.read_bytes()
    for argv in (("ledger", "add", "--ledger", db, *ADD),
                 ("ledger", "show", "--ledger", db),
                 ("ledger", "score", "--ledger", db)):  # fmt: skip
        code, _, err = cli(*argv)
        _one_line_error(code, err, "damaged")
    assert db.read_bytes() == before


def test_record_edited_behind_the_triggers_is_named_by_show_and_score(cli, tmp_path):
    db = tmp_path / "l.db"
    with Ledger(db, create=True) as L:
        for p in (2.0, 2.1, 2.2):
            L.add(method="supervised", point=p)
    con = sqlite3.connect(db)
    con.execute("DROP TRIGGER forecasts_no_update")
    con.execute("UPDATE forecasts SET point = 1.5 WHERE id = 2")
    con.commit()
    con.close()
    for verb in ("show", "score"):
        code, _, err = cli("ledger", verb, "--ledger", db)
        assert code == 0
        assert "record(s) 2 do not match their digest" in err


_WORKER = """
import argparse, sys, time
from lmforecast.cli.ledger import check_ledger_flags
from lmforecast.ledger import Ledger
while time.time() < float(sys.argv[2]):  # start together
    time.sleep(0.001)
args = argparse.Namespace(command="supervised", verb="predict", ledger=sys.argv[1], label="w")
check_ledger_flags(args)  # the door of every verb given --ledger PATH
with Ledger(sys.argv[1], create=True) as L:
    L.add(method="supervised", point=2.0)
"""


@pytest.mark.slow
def test_concurrent_global_ledger_writers_creating_one_ledger_all_land(tmp_path):
    import time

    db = tmp_path / "new.db"
    go = str(time.time() + 4.0)
    procs = [subprocess.Popen([sys.executable, "-c", _WORKER, str(db), go],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
             for _ in range(8)]  # fmt: skip
    errs = [p.communicate()[1].decode() for p in procs]
    assert all(p.returncode == 0 for p in procs), errs
    with Ledger(db) as L:
        assert len(L) == 8
    assert sorted(os.listdir(tmp_path)) == ["new.db"]
