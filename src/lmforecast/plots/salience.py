"""Plots of the CSV method: token weights on the text (Fig. 9 style) and the fitted law
(capability score vs accuracy, Fig. 4/6; predicted vs actual, Fig. 7). Accuracies are in
percentage points, as `SalienceFit` reports them. No fitting here."""

from __future__ import annotations

import html

import numpy as np

from ..salience.law import sigmoid_law
from .style import new_figure

_SPLIT_MARKERS = {"train": "o", "validation": "s", "test": "^"}


def _char_weights(n: int, offsets: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Weight of the token covering each character (NaN where no token covers it)."""
    out = np.full(n, np.nan)
    for (s, e), w in zip(np.asarray(offsets).reshape(-1, 2), weights):
        out[s:e] = w
    return out


def _scale(weights: np.ndarray) -> float:
    w = np.asarray(weights, float)
    top = float(np.quantile(w, 0.99)) if w.size else 1.0
    return top if top > 0 else 1.0


def weights_html(text: str, offsets, weights, title: str = "") -> str:
    """The text with every token shaded by its learned weight (darker = more salient)."""
    off = np.asarray(offsets, np.int64).reshape(-1, 2)
    w = np.asarray(weights, float)
    top = _scale(w)
    parts, pos = [], 0
    for (s, e), wi in zip(off, w):
        if s > pos:
            parts.append(html.escape(text[pos:s]))
        a = min(1.0, max(0.0, wi / top))
        parts.append(
            f'<span title="w={wi:.4g}" style="background: rgba(214, 39, 40, {a:.3f})">'
            f"{html.escape(text[s:e])}</span>"
        )
        pos = max(pos, e)
    parts.append(html.escape(text[pos:]))
    head = f"<h3>{html.escape(title)}</h3>" if title else ""
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>CSV weights</title></head>"
        f"<body>{head}<p style='font-family: monospace; white-space: pre-wrap; "
        f"line-height: 1.6'>{''.join(parts)}</p>"
        f"<p>shade = weight / {top:.4g} (99th percentile), capped at 1</p></body></html>"
    )


def weights_figure(
    text: str, offsets, weights, title: str = "", width: int = 80, max_chars=1600, *, ax=None
):
    """PNG-able version of `weights_html`: characters on a grid, shaded by their token weight."""
    import matplotlib.colors as mcolors
    from matplotlib.patches import Rectangle

    text = text[:max_chars]
    cw = _char_weights(len(text), offsets, weights)
    top = _scale(weights)
    cells = []  # (row, col, char, weight)
    row = col = 0
    for ch, w in zip(text, cw):
        if ch == "\n" or col >= width:
            row, col = row + 1, 0
            if ch == "\n":
                continue
        cells.append((row, col, ch, w))
        col += 1
    n_rows = row + 1
    fig, ax = new_figure(ax=ax, width=max(6.0, width * 0.11), height=max(1.5, 0.28 * n_rows + 0.6))
    ax.grid(False)
    cmap = mcolors.LinearSegmentedColormap.from_list("w", ["#ffffff", "#d62728"])
    for r, c, ch, w in cells:
        if np.isfinite(w):
            ax.add_patch(
                Rectangle((c, -r - 1), 1, 1, color=cmap(min(1.0, max(0.0, w / top))), lw=0)
            )
        if not ch.isspace():
            ax.text(c + 0.5, -r - 0.5, ch, ha="center", va="center", family="monospace", size=7)
    ax.set_xlim(0, width)
    ax.set_ylim(-n_rows, 0)
    ax.set_axis_off()
    if title:
        ax.set_title(title)
    return fig


def fit_figure(fit, ax_titles: bool = True):
    """Two panels: accuracy (points) vs capability score C with the Eq. 2 curve (Fig. 4/6
    style), and predicted vs observed accuracy (points) by split (Fig. 7 style)."""
    df = fit.table()
    fig, axes = new_figure(ncols=2)
    ax1, ax2 = axes[0, 0], axes[0, 1]
    C = df["capability"].to_numpy()
    grid = np.linspace(C.min() - 0.1 * np.ptp(C), C.max() + 0.1 * np.ptp(C), 200)
    ax1.plot(grid, 100.0 * sigmoid_law(grid, fit.alpha, fit.beta, fit.gamma), color="k", lw=1)
    for split, mk in _SPLIT_MARKERS.items():
        sub = df[df["split"] == split]
        if len(sub):
            ax1.scatter(sub["capability"], sub["score"], marker=mk, label=split, s=22)
            ax2.scatter(sub["score"], sub["predicted"], marker=mk, label=split, s=22)
    lo = float(min(df["score"].min(), df["predicted"].min()))
    hi = float(max(df["score"].max(), df["predicted"].max()))
    ax2.plot([lo, hi], [lo, hi], color="k", lw=1, ls="--")
    ax1.set_xlabel("capability score C (weighted loss, nats/char)")
    ax1.set_ylabel(f"{fit.task} accuracy (points)")
    ax2.set_xlabel("observed accuracy (points)")
    ax2.set_ylabel("predicted accuracy (points)")
    if ax_titles:
        ax1.set_title(
            f"Eq. 2: alpha={fit.alpha:.3g}, beta={fit.beta:.3g}, chance={fit.chance:g} points"
        )
        mse = fit.metrics.get("test_mse")
        ax2.set_title("test MSE " + (f"{mse:.3g} points²" if mse is not None else "-"))
    ax1.legend(fontsize=8)
    return fig


def tasks_figure(fits, ncols: int = 3):
    """Predicted vs observed accuracy in points, one panel per task (Fig. 7 style), for a list
    of fits."""
    fits = list(fits)
    n = len(fits)
    nc = min(ncols, n)
    nr = -(-n // nc)
    fig, axes = new_figure(ncols=nc, nrows=nr, width=4.0, height=3.6)
    axes = np.atleast_1d(axes).ravel()
    for ax, fit in zip(axes, fits):
        df = fit.table()
        for split, mk in _SPLIT_MARKERS.items():
            sub = df[df["split"] == split]
            if len(sub):
                ax.scatter(sub["score"], sub["predicted"], marker=mk, label=split, s=20)
        lo = float(min(df["score"].min(), df["predicted"].min()))
        hi = float(max(df["score"].max(), df["predicted"].max()))
        ax.plot([lo, hi], [lo, hi], color="k", lw=1, ls="--")
        mse = fit.metrics.get("test_mse")
        ax.set_title(f"{fit.task}: test MSE " + (f"{mse:.3g} points²" if mse is not None else "-"))
        ax.set_xlabel("observed (points)")
        ax.set_ylabel("predicted (points)")
    for ax in axes[n:]:
        ax.set_axis_off()
    axes[0].legend(fontsize=8)
    return fig
