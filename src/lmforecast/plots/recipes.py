"""Effective-compute multiplier k(C) between two recipes."""

from __future__ import annotations

from .style import new_figure


def plot_multiplier(res, *, ax=None):
    """`res` is a `recipes.RecipeComparison`: k(C) over the shared budgets, the asked budget
    marked with its interval."""
    fig, ax = new_figure(ax=ax)
    ax.plot(res.curve["C"], res.curve["multiplier"], color="C0", label="k(C), point fit")
    if res.interval:
        lo, hi = res.interval
        ax.errorbar(
            [res.flops],
            [res.multiplier],
            yerr=[[res.multiplier - lo], [hi - res.multiplier]],
            fmt="o",
            color="C3",
            label=f"C = {res.flops:.2g}: {100 * res.level:g}% interval",
        )
    ax.axhline(1.0, color="gray", ls=":")
    ax.set_xscale("log")
    ax.set_xlabel("compute C of the new recipe (FLOPs)")
    ax.set_ylabel("multiplier k (base needs k C)")
    ax.legend(fontsize=7)
    return fig
