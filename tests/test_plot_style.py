"""Figures give every group its own colour (issue 26: 14 model families shared 10 colours)."""

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
