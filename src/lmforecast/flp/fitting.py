"""Fitting the FLP forms on the shared engine when least squares has a closed form.

Eq. 1-3 and the M1/M2/M4 forms are linear in their target space (log y or y) in the exponents
and one combined intercept, so ordinary least squares gives the optimum directly (METHODS.md
3.4: "ordinary least squares on log L"). We hand that solution to `fit_law` as its only start:
the engine polishes it and returns the usual FitResult. At an exact optimum L-BFGS-B can stop
with an "abnormal line search" (more so for M2/M4, whose constants are not separately
identified), so the fit counts as converged when it ends at the closed-form objective.
`fit_stage1` fits one FLP-M stage-1 law (Table 3) this way, and the nonlinear M3 from the
engine's grid plus the M1 solution.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..fitting import FitResult, fit_law, squared
from ..uncertainty.bootstrap import attach_bootstrap
from ..uncertainty.resample import child_resamples


def fit_from_closed_form(law, X, y, start: np.ndarray) -> FitResult:
    """Least-squares fit of `law` started at its closed-form solution `start`."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = fit_law(law, X, y, loss=squared(), grid=np.atleast_2d(start), n_polish=1)
    t = law.target_of(y)
    Xf = {k: np.asarray(X[k], float) for k in law.inputs}
    with np.errstate(all="ignore"):
        f_closed = 0.5 * float(np.sum((law.predict_target(np.atleast_2d(start), Xf)[0] - t) ** 2))
    if res.objective <= f_closed * (1 + 1e-9) + 1e-300:
        res.converged = True
        res.message = "closed-form least-squares optimum"
    else:
        for w in caught:
            warnings.warn(w.message, w.category, stacklevel=2)
    return res


def bootstrap_closed_form(law, X, y, result: FitResult, *, n_boot: int, seed: int, level=0.9):
    """Bootstrap of a law fitted by `fit_from_closed_form`, each resample solved in closed form.

    The same resamples as `uncertainty.bootstrap.bootstrap_fit` (child seeds of `seed`, rows
    drawn with replacement: `uncertainty.resample.child_resamples`), but the least-squares
    optimum of each is the OLS line in target space, so no polish is needed: vectorised over
    all resamples; the percentile intervals are `uncertainty.bootstrap.attach_bootstrap`'s.
    Power laws (Eq. 1, 3, 6) regress the target (log y, or log(-log(P/100))) on log C,
    theta = (-b/a, a); the linear map (Eq. 2) regresses P on L, theta = (b, a). A resample
    whose input is constant (every row drawn at one x value: no slope) is redrawn from the
    same child seed's stream until it is not, so every call returns exactly `n_boot`
    replicates and two stages bootstrapped with the same `n_boot` pair up one to one (FLP
    chains stage-1 replicate b with stage-2 replicate b).
    """
    (name,) = law.inputs
    x = np.asarray(X[name], float)
    power = name == "C"
    xs = np.log(x) if power else x
    t = law.target_of(np.asarray(y, float))
    tol = 1e-12 * max(1.0, float(np.abs(xs).max()) ** 2)

    def constant(rows):  # a resample drawn at one x value has no slope
        return np.ptp(xs[rows], axis=1) ** 2 <= tol

    sloped = float(((xs - xs.mean()) ** 2).sum()) > tol  # else no resample can have a slope
    idx = child_resamples(seed, n_boot, x.size, constant if sloped else None)
    xb, tb = xs[idx], t[idx]
    xm, tm = xb.mean(1, keepdims=True), tb.mean(1)
    var = np.maximum(((xb - xm) ** 2).sum(1), 1e-300)
    a = ((xb - xm) * (tb - tm[:, None])).sum(1) / var
    b = tm - a * xm[:, 0]
    if power:
        a = np.where(np.abs(a) < 1e-9, np.where(a <= 0, -1e-9, 1e-9), a)
        thetas = np.column_stack([-b / a, a])
    else:
        thetas = np.column_stack([b, a])
    lo_b, hi_b = np.array(law.bounds, float).T
    thetas = np.clip(thetas, lo_b, hi_b)
    with np.errstate(over="ignore", invalid="ignore"):  # a bound's exp() can overflow to inf
        attach_bootstrap(law, result, thetas, level=level, seed=seed, n_polish=0)
    result.meta["bootstrap_method"] = "closed-form OLS per resample"
    return result


def fit_stage1(law, X, L) -> FitResult:
    """Fit one domain's FLOPs -> loss law (Table 3 form) with the shared engine: M1, M2, M4 from
    their closed-form log-space least-squares solution, M3 (nonlinear) from its grid plus the
    M1 solution."""
    start = law.linear_start(X, L)
    if law.uses_weights:
        return fit_law(law, X, L, loss=squared(), extra_starts=start, n_polish=8)
    return fit_from_closed_form(law, X, L, start)
