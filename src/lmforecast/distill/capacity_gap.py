"""The capacity gap of the distillation law (Busbridge et al. 2025, Sec. 5.2, Fig. 7): for a
student of size N_S trained on D_S tokens, the teacher loss L_T* that gives the lowest student
loss under Eq. 8. A stronger teacher (lower L_T) is not always better: past the break of Eq. 8's
bracket the student loss rises again. `DistillationScalingLaw.optimal_teacher_loss` calls this.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError


def optimal_teacher_loss(model, N_S, D_S, n_grid: int = 256):
    """(L_T*, L_S*) = argmin / min over L_T of L_S(N_S, D_S, L_T) of a fitted
    `DistillationScalingLaw` (Sec. 5.2, Fig. 7).

    L_T ranges over (E, 10 + 3 d1 L~_S]: a log-spaced scan of L_T - E, then golden-section
    refinement in the best bracket, vectorised over configurations.
    """
    N_S, D_S = np.broadcast_arrays(np.asarray(N_S, float), np.asarray(D_S, float))
    for name, v in (("student parameters", N_S), ("student tokens", D_S)):
        if not np.all(np.isfinite(v)) or np.any(v <= 0):
            raise InputError(f"{name} must be positive and finite")
    shape = N_S.shape
    N, D = N_S.ravel(), D_S.ravel()
    Lsup = model.supervised_loss(N, D)
    E = model.E_
    lo = np.full(N.shape, np.log(1e-6))
    hi = np.log(10.0 + 3.0 * model.params_["d1"] * Lsup)
    u = np.linspace(0.0, 1.0, n_grid)
    U = lo[:, None] + u[None, :] * (hi - lo)[:, None]

    def f(uu):
        return model._loss(
            N[:, None] if uu.ndim == 2 else N,
            D[:, None] if uu.ndim == 2 else D,
            E + np.exp(uu),
            Lsup[:, None] if uu.ndim == 2 else Lsup,
        )

    vals = f(U)
    i = np.argmin(vals, axis=1)
    a = U[np.arange(N.size), np.maximum(i - 1, 0)]
    b = U[np.arange(N.size), np.minimum(i + 1, n_grid - 1)]
    x = _golden(f, a, b)
    LT = E + np.exp(x)
    return LT.reshape(shape), f(x).reshape(shape)


def _golden(f, a, b, iters: int = 60):
    """Vectorised golden-section minimisation of f on [a, b] (arrays)."""
    r = (np.sqrt(5.0) - 1.0) / 2.0
    a, b = a.copy(), b.copy()
    for _ in range(iters):
        c, d = b - r * (b - a), a + r * (b - a)
        left = f(c) < f(d)
        a, b = np.where(left, a, c), np.where(left, d, b)
    return 0.5 * (a + b)
