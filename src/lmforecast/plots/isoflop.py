"""IsoFLOP curves: loss against N per budget, the fitted parabolas and minima, and N*(C)."""

from __future__ import annotations

import matplotlib
import numpy as np
import pandas as pd

from .style import log_axis, new_figure


def plot_isoflops(t: pd.DataFrame, res):
    """Left: each budget's runs and (Approach 2) its parabola in log N, minima marked. Right:
    the minima N*(C) and the fitted power law C^a. `t` is an `isoflop_table`."""
    fig, axes = new_figure(ncols=2)
    ax, ax2 = axes[0]
    cmap = matplotlib.colormaps["viridis"]
    groups = list(t.groupby("budget", sort=True))
    for k, (_, g) in enumerate(groups):
        col = cmap(k / max(1, len(groups) - 1))
        x, y = np.log(g["N"].to_numpy()), g["loss"].to_numpy()
        ax.scatter(np.exp(x), y, s=12, color=col, label=f"C={g['C'].iloc[0]:.2g}")
        if res.approach == 2:
            xs = np.linspace(x.min(), x.max(), 100)
            ax.plot(np.exp(xs), np.polyval(np.polyfit(x, y, 2), xs), color=col, lw=1)
    m = np.asarray(res.budgets)
    ax.scatter(m[:, 1], m[:, 3], marker="*", s=80, color="red", zorder=5, label="minimum")
    ax.set_xscale("log")
    ax.set_xlabel("parameters N")
    ax.set_ylabel("loss")
    ax.set_title(f"isoFLOP profiles (Approach {res.approach})")
    ax.legend(fontsize=7)
    C = np.geomspace(m[:, 0].min(), m[:, 0].max(), 50)
    ax2.scatter(m[:, 0], m[:, 1], color="red", marker="*", s=60, label="N*(C)")
    ax2.plot(
        C,
        res.optimal(C)[0],
        color="k",
        lw=1,
        label=f"C^{res.a:.3f} [{res.a_interval[0]:.3f}, {res.a_interval[1]:.3f}]",
    )
    ax2.set_xscale("log")
    log_axis(ax2, "y", float(m[:, 1].min()), float(m[:, 1].max()))
    ax2.set_xlabel("compute C (FLOPs)")
    ax2.set_ylabel("N*")
    ax2.legend(fontsize=7)
    return fig
