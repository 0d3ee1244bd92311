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


def zoo_chance(zoo, task: str) -> float:
    """Chance level of `task` in points (`tasks.csv`)."""
    t = zoo.tasks.set_index("name")
    if task not in t.index:
        raise InputError(f"zoo tasks: no task {task!r}; known: {', '.join(t.index)}")
    return float(t.loc[task, "chance"])


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


def _study_tables(zoo, kinds: tuple[str, ...]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Runs of `kinds` and their checkpoints with the columns both FLP and FLP-M read: total and
    per-source FLOPs (`C`, `C_general`, `C_code`; no `C_FN`), domain and average losses, scores."""
    r = zoo.runs
    r = r[r["kind"].isin(kinds)]
    if r.empty:
        raise InputError(f"zoo: no runs of kind {', '.join(kinds)}")
    tasks = zoo_tasks(zoo)
    losses = [f"loss_{d}" for d in DOMAINS] + ["loss", *tasks]
    runs = r[["model", "N", "tokens_per_param", "code_share", "C", "C_general", "C_code", *losses]]
    ck = zoo.checkpoints
    ck = ck[ck["model"].isin(runs["model"])]
    ck = ck[["model", "N", "code_share", "step", "train_loss", "C", "C_general", "C_code", *losses]]
    return runs.reset_index(drop=True), ck.reset_index(drop=True)


def single_distribution_tables(zoo) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(runs, checkpoints) for the Sec. 6.3 check: the supervised BPE runs, which all share the
    reference mixture (code share 0.4), with FLOPs per source and domain losses."""
    return _study_tables(zoo, ("supervised",))


def mixture_study_tables(zoo) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(runs, checkpoints) for the Sec. 6.2 comparison: the supervised runs (code share 0.4, all
    sizes and token budgets) and the `mixture` runs (other code shares)."""
    return _study_tables(zoo, ("supervised", "mixture"))


def _split(runs, ck, hold) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    train = runs[~hold].reset_index(drop=True)
    ck = ck[ck["model"].isin(train["model"])].reset_index(drop=True)
    return train, ck, runs[hold].reset_index(drop=True)


def loss_to_performance_split(zoo) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(runs, checkpoints, targets) shaped like Sec. 5.1 / 6.2: the targets are the largest
    mixture size at every code share but the reference one (the paper's 3B at the ratios other
    than 0.3); the sampling runs are all other supervised and mixture runs, including that size
    at the reference share (the paper's 3B at 0.3)."""
    runs, ck = mixture_study_tables(zoo)
    mix = runs["model"].isin(zoo.runs.loc[zoo.runs["kind"] == "mixture", "model"])
    hold = mix & (runs["N"] == runs.loc[mix, "N"].max())
    return _split(runs, ck, hold.to_numpy())


def single_distribution_split(zoo) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(runs, checkpoints, targets) for Sec. 6.3 on the supervised runs (one mixture, code share
    0.4): the largest size's runs are the targets, as in the FLP zoo forecasts."""
    runs, ck = single_distribution_tables(zoo)
    return _split(runs, ck, (runs["N"] == runs["N"].max()).to_numpy())


def with_total_flops(df: pd.DataFrame) -> pd.DataFrame:
    """FLP's single-source view of a mixture table: `C` = C_general + C_code."""
    return df.assign(C=df["C_general"] + df["C_code"])


__all__ = [
    "DOMAINS",
    "FLPM_SOURCES",
    "flp_tables",
    "flpm_tables",
    "loss_to_performance_split",
    "single_distribution_split",
    "mixture_study_tables",
    "single_distribution_tables",
    "with_total_flops",
    "zoo_chance",
    "zoo_tasks",
]
