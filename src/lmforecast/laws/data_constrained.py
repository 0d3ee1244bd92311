"""Data-constrained scaling law of Muennighoff et al. (2023), Eq. 5-7.

Repeated tokens are worth less than fresh ones, and parameters beyond what the unique data can
feed are worth less than parameters that can be fed:

    R_D = D/U_D - 1                          (repeated epochs beyond the first)
    D'  = U_D + U_D R*_D (1 - exp(-R_D/R*_D))                             (Eq. 5)
    U_N = min(N, N_opt(U_D)),  R_N = N/U_N - 1
    N'  = U_N + U_N R*_N (1 - exp(-R_N/R*_N))                             (Eq. 6)
    L   = E + A/N'^alpha + B/D'^beta                                       (Eq. 7)

N_opt(U_D) is the compute-optimal size for U_D tokens under the law's own Chinchilla part: the
stationarity condition alpha A/N^alpha = beta B/D^beta of the 6ND-constrained optimum gives
N_opt(U) = (alpha A / (beta B))^(1/alpha) * U^(beta/alpha) (docs/datablations.md). With one epoch
(D = U) and N <= N_opt(U) the law is Hoffmann et al.'s Eq. 2.

U_D is the unique data the run actually sees: min(U, D). Training on D tokens drawn from a pool
of U > D tokens sees at most D unique tokens (one partial epoch), so a larger pool cannot lower
the loss (Eq. 5 with R_D = D/U - 1 < 0 would, and U -> inf gives nan).
"""

from __future__ import annotations

import numpy as np

from . import register_law
from .base import Law, Parameter
from .chinchilla import _HOFFMANN_GRID

_R_GRID = {"log_RD": np.log([2.0, 8.0, 30.0]), "log_RN": np.log([1.5, 6.0, 25.0])}


def effective(U, R, R_star):
    """U + U R* (1 - exp(-R/R*)) (Eq. 5/6), broadcasting; R* may be an (S, 1) column."""
    return U + U * R_star * (-np.expm1(-R / R_star))


def n_opt(U, A, B, alpha, beta):
    """Compute-optimal parameters for U tokens: (alpha A/(beta B))^(1/alpha) U^(beta/alpha)."""
    lnN = (np.log(alpha * A) - np.log(beta * B)) / alpha + beta / alpha * np.log(U)
    return np.exp(lnN)


class DataConstrained(Law):
    """L = E + A/N'^alpha + B/D'^beta with effective N', D' (Muennighoff et al. 2023, Eq. 5-7)."""

    name = "data-constrained"
    inputs = ("N", "D", "U")
    parameters = (
        Parameter("log_A", -20.0, 60.0, "A", "exp"),
        Parameter("log_B", -20.0, 60.0, "B", "exp"),
        Parameter("log_E", -10.0, 5.0, "E", "exp"),
        Parameter("alpha", 1e-3, 10.0),
        Parameter("beta", 1e-3, 10.0),
        Parameter("log_RD", np.log(1e-2), np.log(1e5), "RD_star", "exp"),
        Parameter("log_RN", np.log(1e-2), np.log(1e5), "RN_star", "exp"),
    )
    citation = "Muennighoff et al. 2023, Eq. 5-7 (Chinchilla part: Hoffmann et al. 2022, Eq. 2)"

    def default_grid(self):
        return {**_HOFFMANN_GRID, **_R_GRID}

    def effective_inputs(self, theta, X):
        """(N', D') of shape (S, n) for fit-space thetas (S, P) (Eq. 5-6), with U_D = min(U, D):
        a pool larger than the tokens seen is one partial epoch of D unique tokens."""
        theta = np.atleast_2d(theta)
        lA, lB, lE, a, b, lRD, lRN = (theta[:, i : i + 1] for i in range(7))
        N, D, U = (np.asarray(X[k], float)[None, :] for k in ("N", "D", "U"))
        U = np.minimum(U, D)  # U_D: the unique tokens seen
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            Dp = effective(U, D / U - 1.0, np.exp(lRD))
            lnNopt = (np.log(a) + lA - np.log(b) - lB) / a + b / a * np.log(U)
            UN = np.minimum(N, np.exp(lnNopt))
            Np = effective(UN, N / UN - 1.0, np.exp(lRN))
        return Np, Dp

    def predict_target(self, theta, X):
        theta = np.atleast_2d(theta)
        lA, lB, lE, a, b = (theta[:, i : i + 1] for i in range(5))
        Np, Dp = self.effective_inputs(theta, X)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            return np.log(np.exp(lE) + np.exp(lA - a * np.log(Np)) + np.exp(lB - b * np.log(Dp)))

    def predict_and_jacobian(self, theta, X):
        """The prediction and its closed-form Jacobian (S, n, P), by the chain rule through
        Eq. 5-7. U_N = min(N, N_opt) is piecewise smooth: on runs with N > N_opt the gradient
        flows through N_opt (hence through log_A, log_B, alpha, beta), elsewhere U_N = N is
        constant; at the kink itself (measure zero) the N_opt side is taken."""
        theta = np.atleast_2d(np.asarray(theta, float))
        lA, lB, lE, a, b, lRD, lRN = (theta[:, i : i + 1] for i in range(7))
        N, D, U = (np.asarray(X[k], float)[None, :] for k in ("N", "D", "U"))
        U = np.minimum(U, D)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
            RDs, RNs = np.exp(lRD), np.exp(lRN)
            x = (D / U - 1.0) / RDs
            ex = np.exp(-x)
            Dp = U + U * RDs * (-np.expm1(-x))
            dDp_lRD = U * RDs * (-np.expm1(-x) - x * ex)
            lnU = np.log(U)
            lnNopt = (np.log(a) + lA - np.log(b) - lB) / a + b / a * lnU
            Nopt = np.exp(lnNopt)
            capped = Nopt < N  # U_N = N_opt: the law's own optimum for U_D caps N
            UN = np.where(capped, Nopt, N)
            y = (N / UN - 1.0) / RNs
            ey = np.exp(-y)
            Np = UN + UN * RNs * (-np.expm1(-y))
            dNp_lRN = UN * RNs * (-np.expm1(-y) - y * ey)
            # dN'/d log U_N, nonzero only where U_N = N_opt
            dNp_lUN = np.where(capped, UN * (1.0 + RNs * (-np.expm1(-y))) - N * ey, 0.0)
            lnNp, lnDp = np.log(Np), np.log(Dp)
            TE, TA, TB = np.exp(lE), np.exp(lA - a * lnNp), np.exp(lB - b * lnDp)
            L = TE + TA + TB
            gA = -a * TA / Np / L  # d t / d N' (t = log L)
            gB = -b * TB / Dp / L
            dlnNopt = (  # d log N_opt / d (log_A, log_B, alpha, beta)
                1.0 / a + 0 * lnU,
                -1.0 / a + 0 * lnU,
                (1.0 - np.log(a) - lA + np.log(b) + lB - b * lnU) / a**2,
                -1.0 / (a * b) + lnU / a,
            )
            viaN = gA * dNp_lUN
            J = np.stack(
                [
                    TA / L + viaN * dlnNopt[0],
                    TB / L + viaN * dlnNopt[1],
                    np.broadcast_to(TE / L, L.shape),
                    -lnNp * TA / L + viaN * dlnNopt[2],
                    -lnDp * TB / L + viaN * dlnNopt[3],
                    gB * dDp_lRD,
                    gA * dNp_lRN,
                ],
                axis=-1,
            )
            return np.log(L), J

    def jacobian(self, theta, X):
        return self.predict_and_jacobian(theta, X)[1]


register_law("data-constrained")(DataConstrained)
