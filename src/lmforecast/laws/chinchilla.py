"""Supervised pretraining-loss laws.

- `chinchilla`: L = E + A/N^alpha + B/D^beta (Hoffmann et al. 2022, Eq. 2 / Approach 3).
- `chinchilla-gamma`: L = E + (A/N^alpha + B/D^beta)^gamma (Busbridge et al. 2025, Eq. 1).

Both are evaluated in log space with log-sum-exp (Busbridge et al. App. F.1, Eq. 41-44):
log L = LSE(log E, gamma * LSE(log A - alpha log N, log B - beta log D)).
"""

from __future__ import annotations

import numpy as np

from . import register_law
from .base import Law, LinearBlock, Parameter, is_frozen, product_grid, safe_log

_HOFFMANN_GRID = {  # 6 x 6 x 5 x 5 x 5 = 4,500 starts (Hoffmann et al.; Epoch AI replication)
    "log_A": np.arange(0.0, 26.0, 5.0),
    "log_B": np.arange(0.0, 26.0, 5.0),
    "log_E": np.arange(-1.0, 1.01, 0.5),
    "alpha": np.arange(0.0, 2.01, 0.5),
    "beta": np.arange(0.0, 2.01, 0.5),
}
_BUSBRIDGE_GRID = {  # 5 x 5 x 6 x 4 x 4 x 4 = 9,600 starts (Busbridge et al. App. F.1)
    "log_A": np.array([0.0, 5.0, 10.0, 15.0, 20.0]),
    "log_B": np.array([0.0, 5.0, 10.0, 15.0, 20.0]),
    "log_E": np.array([-1.0, -0.5, 0.0, 0.5, 1.0, 1.5]),
    "alpha": np.array([0.0, 0.5, 1.0, 1.5]),
    "beta": np.array([0.0, 0.5, 1.0, 1.5]),
    "gamma": np.array([0.0, 0.5, 1.0, 1.5]),
}


# variable projection (fitting/varpro.py): exponents searched on these grids, E, A, B solved
_VP_EXPONENTS = np.round(np.arange(0.0, 2.51, 0.1), 10)  # alpha, beta at gamma = 1: 676 points
_VP_GAMMA_EXPONENTS = np.array([0.1, 0.2, 0.35, 0.5, 0.7, 1.0, 1.4, 2.0, 2.8])
_VP_GAMMAS = np.array([0.3, 0.5, 0.7, 1.4])  # gamma = 1 is the exact 3-coefficient block
_VP_LOG_RATIOS = np.linspace(-6.0, 6.0, 9)  # log(B D^-beta / A N^-alpha) at the median run


def _lse2(a, b):
    m = np.maximum(a, b)
    return m + np.log(np.exp(a - m) + np.exp(b - m))


