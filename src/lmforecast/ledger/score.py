"""Scoring resolved forecasts: interval coverage, absolute errors and the Winkler score.

For a forecast with central interval ``[l, u]`` at level ``1 - a`` and observation ``y`` the
interval (Winkler) score is (Winkler 1972; Gneiting & Raftery 2007, Eq. 43)::

    W = (u - l) + (2 / a) * (l - y) * [y < l] + (2 / a) * (y - u) * [y > u]

lower is better. A record whose interval is missing or not finite is a failed forecast: it
counts as not covered and is left out of the Winkler mean (``n_no_interval`` says how many).
Records superseded by a correction are left out; unresolved records are counted, not scored.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

SCORE_KEYS = (
    "n_records",
    "n_resolved",
    "n_open",
    "n_no_interval",
    "mean_level",
    "coverage",
    "mean_abs_error",
    "median_abs_error",
    "winkler",
)


def winkler_score(lo, hi, y, level) -> np.ndarray:
    """Winkler interval score per record (nan where the interval is missing or not finite)."""
    lo, hi, y, level = (np.asarray(v, dtype=float) for v in (lo, hi, y, level))
    alpha = 1.0 - level
    with np.errstate(invalid="ignore"):
        w = (
            (hi - lo)
            + (2 / alpha) * np.clip(lo - y, 0, None)
            + (2 / alpha) * np.clip(y - hi, 0, None)
        )
    ok = np.isfinite(lo) & np.isfinite(hi) & np.isfinite(level)
    return np.where(ok, w, np.nan)


def per_record(df: pd.DataFrame) -> pd.DataFrame:
    """Resolved, current records with ``abs_error``, ``covered`` and ``winkler`` columns."""
    cur = df[df["observed"].notna() & df["superseded_by"].isna()].copy()
    lo = pd.to_numeric(cur["lo"], errors="coerce").to_numpy(dtype=float)
    hi = pd.to_numeric(cur["hi"], errors="coerce").to_numpy(dtype=float)
    y = cur["observed"].to_numpy(dtype=float)
    lvl = pd.to_numeric(cur["level"], errors="coerce").to_numpy(dtype=float)
    finite = np.isfinite(lo) & np.isfinite(hi)
    cur["abs_error"] = np.abs(cur["point"].to_numpy(dtype=float) - y)
    cur["has_interval"] = finite
    cur["covered"] = finite & (lo <= y) & (y <= hi)
    cur["winkler"] = winkler_score(lo, hi, y, lvl)
    return cur


def _summary(all_rows: pd.DataFrame, scored: pd.DataFrame) -> dict:
    live = all_rows[all_rows["superseded_by"].isna()]
    n_res = len(scored)
    out = {
        "n_records": int(len(live)),
        "n_resolved": int(n_res),
        "n_open": int(live["observed"].isna().sum()),
        "n_no_interval": int((~scored["has_interval"]).sum()) if n_res else 0,
    }
    if n_res == 0:
        out.update(
            mean_level=None, coverage=None, mean_abs_error=None, median_abs_error=None, winkler=None
        )
        return out
    lv = pd.to_numeric(scored["level"], errors="coerce")
    w = scored["winkler"].dropna()
    out.update(
        mean_level=float(lv.mean()) if lv.notna().any() else None,
        coverage=float(scored["covered"].mean()),
        mean_abs_error=float(scored["abs_error"].mean()),
        median_abs_error=float(scored["abs_error"].median()),
        winkler=float(w.mean()) if len(w) else None,
    )
    return out


def score_records(df: pd.DataFrame, by: str | None = "method") -> dict:
    """Scores of a selection of records (`Ledger.records`): ``overall`` and one entry per value
    of `by` (``method``, ``label``, ``form``, ``task`` or None)."""
    scored = per_record(df)
    out = {"overall": _summary(df, scored), "by": by, "groups": {}}
    if by is not None and len(df):
        for key, g in df.groupby(df[by].fillna(""), sort=True):
            out["groups"][str(key)] = _summary(g, scored[scored[by].fillna("") == key])
    return out


def score_table(result: dict) -> pd.DataFrame:
    """The score dict as a table: one row per group, then ``(all)``."""
    rows = [{"group": k, **v} for k, v in result["groups"].items()]
    rows.append({"group": "(all)", **result["overall"]})
    return pd.DataFrame(rows, columns=["group", *SCORE_KEYS])


def over_time(df: pd.DataFrame) -> pd.DataFrame:
    """Resolved records in order of creation with running coverage and running mean absolute
    error per method (the data of the plot over time)."""
    s = per_record(df).sort_values(["created", "id"])
    s["running_coverage"] = s.groupby("method")["covered"].transform(
        lambda c: c.astype(float).expanding().mean()
    )
    s["running_mae"] = s.groupby("method")["abs_error"].transform(lambda e: e.expanding().mean())
    return s[
        [
            "id",
            "created",
            "method",
            "label",
            "abs_error",
            "covered",
            "winkler",
            "running_coverage",
            "running_mae",
        ]
    ]
