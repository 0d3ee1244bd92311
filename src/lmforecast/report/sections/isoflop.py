"""Report section: isoFLOP Approaches 1 and 2 (Hoffmann et al. 2022) beside Approach 3, on the
bundled example profiles (simulated from Hoffmann et al.'s Approach 3 law; the Porian suite
comparison is in docs/isoflop.md)."""

from __future__ import annotations

import pandas as pd

from ...data.io import read_table
from ...examples import path
from ...isoflop import approach3, fit_isoflop, isoflop_table
from ...isoflop.simulate import HOFFMANN, true_exponents
from ...plots.isoflop import plot_isoflops
from ..builder import ReportContext, Section


def build_section(ctx: ReportContext) -> Section:
    sec = Section("isoflop", "IsoFLOP estimators (Hoffmann et al. 2022, Approaches 1-3)")
    t = isoflop_table(read_table(path("isoflop/runs.csv")))
    n_boot = 50 if ctx.quick else 200
    r1 = fit_isoflop(t, 1, n_boot=n_boot, seed=ctx.seed)
    r2 = fit_isoflop(t, 2, n_boot=n_boot, seed=ctx.seed)
    a3 = approach3(t)
    a_true, b_true = true_exponents(HOFFMANN)
    sec.text(
        f"Example isoFLOP profiles ({len(t)} runs, {len(r2.budgets)} budgets, simulated from "
        f"L = 1.69 + 406.4/N^0.34 + 410.7/D^0.28 with 0.2% noise; true a = {a_true:.4f})."
    )
    rows = [
        {
            "approach": "1 (best run per budget)",
            "a": r1.a,
            "a interval": str([round(v, 4) for v in r1.a_interval]),
            "b": r1.b,
        },
        {
            "approach": "2 (parabola in log N)",
            "a": r2.a,
            "a interval": str([round(v, 4) for v in r2.a_interval]),
            "b": r2.b,
        },
        {"approach": "3 (parametric law)", "a": a3["a"], "a interval": "—", "b": a3["b"]},
        {"approach": "truth", "a": a_true, "a interval": "—", "b": b_true},
    ]
    sec.table(pd.DataFrame(rows), "N* ~ C^a, D* ~ C^b (90% within-budget bootstrap)")
    sec.figure(plot_isoflops(t, r2), "IsoFLOP profiles, parabola minima and N*(C)")
    sec.numbers = {
        "approach1": r1.contract(),
        "approach2": r2.contract(),
        "approach3": a3,
        "truth": {"a": a_true, "b": b_true},
    }
    return sec
