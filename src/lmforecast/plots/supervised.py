"""Figures for supervised laws: IsoFLOP profiles, parity, compute-optimal allocation."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .style import new_figure


def isoflop_profiles(law, runs: pd.DataFrame, *, ax=None):
    """Observed loss vs N on each IsoFLOP budget with the fitted law along the same budget."""
    fig, ax = new_figure(ax=ax)
    iso = (
        runs[runs["protocol"].astype(str).str.startswith("isoflop")] if "protocol" in runs else runs
    )
    import matplotlib

    cmap = matplotlib.colormaps["viridis"]
    groups = list(iso.groupby("protocol")) if "protocol" in iso else [("runs", iso)]
    groups.sort(key=lambda g: float(np.median(g[1]["N"] * g[1]["D"])))
    for i, (name, g) in enumerate(groups):
        color = cmap(i / max(1, len(groups) - 1))
        ax.scatter(g["N"], g["loss"], s=14, color=color, label=str(name))
        C = float(np.median(g["N"] * g["D"] * 6))
        n = np.geomspace(g["N"].min() / 1.5, g["N"].max() * 1.5, 100)
        ax.plot(n, law.predict(n, C / (6 * n)), color=color, lw=1.2)
    ax.set_xscale("log")
    ax.set_xlabel("non-embedding parameters N")
    ax.set_ylabel("validation loss")
    ax.set_title("IsoFLOP profiles: runs and fitted law")
    ax.legend(fontsize=7)
    return fig


def parity(law, runs: pd.DataFrame, holdout_mask=None, *, ax=None):
    """Predicted vs observed loss; held-out runs (if any) in a second colour."""
    fig, ax = new_figure(ax=ax)
    pred = law.predict(runs["N"].to_numpy(), runs["D"].to_numpy())
    m = np.zeros(len(runs), bool) if holdout_mask is None else np.asarray(holdout_mask)
    ax.scatter(runs["loss"][~m], pred[~m], s=12, label="fitted runs")
    if m.any():
        ax.scatter(runs["loss"][m], pred[m], s=14, marker="s", label="held out")
    lo, hi = float(runs["loss"].min()), float(runs["loss"].max())
    ax.plot([lo, hi], [lo, hi], "k--", lw=0.8)
    ax.set_xlabel("observed loss")
    ax.set_ylabel("predicted loss")
    ax.set_title("Parity")
    ax.legend(fontsize=8)
    return fig


def allocation(C: np.ndarray, curves: dict[str, dict], bands: dict | None = None):
    """N* and D* vs compute for several laws/accountings; optional bootstrap bands for N*."""
    fig, axes = new_figure(ncols=2)
    for name, a in curves.items():
        axes[0, 0].plot(C, a["N"], label=name)
        axes[0, 1].plot(C, a["D"], label=name)
    if bands:
        for name, b in bands.items():
            axes[0, 0].fill_between(C, b["N"][0], b["N"][1], alpha=0.2, label=f"{name} 90% CI")
            axes[0, 1].fill_between(C, b["D"][0], b["D"][1], alpha=0.2)
    for ax, lab in zip(axes[0], ["compute-optimal N*", "compute-optimal D*"]):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("training FLOPs C")
        ax.set_ylabel(lab)
    axes[0, 0].legend(fontsize=7)
    return fig
