"""Calibration of forecast intervals: empirical coverage against the nominal level.

Input tables come from `lmforecast.uncertainty.coverage.calibration_curve` (no fitting here).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .style import new_figure


def calibration_figure(curves: dict[str, pd.DataFrame], title: str = "") -> object:
    """One panel per entry of `curves` (name -> calibration table with columns level, coverage,
    n and a `method` column): empirical coverage of held-out forecasts against the nominal
    level, with the diagonal (perfect calibration)."""
    fig, axes = new_figure(ncols=len(curves), width=4.2, height=3.8)
    axes = np.atleast_1d(axes).ravel()
    for ax, (name, cur) in zip(axes, curves.items()):
        ax.plot([0, 1], [0, 1], color="0.6", lw=1, ls="--", label="nominal")
        for method, g in cur.groupby("method", sort=False):
            g = g.sort_values("level")
            n = int(g["n"].iloc[0])
            ax.plot(g["level"], g["coverage"], marker="o", label=f"{method} (n={n})")
        ax.set_xlim(0.4, 1.0)
        ax.set_ylim(0.0, 1.02)
        ax.set_xlabel("nominal level of the prediction interval")
        ax.set_ylabel("share of held-out actuals inside")
        ax.set_title(name, fontsize=10)
        ax.legend(fontsize=8, loc="upper left")
    if title:
        fig.suptitle(title)
    return fig


__all__ = ["calibration_figure"]
