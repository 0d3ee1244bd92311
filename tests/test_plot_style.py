"""Figures give every group its own colour (14 model families, not 10 shared colours)."""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.colors import to_hex

from lmforecast.osl import CapabilitySpace, family_fits, load_table_b1
from lmforecast.plots import osl as plots
from lmforecast.plots.style import PALETTE
from lmforecast.report.sections.osl import B1_METRICS


def test_palette_has_twenty_distinct_colours():
    assert len({c.lower() for c in PALETTE}) == len(PALETTE) == 20


def test_every_family_in_the_pc_figure_has_its_own_colour():
    b1 = load_table_b1()
    space = CapabilitySpace(3).fit(b1, B1_METRICS)
    fig = plots.pc_vs_flops(b1, space.transform(b1), family_fits(b1, space.transform(b1)))
    ax = fig.axes[0]
    colours = [to_hex(c.get_facecolor()[0]) for c in ax.collections]
    plt.close(fig)
    assert len(colours) >= 14  # Table B.1 has 14+ families with a FLOPs value
    assert len(set(colours)) == len(colours)


def test_importing_the_plots_leaves_the_users_backend_alone():
    import subprocess
    import sys

    code = (
        "import matplotlib; matplotlib.use('pdf'); import lmforecast.plots.supervised, "
        "lmforecast.plots.osl, lmforecast.report.html; print(matplotlib.get_backend())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "pdf"  # was switched to Agg by lmforecast.plots.style


def test_plots_draw_on_a_given_axes_and_leave_no_pyplot_figure_open():
    import pandas as pd

    from lmforecast.examples import path
    from lmforecast.plots import supervised as ps
    from lmforecast.supervised import SupervisedScalingLaw

    runs = pd.read_csv(path("supervised/runs.csv"))
    law = SupervisedScalingLaw("chinchilla", intervals=False).fit(runs)
    before = plt.get_fignums()
    fig = ps.parity(law, runs)  # a figure of its own, outside pyplot's registry
    assert plt.get_fignums() == before and len(fig.axes) == 1 and fig.axes[0].collections
    user_fig, ax = plt.subplots()
    try:
        out = ps.parity(law, runs, ax=ax)
        assert out is user_fig and ax.collections  # drawn on the user's axes
        assert len(user_fig.axes) == 1
    finally:
        plt.close(user_fig)


def test_a_plot_on_a_subfigure_axes_keeps_the_users_layout():
    from lmforecast.plots.recipes import plot_multiplier
    from lmforecast.recipes import compare_recipes
    from lmforecast.recipes.simulate import simulate_pair

    base, new = simulate_pair(seed=0)[:2]
    res = compare_recipes(base, new, 1e20, n_boot=0)
    fig = plt.figure(layout="constrained")
    ax = fig.subfigures(1, 2)[1].subplots()
    try:
        plot_multiplier(res, ax=ax)  # called fig.tight_layout(): no such method on a SubFigure
        assert fig.get_layout_engine().__class__.__name__ == "ConstrainedLayoutEngine"
    finally:
        plt.close(fig)