class ChinchillaGamma(Law):
    """L(N, D) = E + (A/N^alpha + B/D^beta)^gamma, fitted on log L (Eq. 1 / Eq. 44)."""

    name = "chinchilla-gamma"
    inputs = ("N", "D")
    parameters = (
        Parameter("log_A", -20.0, 60.0, "A", "exp"),
        Parameter("log_B", -20.0, 60.0, "B", "exp"),
        Parameter("log_E", -10.0, 5.0, "E", "exp"),
        Parameter("alpha", 0.0, 10.0),
        Parameter("beta", 0.0, 10.0),
        Parameter("gamma", 0.0, 10.0),
    )
    citation = "Busbridge et al. 2025, Eq. 1 and App. F.1"
    has_gamma = True

    def default_grid(self):
        return dict(_BUSBRIDGE_GRID)

    def _logs(self, X):
        """log N, log D as (1, n) rows. A polish evaluates the law hundreds of times on the
        same input arrays: the logs of the last read-only arrays seen (`freeze_inputs`, as the
        fitting engine passes them) are kept and reused while both are the same array objects;
        any other array is logged anew, so changing one in place never leaves stale logs."""
        N, D = X["N"], X["D"]
        last = self.__dict__.get("_last_logs")
        if last is not None and last[0] is N and last[1] is D:
            return last[2]
        logs = np.log(N)[None, :], np.log(D)[None, :]
        if is_frozen(N) and is_frozen(D):
            self._last_logs = (N, D, logs)
        return logs

    def _parts(self, theta, X):
        theta = np.atleast_2d(theta)
        lA, lB, lE, a, b = (theta[:, i : i + 1] for i in range(5))
        g = theta[:, 5:6] if self.has_gamma else np.ones_like(lA)
        lnN, lnD = self._logs(X)
        u1 = lA - a * lnN
        u2 = lB - b * lnD
        m = _lse2(u1, u2)
        v = g * m
        out = _lse2(lE, v)  # lE (B, 1) broadcasts against v (B, n) inside the ufuncs
        return lnN, lnD, u1, u2, m, v, out, lE, g

    def predict_target(self, theta, X):
        return self._parts(theta, X)[6]

    def jacobian(self, theta, X):
        return self.predict_and_jacobian(theta, X)[1]

    def predict_and_jacobian(self, theta, X):
        lnN, lnD, u1, u2, m, v, out, lE, g = self._parts(theta, X)
        qE = np.exp(lE - out)
        qv = np.exp(v - out)
        p1 = np.exp(u1 - m)
        p2 = np.exp(u2 - m)
        J = np.empty((*out.shape, 6 if self.has_gamma else 5))  # filled in place
        qg = qv * g
        J[..., 0] = qg * p1
        J[..., 1] = qg * p2
        J[..., 2] = qE
        J[..., 3] = -J[..., 0] * lnN
        J[..., 4] = -J[..., 1] * lnD
        if self.has_gamma:
            J[..., 5] = qv * m
        return out, J

    # ---- variable projection -------------------------------------------------------------
    def linear_blocks(self, X):
        """At fixed (alpha, beta) and gamma = 1, L = E + A N^-alpha + B D^-beta is linear in
        (E, A, B) >= 0. With gamma free, at fixed (alpha, beta, gamma, r) with r = log(B/A),
        L = E + A^gamma (N^-alpha + e^r D^-beta)^gamma is linear in (E, A^gamma); r is gridded
        relative to the median run (r' = 0: both terms equal there)."""
        lnN, lnD = np.log(X["N"]), np.log(X["D"])
        g1 = self.has_gamma

        def basis3(nl, X):
            a, b = nl[:, :1], nl[:, 1:2]
            ones = np.ones((nl.shape[0], lnN.size))
            return np.stack([ones, np.exp(-a * lnN), np.exp(-b * lnD)], axis=-1)

        def theta3(nl, c, X):
            lc = safe_log(c)
            cols = [lc[:, 1], lc[:, 2], lc[:, 0], nl[:, 0], nl[:, 1]]
            if g1:
                cols.append(np.ones(nl.shape[0]))
            return np.stack(cols, axis=-1)

        blocks = [LinearBlock(product_grid(_VP_EXPONENTS, _VP_EXPONENTS), basis3, theta3)]
        if not g1:
            return blocks
        mN, mD = float(np.median(lnN)), float(np.median(lnD))

        def log_ratio(nl):
            return nl[:, 3:4] + nl[:, 1:2] * mD - nl[:, 0:1] * mN

        def basis_g(nl, X):
            a, b, g = nl[:, :1], nl[:, 1:2], nl[:, 2:3]
            shape = g * _lse2(-a * lnN, log_ratio(nl) - b * lnD)
            return np.stack([np.ones_like(shape), np.exp(shape)], axis=-1)

        def theta_g(nl, c, X):
            lc = safe_log(c)
            g = nl[:, 2]
            lA = lc[:, 1] / g
            return np.stack([lA, lA + log_ratio(nl)[:, 0], lc[:, 0], nl[:, 0], nl[:, 1], g], -1)

        grid = product_grid(_VP_GAMMA_EXPONENTS, _VP_GAMMA_EXPONENTS, _VP_GAMMAS, _VP_LOG_RATIOS)
        return blocks + [LinearBlock(grid, basis_g, theta_g)]

    # ---- closed forms ----------------------------------------------------------------------
    @staticmethod
    def loss(params, N, D):
        """Direct evaluation in natural space (for users and cross-checks)."""
        g = params.get("gamma", 1.0)
        return (
            params["E"]
            + (
                params["A"] / np.asarray(N, float) ** params["alpha"]
                + params["B"] / np.asarray(D, float) ** params["beta"]
            )
            ** g
        )


class Chinchilla(ChinchillaGamma):
    """L(N, D) = E + A/N^alpha + B/D^beta (Hoffmann et al. 2022, Approach 3)."""

    name = "chinchilla"
    parameters = ChinchillaGamma.parameters[:5]
    citation = "Hoffmann et al. 2022, Eq. 2 (Approach 3); grid as in Besiroglu et al. 2024"
    has_gamma = False

    def default_grid(self):
        return dict(_HOFFMANN_GRID)


register_law("chinchilla")(Chinchilla)
register_law("chinchilla-gamma")(ChinchillaGamma)
