"""The tidy evals table: its columns, dtypes, reading and writing (see `lmforecast.data.evals`)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from ...errors import InputError, require
from ...store.safe_write import output_file
from ..io import read_table
from ..validate import check_columns
from .values import bad_values, value_problem

COLUMNS = ["model", "revision", "step", "task", "metric", "value", "stderr", "n_shot", "source"]
META_COLUMNS = ["params", "params_nonembedding", "tokens", "flops"]
ALL_COLUMNS = COLUMNS + META_COLUMNS
# pandas < 3 parses CSV floats with a fast, not always exact, parser unless asked
_EXACT_FLOATS = {} if int(pd.__version__.split(".")[0]) >= 3 else {"float_precision": "round_trip"}


def normalize(df: pd.DataFrame) -> pd.DataFrame:
    """Column order and dtypes of a tidy evals table (one for every reader)."""
    cols = [c for c in ALL_COLUMNS if c in df.columns]
    out = df[cols].copy().reset_index(drop=True)
    for c in ("model", "task", "metric", "source"):
        out[c] = out[c].astype(str)
    out["revision"] = out["revision"].astype(object).where(out["revision"].notna(), None)
    for c in ("step", "n_shot"):
        out[c] = pd.to_numeric(out[c], errors="coerce").astype("Int64")
    for c in ("value", "stderr", *[m for m in META_COLUMNS if m in out.columns]):
        out[c] = pd.to_numeric(out[c], errors="coerce").astype(float)
    return out


def read_evals_table(path: str | Path) -> pd.DataFrame:
    """Read a tidy evals table written by `write_evals_table` / `lmforecast evals import`.

    CSV/TSV floats and JSONL numbers are parsed exactly (round trip), so a written table reads
    back equal to the one in memory.
    """
    p = Path(path)
    if not p.exists():
        raise InputError(f"{p}: no such file")
    name = p.name.lower()
    try:
        if name.endswith((".csv", ".csv.gz", ".tsv")):
            sep = "\t" if name.endswith(".tsv") else ","
            df = pd.read_csv(p, sep=sep, **_EXACT_FLOATS)
        elif name.endswith((".jsonl", ".ndjson")):
            with open(p, encoding="utf-8") as fh:
                df = pd.DataFrame([json.loads(line) for line in fh if line.strip()])
        else:
            df = read_table(p)
    except InputError:
        raise
    except Exception as exc:  # parser errors: one line, no traceback
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"{p}: could not read as an evals table: {first}") from exc
    if df.shape[0] == 0:
        raise InputError(f"{p}: the table has no rows")
    if name.endswith((".csv", ".tsv")):
        _check_short_rows(p, "\t" if name.endswith(".tsv") else ",")
    check_columns(df, COLUMNS, str(p))
    check_values(df, str(p))
    out = normalize(df)
    check_duplicates(out, str(p))
    return out


KEY = ["model", "step", "task", "metric", "n_shot"]


def check_duplicates(df: pd.DataFrame, where: str) -> None:
    """One row per (model, step, task, metric, n_shot): a repeated row (a file imported twice)
    or two different values for one key are refused, naming both rows."""
    key = df[KEY].astype(object).where(df[KEY].notna(), None).astype(str)
    dup = key.duplicated(keep=False).to_numpy()
    if not dup.any():
        return
    rows = np.flatnonzero(dup)
    first = key.iloc[rows[0]]
    same = np.flatnonzero((key == first).all(axis=1).to_numpy())
    i, j = int(same[0]), int(same[1])
    a, b = df["value"].iloc[i], df["value"].iloc[j]
    what = "repeats" if a == b else f"contradicts (value {b!r} against {a!r})"
    raise InputError(
        f"{where}: row {j + 1} {what} row {i + 1}: model {df['model'].iloc[i]!r}, step "
        f"{df['step'].iloc[i]}, task {df['task'].iloc[i]!r}, metric {df['metric'].iloc[i]!r}; "
        "keep one row per model, step, task, metric and n-shot"
    )


def _check_short_rows(p: Path, sep: str) -> None:
    """A CSV/TSV row with fewer fields than the header (a write cut short) is refused by line
    (pandas would fill it with empty cells)."""
    import csv

    with open(p, encoding="utf-8", errors="replace", newline="") as fh:
        rows = csv.reader(fh, delimiter=sep)
        width = None
        for line, r in enumerate(rows, 1):
            if not r:
                continue
            if width is None:
                width = len(r)
            elif len(r) < width:
                raise InputError(
                    f"{p}: line {line} has {len(r)} of the header's {width} fields (a row cut "
                    "short?)"
                )


def _row_fail(where: str, mask, df: pd.DataFrame, col: str, problem: str) -> None:
    i = int(np.argmax(np.asarray(mask, bool)))
    raise InputError(f"{where}: row {i + 1} column {col!r}: {df[col].iloc[i]!r} {problem}")


def check_values(df: pd.DataFrame, where: str) -> None:
    """Refuse what a tidy table cannot hold (docs/evals.md, "Values"): a line starting with '#'
    (no comment syntax), an empty model/task/metric, a missing or non-numeric `value` (the NA,
    None, null, '-' tokens included), a text cell in a numeric column, a value its metric
    cannot take (`values.value_problem`), a negative stderr, step, tokens or FLOPs. Missing
    stderr, step (= the final model), n_shot and model metadata are allowed."""
    first = df[df.columns[0]].astype(str).str.lstrip()
    if first.str.startswith("#").any():
        _row_fail(
            where,
            first.str.startswith("#"),
            df,
            df.columns[0],
            "looks like a comment line; a tidy table has no comment syntax",
        )
    for c in ("model", "task", "metric"):
        blank = df[c].isna() | (df[c].astype(str).str.strip() == "")
        if blank.any():
            _row_fail(where, blank, df, c, "is empty")
    value = pd.to_numeric(df["value"], errors="coerce")
    if value.isna().any():
        _row_fail(where, value.isna(), df, "value", "is not a number (a value cannot be missing)")
    for c in ("step", "stderr", "n_shot", *META_COLUMNS):
        if c in df.columns:
            num = pd.to_numeric(df[c], errors="coerce")
            if (num.isna() & df[c].notna()).any():
                _row_fail(where, num.isna() & df[c].notna(), df, c, "is not a number")
            if (num < 0).any() or np.isinf(num.to_numpy(float)).any():
                _row_fail(
                    where,
                    (num < 0) | np.isinf(num.to_numpy(float)),
                    df,
                    c,
                    "must be a finite number >= 0",
                )
    bad = bad_values(df["metric"], value)
    if bad.any():
        i = int(np.argmax(bad))
        m = str(df["metric"].iloc[i])
        raise InputError(
            f"{where}: row {i + 1} column 'value': {value.iloc[i]!r} "
            f"{value_problem(m, value.iloc[i])}"
        )


#: Columns a forecast from an evals table computes with: a row missing one of them (while
#: other rows have it) would silently drop its checkpoint.
REQUIRED_WHEN_PRESENT = ("flops", "tokens", "params")


def check_evals_frame(df: pd.DataFrame, where: str) -> pd.DataFrame:
    """Validate an evals table read by a method (`downstream fit`, `flp fit --evals`) that may
    carry fewer columns than the tidy table: the text columns it has are not empty, its numeric
    columns hold finite numbers >= 0 (text such as 'abc' refused), ``value`` is a number, and a
    FLOPs, tokens or parameter column is filled on every row."""
    for c in ("model", "task", "metric"):
        if c in df.columns:
            blank = df[c].isna() | (df[c].astype(str).str.strip() == "")
            if blank.any():
                _row_fail(where, blank, df, c, "is empty")
    if "value" in df.columns:
        value = pd.to_numeric(df["value"], errors="coerce")
        if value.isna().any():
            _row_fail(where, value.isna(), df, "value", "is not a number")
    for c in ("step", "stderr", "n_shot", *META_COLUMNS):
        if c not in df.columns:
            continue
        num = pd.to_numeric(df[c], errors="coerce")
        if (num.isna() & df[c].notna()).any():
            _row_fail(where, num.isna() & df[c].notna(), df, c, "is not a number")
        if (num < 0).any() or np.isinf(num.to_numpy(float)).any():
            _row_fail(
                where,
                (num < 0) | np.isinf(num.to_numpy(float)),
                df,
                c,
                "must be a finite number >= 0",
            )
        if c in REQUIRED_WHEN_PRESENT and num.isna().any() and num.notna().any():
            i = int(np.argmax(num.isna().to_numpy()))
            raise InputError(
                f"{where}: row {i + 1} column {c!r} is empty; every row needs it (its checkpoint "
                "would be dropped), or leave the column out"
            )
    return df


def write_evals_table(df: pd.DataFrame, path: str | Path) -> None:
    """Write a tidy table by extension (.csv, .csv.gz, .tsv, .parquet, .jsonl), atomically.

    CSV floats are written with Python's repr, so `read_evals_table` reads them back exactly.
    """
    p = Path(path)
    name = p.name.lower()
    with output_file(p, suffix=p.suffix) as tmp:  # atomic, mode per umask, devices in place
        if name.endswith(".csv.gz"):
            import gzip

            # no file name, mtime 0 in the gzip header: the same table gives the same bytes
            with open(tmp, "wb") as raw, gzip.GzipFile("", "wb", 9, raw, mtime=0) as gz:
                gz.write(df.to_csv(index=False).encode("utf-8"))
        elif name.endswith(".csv"):
            df.to_csv(tmp, index=False)
        elif name.endswith(".tsv"):
            df.to_csv(tmp, sep="\t", index=False)
        elif name.endswith((".parquet", ".pq")):
            require("pyarrow", "parquet")
            df.to_parquet(tmp, index=False)
        elif name.endswith((".jsonl", ".ndjson")):
            records = df.astype(object).where(df.notna(), None).to_dict(orient="records")
            with open(tmp, "w", encoding="utf-8") as fh:
                for rec in records:
                    fh.write(json.dumps(_plain(rec), allow_nan=False) + "\n")
        else:
            raise InputError(
                f"{p}: unknown table format; use .csv, .csv.gz, .tsv, .parquet or .jsonl"
            )


def _plain(rec: dict) -> dict:
    out = {}
    for k, v in rec.items():
        if isinstance(v, np.integer):
            v = int(v)
        elif isinstance(v, np.floating):
            v = float(v)
        out[k] = None if isinstance(v, float) and not math.isfinite(v) else v
    return out
