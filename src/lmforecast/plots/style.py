"""Shared matplotlib setup: a non-interactive backend and a consistent look.

Every axes cycles through `PALETTE`: matplotlib's ten tab10 colours followed by ten darker,
distinct ones, so a figure with up to 20 groups (the OSL figures draw 14 model families) never
gives two groups one colour.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg", force=False)
import matplotlib.pyplot as plt  # noqa: E402

#: 20 distinct colours: tab10, then the dark shades of tab20b/tab20c (none repeats a tab10 hue
#: closely enough to be confused at marker size).
PALETTE = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
    "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf",
    "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173",
    "#3182bd", "#e6550d", "#31a354", "#756bb1", "#000000",
)  # fmt: skip


def new_figure(ncols: int = 1, nrows: int = 1, width: float = 5.2, height: float = 3.8):
    fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows), squeeze=False)
    for ax in axes.ravel():
        ax.grid(True, which="major", alpha=0.3)
        ax.set_prop_cycle(color=list(PALETTE))
    return fig, (axes[0, 0] if nrows == ncols == 1 else axes)
