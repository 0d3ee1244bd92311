"""Batch forecasts from a targets table: one forecast with its interval per row, and where the
table holds the truth, the held-out check (MAE and interval coverage,
`uncertainty.coverage.truth_summary`).

A row names where to forecast by one of: `flops` (training FLOPs), `params` and `tokens` (N and
D; FLOPs = 6 N D as in the evaluation table), or `model` (a name in the models registry,
`data.evals.lookup_model`: the built-in Pythia models or a user models table; its parameters in
the fit's FLOPs accounting and its final tokens, or the row's own `tokens`). An optional `task`
picks the fit (required with several fits); an optional `score` (points, 0-100) is the truth.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from ..data.evals.registry import lookup_model, match_model_name
from ..data.validate import check_columns
from ..errors import InputError, did_you_mean
from ..forecast import Answer
from ..uncertainty.coverage import truth_summary
from .forecaster import DownstreamForecaster

OUT_COLUMNS = (
    "row",
    "model",
    "task",
    "metric",
    "method",
    "flops",
    "N",
    "D",
    "performance",
    "lower",
    "upper",
    "score",
    "abs_error",
    "covered",
)


def model_point(est: DownstreamForecaster, name: str, models=None, tokens=None) -> dict:
    """{"model", "N", "D"} of a registry model for `est`: N in the fit's FLOPs accounting
    (`params` or `params_nonembedding`, the column the table's FLOPs are 6 x N x tokens of), D
    its final tokens unless `tokens` is given."""
    row = lookup_model(name, models)
    col = est.flops_basis_ if est.flops_basis_ in ("params", "params_nonembedding") else "params"
    N = row[col] if np.isfinite(row[col]) else row["params"]
    D = row["tokens"] if tokens is None else float(tokens)
    if not (np.isfinite(D) and D > 0):
        raise InputError(
            f"model {row['model']!r}: the models table gives no final 'tokens'; "
            "give the row's tokens"
        )
    return {"model": row["model"], "N": float(N), "D": float(D)}


def _number(df: pd.DataFrame, col: str) -> np.ndarray:
    if col not in df.columns:
        return np.full(len(df), np.nan)
    v = pd.to_numeric(df[col], errors="coerce")
    bad = v.isna() & df[col].notna() & (df[col].astype(str).str.strip() != "")
    if bad.any():
        i = int(np.argmax(bad.to_numpy()))
        raise InputError(
            f"targets: column {col!r} row {i + 1}: {df[col].iloc[i]!r} is not a number"
        )
    return v.to_numpy(float)


def _fit_of(ests: dict[str, DownstreamForecaster], task, i: int) -> DownstreamForecaster:
    if task is None or (isinstance(task, float) and np.isnan(task)) or str(task).strip() == "":
        if len(ests) == 1:
            return next(iter(ests.values()))
        raise InputError(
            f"targets: row {i + 1} names no task, and the {len(ests)} fits are of "
            f"{', '.join(ests)}: add a 'task' column"
        )
    t = str(task).strip()
    if t not in ests:
        raise InputError(
            f"targets: row {i + 1}: task {t!r} has no fit{did_you_mean(t, ests)} "
            f"(fits: {', '.join(ests)})"
        )
    return ests[t]


def _where(df: pd.DataFrame, i: int, est, C, N, D, models) -> dict:
    """The forecast point of row i: FLOPs, or N and D, or a registry model."""
    name = df["model"].iloc[i] if "model" in df.columns else None
    name = None if name is None or pd.isna(name) or str(name).strip() == "" else str(name)
    if np.isfinite(C[i]):
        if np.isfinite(N[i]) or np.isfinite(D[i]):
            raise InputError(f"targets: row {i + 1} gives flops and params/tokens: give one")
        if not C[i] > 0:
            raise InputError(f"targets: row {i + 1}: flops must be > 0, got {C[i]:g}")
        return {"model": name, "flops": float(C[i])}
    if np.isfinite(N[i]) and np.isfinite(D[i]):
        if not (N[i] > 0 and D[i] > 0):
            raise InputError(f"targets: row {i + 1}: params and tokens must be > 0")
        return {"model": name, "N": float(N[i]), "D": float(D[i])}
    if name is not None and not np.isfinite(N[i]):
        return model_point(est, name, models, D[i] if np.isfinite(D[i]) else None)
    raise InputError(
        f"targets: row {i + 1} gives no forecast point: fill 'flops', or "
        "'params' and 'tokens', or 'model' (a known model name)"
    )


def forecast_table(fits, targets: pd.DataFrame, *, level: float = 0.9, models=None):
    """(rows, summary): one forecast per row of `targets` (see the module doc) from `fits` (a
    `DownstreamForecaster` or several, one per task), and `truth_summary` of the rows with a
    `score` (per task and over all; empty without one). Warnings from the fits' reach checks
    are given once each."""
    ests = [fits] if isinstance(fits, DownstreamForecaster) else list(fits)
    by_task = {str(e.task_): e for e in ests}
    if not isinstance(targets, pd.DataFrame) or targets.empty:
        raise InputError("targets: an empty table (one row per forecast)")
    df = targets.copy()
    df.columns = [str(c).strip() for c in df.columns]
    if not ({"flops", "model"} & set(df.columns) or {"params", "tokens"} <= set(df.columns)):
        check_columns(df, ["model"], "targets (or columns flops, or params and tokens)")
    if "task" in df.columns and len(by_task) > 1:  # task names as typed: ignoring case
        df["task"] = [
            t if pd.isna(t) else match_model_name(t, by_task, "targets: task", "one of the fits")
            for t in df["task"]
        ]
    C, N, D, truth = (_number(df, c) for c in ("flops", "params", "tokens", "score"))
    bad = np.isfinite(truth) & ((truth < 0) | (truth > 100))
    if bad.any():
        i = int(np.argmax(bad))
        raise InputError(
            f"targets: column 'score' row {i + 1}: {truth[i]:g} is not a score in [0, 100] points"
        )
    tasks = df["task"].tolist() if "task" in df.columns else [None] * len(df)
    points = []
    for i in range(len(df)):
        est = _fit_of(by_task, tasks[i], i)
        points.append((est, _where(df, i, est, C, N, D, models)))
    rows = _forecast(points, level)
    for r, y in zip(rows, truth):
        r["score"] = float(y) if np.isfinite(y) else None
        r["abs_error"] = abs(r["performance"] - y) if np.isfinite(y) else None
        ok = r["lower"] is not None and r["score"] is not None
        r["covered"] = bool(r["lower"] <= y <= r["upper"]) if ok else None
    out = pd.DataFrame(rows, columns=list(OUT_COLUMNS))
    f = out.rename(columns={"score": "y", "performance": "y_pred"})
    summary = truth_summary(f, level, ["task"] if len(by_task) > 1 else ())
    if len(by_task) == 1 and not summary.empty:
        summary.insert(0, "task", "all")
    return out, summary


def _forecast(points, level: float) -> list[dict]:
    """Every row's forecast, one vectorised call per (fit, kind of point); each distinct
    warning given once."""
    rows: list[dict | None] = [None] * len(points)
    groups: dict[tuple, list[int]] = {}
    for i, (est, kw) in enumerate(points):
        groups.setdefault((id(est), "flops" in kw), []).append(i)
    seen: dict[tuple, warnings.WarningMessage] = {}
    for (_, by_flops), idx in groups.items():
        est = points[idx[0]][0]
        if by_flops and est.stage1 == "nd" and est._uses_stage1():
            raise InputError(
                f"targets: row {idx[0] + 1}: the {est.task_} fit's stage 1 is 'nd' "
                "(a law of N and D): give params and tokens, or a model"
            )
        at = (
            {"flops": np.array([points[i][1]["flops"] for i in idx])}
            if by_flops
            else {
                "N": np.array([points[i][1]["N"] for i in idx]),
                "D": np.array([points[i][1]["D"] for i in idx]),
            }
        )
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            P = np.asarray(est.predict(**at), float)
            try:
                lo, hi = (np.asarray(v, float) for v in est.predict_interval(**at, level=level))
            except InputError:  # a fit saved without bootstrap replicates: no interval
                lo = hi = np.full(len(idx), np.nan)
        for w in caught:
            seen.setdefault((w.category, str(w.message)), w)
        C = at["flops"] if by_flops else 6.0 * at["N"] * at["D"]
        for j, i in enumerate(idx):
            kw = points[i][1]
            rows[i] = {
                "row": i + 1,
                "model": kw.get("model"),
                "task": est.task_,
                "metric": est.metric_,
                "method": est.selected_,
                "flops": float(C[j]),
                "N": kw.get("N"),
                "D": kw.get("D"),
                "performance": float(P[j]),
                "lower": float(lo[j]) if np.isfinite(lo[j]) else None,
                "upper": float(hi[j]) if np.isfinite(hi[j]) else None,
            }
    for w in seen.values():
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return [r for r in rows if r is not None]


def _nan(v) -> bool:
    return v is None or (isinstance(v, float) and np.isnan(v))


def table_text(rows: pd.DataFrame, summary: pd.DataFrame, level: float) -> str:
    """One line per forecast row (its interval, the truth and error where the row has a
    score) and one held-out check line per task."""

    def f(v, fmt=".2f"):
        return "-" if _nan(v) else format(v, fmt)

    text = []
    for r in rows.to_dict(orient="records"):
        if isinstance(r["model"], str):
            who = r["model"]
        elif not _nan(r["N"]):
            who = f"N={r['N']:.4g} D={r['D']:.4g}"
        else:
            who = f"C={r['flops']:.4g}"
        iv = "" if _nan(r["lower"]) else f" [{r['lower']:.2f}, {r['upper']:.2f}]"
        line = f"row {r['row']}: {r['task']} {r['metric']} at {who}: {r['performance']:.2f}{iv}"
        if not _nan(r["score"]):
            line += f"; actual {r['score']:.2f}, error {r['abs_error']:.2f}" + (
                "" if r["covered"] else " (outside)"
            )
        text.append(line)
    text.append(f"({level:g} prediction intervals, points)")
    for s in summary.to_dict(orient="records"):
        text.append(
            f"held-out check ({s['task']}): {s['n']} row(s) with a score; MAE "
            f"{f(s['mae'])} points; {f(100 * s['coverage'], '.0f')}% inside their "
            f"{level:g} interval"
        )
    return "\n".join(text)


def table_answer(fits, targets: pd.DataFrame, *, level: float = 0.9, models=None):
    """(answer, rows): `forecast_table` as `downstream predict --table` prints it (each row
    with its interval; per task, the truth's MAE and coverage where rows give a score)."""
    rows, summary = forecast_table(fits, targets, level=level, models=models)
    recs = [
        {k: (None if isinstance(v, float) and np.isnan(v) else v) for k, v in r.items()}
        for r in rows.to_dict(orient="records")
    ]
    for r in recs:
        r["interval"] = None if r["lower"] is None else [r["lower"], r["upper"]]
    fields = {"level": level, "forecasts": recs, "summary": summary.to_dict(orient="records")}
    return Answer(fields, table_text(rows, summary, level)), rows
