"""The loss-curve table: one row per (run, step), columns ``run, step, lr, loss``, optional
``tokens`` and ``N``.

A row may carry a learning rate with no loss (the run's planned schedule beside the losses
logged so far) or a loss with no learning rate (the schedule is interpolated linearly between
the rows that give one). Every mistake is an `InputError` whose one line names the run, the
1-based data row and the column.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..data.io import read_table
from ..errors import InputError, fmt_value

OPTIONAL = ("tokens", "N")


def _frame(src, what: str) -> pd.DataFrame:
    if isinstance(src, pd.DataFrame):
        return src.copy()
    if isinstance(src, str | Path):
        return read_table(src)
    raise InputError(f"{what}: expected a path or a DataFrame, got {type(src).__name__}")


def _fail(what: str, run, row: int, col: str, problem: str) -> InputError:
    who = f"run {run!r} " if run is not None else ""
    return InputError(f"{what}: {who}row {row}: column {col!r}: {problem}")


def _numbers(df: pd.DataFrame, col: str, runs: np.ndarray, what: str) -> np.ndarray:
    raw = df[col]
    vals = pd.to_numeric(raw, errors="coerce").to_numpy(float)
    bad = np.isnan(vals) & raw.notna().to_numpy()
    if bad.any():
        i = int(np.argmax(bad))
        raise _fail(what, runs[i], i + 1, col, f"{fmt_value(raw.iloc[i])} is not a number")
    return vals


def _runs(df: pd.DataFrame, what: str) -> np.ndarray:
    col = df["run"]
    blank = col.isna().to_numpy() | (col.astype(str).str.strip() == "").to_numpy()
    if blank.any():
        i = int(np.argmax(blank))
        raise _fail(what, None, i + 1, "run", "the run name is empty")
    return col.astype(str).str.strip().to_numpy()


def _validate(df: pd.DataFrame, what: str, need_loss: bool) -> pd.DataFrame:
    required = ["run", "step", "lr"] + (["loss"] if need_loss else [])
    missing = [c for c in required if c not in df.columns]
    if missing:
        found = ", ".join(repr(str(c)) for c in df.columns)
        raise InputError(
            f"{what}: missing column(s) {', '.join(repr(m) for m in missing)}; found {found}"
        )
    if len(df) == 0:
        raise InputError(f"{what}: the table has no rows")
    runs = _runs(df, what)
    out = pd.DataFrame({"run": runs})
    step = _numbers(df, "step", runs, what)
    for i in np.flatnonzero(~np.isfinite(step)):
        raise _fail(
            what,
            runs[i],
            i + 1,
            "step",
            f"the run has a row with no step (got {fmt_value(df['step'].iloc[i])})",
        )
    for i in np.flatnonzero(step < 0):
        raise _fail(what, runs[i], i + 1, "step", f"{fmt_value(step[i])} is negative")
    out["step"] = step
    lr = _numbers(df, "lr", runs, what)
    for i in np.flatnonzero(np.isinf(lr)):
        raise _fail(what, runs[i], i + 1, "lr", f"{fmt_value(lr[i])} is not finite")
    for i in np.flatnonzero(lr < 0):
        raise _fail(what, runs[i], i + 1, "lr", f"{fmt_value(lr[i])} is negative")
    out["lr"] = lr
    if "loss" in df.columns:
        loss = _numbers(df, "loss", runs, what)
        for i in np.flatnonzero(np.isinf(loss) | (loss <= 0)):
            raise _fail(
                what, runs[i], i + 1, "loss", f"{fmt_value(loss[i])} must be finite and > 0"
            )
        out["loss"] = loss
    elif need_loss:  # pragma: no cover - caught by `missing` above
        raise InputError(f"{what}: missing column 'loss'")
    else:
        out["loss"] = np.nan
    for col in OPTIONAL:
        if col in df.columns:
            v = _numbers(df, col, runs, what)
            for i in np.flatnonzero(np.isinf(v) | (v < 0) | ((v == 0) & (col == "N"))):
                raise _fail(
                    what,
                    runs[i],
                    i + 1,
                    col,
                    f"{fmt_value(v[i])} must be finite and " + ("> 0" if col == "N" else ">= 0"),
                )
            out[col] = v
    _check_rows(out, what)
    return out


def _check_rows(out: pd.DataFrame, what: str) -> None:
    dup = out.duplicated(["run", "step"], keep="first").to_numpy()
    if dup.any():
        i = int(np.argmax(dup))
        same = (out["run"] == out["run"].iloc[i]) & (out["step"] == out["step"].iloc[i])
        first = int(np.argmax(same.to_numpy()))
        raise _fail(
            what,
            out["run"].iloc[i],
            i + 1,
            "step",
            f"step {fmt_value(out['step'].iloc[i])} duplicates row {first + 1}; each "
            "(run, step) appears once",
        )
    has_n = "N" in out.columns
    for run, idx in out.groupby("run", sort=False).indices.items():
        steps = out["step"].to_numpy()[idx]
        back = np.flatnonzero(np.diff(steps) <= 0)
        if back.size:
            j = idx[back[0] + 1]
            raise _fail(
                what,
                run,
                j + 1,
                "step",
                f"step {fmt_value(steps[back[0] + 1])} does not increase (the run's "
                f"previous row has {fmt_value(steps[back[0]])}); list each run's rows "
                "in increasing step order",
            )
        lr = out["lr"].to_numpy()[idx]
        if not np.isfinite(lr).any():
            has_loss = np.isfinite(out["loss"].to_numpy()[idx]).any()
            problem = (
                "the run has losses but no learning rate"
                if has_loss
                else ("the run has no learning rate on any row")
            )
            raise _fail(
                what,
                run,
                idx[0] + 1,
                "lr",
                problem + "; give the schedule's lr on "
                "at least one row (it is interpolated between rows)",
            )
        if has_n:
            n = out["N"].to_numpy()[idx]
            if not np.isfinite(n).any():
                raise _fail(
                    what,
                    run,
                    idx[0] + 1,
                    "N",
                    "N is given for other runs but not "
                    "for this one; give N for every run or for none",
                )
            vals = np.unique(n[np.isfinite(n)])
            if vals.size > 1:
                j = idx[int(np.argmax(np.isfinite(n) & (n != vals[0])))]
                raise _fail(
                    what,
                    run,
                    j + 1,
                    "N",
                    f"the run has two values of N ({fmt_value(vals[0])} and {fmt_value(vals[1])})",
                )
            out.loc[out.index[idx], "N"] = vals[0]


def read_curves(src, *, what: str = "curves") -> pd.DataFrame:
    """Read and validate a loss-curve table (a path or a DataFrame).

    Returns a DataFrame with columns ``run`` (str), ``step``, ``lr``, ``loss`` (NaN where a row
    only plans the schedule or where the lr is to be interpolated) and the optional ``tokens``
    and ``N`` (filled on every row of a run that gives it once).
    """
    out = _validate(_frame(src, what), what, need_loss=True)
    if not np.isfinite(out["loss"].to_numpy()).any():
        raise InputError(f"{what}: column 'loss' has no value on any row; nothing to fit")
    return out


def read_schedule(src, *, what: str = "schedule") -> pd.DataFrame:
    """Read and validate a schedule table: columns ``run, step, lr`` (optional ``tokens``,
    ``N``; a ``loss`` column is kept when present but not needed)."""
    return _validate(_frame(src, what), what, need_loss=False)


__all__ = ["read_curves", "read_schedule"]
