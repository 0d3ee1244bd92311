"""Figures of a rolling-origin backtest (`lmforecast.backtest.BacktestResult`); no fitting here."""

from __future__ import annotations

import numpy as np

from .style import log_axis, new_figure


def calibration(bt, method: str | None = None):
    """Left: each forecast's relative error against its extrapolation ratio, with its interval
    drawn relative to the truth (a bar crossing 0 covers the truth), and the naive baselines'
    errors. Right: coverage and median relative half-width per ratio bin against the level.

    Titles are two short lines (side by side, long ones ran into each other); the bars end
    two thirds of the way up so the legend above them never covers one."""
    fig, axes = new_figure(ncols=2)
    ax, ax2 = axes[0, 0], axes[0, 1]
    f = bt.forecasts
    method = method or bt.methods[0]
    markers = ["o", "s", "^", "v", "D"]
    for i, m in enumerate(bt.methods):
        g = f[f["method"] == m]
        x = g["ratio"].to_numpy(float) * (1.0 + 0.04 * i)  # small dodge between methods
        y = 100 * g["rel_error"].to_numpy(float)
        lo_, hi_ = g["lower"].to_numpy(float), g["upper"].to_numpy(float)
        has = ~(np.isnan(lo_) & np.isnan(hi_))
        fin = has & np.isfinite(lo_) & np.isfinite(hi_)
        if m == method and fin.any():
            lo = 100 * (lo_[fin] / g["truth"].to_numpy(float)[fin] - 1)
            hi = 100 * (hi_[fin] / g["truth"].to_numpy(float)[fin] - 1)
            ax.vlines(x[fin], lo, hi, color="C0", alpha=0.35, lw=1.5)
        if m == method and (has & ~fin).any():  # failed forecasts: shown, never dropped
            bad = has & ~fin
            ax.scatter(
                x[bad],
                100 * g["rel_error"].to_numpy(float)[bad],
                s=60,
                marker="x",
                color="red",
                zorder=4,
                label=f"{m}: non-finite interval ({int(bad.sum())})",
            )
        ax.scatter(
            x,
            y,
            s=12 if m == method else 8,
            marker=markers[i % 5],
            label=m,
            zorder=3,
            alpha=1.0 if m == method else 0.6,
        )
    ax.axhline(0.0, color="k", lw=0.8)
    ratios = f["ratio"].to_numpy(float)
    ratios = ratios[np.isfinite(ratios) & (ratios > 0)]
    log_axis(ax, "x", *((ratios.min(), ratios.max() * 1.2) if len(ratios) else (None, None)))
    ax.set_xlabel("extrapolation ratio (forecast compute / largest fitted compute)")
    ax.set_ylabel("relative error of the forecast, %")
    ax.set_title(f"Backtest forecasts\n({100 * bt.level:g}% intervals as bars)", fontsize=10)
    lo_y, hi_y = ax.get_ylim()  # room above every point and bar for the legend
    ax.set_ylim(lo_y, hi_y + 0.45 * (hi_y - lo_y))
    ax.legend(fontsize=7, loc="upper center", ncol=2)

    t = bt.summary_table()
    t = t[(t["method"] == method) & (t["ratio"] != "all")]
    if len(t):
        xs = np.arange(len(t))
        ax2.bar(xs - 0.2, t["coverage %"], width=0.4, color="C0", label="coverage %")
        ax2.axhline(100 * bt.level, color="k", ls="--", lw=0.8, label="nominal level")
        ax2.set_ylim(0, 150)  # headroom for the legend: no bar reaches above 100 of 150
        ax2.set_yticks(np.arange(0, 101, 20))
        ax2.set_ylabel("coverage, %")
        tw = ax2.twinx()
        tw.bar(
            xs + 0.2,
            t["median rel half-width %"],
            width=0.4,
            color="C1",
            label="median rel. half-width %",
        )
        tw.set_ylabel("median relative half-width, %")
        top = np.nanmax(t["median rel half-width %"].to_numpy(float), initial=0.0)
        tw.set_ylim(0, 1.5 * top if top > 0 else 1.0)
        labels = [
            f"{r}\nn={n}" + (f"\n{nf} non-finite" if nf else "")
            for r, n, nf in zip(t["ratio"], t["n"], t["non-finite"])
        ]
        ax2.set_xticks(xs, labels, fontsize=7)
        ax2.set_xlabel("extrapolation-ratio bin")
        h1, l1 = ax2.get_legend_handles_labels()
        h2, l2 = tw.get_legend_handles_labels()
        tw.legend(h1 + h2, l1 + l2, fontsize=7, loc="upper center", ncol=2, framealpha=0.9)
    ax2.set_title(f"Calibration of {method}\n(non-finite intervals count as misses)", fontsize=10)
    return fig
