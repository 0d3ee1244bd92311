"""Fitting a curve law to the runs of one model: Huber loss on log loss (Luo et al. 2025,
Sec. 4.1 fit with Huber, delta 1e-3), starts by variable projection over a grid of the
nonlinear parameters (L0, A, B solved by non-negative least squares), then L-BFGS-B on all
parameters with the analytic gradient from the best starts.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize, nnls

from ..fitting.losses import Loss
from ..fitting.threads import single_blas_thread
from .evaluate import RESOLUTION, DropItems, Schedule, build_schedule, drop_items, momentum_area
from .laws import BOUNDS, LAWS, LINEAR_INDEX, START_GRID, Design, linear_columns, to_fit, value


@dataclass
class RunPoints:
    """One run's schedule and the points evaluated on it."""

    run: str
    schedule: Schedule
    steps: np.ndarray


def run_schedule(rows, run: str) -> Schedule:
    return build_schedule(rows["step"].to_numpy(float), rows["lr"].to_numpy(float), run)


def design(law: str, parts: list[RunPoints], *, decay: float = 0.999,
           resolution: float = RESOLUTION) -> Design:  # fmt: skip
    """The concatenated `Design` of several runs' points."""
    s1w, step, s2, items = [], [], [], []
    off = 0
    for p in parts:
        sch = p.schedule
        s1w.append(sch.s1(p.steps) + sch.s_w)
        step.append(np.asarray(p.steps, float))
        if law == "annealing":
            s2.append(momentum_area(sch, decay)[sch.index(p.steps)])
        if law == "mpl":
            it = drop_items(sch, p.steps, resolution)
            items.append((it.j + off, it.w, it.s, it.lg))
        off += len(p.steps)
    drops = None
    if law == "mpl":
        cat = [np.concatenate(x) for x in zip(*items, strict=True)]
        drops = DropItems(cat[0], cat[1], cat[2], cat[3], off)
    return Design(np.concatenate(s1w), np.concatenate(step), drops,
                  np.concatenate(s2) if s2 else None)  # fmt: skip


def objective(law: str, d: Design, y: np.ndarray, loss: Loss):
    """f(z), grad f(z) of the Huber loss on log residuals, and the bounds."""
    ly = np.log(y)

    def f(z):
        pred, J = value(law, z, d, jac=True)
        if not np.all(pred > 0) or not np.all(np.isfinite(J)):
            return 1e10, np.zeros_like(z)
        r = np.log(pred) - ly
        g = (loss.derivative(r) / pred) @ J
        return float(np.sum(loss.value(r))), g

    return f


def bounds_for(law: str, y: np.ndarray) -> list:
    b = list(BOUNDS[law])
    b[0] = (0.0, float(np.min(y)))
    return b


def var_pro_starts(law: str, d: Design, y: np.ndarray, n_keep: int) -> list[np.ndarray]:
    """Fit-space starts: for each grid point of the nonlinear parameters, the linear ones by
    non-negative least squares (relative errors: rows scaled by 1/y); the best `n_keep`."""
    names = LAWS[law]
    grid = START_GRID[law]
    lin = LINEAR_INDEX[law]
    scored = []
    for combo in itertools.product(*grid.values()):
        theta = np.ones(len(names))
        for k, v in zip(grid, combo, strict=True):
            theta[names.index(k)] = v
        z = to_fit(law, theta)
        X = linear_columns(law, z, d) / y[:, None]
        coef, _ = nnls(X, np.ones_like(y))
        if coef[0] > np.min(y) or coef[1] <= 0 or (len(coef) > 2 and law == "mpl" and coef[2] <= 0):
            coef = np.maximum(coef, 1e-6)
            coef[0] = min(coef[0], 0.99 * float(np.min(y)))
        resid = X @ coef - 1.0
        theta[list(lin)] = coef
        scored.append((float(resid @ resid), to_fit(law, theta)))
    scored.sort(key=lambda t: t[0])
    return [z for _, z in scored[:n_keep]]


def fit_model(law: str, d: Design, y: np.ndarray, loss: Loss, *, n_starts: int = 3,
              maxiter: int = 400) -> tuple[np.ndarray, float]:  # fmt: skip
    """The best fit-space parameters over the starts, and the objective there."""
    f = objective(law, d, y, loss)
    bounds = bounds_for(law, y)
    best = None
    with single_blas_thread():
        for z0 in var_pro_starts(law, d, y, n_starts):
            z0 = np.clip(z0, [lo if lo is not None else -np.inf for lo, _ in bounds],
                         [hi if hi is not None else np.inf for _, hi in bounds])  # fmt: skip
            res = minimize(f, z0, jac=True, method="L-BFGS-B", bounds=bounds,
                           options={"maxiter": maxiter, "ftol": 1e-15, "gtol": 1e-12})  # fmt: skip
            if best is None or res.fun < best[1]:
                best = (res.x, float(res.fun))
    return best


__all__ = ["RunPoints", "design", "fit_model", "objective", "run_schedule"]
