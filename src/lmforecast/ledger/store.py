"""`Ledger`: register forecasts, resolve them once, select and export records.

Every write is one ``BEGIN IMMEDIATE`` transaction on a WAL-mode file, so concurrent writers
(processes) queue instead of failing, and a process killed mid-write leaves the last committed
state: a record is either wholly present or absent. Records are append-only (triggers in the
schema refuse UPDATE and DELETE); a correction is a new record naming the one it corrects.
"""

from __future__ import annotations

import datetime as _dt
import json
import sqlite3
from pathlib import Path

import pandas as pd

from .. import __version__
from ..errors import InputError, fmt_value
from .records import (
    FORECAST_FIELDS,
    check_forecast,
    digest_forecast,
    digest_resolution,
    sha256_file,
)
from .schema import open_connection


def now_iso() -> str:
    """UTC time, ISO 8601 with microseconds (sorts as text)."""
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="microseconds")


def parse_when(text: str | None, flag: str) -> str | None:
    """A date or date-time from the user, as the ledger's ISO text (UTC if no zone given)."""
    if text is None:
        return None
    try:
        t = _dt.datetime.fromisoformat(str(text).strip())
    except ValueError:
        raise InputError(
            f"{flag}: expected a date like 2026-01-31 or an ISO time, got {text!r}"
        ) from None
    if t.tzinfo is None:
        t = t.replace(tzinfo=_dt.UTC)
    return t.astimezone(_dt.UTC).isoformat(timespec="microseconds")


