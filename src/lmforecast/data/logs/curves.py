"""The learning-rate column of a training log, and the curves table built from it.

The curves table (read by `lmforecast.curves`; docs/curves.md) has one row per logged step of
each run: ``run, step, lr, loss`` with ``loss`` empty where the step logged a learning rate but
no evaluation, and ``tokens``, ``N`` when known. Logs write the learning rate under several names:
``lr``, ``learning_rate``, W&B's ``optim/learning_rate_group0`` (and the Hugging Face trainer's
``train/learning_rate``), TensorBoard scalars of those names. An evaluation logged at a step with
no learning rate of its own takes the learning rate interpolated linearly between the run's
neighbouring logged ones (held at the first/last logged value beyond them).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...errors import InputError, fmt_value
from .readers import RUN

LR_CANDIDATES = (
    "lr",
    "learning_rate",
    "optim/learning_rate_group0",
    "train/learning_rate",
    "train/lr",
    "trainer/learning_rate",
)
CURVES_COLUMNS = ("run", "step", "lr", "loss", "tokens", "N")


def pick_lr(df: pd.DataFrame, given: str | None, where: str) -> str | None:
    """The learning-rate column: `given` (``--lr``), else the first known name present."""
    if given is not None:
        if given not in df.columns:
            shown = ", ".join(str(c) for c in df.columns if not str(c).startswith("_"))
            raise InputError(f"{where}: no column {given!r} (--lr); the log has columns: {shown}")
        return given
    return next((c for c in LR_CANDIDATES if c in df.columns), None)


def check_lr(df: pd.DataFrame, col: str) -> None:
    """A learning rate is >= 0 (a numeric, finite column was already required)."""
    v = df[col].to_numpy(dtype=float)
    bad = np.flatnonzero(v < 0)
    if len(bad):
        i = int(bad[0])
        raise InputError(
            f"{df['_file'].iloc[i]}: run {df[RUN].iloc[i]!r}: row {int(df['_row'].iloc[i])}: "
            f"column {col!r} (--lr) holds {fmt_value(v[i])}; a learning rate must be >= 0"
        )


def _fill(step: np.ndarray, value: np.ndarray) -> np.ndarray:
    """`value` with its gaps filled linearly in `step` (held beyond the ends)."""
    ok = np.isfinite(value)
    if ok.all() or not ok.any():
        return value
    return np.interp(step, step[ok], value[ok])


def curves_table(df: pd.DataFrame, col: str, N: pd.Series | None) -> pd.DataFrame:
    """One row per (run, step) that logged a learning rate or a loss (see the module doc).

    `df` holds the merged log (one row per run and step: ``_step``, ``_loss`` NaN where not
    evaluated, ``_tokens``, ``_file``, ``_row`` and the learning-rate column `col`)."""
    parts = []
    for r, g in df.groupby(RUN, sort=False):
        g = g[g[col].notna() | g["_loss"].notna()].sort_values("_step", kind="stable")
        lr = g[col].to_numpy(dtype=float)
        if not np.isfinite(lr).any():
            row = g.iloc[0]
            raise InputError(
                f"{row['_file']}: run {r!r} logs losses but no learning rate in column {col!r} "
                "(--lr); a curve needs its schedule: log the learning rate, or leave the run out"
            )
        step = g["_step"].to_numpy(dtype=float)
        part = pd.DataFrame(
            {
                "run": str(r),
                "step": step,
                "lr": _fill(step, lr),
                "loss": g["_loss"].to_numpy(dtype=float),
            }
        )
        if "_tokens" in g:
            part["tokens"] = _fill(step, g["_tokens"].to_numpy(dtype=float))
        if N is not None:
            part["N"] = float(N[r])
        parts.append(part)
    out = pd.concat(parts, ignore_index=True)
    if "tokens" in out and not np.isfinite(out["tokens"]).all():
        out = out.drop(columns="tokens")  # a run without any tokens: the column is optional
    if np.isfinite(out["step"]).all() and (out["step"] == np.round(out["step"])).all():
        out["step"] = out["step"].astype(np.int64)
    return out


def with_lr(checkpoints: pd.DataFrame, curves: pd.DataFrame) -> pd.DataFrame:
    """The checkpoints table with the learning rate at each evaluation (column ``lr``)."""
    key = curves[["run", "step", "lr"]].rename(columns={"run": "model"})
    key["step"] = key["step"].astype(checkpoints["step"].dtype)
    out = checkpoints.merge(key, on=["model", "step"], how="left")
    return out
