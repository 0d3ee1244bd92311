"""Fitting a curve law to the runs of one model: Huber loss on log loss (Luo et al. 2025,
their fit: Huber, delta 1e-3), starts by variable projection over a grid of the
nonlinear parameters (L0, A, B solved by non-negative least squares), then L-BFGS-B on all
parameters with the analytic gradient from the best starts.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from ..fitting.losses import Loss
from ..fitting.threads import single_blas_thread
from .evaluate import RESOLUTION, DropItems, Schedule, build_schedule, drop_items, momentum_area
from .laws import BOUNDS, LAWS, LINEAR_INDEX, START_GRID, Design, to_fit, to_natural, value


@dataclass
class RunPoints:
    """One run's schedule and the points evaluated on it."""

    run: str
    schedule: Schedule
    steps: np.ndarray


def run_schedule(rows, run: str) -> Schedule:
    return build_schedule(rows["step"].to_numpy(float), rows["lr"].to_numpy(float), run)


def design(
    law: str, parts: list[RunPoints], *, decay: float = 0.999, resolution: float = RESOLUTION
) -> Design:
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
    return Design(
        np.concatenate(s1w), np.concatenate(step), drops, np.concatenate(s2) if s2 else None
    )


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


# each nonlinear parameter's Jacobian column is proportional to one linear parameter
SCALED_BY = {"mpl": {2: 1, 4: 3, 5: 3, 6: 3}, "annealing": {2: 1}, "power": {2: 1}}


def _unit(law: str, z_nl: np.ndarray) -> np.ndarray:
    """Fit-space parameters with the nonlinear ones from `z_nl` and unit linear ones."""
    z = np.zeros(len(LAWS[law]))
    z[list(SCALED_BY[law])] = z_nl
    if law == "annealing":
        z[3] = 1.0
    return z


def projected(law: str, d: Design, y: np.ndarray):
    """Variable projection (Golub & Pereyra 1973): the relative least-squares objective of the
    nonlinear parameters with L0, A, B (C of the annealing law) solved by non-negative least
    squares at each evaluation; its gradient by the envelope theorem. Returns (f, solve) where
    solve(z_nl) gives the full fit-space parameters."""
    lin = list(LINEAR_INDEX[law])
    nl = list(SCALED_BY[law])
    by = [SCALED_BY[law][k] for k in nl]
    inv = 1.0 / y

    from scipy.optimize import nnls  # imported when fitting: `curves predict` does not need it

    def parts(z_nl):
        _, J = value(law, _unit(law, z_nl), d, jac=True)
        X = J[:, lin] * inv[:, None]
        c, _ = nnls(X, np.ones_like(y))
        return J, X, c

    def f(z_nl):
        J, X, c = parts(z_nl)
        r = X @ c - 1.0
        coef = np.zeros(len(LAWS[law]))
        coef[lin] = c
        grad = (r * inv) @ (J[:, nl] * coef[by])
        return 0.5 * float(r @ r), grad

    def solve(z_nl):
        _, _, c = parts(z_nl)
        theta = to_natural(law, _unit(law, z_nl))
        theta[lin] = np.maximum(c, 1e-12)
        return to_fit(law, theta)

    return f, solve


def var_pro_starts(law: str, d: Design, y: np.ndarray, n_keep: int) -> list[np.ndarray]:
    """Nonlinear fit-space starts from the grid `START_GRID`, the best `n_keep` by the
    projected objective."""
    names = LAWS[law]
    grid = START_GRID[law]
    f, _ = projected(law, d, y)
    nl = list(SCALED_BY[law])
    scored = []
    for combo in itertools.product(*grid.values()):
        theta = np.ones(len(names))
        for k, v in zip(grid, combo, strict=True):
            theta[names.index(k)] = v
        z_nl = to_fit(law, theta)[nl]
        scored.append((f(z_nl)[0], z_nl))
    scored.sort(key=lambda t: t[0])
    return [z for _, z in scored[:n_keep]]


def _clip(z, bounds):
    lo = [b[0] if b[0] is not None else -np.inf for b in bounds]
    hi = [b[1] if b[1] is not None else np.inf for b in bounds]
    return np.clip(z, lo, hi)


def fit_model(
    law: str, d: Design, y: np.ndarray, loss: Loss, *, n_starts: int = 3, maxiter: int = 400
) -> tuple[np.ndarray, float]:
    """The best fit-space parameters over the starts, and the Huber objective there: each start
    is optimised on the projected (nonlinear-only) objective, then the best one is polished on
    the Huber loss of log residuals over every parameter (trust-region reflective least
    squares with the analytic Jacobian: a handful of evaluations)."""
    from scipy.optimize import minimize

    full = objective(law, d, y, loss)
    bounds = bounds_for(law, y)
    nl = list(SCALED_BY[law])
    nl_bounds = [bounds[k] for k in nl]
    proj, solve = projected(law, d, y)
    opts = {"maxiter": maxiter, "ftol": 1e-12, "gtol": 1e-9}
    cands = []
    with single_blas_thread():
        for z0 in var_pro_starts(law, d, y, n_starts):
            r = minimize(
                proj,
                _clip(z0, nl_bounds),
                jac=True,
                method="L-BFGS-B",
                bounds=nl_bounds,
                options=opts,
            )
            cands.append(_clip(solve(r.x), bounds))
        cands.sort(key=lambda z: full(z)[0])
        best = _polish(law, d, y, loss, cands[0], bounds, maxiter)
    return best, full(best)[0]


def _polish(law, d, y, loss, z0, bounds, maxiter) -> np.ndarray:
    from scipy.optimize import least_squares

    ly = np.log(y)
    lo = np.array([b[0] if b[0] is not None else -np.inf for b in bounds])
    hi = np.array([b[1] if b[1] is not None else np.inf for b in bounds])
    width = np.where(np.isfinite(hi - lo), hi - lo, 1.0)
    z0 = np.clip(z0, lo + 1e-9 * width, hi - 1e-9 * width)

    def resid(z):
        p = value(law, z, d)
        return np.log(np.maximum(p, 1e-300)) - ly

    def jac(z):
        p, J = value(law, z, d, jac=True)
        return J / np.maximum(p, 1e-300)[:, None]

    kw = {"loss": "huber", "f_scale": loss.delta} if loss.name == "huber" else {}
    res = least_squares(
        resid,
        z0,
        jac=jac,
        bounds=(lo, hi),
        method="trf",
        x_scale="jac",
        ftol=1e-12,
        xtol=1e-12,
        gtol=1e-12,
        max_nfev=maxiter,
        **kw,
    )
    return res.x


__all__ = ["RunPoints", "design", "fit_model", "objective", "projected", "run_schedule"]
