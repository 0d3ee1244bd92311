"""L(C) = E + A C^-a: the loss frontier in compute (Kaplan et al. 2020, Sec. 3 style)."""

from __future__ import annotations

import numpy as np

from . import register_law
from .base import Law, Parameter


class ComputePower(Law):
    """L(C) = E + A C^-a, fitted on log L; used to compare recipes by effective compute."""

    name = "compute-power"
    inputs = ("C",)
    parameters = (
        Parameter("log_A", -20.0, 80.0, "A", "exp"),
        Parameter("log_E", -10.0, 5.0, "E", "exp"),
        Parameter("a", 0.0, 5.0),
    )
    citation = "Kaplan et al. 2020, Eq. 1.3 (with an irreducible term E)"

    def default_grid(self):
        return {
            "log_A": np.arange(0.0, 41.0, 4.0),
            "log_E": np.array([-1.0, -0.5, 0.0, 0.5, 1.0, 1.5]),
            "a": np.array([0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.8]),
        }

    def predict_target(self, theta, X):
        theta = np.atleast_2d(theta)
        lA, lE, a = theta[:, 0:1], theta[:, 1:2], theta[:, 2:3]
        v = lA - a * np.log(X["C"])[None, :]
        m = np.maximum(lE, v)
        return m + np.log(np.exp(lE - m) + np.exp(v - m))

    def predict_and_jacobian(self, theta, X):
        """Analytic: t = logaddexp(log E, log A - a ln C), so dt/dlog_A = w, dt/dlog_E = 1 - w,
        dt/da = -w ln C with w = A C^-a / L (a finite-difference Jacobian tripled the cost of
        the compute law fitted beside every supervised fit)."""
        theta = np.atleast_2d(np.asarray(theta, float))
        lnC = np.log(X["C"])[None, :]
        v = theta[:, 0:1] - theta[:, 2:3] * lnC
        t = np.logaddexp(theta[:, 1:2], v)
        w = np.exp(v - t)
        return t, np.stack([w, 1.0 - w, -w * lnC], axis=-1)

    def jacobian(self, theta, X):
        return self.predict_and_jacobian(theta, X)[1]

    def inverse(self, theta, L) -> np.ndarray:
        """C at which the law reaches loss L, for thetas (S, 3) and losses (S,) or scalar;
        inf where L is at or below the floor E."""
        theta = np.atleast_2d(theta)
        A, E, a = np.exp(theta[:, 0]), np.exp(theta[:, 1]), theta[:, 2]
        gap = np.asarray(L, float) - E
        with np.errstate(divide="ignore", invalid="ignore"):
            C = np.where(gap > 0, (gap / A) ** (-1.0 / a), np.inf)
        return C


class ComputeND(ComputePower):
    """L(N, D) = E + A (6ND)^-a: the 1-D compute law as a supervised form (inputs N and D).
    The fallback of the automatic form when the runs are too few for a law in N and D
    (docs/trust.md); it has no compute-optimal N/D split (only 6ND enters)."""

    name = "compute"
    inputs = ("N", "D")
    citation = "Kaplan et al. 2020, Eq. 1.3 (with an irreducible term E), C = 6ND"

    @staticmethod
    def _c(X):
        return {"C": 6.0 * np.asarray(X["N"], float) * np.asarray(X["D"], float)}

    def predict_target(self, theta, X):
        return super().predict_target(theta, self._c(X))

    def predict_and_jacobian(self, theta, X):
        return super().predict_and_jacobian(theta, self._c(X))


register_law("compute-power")(ComputePower)
register_law("compute")(ComputeND)
