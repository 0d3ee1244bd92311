"""The paper's own solver for Eq. 10 (App. D.4), kept as a baseline for tests and benchmarks.

SLSQP (SciPy) over log10 (D_S, N_T, D_T), each bounded to [1e6, 1e17], with the equality
constraint log10 FLOPs(Eq. 9) = log10 C, restarted from a small grid of starts because the
capacity-gap term makes the problem non-convex. One budget at a time: slow, but independent of
the vectorised elimination in `planning.py`.
"""

from __future__ import annotations

import itertools

import numpy as np
from scipy.optimize import minimize

from .model import DistillationScalingLaw
from .planning import distillation_flops, get_scenario


def plan_slsqp(
    model: DistillationScalingLaw,
    N_S: float,
    C: float,
    scenario="best-case",
    starts_per_axis: int = 3,
) -> dict:
    """Best of SLSQP runs from a starts_per_axis^3 grid; returns D_S, N_T, D_T, student_loss."""
    s = get_scenario(scenario)
    logC = np.log10(C)

    def obj(x):
        DS, NT, DT = 10.0**x
        with np.errstate(all="ignore"):
            LT = model.teacher_loss(NT, DT)
            v = float(model._loss(N_S, DS, LT))
        return v if np.isfinite(v) else 1e3

    def con(x):
        DS, NT, DT = 10.0**x
        return np.log10(float(distillation_flops(N_S, DS, NT, DT, s)["total"])) - logC

    best = None
    axis = np.linspace(7.0, 16.0, starts_per_axis)
    for x0 in itertools.product(axis, axis, axis):
        res = minimize(
            obj,
            np.array(x0),
            method="SLSQP",
            bounds=[(6.0, 17.0)] * 3,
            constraints=[{"type": "eq", "fun": con}],
            options={"maxiter": 300, "ftol": 1e-12},
        )
        if abs(con(res.x)) > 1e-6:
            continue
        if best is None or res.fun < best.fun:
            best = res
    if best is None:
        return {"D_S": np.nan, "N_T": np.nan, "D_T": np.nan, "student_loss": np.nan}
    DS, NT, DT = 10.0**best.x
    return {"D_S": DS, "N_T": NT, "D_T": DT, "student_loss": float(best.fun)}
