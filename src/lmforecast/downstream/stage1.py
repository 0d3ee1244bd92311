"""Stage 1: training compute -> loss of the loss task (e.g. ln LAMBADA perplexity).

- `power`: L(C) = (C/C_N)^alpha_N on the final checkpoints (Chen et al. Eq. 1; OLS on log L).
- `saturating`: L(C) = E + (C/C_N)^alpha_N, E >= 0 (Eq. 1 plus an irreducible term, the form of
  Kaplan/Hoffmann laws with D fixed) on the final checkpoints. Profile least squares: for each E
  on a grid the rest is OLS in log space, then a bounded polish.
- `nd`: L(N, D) = E + A/N^a + B/D^b (Hoffmann et al. 2022) on *all* checkpoints of >= 2% of
  training (soft-L1 loss). Intermediate Pythia checkpoints are mid-cosine-schedule, so this law
  sees losses above what a run annealed at that D would reach; measured in docs/downstream.md.

Each law is a tiny object: `fit(...) -> params` (1-D array) and `predict(params, C=, N=, D=)`.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import least_squares

C_REF = 1e18  # FLOPs scale inside the fits (keeps parameters O(1)); irrelevant to predictions


def _ols(x, y, w=None):
    """Slope and intercept of weighted least squares y = a x + b, vectorised over rows of y."""
    w = np.ones_like(x) if w is None else w
    sw = w.sum()
    xm = (w * x).sum() / sw
    ym = (y * w).sum(axis=-1, keepdims=True) / sw
    a = ((w * (x - xm)) * (y - ym)).sum(axis=-1) / (w * (x - xm) ** 2).sum()
    return a, ym[..., 0] - a * xm


class PowerLoss:
    """Chen et al. Eq. 1: L = (C/C_N)^alpha; params (alpha, log C_N) in C_REF units."""

    names = ("alpha", "log C_N")

    name = "power"
    needs = "finals"

    def fit(self, C, L, start=None):
        x = np.log(np.asarray(C, float) / C_REF)
        a, b = _ols(x, np.log(np.asarray(L, float)))
        return np.array([a, -b / a if abs(a) > 1e-12 else 0.0])

    def predict(self, p, C=None, N=None, D=None):
        return np.exp(p[0] * (np.log(np.asarray(C, float) / C_REF) - p[1]))


class SaturatingLoss:
    """L = E + exp(b) (C/C_REF)^(-a), E in [0, min L), a > 0; params (E, a, b)."""

    names = ("E", "a", "b")

    name = "saturating"
    needs = "finals"
    grid_size = 256

    def fit(self, C, L, start=None):
        x = np.log(np.asarray(C, float) / C_REF)
        L = np.asarray(L, float)
        Lmin = float(L.min())
        if start is None:
            E = np.linspace(0.0, Lmin * (1 - 1e-3), self.grid_size)
            slope, icpt = _ols(x, np.log(L[None, :] - E[:, None]))
            pred = E[:, None] + np.exp(icpt[:, None] + slope[:, None] * x[None, :])
            ok = slope < 0
            sse = np.where(ok, ((pred - L) ** 2).sum(axis=1), np.inf)
            i = int(np.argmin(sse))
            if not np.isfinite(sse[i]):  # loss does not fall with compute: constant law
                return np.array([0.0, 0.0, np.log(L.mean())])
            start = np.array([E[i], -slope[i], icpt[i]])
        lo = np.array([0.0, 1e-6, -50.0])
        hi = np.array([max(Lmin * (1 - 1e-6), 1e-9), 5.0, 50.0])
        start = np.clip(start, lo + 1e-12, hi - 1e-12)

        def res(p):
            return p[0] + np.exp(p[2] - p[1] * x) - L

        try:
            return least_squares(res, start, bounds=(lo, hi), x_scale="jac").x
        except ValueError:
            return start

    def predict(self, p, C=None, N=None, D=None):
        x = np.log(np.asarray(C, float) / C_REF)
        return p[0] + np.exp(p[2] - p[1] * x)


class NDLoss:
    """Hoffmann et al. 2022 Eq. 2 form on all checkpoints: L = E + A/N^a + B/D^b."""

    names = ("E", "log A", "a", "log B", "b")  # A, B at N = 1e8, D = 1e10

    name = "nd"
    needs = "checkpoints"
    min_fraction = 0.02  # skip the warm-up / first 2% of training

    @staticmethod
    def _f(p, N, D):
        return p[0] + np.exp(p[1] - p[2] * np.log(N / 1e8)) + np.exp(p[3] - p[4] * np.log(D / 1e10))

    def fit(self, N, D, L, start=None):
        N, D, L = (np.asarray(v, float) for v in (N, D, L))
        lo = np.array([0.0, -20.0, 1e-3, -20.0, 1e-3])
        hi = np.array([max(float(L.min()), 1e-6), 20.0, 3.0, 20.0, 3.0])
        e0 = min(1.0, 0.5 * float(L.min()))
        grid = [np.array([e0, 0.0, a, 0.0, b]) for a in (0.2, 0.5) for b in (0.2, 0.5)]
        starts = [start] if start is not None else grid
        best = None
        for s in starts:
            s = np.clip(s, lo + 1e-9, hi - 1e-9)
            r = least_squares(
                lambda p: self._f(p, N, D) - L, s, bounds=(lo, hi), loss="soft_l1", f_scale=0.1
            )
            if best is None or r.cost < best.cost:
                best = r
        return best.x

    def predict(self, p, C=None, N=None, D=None):
        return self._f(p, np.asarray(N, float), np.asarray(D, float))


STAGE1 = {"power": PowerLoss, "saturating": SaturatingLoss, "nd": NDLoss}
