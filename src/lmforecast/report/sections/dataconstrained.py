"""Report section: the data-constrained law (Muennighoff et al. 2023, Eq. 5-7) on the bundled
example runs (simulated from the paper's law; the real datablations refit is in
docs/datablations.md, which reads the shared suite)."""

from __future__ import annotations

import pandas as pd

from ...data.io import read_table
from ...dataconstrained import DataConstrainedLaw
from ...dataconstrained.simulate import PAPER_PARAMS
from ...examples import path
from ...plots.dataconstrained import plot_epochs
from ..builder import ReportContext, Section


def build_section(ctx: ReportContext) -> Section:
    sec = Section("dataconstrained", "Data-constrained scaling (Muennighoff et al. 2023)")
    runs = read_table(path("dataconstrained/runs.csv"))
    m = DataConstrainedLaw(
        bootstrap=4 if ctx.quick else 40, n_polish=8 if ctx.quick else 32, seed=ctx.seed
    ).fit(runs)
    sec.text(
        f"Example runs ({len(runs)}, simulated with Chinchilla's coefficients and the paper's "
        "R*_D = 15.4, R*_N = 5.3, 0.5% noise) refitted jointly by the shared engine: D' = U_D + "
        "U_D R*_D (1 - exp(-R_D/R*_D)), N' likewise with U_N = min(N, N_opt(U_D)); "
        "L = E + A/N'^alpha + B/D'^beta."
    )
    r = m.result_
    rows = [
        {
            "parameter": k,
            "fitted": v,
            "truth": PAPER_PARAMS[k],
            "interval": f"[{r.ci[k][0]:.4g}, {r.ci[k][1]:.4g}]" if r.ci else "—",
        }
        for k, v in r.params.items()
    ]
    sec.table(pd.DataFrame(rows), f"{100 * m.ci_level:g}% bootstrap intervals")
    a = m.epochs_advice(6e8, 1e9)
    sec.text(
        f"N = 6e8 parameters on U = 1e9 unique tokens: a repeated token is worth half a fresh "
        f"one after {a['half_value_epochs']:.3g} epochs (1 + R*_D ln 2); the loss floor of "
        f"infinite repetition is {a['loss_floor']:.4f}."
    )
    sec.figure(plot_epochs(a), "Loss against epochs of the same unique tokens, with interval")
    sec.numbers = {"params": r.params, "ci": r.ci, "epochs_advice": a}
    return sec
