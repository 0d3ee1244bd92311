"""Report section: the interactive planner (supervised forecast, N* and D*, with intervals, and
distillation vs supervised training for a given teacher loss).

The law is fitted here on the bundled example runs (`lmforecast examples copy .` gives the same
file as supervised/runs.csv), so a reader can reproduce every number in the page with
`lmforecast supervised fit --runs supervised/runs.csv --form chinchilla` and `supervised
predict`; the saved fit itself is in report.json (``sections.planner.fit``).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pandas as pd

from ...examples import path as example_path
from ...supervised import SupervisedScalingLaw
from ..builder import ReportContext, Section
from ..planner import distill_data, planner_data, planner_html


def build_section(ctx: ReportContext) -> Section:
    sec = Section("planner", "Planner: forecast, compute-optimal split, intervals")
    runs = pd.read_csv(example_path("supervised/runs.csv"))
    law = SupervisedScalingLaw(
        form="chinchilla", bootstrap=20 if ctx.quick else 100, seed=ctx.seed
    ).fit(runs)
    with tempfile.TemporaryDirectory() as d:
        law.save(Path(d) / "fit.json")
        fit = json.loads((Path(d) / "fit.json").read_text())
    data = planner_data(law)
    data["distill"] = distill_data("busbridge2025")
    sec.numbers["fit"] = fit
    sec.numbers["planner"] = data
    sec.text(
        f"A {law.form} law fitted to the {len(runs)} example runs (supervised/runs.csv) with "
        f"{len(data['draws'])} bootstrap refits. Give a compute budget C for the compute-optimal "
        "N* and D* (6ND) with their intervals (the refits, and the runs' own isoFLOP optima where "
        "they form profiles) and the forecast loss "
        "there, or give N and D for the forecast loss alone. The page computes these from the "
        "fitted coefficients and the refits stored below, the way `lmforecast supervised "
        "predict` and `SupervisedScalingLaw.allocate_interval` do (shown to 6 digits). Below, "
        "for a teacher of loss L_T, the same student's distilled loss against its supervised "
        "loss under the published Busbridge et al. (2025) coefficients, as `lmforecast distill "
        "predict --teacher-loss` gives them (the student's supervised loss there comes from "
        "the paper's supervised law, not from the example fit above)."
    )
    sec.html(planner_html(data))
    return sec
