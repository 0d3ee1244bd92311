"""Chance (random-guess) accuracy per task, in percentage points.

The bundled table `data/bundled/downstream/chance.csv` gives 100 / (number of options) for the
multiple-choice tasks of lm-evaluation-harness and 0 for generation tasks. Harness accuracies of
untrained models can sit *below* this level (e.g. ARC-Challenge ~18 %, LogiQA ~21 %, WSC ~37 % for
Pythia: the answer options differ in length or prior), which is why the sigmoid map fits its
floor by default and uses chance only as the starting point and for reports.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from pathlib import Path

import pandas as pd

from ..data.io import read_table
from ..errors import InputError


@cache
def chance_table() -> pd.DataFrame:
    path = resources.files("lmforecast") / "data/bundled/downstream/chance.csv"
    with resources.as_file(path) as p:
        return pd.read_csv(p)


def chance_level(task: str, default: float | None = None) -> float | None:
    """Chance accuracy of `task` in points (case-insensitive; MMLU subtasks `hendrycksTest-*`
    map to 25), or `default` when the task is not in the table."""
    t = chance_table()
    name = str(task).lower()
    if name.startswith(("hendryckstest", "mmlu")):
        name = "mmlu"
    hit = t[t["task"].str.lower() == name]
    if hit.empty:
        return default
    return float(hit.iloc[0]["chance"])


def read_chance_file(path) -> dict[str, float]:
    """Task -> chance level (points) from a file: a JSON object {"task": P, ...} (or a list of
    {"task": ..., "chance": ...} records), or a table (CSV/Parquet/JSONL) with columns `task`
    and `chance`. Each level must lie in [0, 100) points; a task given twice is refused."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"--chance-file {str(path)!r}: no such file")
    if p.suffix.lower() == ".json":
        try:
            doc = json.loads(p.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError) as exc:
            raise InputError(f"--chance-file {p}: not JSON ({str(exc)[:80]})") from None
        if isinstance(doc, dict):
            pairs = list(doc.items())
        elif isinstance(doc, list) and all(isinstance(r, dict) for r in doc):
            pairs = [(r.get("task"), r.get("chance")) for r in doc]
        else:
            raise InputError(f"--chance-file {p}: expected an object {{task: chance}}")
    else:
        df = read_table(p)
        df.columns = [str(c).strip().lower() for c in df.columns]
        if not {"task", "chance"} <= set(df.columns):
            raise InputError(
                f"--chance-file {p}: needs columns 'task' and 'chance' (has "
                f"{', '.join(map(str, df.columns))})"
            )
        pairs = list(zip(df["task"], df["chance"]))
    out: dict[str, float] = {}
    for i, (task, val) in enumerate(pairs, 1):
        name = "" if task is None else str(task).strip()
        try:
            v = float(val)
        except (TypeError, ValueError):
            v = float("nan")
        if not name or not (0 <= v < 100):
            raise InputError(
                f"--chance-file {p}: entry {i} ({task!r}: {val!r}) is not a task "
                "with a chance level in [0, 100) points"
            )
        if name in out:
            raise InputError(f"--chance-file {p}: task {name!r} is given twice")
        out[name] = v
    return out