class Ledger:
    """One forecast ledger file (see `docs/ledger.md`).

    ``Ledger(path)`` opens an existing ledger (migrating an older schema after a backup copy);
    ``Ledger(path, create=True)`` also creates a new one; ``readonly=True`` (the reading verbs)
    also opens a file this process may not write, leaving nothing beside it. Use as a context
    manager or call `close()`.
    """

    def __init__(self, path: str | Path, create: bool = False, readonly: bool = False):
        self.path = Path(path)
        self._con, self.backup_ = open_connection(self.path, create, readonly)

    # -- plumbing ---------------------------------------------------------------------------
    def close(self) -> None:
        if self._con is not None:
            self._con.close()
            self._con = None

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _write(self, fn):
        con = self._con
        try:
            con.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:  # locked past the busy timeout, read-only
            raise InputError(f"{self.path}: cannot write the ledger ({exc})") from None
        try:
            out = fn(con)
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        return out

    # -- writing ----------------------------------------------------------------------------
    def add(
        self,
        *,
        method: str,
        point: float,
        lo: float | None = None,
        hi: float | None = None,
        level: float | None = None,
        label: str = "",
        form: str | None = None,
        run: str | None = None,
        task: str | None = None,
        N: float | None = None,
        D: float | None = None,
        budget: float | None = None,
        fit: str | Path | None = None,
        inputs_table: str | Path | None = None,
        fit_sha256: str | None = None,
        input_sha256: str | None = None,
        inputs: dict | None = None,
        corrects: int | None = None,
    ) -> int:
        """Register one forecast; returns its record id. `fit` and `inputs_table` are files
        whose SHA-256 is recorded (or give the digests directly)."""
        rec = check_forecast(
            method=method, point=point, lo=lo, hi=hi, level=level, N=N, D=D, budget=budget
        )
        rec.update(
            created=now_iso(),
            lmforecast_version=__version__,
            label=str(label or ""),
            method=method.strip(),
            form=form,
            run=run,
            task=task,
            fit_sha256=fit_sha256 if fit is None else sha256_file(fit),
            input_sha256=input_sha256 if inputs_table is None else sha256_file(inputs_table),
            inputs=json.dumps(inputs or {}, sort_keys=True, default=str),
            corrects=None if corrects is None else int(corrects),
        )
        return self.add_many([rec])[0]

    def add_many(self, records: list[dict]) -> list[int]:
        """Register already-checked records (as `add` builds them) in ONE transaction."""

        def go(con):
            ids = []
            for rec in records:
                if rec.get("corrects") is not None:
                    self._require(con, rec["corrects"])
                    _refuse_second_correction(con, int(rec["corrects"]))
                cur = con.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM forecasts")
                row = {k: rec.get(k) for k in FORECAST_FIELDS}
                row["id"] = cur.fetchone()[0]
                row["digest"] = digest_forecast(row)
                names = list(row)
                con.execute(
                    f"INSERT INTO forecasts ({', '.join(names)}) "
                    f"VALUES ({', '.join('?' * len(names))})",
                    [row[k] for k in names],
                )
                ids.append(row["id"])
            return ids

        return self._write(go)

    @staticmethod
    def _require(con, rid) -> None:
        if con.execute("SELECT 1 FROM forecasts WHERE id = ?", (int(rid),)).fetchone() is None:
            raise InputError(f"ledger: no record {fmt_value(rid)}")

    def resolve(self, record_id: int, observed: float, source: str = "") -> None:
        """Attach the observed value to a record, once; a second resolve is refused."""
        self.resolve_many([(record_id, observed, source)])

    def resolve_many(self, items) -> None:
        """Resolve several records ``(id, observed, source)`` in ONE transaction: all land, or
        (an unknown or already resolved record, a bad value) none does."""
        rows = []
        for rid, obs, src in items:
            try:
                val = check_forecast(method="x", point=obs)["point"]
            except InputError:
                raise InputError(
                    f"ledger: record {fmt_value(rid)}: observed must be a finite number, "
                    f"got {fmt_value(obs)}"
                ) from None
            rows.append((int(rid), val, str(src or "")))
        ids = [r[0] for r in rows]
        if len(set(ids)) != len(ids):
            dup = next(i for i in ids if ids.count(i) > 1)
            raise InputError(f"ledger: record {dup} is resolved twice in one call")

        def go(con):
            for rid, obs, src in rows:
                self._require(con, rid)
                _check_observed(con, rid, obs)
                old = con.execute(
                    "SELECT observed FROM resolutions WHERE forecast_id = ?", (rid,)
                ).fetchone()
                if old is not None:
                    raise InputError(
                        f"ledger: record {rid} is already resolved (observed "
                        f"{fmt_value(old[0])}); a resolved record is never changed, add a "
                        "correction with --corrects"
                    )
                res = {"forecast_id": rid, "observed": obs, "resolved": now_iso(), "source": src}
                res["digest"] = digest_resolution(res)
                con.execute(
                    "INSERT INTO resolutions (forecast_id, observed, resolved, source, digest) "
                    "VALUES (?, ?, ?, ?, ?)",
                    [res[k] for k in ("forecast_id", "observed", "resolved", "source", "digest")],
                )

        self._write(go)

    def correct(
        self,
        record_id: int,
        *,
        observed: float | None = None,
        source: str | None = None,
        **changes,
    ) -> int:
        """Correct record `record_id`: a new record that copies every field of it (label,
        method, form, run, task, N, D, budget, the interval, the digests of the fit and
        inputs), replaces those named in `changes` (``point``, ``lo``, ``hi``, ``level``,
        ``label``, ``form``, ``run``, ``task``), names the record it corrects, and is resolved
        with `observed` (or with the corrected record's observed value, if it had one). One
        transaction; returns the new record's id."""
        allowed = {"point", "lo", "hi", "level", "label", "form", "run", "task"}
        unknown = sorted(set(changes) - allowed)
        if unknown:
            raise InputError(f"ledger correct: cannot change {', '.join(unknown)}")
        changes = {k: v for k, v in changes.items() if v is not None}
        if observed is None and not changes:
            raise InputError("ledger correct: give --observed VALUE or a forecast field to change")
        rid = int(record_id)

        def go(con):
            self._require(con, rid)
            _refuse_second_correction(con, rid)
            cur = con.execute(
                "SELECT f.*, r.observed, r.source FROM forecasts f LEFT JOIN resolutions r "
                "ON r.forecast_id = f.id WHERE f.id = ?",
                (rid,),
            )
            old = dict(zip([d[0] for d in cur.description], cur.fetchone()))
            rec = {k: old[k] for k in FORECAST_FIELDS if k != "id"}
            rec.update(changes)
            rec.update(
                check_forecast(
                    method=rec["method"],
                    point=rec["point"],
                    lo=rec["lo"],
                    hi=rec["hi"],
                    level=rec["level"],
                    N=rec["N"],
                    D=rec["D"],
                    budget=rec["budget"],
                    point_inside="point" in changes or "lo" in changes or "hi" in changes,
                )
            )
            obs = old["observed"] if observed is None else observed
            if observed is not None and old["observed"] is not None:
                if float(observed) == float(old["observed"]) and not changes:
                    raise InputError(
                        f"ledger: record {rid} is already resolved with observed "
                        f"{fmt_value(old['observed'])}; nothing to correct"
                    )
            rec.update(created=now_iso(), lmforecast_version=__version__, corrects=rid)
            new_id = con.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM forecasts").fetchone()[0]
            row = {k: rec.get(k) for k in FORECAST_FIELDS}
            row["id"] = new_id
            row["digest"] = digest_forecast(row)
            names = list(row)
            con.execute(
                f"INSERT INTO forecasts ({', '.join(names)}) "
                f"VALUES ({', '.join('?' * len(names))})",
                [row[k] for k in names],
            )
            if obs is not None:
                val = _finite_observed(new_id, obs)
                _check_observed(con, rid, val)
                src = old["source"] if source is None and observed is None else source
                res = {
                    "forecast_id": new_id,
                    "observed": val,
                    "resolved": now_iso(),
                    "source": str(src or ""),
                }
                res["digest"] = digest_resolution(res)
                con.execute(
                    "INSERT INTO resolutions (forecast_id, observed, resolved, source, digest) "
                    "VALUES (?, ?, ?, ?, ?)",
                    [res[k] for k in ("forecast_id", "observed", "resolved", "source", "digest")],
                )
            return new_id

        return self._write(go)

    # -- reading ----------------------------------------------------------------------------
    def records(
        self,
        *,
        method: str | None = None,
        label: str | None = None,
        since: str | None = None,
        until: str | None = None,
        resolved: bool | None = None,
        ids: list[int] | None = None,
    ) -> pd.DataFrame:
        """Records (forecast fields, ``observed``, ``resolved``, ``source``, ``superseded_by``)
        matching a selection; times as ISO text, `since`/`until` inclusive on ``created``."""
        where, params = [], []
        for col, val in (("f.method", method), ("f.label", label)):
            if val is not None:
                where.append(f"{col} = ?")
                params.append(val)
        if since is not None:
            where.append("f.created >= ?")
            params.append(parse_when(since, "--since"))
        if until is not None:
            u = parse_when(until, "--until")
            if len(str(until).strip()) == 10:  # a bare date: the whole day
                u = u[:10] + "T23:59:59.999999+00:00"
            where.append("f.created <= ?")
            params.append(u)
        if resolved is not None:
            where.append("r.forecast_id IS " + ("NOT NULL" if resolved else "NULL"))
        if ids is not None:
            where.append(f"f.id IN ({', '.join('?' * len(ids))})")
            params.extend(int(i) for i in ids)
        sql = (
            "SELECT f.*, r.observed, r.resolved, r.source, "
            "(SELECT MIN(c.id) FROM forecasts c WHERE c.corrects = f.id) AS superseded_by "
            "FROM forecasts f LEFT JOIN resolutions r ON r.forecast_id = f.id"
            + (" WHERE " + " AND ".join(where) if where else "")
            + " ORDER BY f.id"
        )
        cur = self._con.execute(sql, params)
        cols = [d[0] for d in cur.description]
        return pd.DataFrame(cur.fetchall(), columns=cols)

    def verify(self) -> dict:
        """Integrity check of the file and of every record's digest."""
        ok = self._con.execute("PRAGMA integrity_check").fetchone()[0]
        return {"integrity": ok, **self._digest_check()}

    def verify_digests(self) -> list[int]:
        """Ids of the records (forecasts or their resolutions) whose stored digest does not
        match their content: edited outside lmforecast."""
        d = self._digest_check()
        return sorted(set(d["bad_forecasts"]) | set(d["bad_resolutions"]))

    def _digest_check(self) -> dict:
        cur = self._con.execute(
            f"SELECT {', '.join(FORECAST_FIELDS)}, digest FROM forecasts ORDER BY id"
        )
        bad = [
            r[0] for r in cur.fetchall() if digest_forecast(dict(zip(FORECAST_FIELDS, r))) != r[-1]
        ]
        cur = self._con.execute(
            "SELECT forecast_id, observed, resolved, source, digest FROM resolutions"
        )
        keys = ("forecast_id", "observed", "resolved", "source")
        bad_res = [r[0] for r in cur.fetchall() if digest_resolution(dict(zip(keys, r))) != r[-1]]
        return {"bad_forecasts": bad, "bad_resolutions": bad_res}

    def __len__(self) -> int:
        return int(self._con.execute("SELECT COUNT(*) FROM forecasts").fetchone()[0])


