"""The ledger file: identification, schema versions and in-place migrations.

A ledger is one SQLite file (standard-library ``sqlite3``) marked by ``PRAGMA application_id``
(:data:`APPLICATION_ID`, the bytes ``LMFL``) and versioned by ``PRAGMA user_version``. Opening a
file of an older version copies it to ``<file>.v<N>.bak`` (SQLite's online backup, so the copy
is consistent) and then migrates it in place, one version at a time, each step in one
transaction. Any other file, SQLite or not, is refused in one line.

Version 1 was the first layout: one ``forecasts`` table with the observation stored in the
same row. Version 2 (current) makes the record append-only: forecasts and resolutions are
separate tables, triggers refuse any UPDATE or DELETE, each row carries a SHA-256 digest of its
content, and a correction is a new record pointing at the one it corrects.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import tempfile
import time
from pathlib import Path

from ..errors import InputError
from ..store.safe_write import follow_symlinks, umask
from .records import digest_forecast, digest_resolution

APPLICATION_ID = 0x4C4D464C  # "LMFL"
SCHEMA_VERSION = 2
BUSY_TIMEOUT_S = 60.0

#: The version-1 layout, kept so that old files can be recognised, migrated and tested.
SCHEMA_V1 = """
CREATE TABLE forecasts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created TEXT NOT NULL,
    version TEXT NOT NULL,
    label TEXT NOT NULL DEFAULT '',
    method TEXT NOT NULL,
    N REAL, D REAL, budget REAL, task TEXT,
    point REAL NOT NULL, lo REAL, hi REAL, level REAL,
    fit_sha256 TEXT,
    observed REAL, resolved TEXT
);
"""

SCHEMA_V2 = """
CREATE TABLE IF NOT EXISTS forecasts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created TEXT NOT NULL,
    lmforecast_version TEXT NOT NULL,
    label TEXT NOT NULL DEFAULT '',
    method TEXT NOT NULL,
    form TEXT,
    run TEXT,
    task TEXT,
    N REAL, D REAL, budget REAL,
    point REAL NOT NULL,
    lo REAL, hi REAL, level REAL,
    fit_sha256 TEXT,
    input_sha256 TEXT,
    inputs TEXT NOT NULL DEFAULT '{}',
    corrects INTEGER REFERENCES forecasts(id),
    digest TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS forecasts_method ON forecasts(method);
CREATE INDEX IF NOT EXISTS forecasts_label ON forecasts(label);
CREATE INDEX IF NOT EXISTS forecasts_created ON forecasts(created);
CREATE TABLE IF NOT EXISTS resolutions (
    forecast_id INTEGER PRIMARY KEY REFERENCES forecasts(id),
    observed REAL NOT NULL,
    resolved TEXT NOT NULL,
    source TEXT NOT NULL DEFAULT '',
    digest TEXT NOT NULL
);
CREATE TRIGGER IF NOT EXISTS forecasts_no_update BEFORE UPDATE ON forecasts
BEGIN SELECT RAISE(ABORT, 'ledger records are append-only; add a correction instead'); END;
CREATE TRIGGER IF NOT EXISTS forecasts_no_delete BEFORE DELETE ON forecasts
BEGIN SELECT RAISE(ABORT, 'ledger records are append-only; add a correction instead'); END;
CREATE TRIGGER IF NOT EXISTS resolutions_no_update BEFORE UPDATE ON resolutions
BEGIN SELECT RAISE(ABORT, 'a resolution is final; add a correction instead'); END;
CREATE TRIGGER IF NOT EXISTS resolutions_no_delete BEFORE DELETE ON resolutions
BEGIN SELECT RAISE(ABORT, 'a resolution is final; add a correction instead'); END;
"""


def _connect(path: Path) -> sqlite3.Connection:
    con = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_S, isolation_level=None)
    con.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
    # WAL + NORMAL: a commit survives the process being killed at any point; only a power cut
    # can lose the last commits (never corrupt the file), and commits skip one fsync each.
    con.execute("PRAGMA synchronous = NORMAL")
    return con


def _identify(con: sqlite3.Connection, path: Path) -> int:
    """The file's schema version, or an InputError if it is not a ledger."""
    try:
        app = con.execute("PRAGMA application_id").fetchone()[0]
        ver = con.execute("PRAGMA user_version").fetchone()[0]
        tables = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    except sqlite3.DatabaseError:
        raise InputError(f"{path}: not an lmforecast ledger (not an SQLite database)") from None
    if app == 0 and not tables:
        return 0  # an empty database: a new ledger
    if app != APPLICATION_ID:
        shown = ", ".join(t for t in tables if not t.startswith("sqlite_")) or "none"
        raise InputError(
            f"{path}: an SQLite database but not an lmforecast ledger (its tables: {shown})"
        )
    if ver > SCHEMA_VERSION:
        raise InputError(
            f"{path}: ledger schema version {ver} is newer than this lmforecast supports "
            f"({SCHEMA_VERSION}); upgrade lmforecast"
        )
    if ver < 1:
        raise InputError(f"{path}: ledger with an unknown schema version {ver}")
    return ver


