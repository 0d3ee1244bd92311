"""Fitting the FLP forms on the shared engine when least squares has a closed form.

Eq. 1-3 and the M1/M2/M4 forms are linear in their target space (log y or y) in the exponents
and one combined intercept, so ordinary least squares gives the optimum directly (METHODS.md
3.4: "ordinary least squares on log L"). We hand that solution to `fit_law` as its only start:
the engine polishes it and returns the usual FitResult. At an exact optimum L-BFGS-B can stop
with an "abnormal line search" (more so for M2/M4, whose constants are not separately
identified), so the fit counts as converged when it ends at the closed-form objective.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..fitting import FitResult, fit_law, squared


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
