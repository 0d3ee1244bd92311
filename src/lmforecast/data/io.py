"""Read user tables (CSV, Parquet, JSONL/NDJSON, JSON records) into pandas, or fail in one line."""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd

from ..errors import InputError, require

_FORMATS = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
}


def _other_delimiter(p: Path, df: pd.DataFrame) -> pd.DataFrame:
    """A ".csv" saved with semicolons or tabs (a European spreadsheet's export) reads as one
    column named "N;D;loss": read it again with that delimiter, and say so."""
    if df.shape[1] != 1:
        return df
    head = str(df.columns[0])
    sep = next((c for c in (";", "\t", "|") if c in head), None)
    if sep is None:
        return df
    warnings.warn(f"{p}: read with {sep!r} as the delimiter (its header is {head!r})", stacklevel=3)
    return pd.read_csv(p, sep=sep, na_values=["-", ""], keep_default_na=True)


def read_table(path: str | Path, fmt: str | None = None) -> pd.DataFrame:
    """Read a table; the format comes from the extension unless `fmt` is given."""
    p = Path(path)
    if not p.exists():
        raise InputError(f"{p}: no such file")
    if p.is_dir():
        raise InputError(f"{p}: is a directory, expected a table file")
    suffix = p.suffix.lower()
    gz = suffix == ".gz" and Path(p.stem).suffix.lower() in (".csv", ".tsv", ".jsonl", ".ndjson")
    if gz:  # gzip-compressed text tables (`evals import --out t.csv.gz` writes them)
        suffix = Path(p.stem).suffix.lower()
    kind = fmt or _FORMATS.get(suffix)
    if kind is None:
        raise InputError(
            f"{p}: unknown table format {p.suffix!r}; use .csv, .tsv, .parquet or .jsonl "
            "(.csv, .tsv and .jsonl may be gzipped: .csv.gz)"
        )
    if p.stat().st_size == 0:
        raise InputError(f"{p}: the file is empty")
    try:
        if kind == "csv":
            df = pd.read_csv(p, na_values=["-", ""], keep_default_na=True)
            df = _other_delimiter(p, df)
        elif kind == "tsv":
            df = pd.read_csv(p, sep="\t", na_values=["-", ""])
        elif kind == "jsonl" and gz:
            df = pd.read_json(p, lines=True, compression="gzip")
        elif kind == "parquet":
            require("pyarrow", "parquet")
            df = pd.read_parquet(p)
        elif kind == "jsonl":
            df = pd.read_json(p, lines=True)
        else:
            df = pd.read_json(p)
    except InputError:
        raise
    except Exception as exc:  # parser errors from pandas/pyarrow: report, don't trace
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"{p}: could not read as {kind}: {first}") from exc
    if df.shape[0] == 0:
        raise InputError(f"{p}: the table has no rows")
    df.columns = [str(c).strip() for c in df.columns]
    return df