def create_v1(path: str | Path) -> None:
    """Write an empty version-1 ledger (what the first release wrote; for tests and docs)."""
    con = _connect(Path(path))
    try:
        con.executescript(SCHEMA_V1)
        con.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        con.execute("PRAGMA user_version = 1")
    finally:
        con.close()


def backup_path(path: Path, version: int) -> Path:
    """``<file>.v<N>.bak``, or ``.v<N>.<k>.bak`` if that exists already."""
    cand = path.with_name(f"{path.name}.v{version}.bak")
    k = 1
    while cand.exists():
        cand = path.with_name(f"{path.name}.v{version}.{k}.bak")
        k += 1
    return cand


def _backup(con: sqlite3.Connection, path: Path, version: int) -> Path:
    dest = backup_path(path, version)
    tmp = dest.with_name(dest.name + ".part")
    src = _connect(path)  # a second, reading connection: a snapshot while we hold the lock
    out = sqlite3.connect(str(tmp))
    try:
        src.backup(out)
    finally:
        out.close()
        src.close()
    os.replace(tmp, dest)
    return dest


def _migrate_1_to_2(con: sqlite3.Connection) -> None:
    con.execute("ALTER TABLE forecasts RENAME TO forecasts_v1")
    for stmt in _statements(SCHEMA_V2):
        con.execute(stmt)
    cols = [
        "id",
        "created",
        "version",
        "label",
        "method",
        "N",
        "D",
        "budget",
        "task",
        "point",
        "lo",
        "hi",
        "level",
        "fit_sha256",
        "observed",
        "resolved",
    ]
    rows = con.execute(f"SELECT {', '.join(cols)} FROM forecasts_v1 ORDER BY id").fetchall()
    for row in rows:
        r = dict(zip(cols, row))
        rec = {
            "id": r["id"],
            "created": r["created"],
            "lmforecast_version": r["version"],
            "label": r["label"],
            "method": r["method"],
            "form": None,
            "run": None,
            "task": r["task"],
            "N": r["N"],
            "D": r["D"],
            "budget": r["budget"],
            "point": r["point"],
            "lo": r["lo"],
            "hi": r["hi"],
            "level": r["level"],
            "fit_sha256": r["fit_sha256"],
            "input_sha256": None,
            "inputs": "{}",
            "corrects": None,
        }
        rec["digest"] = digest_forecast(rec)
        names = list(rec)
        con.execute(
            f"INSERT INTO forecasts ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
            [rec[k] for k in names],
        )
        if r["observed"] is not None:
            res = {
                "forecast_id": r["id"],
                "observed": r["observed"],
                "resolved": r["resolved"] or r["created"],
                "source": "migrated from schema version 1",
            }
            res["digest"] = digest_resolution(res)
            con.execute(
                "INSERT INTO resolutions (forecast_id, observed, resolved, source, digest) "
                "VALUES (?, ?, ?, ?, ?)",
                [res[k] for k in ("forecast_id", "observed", "resolved", "source", "digest")],
            )
    con.execute("DROP TABLE forecasts_v1")


MIGRATIONS = {1: _migrate_1_to_2}


