"""Reading a ledger for people and files: a selection of records with the ids that fail their
digest, the observed values of a resolve table, and the records as JSON, a display frame, CSV
or JSONL (what `ledger show|export|resolve --table` print and write)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from ..data.io import read_table
from ..data.validate import check_columns, numeric_column
from ..errors import InputError
from ..store import to_jsonable
from .records import FORECAST_FIELDS
from .store import Ledger

#: The columns `ledger show` lists, in order: a forecast record's fields without its
#: provenance (version, digests, inputs, corrected id), then its resolution.
_PROVENANCE = ("lmforecast_version", "fit_sha256", "input_sha256", "inputs", "corrects")
SHOW_COLUMNS = [c for c in FORECAST_FIELDS if c not in _PROVENANCE] + ["observed", "superseded_by"]
#: Columns holding record ids: integers in JSON, never floats.
ID_COLUMNS = ("id", "superseded_by", "corrects")


def select_records(
    path: str | Path,
    *,
    method: str | None = None,
    label: str | None = None,
    since: str | None = None,
    until: str | None = None,
) -> tuple[pd.DataFrame, list[int]]:
    """The selected records, read without writing anything, and the ids of records whose
    digest does not match their content (edited outside lmforecast, behind the append-only
    triggers), so a reader can be told the record is not what was registered."""
    with Ledger(path, readonly=True) as L:
        df = L.records(method=method, label=label, since=since, until=until)
        bad = L.verify_digests()
    return df, bad


def digest_warning(path: str | Path, bad: list[int]) -> str | None:
    """The one-line warning naming (the first ten of) the records `bad` of ledger `path` that
    fail their digest; None when there are none."""
    if not bad:
        return None
    more = f" and {len(bad) - 10} more" if len(bad) > 10 else ""
    shown = ", ".join(map(str, bad[:10])) + more
    return (
        f"{path}: record(s) {shown} do not match their digest: "
        "edited outside lmforecast, behind the ledger's append-only rules"
    )


def observations(table: str | Path, source: str = "") -> list[tuple[int, float, str]]:
    """``(id, observed, source)`` of each row of a resolve table (columns ``id``, ``observed``
    and optionally ``source``; `source` fills a missing column). An id that is not a whole
    number is refused: a resolve is permanent, so 4.5 is never truncated to record 4."""
    t = read_table(table)
    check_columns(t, ["id", "observed"], table)
    src = t["source"].fillna("").astype(str) if "source" in t else [source] * len(t)
    ids = numeric_column(t, "id", lower=1, what=table)
    frac = ids != np.round(ids)
    if frac.any():
        i = int(np.argmax(frac))
        raise InputError(
            f"{table}: column 'id' row {i + 1}: {ids[i]:g} is not a record id (a whole number)"
        )
    return list(zip(ids.astype(int), numeric_column(t, "observed", what=table), src))


def resolve_records(path: str | Path, items) -> None:
    """Attach observed values ``(id, observed, source)`` to records of the ledger at `path`, in
    one transaction: all land, or (an unknown or already resolved record) none does."""
    with Ledger(path) as L:
        L.resolve_many(items)


def json_records(df: pd.DataFrame) -> list[dict]:
    """Records as JSON-ready dicts at full float precision (pandas' to_json rounds to 10
    digits), ids as integers, missing values as None."""
    recs = to_jsonable(df.astype(object).where(df.notna(), None).to_dict(orient="records"))
    for r in recs:
        for k in ID_COLUMNS:
            if isinstance(r.get(k), float):
                r[k] = int(r[k])
    return recs


def show_frame(df: pd.DataFrame) -> pd.DataFrame:
    """The `SHOW_COLUMNS` of the records, missing values blank and ``created`` to the second:
    the frame `ledger show` lists."""
    d = df[SHOW_COLUMNS].astype(object).where(df[SHOW_COLUMNS].notna(), "")
    d["created"] = d["created"].str.slice(0, 19)
    return d


def export_text(df: pd.DataFrame, out: str | Path) -> str:
    """The records as the text of file `out`: JSONL (one JSON record a line, `json_records`)
    for a ``.jsonl`` name, CSV for ``.csv``; any other name is refused."""
    name = str(out)
    if name.endswith(".jsonl"):
        return "".join(json.dumps(r, allow_nan=False) + "\n" for r in json_records(df))
    if name.endswith(".csv"):
        return df.to_csv(index=False)
    raise InputError(f"--out {out}: use a .csv or .jsonl file name")
