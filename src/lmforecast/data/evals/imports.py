"""Importing harness results into a tidy table file and summarising a tidy table: the task and
metric names a request gives, the output name's format and folder checked before any work, the
bundled table by name, and the counts `evals import|show` print."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pandas as pd

from ...errors import InputError
from .harness import read_harness
from .harness_files import harness_docs
from .pythia import read_evals
from .table import write_evals_table

#: The tidy table's file formats, by the name's ending.
TABLE_EXTENSIONS = (".csv", ".csv.gz", ".tsv", ".parquet", ".pq", ".jsonl", ".ndjson")
#: The name of the bundled Pythia table (`evals show pythia`).
BUNDLED = "pythia"


def split_names(items: list[str] | None) -> list[str] | None:
    """Names given as repeated and/or comma-separated items (``["a,b", "c"]`` -> a, b, c);
    None for none given, an error for items that hold no name."""
    if not items:
        return None
    names = [t.strip() for item in items for t in item.split(",") if t.strip()]
    if not names:
        raise InputError(f"empty list {items!r}")
    return names


def filtered_keys(paths) -> dict[str, str]:
    """Current-layout metric keys with a comma in the harness files at `paths`
    (``"exact_match,strict-match"``), mapped to their metric name in the table (``"acc,none"``
    -> ``"acc"``); files that are not harness output are skipped."""
    keys: dict[str, str] = {}
    for _, _, doc in harness_docs(paths):
        for entry in doc["results"].values():
            for key in entry if isinstance(entry, dict) else ():
                base, sep, filt = str(key).partition(",")
                if sep and not base.endswith("_stderr"):
                    keys[f"{base.strip()},{filt.strip()}"] = base if filt == "none" else str(key)
    return keys


def metric_names(items: list[str] | None, paths) -> list[str] | None:
    """Metric names given as `split_names` reads them, except that two neighbours that together
    are a `metric,filter` key of the files at `paths` (``exact_match,strict-match``) are one
    name: the comma both separates names and belongs to the harness's keys."""
    names = split_names(items)
    if names is None or not any("," in item for item in items):
        return names
    keys = filtered_keys(paths)
    out: list[str] = []
    for item in items:
        toks = [t.strip() for t in item.split(",") if t.strip()]
        i = 0
        while i < len(toks):
            pair = f"{toks[i]},{toks[i + 1]}" if i + 1 < len(toks) else None
            if pair in keys:
                out.append(keys[pair])
                i += 2
            else:
                out.append(toks[i])
                i += 1
    return out


def check_table_name(path: str | Path, flag: str = "--out") -> Path:
    """A tidy table's output name: a known format by its ending and a folder a file can be
    created in, checked before the harness files are read."""
    p = Path(path)
    if not p.name.lower().endswith(TABLE_EXTENSIONS):
        raise InputError(
            f"{flag} {p}: unknown table format; use one of {', '.join(TABLE_EXTENSIONS)}"
        )
    folder = p.parent if str(p.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=".tmp-check-", dir=folder)
    except OSError as exc:
        raise InputError(f"{flag} {p}: folder {folder} is not writable ({exc.strerror})") from None
    os.close(fd)
    os.unlink(tmp)
    return p


def import_harness(paths, out: str | Path, *, models=None, tasks=None, metrics=None):
    """Read harness results at `paths` (`read_harness`; `tasks` and `metrics` as given, item
    lists read by `split_names` / `metric_names`) and write the tidy table to `out`; returns
    the table."""
    out = check_table_name(out)
    df = read_harness(
        paths, models=models, tasks=split_names(tasks), metrics=metric_names(metrics, paths)
    )
    write_evals_table(df, out)
    return df


def open_evals_table(table: str | Path) -> tuple[pd.DataFrame, bool]:
    """The tidy table at `table` (`read_evals`: the bundled Pythia table for the name `BUNDLED`
    where no such file exists); and whether it is the bundled one."""
    return read_evals(table), str(table) == BUNDLED and not Path(table).exists()


def describe(df: pd.DataFrame) -> dict:
    """Rows, models, steps per model, tasks, metric counts, shot counts and source files of a
    tidy table: what `evals import|show` print to tell what a table holds."""
    steps = df.groupby("model")["step"].nunique()
    return {
        "rows": len(df),
        "models": sorted(df["model"].unique().tolist()),
        "n_models": int(df["model"].nunique()),
        "steps_per_model": {str(k): int(v) for k, v in steps.items()},
        "n_steps": int(df["step"].nunique()),
        "has_final": bool(df["step"].isna().any()),
        "tasks": sorted(df["task"].unique().tolist()),
        "n_tasks": int(df["task"].nunique()),
        "metrics": {str(k): int(v) for k, v in df["metric"].value_counts().sort_index().items()},
        "n_shot": sorted(int(v) for v in df["n_shot"].dropna().unique()),
        "files": int(df["source"].nunique()),
    }
