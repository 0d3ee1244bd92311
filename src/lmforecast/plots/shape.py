"""Per-model residuals against the aspect ratio, with the fitted shape term."""

from __future__ import annotations

import numpy as np

from .style import new_figure


def plot_shape(res, *, ax=None):
    """`res` is a `shape.ShapeTest`."""
    fig, ax = new_figure(ax=ax)
    w = np.array([m["width"] for m in res.models])
    d = np.array([m["depth"] for m in res.models])
    r = np.array([m["residual"] for m in res.models])
    ax.scatter(w / d, r, color="C0")
    for m in res.models:
        if m["model"] == res.worst["model"]:
            ax.annotate(m["model"], (m["width"] / m["depth"], m["residual"]), fontsize=7)
    xs = np.linspace(np.log(w / d).min(), np.log(w / d).max(), 100) - res.x_center
    c0, c1, c2 = res.coef
    ax.plot(
        np.exp(xs + res.x_center),
        c0 + c1 * xs + c2 * xs * xs,
        color="C3",
        label=f"shape term (permutation p = {res.p_value:.2g})",
    )
    ax.axhline(0, color="gray", ls=":")
    ax.set_xscale("log")
    ax.set_xlabel("aspect ratio width / depth")
    ax.set_ylabel("mean log residual vs L(N, D)")
    ax.legend(fontsize=7)
    return fig
