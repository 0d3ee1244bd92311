"""Shared matplotlib setup: figures outside pyplot and a consistent look.

Figures are `matplotlib.figure.Figure` objects made without pyplot: importing lmforecast never
changes the user's backend (a notebook keeps its inline backend), no figure is left open in
pyplot's registry, and `fig.savefig` works headless. A notebook shows a returned figure as any
other; `plt.show()` does not know about it.

Every figure made here uses matplotlib's constrained layout, which sizes the margins around the
titles, labels, legends and colour bars it holds when the figure is drawn, so no plot calls
`tight_layout` (a user's own axes keep their figure's layout). `log_axis` labels a log axis at
its decades, or at 1-2-5 steps where it spans less than two decades, and never labels its minor
ticks (their mathtext labels run into one another on a short axis).

Every axes cycles through `PALETTE`: matplotlib's ten tab10 colours followed by ten darker,
distinct ones, so a figure with up to 20 groups (the OSL figures draw 14 model families) never
gives two groups one colour.
"""

from __future__ import annotations

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

#: 20 distinct colours: tab10, then the dark shades of tab20b/tab20c (none repeats a tab10 hue
#: closely enough to be confused at marker size).
PALETTE = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
    "#393b79",
    "#637939",
    "#8c6d31",
    "#843c39",
    "#7b4173",
    "#3182bd",
    "#e6550d",
    "#31a354",
    "#756bb1",
    "#000000",
)


def new_figure(ncols: int = 1, nrows: int = 1, width: float = 5.2, height: float = 3.8, *, ax=None):
    """A styled figure and its axes; with `ax` (one-axes plots only), draw on the user's axes
    and return their figure (only the colour cycle is set: some plots draw up to 20 groups)."""
    if ax is not None:
        if nrows * ncols != 1:
            raise ValueError("ax= is only for one-axes figures")
        if not hasattr(ax, "plot") or getattr(ax, "figure", None) is None:
            raise TypeError(f"ax= takes matplotlib Axes, got {type(ax).__name__}")
        ax.set_prop_cycle(color=list(PALETTE))
        return ax.figure, ax
    fig = Figure(figsize=(width * ncols, height * nrows), layout="constrained")
    FigureCanvasAgg(fig)  # drawn and saved by Agg whatever the user's backend
    axes = fig.subplots(nrows, ncols, squeeze=False)
    for ax in axes.ravel():
        ax.grid(True, which="major", alpha=0.3)
        ax.set_prop_cycle(color=list(PALETTE))
    return fig, (axes[0, 0] if nrows == ncols == 1 else axes)


def _tick_label(v: float, _pos=None) -> str:
    return f"{v:g}"


def log_axis(ax, which: str = "x", lo: float | None = None, hi: float | None = None) -> None:
    """A log scale on axis `which` of `ax` with readable labels: decades over two or more
    decades of data (`lo`..`hi`, default the axis limits), else the 1, 2, 5 steps written
    plainly ("2", "5", "10"); minor ticks unlabelled."""
    axis = ax.xaxis if which == "x" else ax.yaxis
    (ax.set_xscale if which == "x" else ax.set_yscale)("log")
    if lo is None or hi is None:
        lo, hi = ax.get_xlim() if which == "x" else ax.get_ylim()
    short = lo > 0 and hi > 0 and hi / lo < 100
    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0) if short else (1.0,)))
    if short:
        axis.set_major_formatter(FuncFormatter(_tick_label))
    axis.set_minor_formatter(NullFormatter())
