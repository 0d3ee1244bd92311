"""The curve laws: value and Jacobian in fit space over a prepared `Design`.

- ``mpl``: the multi-power law (Luo et al. 2025, *A Multi-Power Law for Loss Curve Prediction
  Across Learning Rate Schedules*, the law with its G(x) and warmup offset S_W):
  L(t) = L0 + A (S1(t) + S_W)^-alpha - LD(t),
  LD(t) = B sum_k (eta_{k-1} - eta_k) G(eta_k^-gamma S_k(t)),  G(x) = 1 - (C x + 1)^-beta.
- ``annealing``: the learning-rate annealing law (Tissue et al. 2024, *Scaling Law with
  Learning Rate Annealing*):
  L = L0 + A (S1 + S_W)^-alpha - C S2, S2 the momentum-weighted area of the lr decreases.
- ``power``: the baseline L = L0 + A t^-alpha in steps t (no schedule).

Fit space: the scale parameters (A, B, C of the multi-power law) are fitted as their logs, so
they stay positive; the exponents and L0 as they are, within bounds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .evaluate import DropItems


@dataclass
class Design:
    """The schedule quantities at the points of one model's runs (concatenated)."""

    s1w: np.ndarray  # S1(t) + S_W
    step: np.ndarray
    drops: DropItems | None  # multi-power law items (global evaluation index)
    s2: np.ndarray | None  # annealing law S2
    _matrix: object = None

    def drop_matrix(self):
        """The (points x items) matrix of the items' lr decreases, built once, as a product
        by `np.bincount` (numpy only: the forecasting commands import no scipy)."""
        if self._matrix is None:
            self._matrix = DropSum(self.drops.j, self.drops.w, self.s1w.size)
        return self._matrix


@dataclass
class DropSum:
    """``M @ v`` with ``M[j[i], i] = w[i]``: each point's sum of its items' weighted values."""

    j: np.ndarray
    w: np.ndarray
    n: int

    def __matmul__(self, v: np.ndarray) -> np.ndarray:
        return np.bincount(self.j, weights=self.w * v, minlength=self.n)


LAWS = {
    "mpl": ("L0", "A", "alpha", "B", "C", "beta", "gamma"),
    "annealing": ("L0", "A", "alpha", "C"),
    "power": ("L0", "A", "alpha"),
}
LOG_PARAMS = {"mpl": (1, 3, 4), "annealing": (1,), "power": (1,)}
# bounds in fit space (log for the LOG_PARAMS); L0's upper bound is set from the data
BOUNDS = {
    "mpl": [(0.0, None), (-12, 6), (0.01, 3.0), (-6, 12), (-8, 8), (0.01, 5.0), (0.0, 2.0)],
    "annealing": [(0.0, None), (-12, 6), (0.01, 3.0), (0.0, 1e4)],
    "power": [(0.0, None), (-12, 12), (0.01, 3.0)],
}


def to_natural(law: str, z: np.ndarray) -> np.ndarray:
    th = np.array(z, float, copy=True)
    idx = list(LOG_PARAMS[law])
    th[..., idx] = np.exp(th[..., idx])
    return th


def to_fit(law: str, theta: np.ndarray) -> np.ndarray:
    z = np.array(theta, float, copy=True)
    idx = list(LOG_PARAMS[law])
    z[..., idx] = np.log(z[..., idx])
    return z


def value(law: str, z: np.ndarray, d: Design, jac: bool = False):
    """Predicted losses at the design's points (and the Jacobian in fit space, (n, P))."""
    th = to_natural(law, z)
    if law == "power":
        L0, A, alpha = th
        t = np.maximum(d.step, 1.0)
        u = t ** (-alpha)
        pred = L0 + A * u
        if not jac:
            return pred
        return pred, np.column_stack([np.ones_like(u), A * u, -A * u * np.log(t)])
    L0, A, alpha = th[:3]
    s = np.maximum(d.s1w, 1e-300)
    u = s ** (-alpha)
    if law == "annealing":
        C = th[3]
        pred = L0 + A * u - C * d.s2
        if not jac:
            return pred
        return pred, np.column_stack([np.ones_like(u), A * u, -A * u * np.log(s), -d.s2])
    B, C, beta, gamma = th[3:]
    it = d.drops
    n = d.s1w.size
    cx = C * np.exp(-gamma * it.lg) * it.s
    lq = np.log1p(cx)
    qb = np.exp(-beta * lq)  # (C x + 1)^-beta
    if not jac:
        ld = d.drop_matrix() @ (1.0 - qb)
        return L0 + A * u - B * ld
    h = beta * qb * cx / (1.0 + cx)  # C dG/dC
    M = d.drop_matrix()
    ld = M @ (1.0 - qb)
    pred = L0 + A * u - B * ld
    J = np.empty((n, 7))
    J[:, 0] = 1.0
    J[:, 1] = A * u
    J[:, 2] = -A * u * np.log(s)
    J[:, 3] = -B * ld
    J[:, 4] = -B * (M @ h)
    J[:, 5] = -B * (M @ (qb * lq))
    J[:, 6] = B * (M @ (h * it.lg))
    return pred, J


def linear_columns(law: str, z: np.ndarray, d: Design) -> np.ndarray:
    """The columns that multiply the linear parameters (L0, A, B or C) at the nonlinear ones
    of `z` (variable projection): pred = cols @ (L0, A, B)."""
    th = to_natural(law, z)
    if law == "power":
        return np.column_stack([np.ones_like(d.step), np.maximum(d.step, 1.0) ** (-th[2])])
    u = np.maximum(d.s1w, 1e-300) ** (-th[2])
    if law == "annealing":
        return np.column_stack([np.ones_like(u), u, -d.s2])
    C, beta, gamma = th[4:]
    it = d.drops
    ld = d.drop_matrix() @ (1.0 - np.exp(-beta * np.log1p(C * np.exp(-gamma * it.lg) * it.s)))
    return np.column_stack([np.ones_like(u), u, -ld])


# column -> the natural parameter it is proportional to (A or B): dividing by it gives the
# Jacobian at unit scale, whose zero columns stay zero when a fitted scale sits at its bound
UNIT_DIV = {
    "mpl": {1: 1, 2: 1, 3: 3, 4: 3, 5: 3, 6: 3},
    "annealing": {1: 1, 2: 1},
    "power": {1: 1, 2: 1},
}


def unit_jacobian(law: str, z: np.ndarray, J: np.ndarray) -> np.ndarray:
    """`J` with each column divided by the scale parameter it is proportional to (used to
    decide what the fitted points identify, independently of a scale fitted to ~0)."""
    th = to_natural(law, z)
    out = np.array(J, float, copy=True)
    for col, k in UNIT_DIV[law].items():
        out[:, col] /= th[k]
    return out


LINEAR_INDEX = {"mpl": (0, 1, 3), "annealing": (0, 1, 3), "power": (0, 1)}

# starting grids of the nonlinear parameters (natural units) for variable projection
START_GRID = {
    "mpl": {
        "alpha": (0.3, 0.5, 0.8),
        "C": (0.5, 2.0, 8.0),
        "beta": (0.3, 0.6, 1.2),
        "gamma": (0.3, 0.6),
    },
    "annealing": {"alpha": (0.2, 0.35, 0.5, 0.7, 1.0)},
    "power": {"alpha": (0.1, 0.2, 0.35, 0.5, 0.7, 1.0)},
}

__all__ = ["Design", "LAWS", "linear_columns", "to_fit", "to_natural", "unit_jacobian", "value"]
