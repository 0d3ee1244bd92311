"""Figures for observational scaling laws (Ruan et al. 2024, Figs. 2-6, C.10). No fitting here."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..laws.sigmoid import sigmoid
from ..osl.capability import CapabilitySpace
from ..osl.data import FAMILY, FLOPS, FLOPS_UNIT
from ..osl.result import OSLResult
from ..osl.sweep_result import RobustnessResult
from .style import new_figure


def explained_variance(space: CapabilitySpace, *, ax=None):
    """Bar chart of the explained-variance ratio per PC with the cumulative line (Fig. 2a)."""
    fig, ax = new_figure(ax=ax)
    ev = np.asarray(space.explained_variance_ratio_)
    idx = np.arange(1, ev.size + 1)
    ax.bar(idx, ev, color="tab:blue", label="per PC")
    ax.plot(idx, np.cumsum(ev), "o-", color="tab:orange", label="cumulative")
    ax.set_xticks(idx, [f"PC-{i}" for i in idx])
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("explained variance ratio")
    ax.legend(loc="center right")
    return fig


def loadings_heatmap(space: CapabilitySpace, *, ax=None):
    """Loadings gamma, one row per PC, one column per benchmark (Fig. 2b)."""
    load = space.loadings()
    fig, ax = new_figure(ax=ax, width=1.0 + 0.8 * load.shape[1], height=0.6 + 0.6 * load.shape[0])
    ax.grid(False)
    lim = float(np.max(np.abs(load.to_numpy())))
    im = ax.imshow(load.to_numpy(), cmap="RdBu_r", vmin=-lim, vmax=lim, aspect="auto")
    ax.set_xticks(range(load.shape[1]), load.columns, rotation=45, ha="right")
    ax.set_yticks(range(load.shape[0]), load.index)
    for (i, j), v in np.ndenumerate(load.to_numpy()):
        ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=8)
    fig.colorbar(im, ax=ax)
    return fig


def pc_vs_flops(table: pd.DataFrame, S: np.ndarray, fits: pd.DataFrame, pc: int = 1, *, ax=None):
    """PC-k against log10 training FLOPs, one colour and fitted line per family (Fig. 3)."""
    fig, ax = new_figure(ax=ax, width=6.5, height=4.5)
    logc = np.log10(table[FLOPS].to_numpy(float) * FLOPS_UNIT)
    name = f"PC-{pc}"
    sub = fits[fits["pc"] == name].set_index(FAMILY) if len(fits) else pd.DataFrame()
    for fam, idx in table.groupby(FAMILY, sort=False).indices.items():
        ok = idx[np.isfinite(logc[idx])]
        if ok.size == 0:
            continue
        pts = ax.scatter(logc[ok], S[ok, pc - 1], s=14)
        if fam in sub.index:
            r = sub.loc[fam]
            xs = np.linspace(logc[ok].min(), logc[ok].max(), 2)
            ax.plot(
                xs,
                r["slope"] * xs + r["intercept"],
                color=pts.get_facecolor()[0],
                label=f"{fam} (R²={r['r2']:.2f})",
            )
    ax.set_xlabel("log10 training FLOPs")
    ax.set_ylabel(name)
    ax.legend(fontsize=6, ncol=2, loc="best")
    return fig


def scaling_curve(result: OSLResult, *, ax=None):
    """Observed vs fitted sigmoid with train/test points (Fig. 4 style).

    x-axis: log10 reference-family-equivalent FLOPs when available (Eq. 8), otherwise the
    predictor itself (log10 FLOPs / size) or the linear index beta^T S + alpha; y-axis: the
    target in points (Eq. 6 on fractions, mapped back by `OSLResult.to_original`).
    """
    fig, ax = new_figure(ax=ax)
    pf = result.predictions_frame()
    p = result.params
    h = p["h"]
    if result.x == "pcs" and result.reference is not None:
        xv = pf["log10_flops_equiv"].to_numpy(float)
        xlabel = f"log10 {result.reference_family}-equivalent FLOPs"
        grid = np.linspace(np.nanmin(xv), np.nanmax(xv), 200)
        curve = result.predict_from_log_flops_equiv(grid)
    else:
        cols = [f"x{i + 1}" for i in range(result.n_components)]
        X = pf[cols].to_numpy(float)
        if result.x == "pcs":
            xv = p["alpha"] + X @ np.asarray(p["beta"])
            xlabel = "capability index  beta^T S + alpha"
            grid = np.linspace(xv.min(), xv.max(), 200)
            curve = result.to_original((1 - h) + h * sigmoid(grid))
        else:
            xv = X[:, 0]
            xlabel = f"log10 {'training FLOPs (1e21)' if result.x == 'flops' else 'size (B)'}"
            grid = np.linspace(xv.min(), xv.max(), 200)
            curve = result.to_original((1 - h) + h * sigmoid(p["alpha"] + p["beta"][0] * grid))
    train = (pf["split"] == "train").to_numpy()
    ax.scatter(xv[train], pf["y"][train], s=16, color="tab:blue", label="train")
    ax.scatter(xv[~train], pf["y"][~train], s=22, color="tab:red", marker="^", label="test")
    ax.plot(grid, curve, color="black", lw=1.5, label="fit")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(f"{result.target} (points)")
    mse = (
        f"test MSE {result.test_mse:.4g} points²" if result.test_mse is not None else "no test set"
    )
    ax.set_title(f"{result.target} ({result.x}; {mse})", fontsize=10)
    ax.legend(loc="upper left")
    return fig


def weight_bars(result: OSLResult, *, ax=None):
    """beta^T gamma: the weight of each base benchmark in the fitted law (Fig. 5c/6b)."""
    w = result.benchmark_weights().drop("intercept")
    fig, ax = new_figure(ax=ax)
    colors = ["tab:blue" if v >= 0 else "tab:red" for v in w]
    ax.bar(range(len(w)), w.to_numpy(), color=colors)
    ax.set_xticks(range(len(w)), w.index, rotation=45, ha="right")
    ax.set_ylabel("weight on benchmark score (per unit fraction)")
    ax.set_title(f"{result.target}: beta^T gamma", fontsize=10)
    return fig


def selection_objectives(best: float, random: list[float], *, ax=None):
    """Eq. 9 objective of the V-optimal subset against random family subsets (Sec. 5)."""
    fig, ax = new_figure(ax=ax)
    ax.hist(random, bins=min(20, max(len(random), 1)), color="tab:gray", label="random subsets")
    ax.axvline(best, color="tab:red", label="V-optimal")
    ax.set_xscale("log")
    ax.set_xlabel("Tr(S^T S (S_M^T S_M)^-1)")
    ax.legend()
    return fig


def _predictor_style(name: str, i: int) -> dict:
    """One colour per PC count (K = 3, the paper's default, in blue), FLOPs orange, size grey."""
    if name == "flops":
        return {"color": "tab:orange", "ls": "--", "marker": "s"}
    if name == "size":
        return {"color": "tab:gray", "ls": ":", "marker": "^"}
    colors = {"pcs:1": "tab:cyan", "pcs:2": "tab:green", "pcs:3": "tab:blue", "pcs:4": "tab:purple"}
    return {"color": colors.get(name, f"C{i % 10}"), "ls": "-", "marker": "o"}


def robustness_curves(result: RobustnessResult, targets: list[str] | None = None):
    """Test MSE against test fraction per predictor, one panel per target (Figs. C.10-C.11).

    The x-axis runs from the largest test fraction (hardest) to the smallest, as in the paper;
    the legend carries each predictor's AUE.
    """
    targets = list(targets or result.targets)
    unknown = [t for t in targets if t not in result.targets]
    if unknown:
        raise ValueError(f"target {unknown[0]!r} is not in this sweep")
    ncols = min(3, len(targets))
    nrows = -(-len(targets) // ncols)
    fig, axes = new_figure(ncols=ncols, nrows=nrows, width=4.6, height=3.6)
    axes = np.atleast_1d(axes).ravel()
    curves = result.curves
    for ax, t in zip(axes, targets):
        sub = curves[curves["target"] == t]
        for i, p in enumerate(result.predictors):
            g = sub[sub["predictor"] == p].sort_values("fraction")
            label = f"{p} (AUE {result.aue[t][p]:.3g})"
            ax.plot(
                g["fraction"], g["test_mse"], ms=3.5, lw=1.3, label=label, **_predictor_style(p, i)
            )
        ax.set_yscale("log")
        ax.set_xlim(max(result.fractions) + 0.02, min(result.fractions) - 0.02)
        ax.set_xlabel("test fraction")
        ax.set_ylabel("test MSE (points²)")
        ax.set_title(f"{t} (n={result.n_models.get(t)}, {result.split} cutoff)", fontsize=9)
        ax.legend(fontsize=6.5, loc="best")
    for ax in axes[len(targets) :]:
        ax.set_visible(False)
    return fig


def aue_bars(result: RobustnessResult, *, ax=None):
    """AUE per predictor, grouped by target (log scale; lower is better)."""
    table = result.aue_table()
    fig, ax = new_figure(ax=ax, width=max(5.2, 1.1 * len(table.columns) + 2.0))
    width = 0.8 / len(table.index)
    x = np.arange(len(table.columns))
    for i, p in enumerate(table.index):
        ax.bar(
            x + (i - (len(table.index) - 1) / 2) * width,
            table.loc[p].to_numpy(float),
            width,
            color=_predictor_style(p, i)["color"],
            label=p,
        )
    ax.set_xticks(x, table.columns, rotation=30, ha="right")
    ax.set_yscale("log")
    ax.set_ylabel("AUE (area under test MSE in points² vs test fraction)")
    ax.legend(fontsize=7, ncol=2)
    return fig
