"""Report section "Forecast record": a forecast ledger's coverage and errors, per method and over
time (shown when the report is given ``--ledger PATH``; docs/ledger.md)."""

from __future__ import annotations

import pandas as pd

from ...ledger import Ledger, over_time, score_records, score_table
from ...ledger.score import per_record
from ..builder import ReportContext, Section


def monthly(df: pd.DataFrame) -> pd.DataFrame:
    """Coverage and mean absolute error of resolved forecasts per method and month made."""
    s = per_record(df)
    if s.empty:
        return pd.DataFrame(columns=["method", "month", "n", "coverage", "mean_abs_error"])
    s["month"] = s["created"].str.slice(0, 7)
    g = s.groupby(["method", "month"], sort=True)
    out = g.agg(
        n=("id", "size"), coverage=("covered", "mean"), mean_abs_error=("abs_error", "mean")
    )
    return out.reset_index()


def build_section(ctx: ReportContext) -> Section | None:
    path = getattr(ctx, "ledger", None)
    if path is None:
        return None  # no ledger given: the section is left out of the report
    from ...plots.ledger import plot_over_time

    sec = Section("ledger", "Forecast record")
    with Ledger(path) as L:
        df = L.records()
    res = score_records(df, by="method")
    o = res["overall"]
    sec.text(
        f"Ledger {path}: {o['n_records']} current forecasts ({o['n_resolved']} resolved, "
        f"{o['n_open']} open; corrected records left out). Coverage is the share of resolved "
        "forecasts whose interval holds the observed value (no interval counts as a miss); the "
        "Winkler score charges interval width plus 2/alpha times each miss's distance (lower "
        "is better)."
    )
    sec.table(score_table(res), caption="Scores per method (resolved forecasts)", na_rep="—")
    month = monthly(df)
    if len(month):
        sec.table(month, caption="Per method and month the forecast was made")
    ot = over_time(df)
    levels = pd.to_numeric(df["level"], errors="coerce").dropna().unique()
    level = float(levels[0]) if len(levels) == 1 else None
    sec.figure(plot_over_time(ot, level=level), "Running coverage and absolute error over time")
    sec.numbers = {"scores": res, "monthly": month.to_dict("records")}
    return sec
