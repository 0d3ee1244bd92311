"""Report section: does width/depth matter beyond N (residual test against L(N, D)), on the
bundled example checkpoints (12 shapes simulated from Hoffmann et al.'s law with a planted
quadratic aspect-ratio term; the Gemstones result is in docs/toolbox.md)."""

from __future__ import annotations

import pandas as pd

from ...data.io import read_table
from ...examples import path
from ...plots.shape import plot_shape
from ...shape import shape_test
from ...shape.simulate import CURVATURE
from ..builder import ReportContext, Section


def build_section(ctx: ReportContext) -> Section:
    sec = Section("shape", "Width and depth: does shape matter beyond N?")
    runs = read_table(path("shape/runs.csv"))
    r = shape_test(runs, model_col="model", n_perm=200 if ctx.quick else 1000, seed=ctx.seed)
    sec.text(
        "L(N, D) (Chinchilla law) is fitted to every checkpoint; the per-model mean log residual "
        "is regressed on x = ln(width/depth) (centred): r = c0 + c1 x + c2 x^2, with a "
        "permutation p-value (aspect ratios shuffled across models) and leave-one-model-out RMS "
        "with and without the shape term. Example: 12 shapes simulated with a planted "
        f"curvature c2 = {CURVATURE:g} (0.2% noise); recovered c2 = {r.coef[2]:.4g}. " + r.summary()
    )
    models = pd.DataFrame(r.models).sort_values("residual", ascending=False)
    sec.table(
        models[["model", "width", "depth", "rows", "residual"]],
        "Per-model mean log residual against L(N, D), worst first",
    )
    sec.figure(plot_shape(r), "Per-model residual against the aspect ratio, with the shape term")
    sec.numbers = {**r.contract(), "truth": {"curvature": CURVATURE}}
    return sec
