"""Report section and plots for observational scaling laws."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from lmforecast.osl import CapabilitySpace, ObservationalScalingLaw, family_fits, load_table_b1
from lmforecast.plots import osl as plots
from lmforecast.report.builder import ReportContext
from lmforecast.report.sections.osl import B1_METRICS, build_section


def test_quick_section_numbers():
    sec = build_section(ReportContext(quick=True))
    n = sec.numbers
    assert 0.75 < n["explained_variance"][0] < 0.85 and sum(n["explained_variance"]) > 0.96
    assert n["pc1_flops_r2_min"] > 0.9
    mmlu = n["holdout_test_mse"]["MMLU"]
    assert mmlu["pcs"] < mmlu["flops"] < mmlu["size"]
    sel8 = n["selection"][0]
    assert sel8["budget"] == 8 and sel8["objective"] < sel8["random median"]
    assert set(sel8["families"].split(", ")) == {"Llama-2", "Mixtral", "Phi", "MPT"}
    assert 0.97 < n["instruct_explained_variance_top3"] <= 1.0
    # App. C.4 sweep (HumanEval from the 6 other printed benchmarks, FLOPs cutoff, 6 fractions)
    he = n["robustness_aue"]["HumanEval"]
    assert set(he) == {"pcs:1", "pcs:2", "pcs:3", "pcs:4", "flops", "size"}
    assert all(0 < v < 2000 for v in he.values())  # points^2 (0.2 as fractions)
    assert he["pcs:2"] < min(he["flops"], he["size"], he["pcs:1"])
    assert n["robustness_best"]["HumanEval"] == min(he, key=he.get)
    assert len(sec.blocks) > 8


def test_plots_return_figures():
    b1 = load_table_b1()
    space = CapabilitySpace(3).fit(b1, B1_METRICS)
    S = space.transform(b1)
    res = ObservationalScalingLaw().fit(b1, "MMLU").result_
    base = ObservationalScalingLaw(x="size").fit(b1, "MMLU").result_
    figs = [
        plots.explained_variance(space),
        plots.loadings_heatmap(space),
        plots.pc_vs_flops(b1, S, family_fits(b1, S)),
        plots.scaling_curve(res),
        plots.scaling_curve(base),
        plots.weight_bars(res),
        plots.selection_objectives(10.0, list(np.linspace(12, 50, 10))),
    ]
    for fig in figs:
        assert fig.axes
        plt.close(fig)
    # the scaling curve draws the fitted sigmoid through the predictions
    fig = plots.scaling_curve(res)
    line = fig.axes[0].lines[0]
    assert np.all(np.diff(line.get_ydata()) >= 0)
    plt.close(fig)
