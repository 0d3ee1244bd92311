"""Chance (random-guess) accuracy per task, in percentage points.

The bundled table `data/bundled/downstream/chance.csv` gives 100 / (number of options) for the
multiple-choice tasks of lm-evaluation-harness and 0 for generation tasks. Harness accuracies of
untrained models can sit *below* this level (e.g. ARC-Challenge ~18 %, LogiQA ~21 %, WSC ~37 % for
Pythia: the answer options differ in length or prior), which is why the sigmoid map fits its
floor by default and uses chance only as the starting point and for reports.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

import pandas as pd


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
