"""Capability-score -> accuracy law of the Capability Salience Vector paper (Ge, Xing et al.).

Eq. 2: A = gamma + (1 - gamma) / (1 + exp(-alpha (C - beta))), with gamma the task's
random-guess accuracy (fixed, not fitted) and alpha, beta fitted by Levenberg-Marquardt (Eq. 4).
C is a (weighted) loss in nats per character, so a fitted alpha < 0 is expected; its sign is
left free (METHODS.md 1.7.2).
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from . import register_law
from .base import Law, Parameter


class SalienceSigmoid(Law):
    """A(C) = gamma + (1 - gamma) * sigmoid(alpha (C - beta))  (CSV paper, Eq. 2)."""

    name = "salience-sigmoid"
    inputs = ("C",)
    parameters = (Parameter("alpha"), Parameter("beta"))
    target = "identity"
    citation = "Ge, Xing et al., Capability Salience Vector, Eq. 2 and Eq. 4"

    def __init__(self, gamma: float = 0.0):
        gamma = float(gamma)
        if not (np.isfinite(gamma) and 0.0 <= gamma < 1.0):
            raise InputError(f"random-guess accuracy gamma must be in [0, 1), got {gamma!r}")
        self.gamma = gamma

    def default_grid(self):
        return {
            "alpha": np.array([-20.0, -5.0, -1.0, 1.0, 5.0, 20.0]),
            "beta": np.linspace(0, 3, 7),
        }

    def predict_target(self, theta, X):
        from scipy.special import expit

        theta = np.atleast_2d(np.asarray(theta, float))
        C = np.asarray(X["C"], float)[None, :]
        s = expit(theta[:, :1] * (C - theta[:, 1:2]))
        return self.gamma + (1.0 - self.gamma) * s

    def jacobian(self, theta, X):
        return self.predict_and_jacobian(theta, X)[1]

    def predict_and_jacobian(self, theta, X):
        from scipy.special import expit

        theta = np.atleast_2d(np.asarray(theta, float))
        a, b = theta[:, :1], theta[:, 1:2]
        d = np.asarray(X["C"], float)[None, :] - b
        s = expit(a * d)
        ds = (1.0 - self.gamma) * s * (1.0 - s)
        return self.gamma + (1.0 - self.gamma) * s, np.stack([ds * d, -ds * a], axis=-1)


register_law("salience-sigmoid")(SalienceSigmoid)


def logit_init(C: np.ndarray, A: np.ndarray, gamma: float) -> np.ndarray:
    """Closed-form start: least squares of logit((A - gamma)/(1 - gamma)) on C."""
    y = np.clip((np.asarray(A, float) - gamma) / (1.0 - gamma), 1e-3, 1 - 1e-3)
    z = np.log(y / (1 - y))
    C = np.asarray(C, float)
    if np.ptp(C) <= 0:
        return np.array([-1.0, float(C.mean())])
    slope, icpt = np.polyfit(C, z, 1)
    if slope == 0:
        slope = -1.0
    return np.array([slope, -icpt / slope])


def lm_fit(
    C: np.ndarray, A: np.ndarray, gamma: float, starts: list[np.ndarray] | None = None
) -> tuple[np.ndarray, float, bool]:
    """Levenberg-Marquardt fit of (alpha, beta) on Eq. 4: min sum_m (A(C_m) - A_hat_m)^2.

    Tries the closed-form logit start plus any warm starts; returns (theta, SSE, success).
    """
    from scipy.special import expit

    C = np.asarray(C, float)
    A = np.asarray(A, float)
    if C.size < 2:
        raise InputError(f"need at least 2 training models to fit alpha and beta, got {C.size}")
    g1 = 1.0 - gamma

    def res(th):
        return gamma + g1 * expit(th[0] * (C - th[1])) - A

    def jac(th):
        d = C - th[1]
        s = expit(th[0] * d)
        ds = g1 * s * (1 - s)
        return np.stack([ds * d, -ds * th[0]], axis=1)

    cands = [logit_init(C, A, gamma)] + [np.asarray(s, float) for s in (starts or [])]
    from scipy.optimize import least_squares  # start-up: loaded only when a law is fitted

    best: tuple[np.ndarray, float, bool] | None = None
    for x0 in cands:
        if not np.all(np.isfinite(x0)):
            continue
        with np.errstate(all="ignore"):
            r = least_squares(res, x0, jac=jac, method="lm", xtol=1e-12, ftol=1e-12, gtol=1e-12)
        sse = float(np.sum(r.fun**2))
        if np.isfinite(sse) and (best is None or sse < best[1]):
            best = (r.x, sse, bool(r.success))
    if best is None:  # pragma: no cover - only with non-finite data, rejected upstream
        raise InputError("the sigmoid fit failed: capability scores are not finite")
    return best
