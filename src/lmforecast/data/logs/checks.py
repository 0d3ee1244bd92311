"""Checks `import_logs` runs on what it read: one line naming the file, run, step and column.

* Rows of one run at one step are merged (a training line and an evaluation line); two
  different values of one column at one step mean the log holds several runs (refused, pointing
  at ``--run``), never the last one kept.
* An evaluation row must carry its tokens (from its own line or a line at the same step).
* Tokens are >= 0 and a run's last evaluation has > 0 tokens; parameter counts are > 0.
* A ``--models`` table has a ``model`` column, one row per model and positive numbers in
  ``N`` / ``N_total``.
* Every ``--cooldown-ends`` step is a logged evaluation of some run.
* Steps are whole numbers below 2**53 (where a float still counts every step; larger ones
  would wrap when written as integers) and every compute ``C = 6 N D`` is finite.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ...errors import InputError, fmt_value
from .readers import RUN


def check_conflicts(df: pd.DataFrame, cols: dict) -> None:
    """Refuse a (run, step) holding two different non-null values in one column.

    `cols` maps the frame's column to the name shown (the log's column and its flag)."""
    for c, shown in cols.items():
        sub = df.loc[df[c].notna(), [RUN, "_step", c, "_file"]]
        dup = sub[sub.duplicated([RUN, "_step"], keep=False)]
        if dup.empty:
            continue
        n = dup.groupby([RUN, "_step"], sort=False)[c].nunique()
        if not (n > 1).any():
            continue
        r, s = n.index[np.flatnonzero((n > 1).to_numpy())[0]]
        g = dup[(dup[RUN] == r) & (dup["_step"] == s)]
        a, b = g[c].unique()[:2]
        raise InputError(
            f"{g['_file'].iloc[0]}: run {r!r}: step {fmt_value(s)}: column {shown} holds two "
            f"different values ({fmt_value(a)} and {fmt_value(b)}); does the log hold several "
            "runs? name the column that tells them apart with --run COL"
        )


def check_tokens(df: pd.DataFrame, tk: str | None) -> None:
    """Every evaluation row has tokens; none is negative; each run ends with tokens > 0."""
    col = repr(tk) if tk else "step x --tokens-per-step"
    t = df["_tokens"].to_numpy(dtype=float)
    for bad, why in (
        (
            np.isnan(t),
            "is empty on the evaluation row and on every line at that step (log the "
            "tokens on the evaluation line, or evaluate at a step that logs them)",
        ),
        (t < 0, "holds {}; tokens must be >= 0"),
    ):
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InputError(
                f"{df['_file'].iloc[i]}: run {df[RUN].iloc[i]!r}: step "
                f"{fmt_value(df['_step'].iloc[i])}: column {col} (--tokens) "
                + why.format(fmt_value(t[i]))
            )
    if df["_step"].isna().all():  # a W&B summary export: one row per run
        last = df.index
    else:
        last = df.groupby(RUN, sort=False)["_step"].idxmax()
    end = df.loc[last]
    zero = np.flatnonzero(end["_tokens"].to_numpy(dtype=float) <= 0)
    if len(zero):
        row = end.iloc[int(zero[0])]
        raise InputError(
            f"{row['_file']}: run {row[RUN]!r}: step {fmt_value(row['_step'])}: column {col} "
            f"(--tokens) holds {fmt_value(row['_tokens'])} at the run's last evaluation; "
            "a run's tokens must be > 0"
        )


MAX_STEP = 2.0**53


def check_magnitudes(ck: pd.DataFrame, df: pd.DataFrame) -> None:
    """Steps below 2**53 and a finite ``C = 6 N D`` on every checkpoint (tokens of 1e305 gave
    C = inf in the output)."""
    for col, bad, why in (
        (
            "step",
            np.abs(ck["step"].to_numpy(dtype=float)) >= MAX_STEP,
            "is no step count (at most 2**53 = 9.0e15)",
        ),
        (
            "tokens",
            ~np.isfinite(ck["C"].to_numpy(dtype=float)),
            "makes the compute C = 6 N D overflow; is the column in tokens?",
        ),
    ):
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InputError(
                f"{df['_file'].iloc[i]}: run {ck['model'].iloc[i]!r}: {col} "
                f"{fmt_value(ck[col].iloc[i])} {why}"
            )


def check_params(per: pd.Series, where: str, shown: str) -> None:
    """Per-run parameter counts are positive and finite."""
    v = per.to_numpy(dtype=float)
    bad = ~(np.isfinite(v) & (v > 0))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(
            f"{where}: run {per.index[i]!r}: column {shown} holds {fmt_value(v[i])}; a parameter "
            "count must be a positive number"
        )


def check_models(models: pd.DataFrame, label: str) -> pd.DataFrame:
    """The ``--models`` table with ``N`` / ``N_total`` as floats, refused row by row."""
    if "model" not in models.columns:
        raise InputError(f"{label}: no 'model' column; it has: {', '.join(map(str, models))}")
    models = models.copy()
    names = models["model"].astype(str)
    dup = names.duplicated(keep="first").to_numpy()
    if dup.any():
        i = int(np.flatnonzero(dup)[0])
        j = int(np.flatnonzero((names == names.iloc[i]).to_numpy())[0])
        raise InputError(
            f"{label}: row {i + 1}: model {names.iloc[i]!r} appears twice (rows {j + 1} and "
            f"{i + 1}); give one row per model"
        )
    models["model"] = names
    for c in ("N", "N_total"):
        if c not in models.columns:
            continue
        for i, raw in enumerate(models[c]):
            if raw is None or (isinstance(raw, float) and math.isnan(raw)):
                if c == "N_total":
                    continue
            try:
                f = float(raw)
            except (TypeError, ValueError):
                f = math.nan
            if not (math.isfinite(f) and f > 0):
                raise InputError(
                    f"{label}: row {i + 1} (model {names.iloc[i]!r}): column {c!r} holds "
                    f"{fmt_value(raw)}; a parameter count must be a positive number (e.g. 1.2e8)"
                )
        models[c] = pd.to_numeric(models[c], errors="coerce").astype(float)
    return models


def check_cooldown_ends(ck: pd.DataFrame, ends) -> None:
    """Every ``--cooldown-ends`` step is an evaluation of at least one run."""
    steps = set(ck["step"].astype(float))
    for s in ends:
        if float(s) not in steps:
            runs = list(dict.fromkeys(ck["model"]))
            which = f"run {runs[0]!r}" if len(runs) == 1 else f"any of the {len(runs)} runs"
            near = sorted(steps, key=lambda x: abs(x - float(s)))[:3]
            raise InputError(
                f"--cooldown-ends {fmt_value(float(s))}: no evaluation at that step in {which} "
                f"(nearest evaluated steps: {', '.join(fmt_value(x) for x in sorted(near))})"
            )


def keep_column(col: pd.Series) -> pd.Series:
    """A ``--keep`` column: numbers when every value is one, else carried as text unchanged."""
    v = pd.to_numeric(col, errors="coerce")
    return v if (v.notna() | col.isna()).all() else col
