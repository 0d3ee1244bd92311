"""Loss against epochs of repeated data (data-constrained law, Muennighoff et al. 2023)."""

from __future__ import annotations

import numpy as np

from .style import new_figure


def plot_epochs(advice: dict, *, ax=None):
    """`advice` is `DataConstrainedLaw.epochs_advice(...)`: loss (and interval) per epoch
    count, the half-value epoch count marked."""
    fig, ax = new_figure(ax=ax)
    ep = np.asarray(advice["epochs"])
    ax.plot(ep, advice["loss"], "o-", color="C0", label="forecast")
    if "interval" in advice:
        iv = np.asarray(advice["interval"])
        ax.fill_between(
            ep,
            iv[:, 0],
            iv[:, 1],
            color="C0",
            alpha=0.25,
            label=f"{100 * advice['level']:g}% interval",
        )
    ax.axhline(advice["loss_floor"], color="gray", ls=":", label="infinite repetition")
    ax.axvline(
        advice["half_value_epochs"],
        color="C3",
        ls="--",
        label="repeated token worth half a fresh one",
    )
    ax.set_xscale("log", base=2)
    ax.set_xlabel(f"epochs of U = {advice['U']:.3g} unique tokens")
    ax.set_ylabel("loss")
    ax.set_title(f"N = {advice['N']:.3g} parameters")
    ax.legend(fontsize=7)
    return fig