def ledger_target(path: str | Path, create: bool, readonly: bool = False) -> tuple[Path, bool]:
    """Where the ledger named `path` lives and whether it exists, checked before SQLite opens
    anything (SQLite would create the file, or a ``-journal`` beside a device, on open).

    A symbolic link to an existing file is followed; one to a missing file is refused (the
    ledger would be created outside the folder the user named) unless ``--follow-symlinks``.
    Anything but a regular file (a folder, a device, a FIFO, a socket) is refused, as is a file
    this process may not write unless only reading (`readonly`)."""
    p = Path(path)
    if str(path).strip() == "":
        raise InputError("--ledger: empty file name")
    try:
        lst = os.lstat(p)
    except FileNotFoundError:
        lst = None
    except OSError as exc:
        raise InputError(f"{p}: cannot use the ledger ({exc.strerror})") from None
    if lst is not None and stat.S_ISLNK(lst.st_mode):
        try:
            st = os.stat(p)
        except OSError:
            st = None
        if st is None:
            if not create:
                raise InputError(f"{p}: a symbolic link to a missing file, not a ledger")
            if not follow_symlinks():
                raise InputError(
                    f"{p}: a symbolic link to a missing file; refusing to create the ledger "
                    "through it (pass --follow-symlinks to create it at the link's target)"
                )
            p = Path(os.path.realpath(p))
            if p.is_symlink():
                raise InputError(f"{path}: symbolic link loop")
            return ledger_target(p, create, readonly)
        lst = st
    if lst is None:
        if not create:
            raise InputError(f"{p}: no such ledger (`lmforecast ledger add` creates one)")
        parent = p.parent if str(p.parent) else Path(".")
        if not parent.is_dir():
            raise InputError(f"{p}: folder {parent} does not exist")
        return p, False
    if stat.S_ISDIR(lst.st_mode):
        raise InputError(f"{p}: is a directory, expected a ledger file")
    if not stat.S_ISREG(lst.st_mode):
        raise InputError(
            f"{p}: not a regular file (a device, FIFO or socket); a ledger is an SQLite file"
        )
    if not readonly and not os.access(p, os.W_OK):
        raise InputError(f"{p}: the ledger file is read-only (or immutable); cannot write it")
    if lst.st_size > 0:
        with open(p, "rb") as fh:
            if fh.read(16) != b"SQLite format 3\x00":
                raise InputError(f"{p}: not an lmforecast ledger (not an SQLite database)")
    return p, True


def open_connection(
    path: str | Path, create: bool, readonly: bool = False
) -> tuple[sqlite3.Connection, Path | None]:
    """Open (creating if allowed) and migrate a ledger; returns the connection and the path of
    the backup copy made before a migration (None if none was needed). A new ledger is built
    in a temporary sibling and linked into place, so concurrent creators never see a
    half-made file. The file's pages are checked (``PRAGMA quick_check``) on every open."""
    p, exists = ledger_target(path, create, readonly)
    if not exists:
        _create_atomically(p)
    if readonly and not os.access(p, os.W_OK):
        con = _connect_readonly(p)
        backup = None
    else:
        try:
            con = _connect(p)
        except sqlite3.Error as exc:
            raise InputError(f"{p}: cannot open the ledger ({exc})") from None
        try:
            backup = _ensure_current_retrying(con, p, create)
            con.execute("PRAGMA foreign_keys = ON")
        except sqlite3.OperationalError as exc:  # read-only folder, locked past the timeout
            con.close()
            raise InputError(f"{p}: cannot use the ledger ({exc})") from None
        except sqlite3.DatabaseError as exc:
            con.close()
            raise InputError(damaged_message(p, str(exc))) from None
        except BaseException:
            con.close()
            raise
    try:
        check_pages(con, p)
    except BaseException:
        con.close()
        raise
    return con, backup


def damaged_message(p: Path, detail: str) -> str:
    lines = [x.strip() for x in detail.splitlines() if x.strip() and "***" not in x]
    first = lines[0] if lines else "damaged"
    return (
        f"{p}: the ledger file is damaged ({first}); nothing was read or written, "
        "restore it from a copy"
    )


def check_pages(con: sqlite3.Connection, p: Path) -> None:
    """Refuse a ledger whose pages are damaged (SQLite's ``quick_check``: every page and
    record well formed; linear in the file's size, milliseconds for a ledger)."""
    try:
        res = [r[0] for r in con.execute("PRAGMA quick_check").fetchall()]
    except sqlite3.DatabaseError as exc:
        raise InputError(damaged_message(p, str(exc))) from None
    if res != ["ok"]:
        raise InputError(damaged_message(p, res[0]))


