"""Adapters from the small-model zoo's tables (docs/zoo.md) to FLP and FLP-M inputs.

FLP (Chen et al., Sec. 3) takes final sampling models (`C`, `loss`) and their intermediate
checkpoints (`step`, `train_loss`, `loss`, scores in points); FLP-M (Sec. 4) takes FLOPs per
source (`C_general`, `C_code`) and per-domain losses (`loss_<domain>`). The zoo's tables carry
extra columns (e.g. `C_FN`, which `source_flops` would read as a third source), so the adapters
keep only what each method reads.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import InputError

FLPM_SOURCES = ("general", "code")
DOMAINS = ("prose", "code", "arith")


def zoo_tasks(zoo) -> list[str]:
    """The zoo's downstream tasks (names of `tasks.csv`)."""
    return zoo.tasks["name"].astype(str).tolist()


def zoo_random_performance(zoo, task: str) -> float:
    """Random-guess score of `task` in points (`tasks.csv`)."""
    t = zoo.tasks.set_index("name")
    if task not in t.index:
        raise InputError(f"zoo tasks: no task {task!r}; known: {', '.join(t.index)}")
    return float(t.loc[task, "random_performance"])


def flp_tables(zoo) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(runs, checkpoints) for FLP: the supervised BPE runs at the reference mixture (final
    models: model, N, D, tokens_per_param, C, loss, scores) and all their checkpoints."""
    runs = zoo.supervised_runs()
    tasks = zoo_tasks(zoo)
    runs = runs[["model", "N", "D", "tokens_per_param", "C", "loss", *tasks]].copy()
    ck = zoo.checkpoints
    ck = ck[ck["model"].isin(runs["model"])]
    ck = ck[["model", "N", "step", "C", "train_loss", "loss", *tasks]].reset_index(drop=True)
    if len(runs) < 3:
        raise InputError(f"zoo: {len(runs)} supervised runs, FLP needs at least 3")
    return runs.reset_index(drop=True), ck


def flpm_tables(zoo) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(runs, checkpoints) for FLP-M with two sources, `general` and `code` (share r): the
    `mixture` runs plus the reference-mixture supervised runs of the same sizes and tokens per
    parameter; FLOPs per source `C_general`, `C_code`, losses `loss_prose/code/arith`."""
    r = zoo.runs
    mix = r[r["kind"] == "mixture"]
    if mix.empty:
        raise InputError("zoo: no mixture runs")
    tpp = np.round(mix["tokens_per_param"]).unique()
    ref = zoo.supervised_runs()
    ref = ref[ref["N"].isin(mix["N"].unique()) & np.round(ref["tokens_per_param"]).isin(tpp)]
    tasks = zoo_tasks(zoo)
    keep = ["model", "N", "code_share", "C_general", "C_code"]
    keep += [f"loss_{d}" for d in DOMAINS] + ["loss", *tasks]
    runs = pd.concat([ref, mix])[keep].reset_index(drop=True)
    ck = zoo.checkpoints
    ck = ck[ck["model"].isin(runs["model"])]
    ck_keep = ["model", "N", "code_share", "step", "train_loss", "C_general", "C_code"]
    ck_keep += [f"loss_{d}" for d in DOMAINS] + ["loss", *tasks]
    return runs, ck[ck_keep].reset_index(drop=True)


def with_total_flops(df: pd.DataFrame) -> pd.DataFrame:
    """FLP's single-source view of a mixture table: `C` = C_general + C_code."""
    return df.assign(C=df["C_general"] + df["C_code"])


__all__ = [
    "DOMAINS",
    "FLPM_SOURCES",
    "flp_tables",
    "flpm_tables",
    "with_total_flops",
    "zoo_random_performance",
    "zoo_tasks",
]
