"""Report section: the interactive planner (supervised forecast, N* and D*, with intervals, and
distillation vs supervised training for a given teacher loss).

On the user's data it plans with their law: the fit given with ``--fit`` (a Chinchilla form
without a stack; another says why the planner cannot repeat it), else a chinchilla law fitted
here to the runs given with ``--runs``. Without either, the law is fitted on the bundled
example runs (`lmforecast examples copy .` gives the same file as supervised/runs.csv), so a
reader can reproduce every number in the page with `lmforecast supervised fit --runs
supervised/runs.csv --form chinchilla` and `supervised predict`; the saved fit itself is in
report.json (``sections.planner.fit``).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from ...examples import path as example_path
from ...supervised import SupervisedScalingLaw
from ..builder import ReportContext, Section
from ..planner import distill_data, planner_data, planner_html


def _user_law(ctx: ReportContext):
    """(law, where it came from) from the user's --fit or --runs, None without either, or a
    string saying why their fit cannot be planned with."""
    from ...supervised import SupervisedScalingLaw

    if ctx.input("fit") is not None:
        law = SupervisedScalingLaw.load(ctx.input("fit"))
        res = law.result_
        if res.law_.name not in ("chinchilla", "chinchilla-gamma") or res.meta.get("stack"):
            form = res.meta.get("form", res.law_.name) + (
                " (a stack)" if res.meta.get("stack") else ""
            )
            why = (
                f"Your fit {ctx.input('fit')} is of the {form} form; the planner repeats a "
                "single Chinchilla form's interval only. Refit with `lmforecast supervised "
                "fit --form chinchilla --out fit.json` to plan with it here."
            )
            if ctx.input("runs") is None:
                return why
        else:
            return law, f"your fit {ctx.input('fit')}", res.n_obs
    if ctx.input("runs") is not None:
        from .yours import read_runs

        runs = read_runs(ctx.input("runs"))
        law = SupervisedScalingLaw(
            form="chinchilla", bootstrap=20 if ctx.quick else 100, seed=ctx.seed, replicates="mean"
        ).fit(runs)
        return law, f"your {len(runs)} runs ({ctx.input('runs')})", len(runs)
    return None


def build_section(ctx: ReportContext) -> Section:
    sec = Section("planner", "Planner: forecast, compute-optimal split, intervals")
    user = _user_law(ctx)
    if isinstance(user, str):
        sec.text(user)
        sec.numbers["not_planned"] = user
        return sec
    if user is None:
        runs = pd.read_csv(example_path("supervised/runs.csv"))
        law = SupervisedScalingLaw(
            form="chinchilla", bootstrap=20 if ctx.quick else 100, seed=ctx.seed
        ).fit(runs)
        origin = f"the {len(runs)} example runs (supervised/runs.csv)"
    else:
        law, origin, _ = user
    with tempfile.TemporaryDirectory() as d:
        law.save(Path(d) / "fit.json")
        fit = json.loads((Path(d) / "fit.json").read_text())
    data = planner_data(law)
    data["distill"] = distill_data("busbridge2025")
    if user is not None and data.get("max_compute") and data.get("max_N") and data.get("max_D"):
        # start at a tenfold budget over the user's largest run (not the example's 1e22)
        c0 = 10.0 ** np.ceil(np.log10(10 * data["max_compute"]))
        data["start"] = {
            "C": f"{c0:.0e}",
            "N": f"{2 * data['max_N']:.2g}",
            "D": f"{2 * data['max_D']:.2g}",
        }
    sec.numbers["fit"] = fit
    sec.numbers["planner"] = data
    sec.numbers["origin"] = origin
    sec.text(
        f"A {law.form} law fitted to {origin} with "
        f"{len(data['draws'])} bootstrap refits. Give a compute budget C for the compute-optimal "
        "N* and D* (6ND) with their intervals (the refits, and the runs' own isoFLOP optima where "
        "they form profiles) and the forecast loss "
        "there, or give N and D for the forecast loss alone (7B, 1.4T and 1e22 FLOPs are read "
        "as the CLI reads them; every change recomputes). The page computes these from the "
        "fitted coefficients and the refits stored below, the way `lmforecast supervised "
        "predict` and `SupervisedScalingLaw.allocate_interval` do (shown to 6 digits). Below, "
        "for a teacher of loss L_T, the same student's distilled loss against its supervised "
        "loss under the published Busbridge et al. (2025) coefficients, as `lmforecast distill "
        "predict --teacher-loss` gives them (the student's supervised loss there comes from "
        "the paper's supervised law, not from the fit above)."
    )
    sec.html(planner_html(data))
    return sec
