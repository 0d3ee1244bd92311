"""Shared matplotlib setup: a non-interactive backend and a consistent look."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg", force=False)
import matplotlib.pyplot as plt  # noqa: E402


def new_figure(ncols: int = 1, nrows: int = 1, width: float = 5.2, height: float = 3.8):
    fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows), squeeze=False)
    for ax in axes.ravel():
        ax.grid(True, which="major", alpha=0.3)
    return fig, (axes[0, 0] if nrows == ncols == 1 else axes)
