"""Figures of a forecast ledger over time (`lmforecast.ledger.over_time`); no scoring here."""

from __future__ import annotations

import pandas as pd
from matplotlib.dates import AutoDateLocator, ConciseDateFormatter

from .style import new_figure


def plot_over_time(ot: pd.DataFrame, level: float | None = None):
    """Left: running interval coverage per method against the time each forecast was made
    (dashed: the nominal level, when given). Right: each resolved forecast's absolute error
    (dots) and the running mean per method (lines). Times are labelled by matplotlib's concise
    date formatter (the date once, then the times), which stays short for forecasts made
    seconds or years apart."""
    fig, axes = new_figure(ncols=2)
    ax, ax2 = axes[0, 0], axes[0, 1]
    if ot.empty:
        ax.text(0.5, 0.5, "no resolved forecasts", ha="center", transform=ax.transAxes)
        return fig
    t = pd.to_datetime(ot["created"], utc=True, format="ISO8601")
    for i, (m, g) in enumerate(ot.groupby("method", sort=True)):
        tt = t[g.index]
        ax.step(tt, g["running_coverage"], where="post", color=f"C{i}", label=m)
        ax2.scatter(tt, g["abs_error"], s=10, color=f"C{i}", alpha=0.5)
        ax2.plot(tt, g["running_mae"], color=f"C{i}", label=f"{m} (running mean)")
    if level is not None:
        ax.axhline(level, color="k", ls="--", lw=1, label=f"nominal {level:g}")
    ax.set_ylim(-0.05, 1.05)
    ax.set_ylabel("running coverage of the intervals")
    ax2.set_ylabel("absolute error")
    for a in (ax, ax2):
        a.set_xlabel("forecast made (UTC)")
        loc = AutoDateLocator(minticks=3, maxticks=5)
        a.xaxis.set_major_locator(loc)
        a.xaxis.set_major_formatter(ConciseDateFormatter(loc))
        a.legend(fontsize=7)
    return fig
