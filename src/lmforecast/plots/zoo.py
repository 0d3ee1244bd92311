"""Figures of the small-model zoo's measurements (no fitting here: pass fitted laws in)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .style import new_figure


def loss_vs_compute(runs: pd.DataFrame, law=None, *, ax=None):
    """Final validation loss against training FLOPs (6ND), one colour per model size; with a
    fitted supervised law (anything with ``predict(N, D)``), its curve at each size."""
    fig, ax = new_figure(ax=ax)
    sizes = sorted(runs["N"].unique())
    cmap = __import__("matplotlib").colormaps["viridis"]
    for i, n in enumerate(sizes):
        g = runs[runs["N"] == n].sort_values("D")
        color = cmap(i / max(1, len(sizes) - 1))
        ax.scatter(g["C"], g["loss"], color=color, label=f"N={n:,}", zorder=3)
        if law is not None:
            D = np.geomspace(g["D"].min() / 2, g["D"].max() * 2, 50)
            ax.plot(6 * n * D, law.predict(np.full_like(D, n), D), color=color, lw=1)
    ax.set_xscale("log")
    ax.set_xlabel("training FLOPs C = 6ND")
    ax.set_ylabel("validation loss (nats/token)")
    ax.legend(fontsize=7)
    return fig


def score_vs_loss(checkpoints: pd.DataFrame, tasks: pd.DataFrame):
    """Task score (%) against validation loss over every checkpoint, with random baselines."""
    fig, axes = new_figure(ncols=len(tasks), width=3.6, height=3.2)
    axes = np.atleast_1d(axes).ravel()
    for ax, (_, t) in zip(axes, tasks.iterrows()):
        ax.scatter(checkpoints["loss"], checkpoints[t["name"]], s=6, alpha=0.5)
        ax.axhline(t["chance"], color="k", ls="--", lw=1, label="random")
        ax.set_xlabel("validation loss")
        ax.set_ylabel(f"{t['name']} (%)")
        ax.invert_xaxis()
        ax.legend(fontsize=7)
    return fig


def student_vs_teacher(distillation: pd.DataFrame, *, ax=None):
    """Distilled student loss against teacher loss, one line per student (N_S, D_S); the
    supervised student at the same (N_S, D_S) as a dashed level."""
    fig, ax = new_figure(ax=ax)
    for (n, d), g in distillation.groupby(["N_S", "D_S"]):
        g = g.sort_values("L_T")
        line = ax.plot(g["L_T"], g["L_S"], marker="o", label=f"N_S={n:,}, D_S={d:,}")[0]
        if g["L_S_supervised"].notna().any():
            ax.axhline(g["L_S_supervised"].iloc[0], color=line.get_color(), ls="--", lw=1)
    ax.set_xlabel("teacher loss L_T")
    ax.set_ylabel("student loss L_S")
    ax.legend(fontsize=7)
    return fig
