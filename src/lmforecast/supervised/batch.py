"""Batch loss forecasts from a table, and the held-out check where the table holds the truth.

A row names its forecast point by N and D (columns `N`, `D`; also `params`, `tokens`) or by N
and its training FLOPs (`C` or `flops`: D = C / 6N, the 6ND accounting of Kaplan et al. 2020
Eq. 2.1 that the fits use; beside D a C column is not read, as in a fit). An optional `loss`
column is the truth and an optional `run`, `label` or `model` column names the row. Every row
gets the fitted law's forecast and its interval (`SupervisedScalingLaw.predict_interval`);
where the truth is given, `truth_summary` scores them: mean and median relative error
|forecast / loss - 1| and the share of losses inside their intervals (coverage; a row without
an interval counts as a miss).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import InputError
from ..forecast import Answer

COLUMNS = {"N": ("N", "params"), "D": ("D", "tokens"), "C": ("C", "flops"), "loss": ("loss",)}
LABELS = ("run", "label", "model", "name")
OUT_COLUMNS = (
    "row",
    "label",
    "N",
    "D",
    "C",
    "forecast",
    "lower",
    "upper",
    "loss",
    "rel_error",
    "covered",
)


def _column(df: pd.DataFrame, key: str) -> np.ndarray | None:
    names = [c for c in COLUMNS[key] if c in df.columns]
    if len(names) > 1:
        raise InputError(f"rows: columns {names[0]!r} and {names[1]!r} both give {key}: keep one")
    if not names:
        return None
    col = names[0]
    v = pd.to_numeric(df[col], errors="coerce")
    empty = df[col].isna() | (df[col].astype(str).str.strip() == "")
    bad = v.isna() & ~empty
    if bad.any():
        i = int(np.argmax(bad.to_numpy()))
        raise InputError(f"rows: column {col!r} row {i + 1}: {df[col].iloc[i]!r} is not a number")
    out = v.to_numpy(float)
    pos = np.isfinite(out) & ~(out > 0)
    if pos.any():
        i = int(np.argmax(pos))
        raise InputError(f"rows: column {col!r} row {i + 1}: {out[i]:g} must be > 0")
    if key != "loss" and np.isnan(out).any():
        i = int(np.argmax(np.isnan(out)))
        raise InputError(f"rows: column {col!r} row {i + 1} is empty")
    return out


def forecast_points(
    table: pd.DataFrame,
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, list | None]:
    """(N, D, truth or None, labels or None) of a rows table (see the module doc)."""
    if not isinstance(table, pd.DataFrame) or table.empty:
        raise InputError("rows: an empty table (one row per forecast)")
    df = table.rename(columns=lambda c: str(c).strip())
    N, D, C, truth = (_column(df, k) for k in ("N", "D", "C", "loss"))
    if N is None or (D is None and C is None):
        raise InputError(
            f"rows: need columns N and D (or N and C); found {', '.join(map(repr, df.columns))}"
        )
    D = C / (6.0 * N) if D is None else D  # beside D, a C column is not read (as in a fit)
    label = next((c for c in LABELS if c in df.columns), None)
    labels = None if label is None else [None if pd.isna(v) else str(v) for v in df[label]]
    return N, D, truth, labels


def forecast_table(model, table: pd.DataFrame, *, level: float = 0.9):
    """(rows, summary): one forecast with its `level` interval per row of `table` from a fitted
    `SupervisedScalingLaw` (columns `OUT_COLUMNS`; lower/upper NaN where the fit has no
    interval), and `truth_summary` of the rows holding the truth (None without any)."""
    N, D, truth, labels = forecast_points(table)
    point = np.asarray(model.predict(N, D), float).ravel()
    try:
        lo, hi = (np.asarray(v, float).ravel() for v in model.predict_interval(N, D, level=level))
    except ValueError:  # InputError: a fit without intervals (point fit)
        lo = hi = np.full(point.shape, np.nan)
    rows = pd.DataFrame(
        {
            "row": np.arange(1, len(N) + 1),
            "label": labels or [None] * len(N),
            "N": N,
            "D": D,
            "C": 6.0 * N * D,
            "forecast": point,
            "lower": lo,
            "upper": hi,
            "loss": np.full(len(N), np.nan) if truth is None else truth,
        }
    )
    rows["rel_error"] = np.abs(rows["forecast"] / rows["loss"] - 1.0)
    inside = (rows["lower"] <= rows["loss"]) & (rows["loss"] <= rows["upper"])
    rows["covered"] = inside.where(np.isfinite(rows["loss"]), None)
    return rows[list(OUT_COLUMNS)], truth_summary(rows, level)


def truth_summary(rows: pd.DataFrame, level: float) -> dict | None:
    """{n, mean_rel_error, median_rel_error, coverage, level} over the rows with a finite
    `loss`: the held-out check of the forecasts (None when no row holds the truth)."""
    have = np.isfinite(pd.to_numeric(rows["loss"], errors="coerce").to_numpy(float))
    if not have.any():
        return None
    f = rows[have]
    err = f["rel_error"].to_numpy(float)
    covered = ((f["lower"] <= f["loss"]) & (f["loss"] <= f["upper"])).to_numpy(bool)
    return {
        "n": int(have.sum()),
        "mean_rel_error": float(np.mean(err)),
        "median_rel_error": float(np.median(err)),
        "coverage": float(np.mean(covered)),
        "level": float(level),
    }


def _table_text(recs: list[dict], summary: dict | None, level: float) -> str:
    lines = []
    for r in recs:
        who = r["label"] or f"row {r['row']}"
        iv = f"  [{r['lower']:.4f}, {r['upper']:.4f}]" if r["interval"] else ""
        line = f"{who}: L(N={r['N']:.4g}, D={r['D']:.4g}) = {r['forecast']:.4f}{iv}"
        if r["loss"] is not None:
            line += f"; actual {r['loss']:.4f}, error {100 * r['rel_error']:.2f}%"
            line += "" if r["covered"] else " (outside)"
        lines.append(line)
    lines.append(f"({100 * level:g}% intervals)")
    if summary:
        lines.append(
            f"held-out check: {summary['n']} row(s) with a loss; mean relative error "
            f"{100 * summary['mean_rel_error']:.2f}% (median "
            f"{100 * summary['median_rel_error']:.2f}%); {100 * summary['coverage']:.0f}% "
            f"inside their {100 * level:g}% interval"
        )
    return "\n".join(lines)


def table_answer(model, table: pd.DataFrame, level: float = 0.9) -> tuple[Answer, pd.DataFrame]:
    """(answer, rows): `forecast_table` as `supervised predict --table` prints it (each row
    with its interval, the held-out check where the rows give the loss), and the rows."""
    rows, summary = forecast_table(model, table, level=level)
    recs = [
        {k: (None if isinstance(v, float) and not np.isfinite(v) else v) for k, v in r.items()}
        for r in rows.to_dict(orient="records")
    ]
    for r in recs:
        r["interval"] = None if r["lower"] is None else [r["lower"], r["upper"]]
    fields = {"level": level, "forecasts": recs, "summary": summary}
    return Answer(fields, _table_text(recs, summary, level)), rows
