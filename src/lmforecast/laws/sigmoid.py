"""Observational scaling law, Ruan, Maddison & Hashimoto (2024), Eq. 6 in accuracy form.

Eq. 6 models a normalised *error* as E = h * sigma(beta^T S + alpha) with h in [0.8, 1]. On the
accuracy Y = 1 - E this is Y = (1 - h) + h * sigma(beta'^T x + alpha') (Table C.1's phi(X, h),
the authors' `sigmoid-parametric` fit with fixed height), with beta' = -beta, alpha' = -alpha.
We fit the accuracy form: its slopes are positive when a higher capability raises accuracy.

`x` is any K-vector of predictors: the top-K principal components of benchmark scores (the
observational law), or a single log-FLOPs / log-size column (the compute baselines of Sec. 4).
"""

from __future__ import annotations

import numpy as np

from . import register_law
from .base import Law, Parameter

H_BOUNDS = (0.8, 1.0)  # Sec. 3.4: "we restrict h to [0.8, 1.0]"


def sigmoid(z: np.ndarray) -> np.ndarray:
    """Numerically stable logistic function."""
    z = np.asarray(z, float)
    out = np.empty_like(z)
    pos = z >= 0
    out[pos] = 1.0 / (1.0 + np.exp(-z[pos]))
    ez = np.exp(z[~pos])
    out[~pos] = ez / (1.0 + ez)
    return out


class ObservationalSigmoid(Law):
    """Y = (1 - h) + h * sigma(alpha + sum_k beta_k x_k), h in [0.8, 1] (Eq. 6, accuracy form).

    Parameters in fit order: h, alpha, beta_1..beta_K. Inputs x1..xK. Fitted by least squares on
    Y (Sec. 3.4 / Alg. 1 "non-linear regression"; the authors use bounded `curve_fit`).
    """

    target = "identity"
    citation = "Ruan, Maddison & Hashimoto 2024, Eq. 6 and Table C.1"

    def __init__(self, k: int = 3) -> None:
        k = int(k)
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        self.k = k
        self.name = "osl-sigmoid"
        self.inputs = tuple(f"x{i + 1}" for i in range(k))
        self.parameters = (
            Parameter("h", *H_BOUNDS),
            Parameter("alpha", -1e3, 1e3),
            *(Parameter(f"beta{i + 1}", -1e3, 1e3) for i in range(k)),
        )

    def default_grid(self) -> dict[str, np.ndarray]:
        """Small start grid around the authors' init (alpha=0, beta=0.01, h=1)."""
        grid = {"h": np.array([1.0, 0.9]), "alpha": np.array([-2.0, 0.0, 2.0])}
        for i in range(self.k):
            grid[f"beta{i + 1}"] = np.array([0.01, 1.0]) if i == 0 else np.array([0.01])
        return grid

    def _design(self, X) -> np.ndarray:
        return np.stack([np.asarray(X[name], float) for name in self.inputs], axis=0)  # (K, n)

    def predict_target(self, theta, X):
        theta = np.atleast_2d(np.asarray(theta, float))
        z = theta[:, 1:2] + theta[:, 2:] @ self._design(X)
        h = theta[:, 0:1]
        return (1.0 - h) + h * sigmoid(z)

    def jacobian(self, theta, X):
        return self.predict_and_jacobian(theta, X)[1]

    def predict_and_jacobian(self, theta, X):
        theta = np.atleast_2d(np.asarray(theta, float))
        x = self._design(X)
        z = theta[:, 1:2] + theta[:, 2:] @ x
        h = theta[:, 0:1]
        s = sigmoid(z)
        pred = (1.0 - h) + h * s
        ds = h * s * (1.0 - s)  # d pred / d z
        cols = [s - 1.0, ds] + [ds * x[i][None, :] for i in range(self.k)]
        return pred, np.stack(cols, axis=-1)


register_law("osl-sigmoid")(ObservationalSigmoid)
