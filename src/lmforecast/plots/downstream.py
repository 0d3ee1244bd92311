"""Downstream forecast figures: score vs loss and score vs FLOPs, with the forecast and its
interval (lmforecast.downstream). No fitting happens here: every curve is a prediction of an
already fitted `DownstreamForecaster`."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .style import new_figure


def _by_model(ax, ck: pd.DataFrame, x: str):
    models = list(ck.sort_values("C").drop_duplicates("model", keep="last")["model"])
    order = ck.groupby("model")["C"].max().sort_values().index
    cmap = __import__("matplotlib").colormaps["viridis"]
    for i, m in enumerate(order):
        d = ck[ck["model"] == m].sort_values("step")
        c = cmap(i / max(len(models) - 1, 1))
        ax.plot(d[x], d["score"], "o-", ms=2.5, lw=0.6, color=c, label=m, alpha=0.8)


def score_vs_loss(
    est, checkpoints: pd.DataFrame, target: dict | None = None, level=0.9, *, ax=None
):
    """Checkpoints' score vs stage-1 loss (one line per model), the fitted sigmoid and
    local-linear maps, the forecast at the predicted loss (interval bar) and the actual."""
    fig, ax = new_figure(ax=ax, width=5.6)
    _by_model(ax, checkpoints, "loss")
    L = checkpoints["loss"].to_numpy(float)
    lo = L.min() - 0.4
    grid = np.linspace(lo, min(L.max(), 8.0), 300)
    for name, style in (("sigmoid", "k-"), ("local-linear", "k--"), ("sigmoid-chance", "k:")):
        if name in est.members_:
            g = grid if name != "local-linear" else grid[grid <= L.min() * np.exp(est.window)]
            ax.plot(g, est.score_from_loss(g, name), style, lw=1.1, label=f"{name} map")
    ax.axhline(est.chance_, color="0.5", lw=0.8, ls=":", label="chance")
    if target is not None:
        C = np.array([target["C"]])
        Lh = est.predict_loss(C)
        if Lh is not None:
            P = est.predict(C)[0]
            a, b = est.predict_interval(C, level=level)
            ax.errorbar(
                Lh,
                [P],
                yerr=[[P - a[0]], [b[0] - P]],
                fmt="s",
                color="C3",
                capsize=3,
                label=f"forecast ({est.selected_}, {level:g} PI)",
            )
        if "loss" in target and "score" in target:
            ax.scatter(
                [target["loss"]],
                [target["score"]],
                marker="*",
                s=140,
                color="C3",
                zorder=5,
                label=f"actual {target.get('model', '')}",
            )
    ax.set_xlim(lo, min(L.max(), 8.0))
    ax.set_xlabel(f"{est.loss_task_} loss (ln perplexity)")
    ax.set_ylabel(f"{est.task_} {est.metric_} (points)")
    ax.legend(fontsize=6, ncol=2)
    return fig


def score_vs_flops(
    est,
    runs: pd.DataFrame,
    target: dict | None = None,
    level=0.9,
    baselines: dict | None = None,
    *,
    ax=None,
):
    """Final checkpoints' score vs training FLOPs, the forecast curve with its interval band,
    the target's actual score and (optionally) baseline forecasts {name: (C, P)}."""
    fig, ax = new_figure(ax=ax, width=5.6)
    C = runs["C"].to_numpy(float)
    hi = C.max() if target is None else max(C.max(), target["C"])
    # the forecast is built for extrapolation upward: draw it from the third-largest model on
    start = np.sort(C)[-3] if C.size >= 3 else C.min()
    grid = np.logspace(np.log10(start), np.log10(hi) + 0.3, 40)
    P = est.predict(grid)
    a, b = est.predict_interval(grid, level=level)
    ax.fill_between(grid, a, b, color="C0", alpha=0.2, label=f"{level:g} PI")
    ax.plot(grid, P, color="C0", label=f"forecast ({est.selected_})")
    ax.errorbar(
        C,
        runs["score"],
        yerr=runs["stderr"].fillna(0),
        fmt="o",
        color="k",
        ms=4,
        capsize=2,
        label="fitted models (final)",
    )
    for i, (name, (c, p)) in enumerate((baselines or {}).items()):
        ax.scatter([c], [p], marker="x", s=50, color=f"C{i + 1}", label=name, zorder=4)
    if target is not None and "score" in target:
        ax.scatter(
            [target["C"]],
            [target["score"]],
            marker="*",
            s=140,
            color="C3",
            zorder=5,
            label=f"actual {target.get('model', '')}",
        )
    ax.axhline(est.chance_, color="0.5", lw=0.8, ls=":", label="chance")
    ax.set_xscale("log")
    ax.set_xlabel("training FLOPs")
    ax.set_ylabel(f"{est.task_} {est.metric_} (points)")
    ax.legend(fontsize=6)
    return fig
