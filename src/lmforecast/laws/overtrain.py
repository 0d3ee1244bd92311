"""Over-training law of Gadre et al. 2024 ("Language models scale reliably with over-training
and on downstream tasks", Eq. 3-4): the Chinchilla form with alpha = beta rewritten in compute
C = 6ND and tokens per parameter M = D/N,

    L(N, D) = E + (a M^eta + b M^-eta) C^-alpha_C.

With A/N^alpha + B/D^alpha and N = sqrt(C / (6M)), D = sqrt(C M / 6) one gets
(C/6)^(-alpha/2) (A M^(alpha/2) + B M^(-alpha/2)), i.e. eta = alpha_C = alpha/2; Gadre et al.
fit eta and alpha_C separately, and so do we. Evaluated in log space with log-sum-exp:
log L = LSE(log E, LSE(log a + eta ln M, log b - eta ln M) - alpha_C ln C).
"""

from __future__ import annotations

import numpy as np

from . import register_law
from .base import Law, LinearBlock, Parameter, product_grid, safe_log
from .chinchilla import _lse2

_GRID = {  # 7 x 7 x 6 x 4 x 4 = 4,704 starts
    "log_a": np.arange(0.0, 31.0, 5.0),
    "log_b": np.arange(0.0, 31.0, 5.0),
    "log_E": np.array([-1.0, -0.5, 0.0, 0.5, 1.0, 1.5]),
    "eta": np.array([0.0, 0.1, 0.25, 0.5]),
    "alpha_C": np.array([0.05, 0.15, 0.3, 0.5]),
}


@register_law("overtrain")
class Overtrain(Law):
    """L = E + (a M^eta + b M^-eta) C^-alpha_C, M = D/N, C = 6ND (Gadre et al. 2024, Eq. 4)."""

    name = "overtrain"
    inputs = ("N", "D")
    parameters = (
        Parameter("log_a", -20.0, 80.0, "a", "exp"),
        Parameter("log_b", -20.0, 80.0, "b", "exp"),
        Parameter("log_E", -10.0, 5.0, "E", "exp"),
        Parameter("eta", 0.0, 5.0),
        Parameter("alpha_C", 0.0, 5.0),
    )
    citation = "Gadre et al. 2024, Eq. 3-4 (Chinchilla with alpha = beta, in C and M = D/N)"

    def default_grid(self):
        return dict(_GRID)

    def _parts(self, theta, X):
        theta = np.atleast_2d(theta)
        la, lb, lE, eta, ac = (theta[:, i : i + 1] for i in range(5))
        N, D = np.asarray(X["N"], float), np.asarray(X["D"], float)
        lnM = np.log(D / N)[None, :]
        lnC = np.log(6.0 * N * D)[None, :]
        u1 = la + eta * lnM
        u2 = lb - eta * lnM
        m = _lse2(u1, u2)
        w = m - ac * lnC
        out = _lse2(np.broadcast_to(lE, w.shape), w)
        return lnM, lnC, u1, u2, m, w, out, lE

    def predict_target(self, theta, X):
        return self._parts(theta, X)[6]

    def jacobian(self, theta, X):
        return self.predict_and_jacobian(theta, X)[1]

    def predict_and_jacobian(self, theta, X):
        lnM, lnC, u1, u2, m, w, out, lE = self._parts(theta, X)
        qE = np.exp(lE - out)
        qw = np.exp(w - out)
        p1 = np.exp(u1 - m)
        p2 = np.exp(u2 - m)
        cols = [qw * p1, qw * p2, qE, qw * (p1 - p2) * lnM, -qw * np.broadcast_to(lnC, w.shape)]
        return out, np.stack(cols, axis=-1)

    def linear_blocks(self, X):
        """At fixed (eta, alpha_C), L = E + a M^eta C^-alpha_C + b M^-eta C^-alpha_C is linear in
        (E, a, b) >= 0 (variable projection, fitting/varpro.py)."""
        N, D = np.asarray(X["N"], float), np.asarray(X["D"], float)
        lnM, lnC = np.log(D / N), np.log(6.0 * N * D)

        def basis(nl, X):
            eta, ac = nl[:, :1], nl[:, 1:2]
            ones = np.ones((nl.shape[0], lnM.size))
            return np.stack(
                [ones, np.exp(eta * lnM - ac * lnC), np.exp(-eta * lnM - ac * lnC)], axis=-1
            )

        def theta(nl, c, X):
            lc = safe_log(c)
            return np.stack([lc[:, 1], lc[:, 2], lc[:, 0], nl[:, 0], nl[:, 1]], axis=-1)

        grid = product_grid(np.linspace(0.0, 1.0, 21), np.linspace(0.0, 0.6, 31))
        return [LinearBlock(grid, basis, theta)]

    @staticmethod
    def loss(params, N, D):
        """Direct evaluation in natural space (for users and cross-checks)."""
        N, D = np.asarray(N, float), np.asarray(D, float)
        M, C = D / N, 6.0 * N * D
        e = params["eta"]
        return params["E"] + (params["a"] * M**e + params["b"] * M**-e) * C ** -params["alpha_C"]