def _connect_readonly(p: Path) -> sqlite3.Connection:
    """A ledger this process may not write (read-only, immutable): opened without creating
    ``-wal``/``-shm`` beside it (``immutable=1``) when no writer left a ``-wal`` to read."""
    from urllib.parse import quote

    wal = p.with_name(p.name + "-wal")
    mode = "mode=ro" if wal.exists() else "immutable=1"
    try:
        con = sqlite3.connect(
            f"file:{quote(str(p.resolve()))}?{mode}", uri=True, isolation_level=None
        )
        _identify_current(con, p)
    except sqlite3.DatabaseError as exc:
        raise InputError(damaged_message(p, str(exc))) from None
    return con


def _identify_current(con: sqlite3.Connection, p: Path) -> None:
    ver = _identify(con, p)
    if ver == 0:
        raise InputError(f"{p}: an empty file, not a ledger")
    if ver < SCHEMA_VERSION:
        raise InputError(
            f"{p}: ledger schema version {ver} needs migrating, and the file is read-only"
        )


def _create_atomically(p: Path) -> None:
    """Build an empty current-version ledger in a temporary sibling and hard-link it to `p`;
    if another process created `p` first, its ledger is kept (link fails with EEXIST). Where
    the file system has no hard links, `p` is created in place (one transaction)."""
    parent = p.parent if str(p.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}-new-", dir=parent)
    except OSError as exc:
        raise InputError(f"{p}: cannot create the ledger ({exc.strerror})") from None
    os.close(fd)
    try:
        con = _connect(Path(tmp))
        try:
            _ensure_current_retrying(con, Path(tmp), True)
        finally:
            con.close()
        os.chmod(tmp, 0o666 & ~umask())
        try:
            os.link(tmp, p)
        except FileExistsError:
            pass  # created meanwhile by another process: use theirs
        except OSError:
            pass  # no hard links here: SQLite creates `p` in place under its lock
    except sqlite3.Error as exc:
        raise InputError(f"{p}: cannot use the ledger ({exc})") from None
    finally:
        for q in (tmp, tmp + "-wal", tmp + "-shm", tmp + "-journal"):
            if os.path.lexists(q):
                os.unlink(q)


def _ensure_current_retrying(con: sqlite3.Connection, p: Path, create: bool) -> Path | None:
    # Switching a new file to WAL needs an exclusive lock, and SQLite answers "database is
    # locked" at once (no busy handler) when another process is creating the same ledger at
    # that moment; waiting and re-checking is safe because creation is one transaction.
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    delay = 0.005
    while True:
        try:
            return _ensure_current(con, p, create)
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise
            if time.monotonic() + delay > deadline:
                raise
            if con.in_transaction:
                con.execute("ROLLBACK")
            time.sleep(delay)
            delay = min(delay * 2, 0.25)


def _ensure_current(con: sqlite3.Connection, p: Path, create: bool) -> Path | None:
    ver = _identify(con, p)
    if ver == SCHEMA_VERSION:
        return None
    if ver == 0 and not create:
        raise InputError(f"{p}: an empty file, not a ledger (`lmforecast ledger add` creates one)")
    con.execute("PRAGMA journal_mode = WAL")  # persistent; readers never block the writer
    con.execute("BEGIN IMMEDIATE")  # one process migrates/creates; others wait, then re-check
    backup = None
    try:
        ver = _identify(con, p)
        if ver == 0:
            for stmt in _statements(SCHEMA_V2):
                con.execute(stmt)
            con.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        else:
            if ver < SCHEMA_VERSION:
                backup = _backup(con, p, ver)
            while ver < SCHEMA_VERSION:
                MIGRATIONS[ver](con)
                ver += 1
        con.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        con.execute("COMMIT")
    except BaseException:
        if con.in_transaction:
            con.execute("ROLLBACK")
        raise
    return backup


def _statements(script: str) -> list[str]:
    """Split a schema script into statements (trigger bodies kept whole)."""
    out, buf = [], []
    for line in script.strip().splitlines():
        buf.append(line)
        text = "\n".join(buf)
        if sqlite3.complete_statement(text):
            out.append(text)
            buf = []
    return out
