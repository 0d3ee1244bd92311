"""Public comparisons behind the paper's tables (Chen et al.): Table 3's FLOPs -> domain-loss
forms M1-M4, and Sec. 3.2's average R^2 of the linear loss -> performance fits (93%).

Both used to live inside the report; `lmforecast.report.sections.flp` now calls these.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..errors import InputError
from ..laws import get_law
from ..laws.flp import MIXTURE_FORMS
from .fitting import fit_stage1
from .model import FLP
from .tables import Columns, domain_columns, source_flops

PAPER_TABLE3 = {"M1": 0.029, "M2": 0.026, "M3": 0.017, "M4": 0.014}
"""Table 3: average relative error of the FLOPs -> loss forms (all domains and model types)."""
PAPER_STAGE2_R2 = 0.93
"""Sec. 3.2: average coefficient of determination of the linear loss -> performance fits."""


def form_comparison(
    runs: pd.DataFrame,
    targets: pd.DataFrame,
    forms: Sequence[str] = ("M1", "M2", "M3", "M4"),
    *,
    ratio_floor: float = 1e-3,
    columns: Columns | None = None,
) -> pd.DataFrame:
    """Table 3: fit each FLOPs -> domain-loss form on `runs` (final sampling models, FLOPs per
    source and `loss_<domain>` columns) and score it on the held-out `targets`.

    Returns one row per form (index) with the mean relative error |L_hat / L - 1| per domain
    (columns = domains) and `average` over every domain and target model (the paper's "average
    error ... across all domains and model types"), plus the paper's value `paper` where known.
    """
    columns = columns or Columns()
    bad = [f for f in forms if f not in MIXTURE_FORMS]
    if bad:
        raise InputError(f"unknown form(s) {bad}; use {', '.join(MIXTURE_FORMS)}")
    sources, F = source_flops(runs, columns, what="runs")
    _, Ft = source_flops(targets, columns, sources=sources, what="targets")
    dcols = domain_columns(runs, "runs")
    missing = [c for c in dcols if c not in targets.columns]
    if missing:
        raise InputError(f"targets: missing domain loss column(s) {missing}")
    X = {f"C_{s}": F[:, i] for i, s in enumerate(sources)}
    Xt = {f"C_{s}": Ft[:, i] for i, s in enumerate(sources)}
    rows = {}
    for form in forms:
        law = get_law(MIXTURE_FORMS[form], sources=sources, ratio_floor=ratio_floor)
        errs = {}
        for c in dcols:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = fit_stage1(law, X, runs[c].to_numpy(float))
            L = targets[c].to_numpy(float)
            errs[c[5:]] = np.abs(res.predict(**Xt) / L - 1)
        row = {d: float(e.mean()) for d, e in errs.items()}
        row["average"] = float(np.mean(np.concatenate(list(errs.values()))))
        row["paper"] = PAPER_TABLE3.get(form, np.nan)
        rows[form] = row
    return pd.DataFrame.from_dict(rows, orient="index")


def stage2_r2(
    runs: pd.DataFrame,
    checkpoints: pd.DataFrame | None,
    tasks: Sequence[str],
    *,
    chance: dict[str, float] | None = None,
    **flp_kw,
) -> pd.DataFrame:
    """Sec. 3.2: R^2 of FLP's linear loss -> performance fit (Eq. 2, on the checkpoints the
    Sec. 3.3 filter keeps) per task; the last row, `average`, is the mean over tasks (the
    paper's 93%). Columns: r2, n_points."""
    rows = []
    for task in tasks:
        rp = (chance or {}).get(task)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = FLP(task, chance=rp, **{"bootstrap": 0, **flp_kw})
            est.fit(runs, checkpoints)
        rows.append({"task": task, "r2": est.stage2_r2_, "n_points": est.n_points_})
    df = pd.DataFrame(rows)
    avg = {"task": "average", "r2": float(df["r2"].mean()), "n_points": int(df["n_points"].sum())}
    return pd.concat([df, pd.DataFrame([avg])], ignore_index=True).set_index("task")


__all__ = ["PAPER_STAGE2_R2", "PAPER_TABLE3", "form_comparison", "stage2_r2"]