#: Methods whose records forecast a loss (a positive number) and those whose records forecast a
#: downstream score in percentage points (0-100), as the forecasting verbs register them.
LOSS_METHODS = ("supervised", "distill")
SCORE_METHODS = ("downstream", "flp", "flpm", "osl", "salience")


def observed_problem(method: str | None, task: str | None, observed: float) -> str | None:
    """Why `observed` cannot be the outcome of a record of `method`/`task` (None: it can).
    A loss record (task ``loss``, or a supervised/distill forecast) needs a positive number; a
    downstream score record (downstream, flp, flpm, osl, salience) a score in [0, 100] points."""
    if task == "loss" or method in LOSS_METHODS:
        return None if observed > 0 else "a loss must be a positive number"
    if method in SCORE_METHODS:
        ok = 0 <= observed <= 100
        return None if ok else "a downstream score must lie in [0, 100] points"
    return None


def _finite_observed(rid, obs) -> float:
    try:
        return check_forecast(method="x", point=obs)["point"]
    except InputError:
        raise InputError(
            f"ledger: record {fmt_value(rid)}: observed must be a finite number, "
            f"got {fmt_value(obs)}"
        ) from None


def _check_observed(con, rid: int, observed: float) -> None:
    method, task = con.execute("SELECT method, task FROM forecasts WHERE id = ?", (rid,)).fetchone()
    why = observed_problem(method, task, observed)
    if why is not None:
        kind = f"{method}" + (f", task {task}" if task else "")
        raise InputError(
            f"ledger: record {rid} ({kind}) cannot be resolved with observed "
            f"{fmt_value(observed)}: {why}"
        )


def _refuse_second_correction(con, rid: int) -> None:
    def corrector(i):
        return con.execute("SELECT MIN(id) FROM forecasts WHERE corrects = ?", (i,)).fetchone()[0]

    first = corrector(rid)
    if first is not None:
        latest = first
        while (nxt := corrector(latest)) is not None:  # a chain of corrections: its end
            latest = nxt
        raise InputError(
            f"ledger: record {rid} is already corrected by record {first}; a record is "
            f"corrected once: correct the current record instead (--corrects {latest})"
        )


def open_ledger(path: str | Path, create: bool = False) -> Ledger:
    return Ledger(path, create=create)
