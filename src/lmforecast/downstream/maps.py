"""Stage 2: loss -> score maps, in percentage points.

- `linear`: P = w0 + w1 L (Chen et al. Eq. 2), weighted least squares.
- `sigmoid`: P = floor + (ceil - floor) / (1 + exp(-k (L0 - L))) (Llama-3 style, Dubey et al.
  2024 Sec. 3.2.1 / Chen et al. App. D: a sigmoid from the random level up, here on the loss of
  the loss task rather than the correct answer's NLL). `ceil` is 100; `floor` is fitted in
  [0, chance + 10] by default (harness accuracies of untrained models sit below chance on some
  tasks) or fixed at chance (`floor="chance"`, the Llama-3 reading). Fitted on ALL checkpoints,
  near-chance ones included, so there is nothing to refuse.
- `local-linear`: Eq. 2 fitted only on the checkpoints nearest the forecast regime: losses
  within a factor exp(window) of the lowest observed loss (window 0.3 -> 35 %), at least 4 points.

The sigmoid is fitted with a Cauchy (robust) loss, scale 1.5 weighted residual units, so a
few checkpoints far off the curve (tasks such as WSC jump between two answer modes) cannot drag
its steep part; measured in docs/downstream.md.

Weights: 1 / sqrt(stderr^2 + tau^2), tau = 1 point (a misfit floor so that no checkpoint with a
tiny harness stderr dominates); stderr missing -> weight 1/tau.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import least_squares

TAU = 1.0


def weights(stderr) -> np.ndarray:
    se = np.nan_to_num(np.asarray(stderr, float), nan=0.0)
    return 1.0 / np.sqrt(se**2 + TAU**2)


class LinearMap:
    """Chen et al. Eq. 2; params (w0, w1)."""

    name = "linear"
    names = ("w0", "w1")

    def fit(self, L, P, w, start=None):
        a, b = np.polyfit(np.asarray(L, float), np.asarray(P, float), 1, w=np.sqrt(w))
        return np.array([b, a])

    def predict(self, p, L):
        return p[0] + p[1] * np.asarray(L, float)


class LocalLinearMap(LinearMap):
    """Eq. 2 on the checkpoints with L <= min(L) * exp(window) (at least `min_points`)."""

    name = "local-linear"

    def __init__(self, window: float = 0.3, min_points: int = 4) -> None:
        self.window, self.min_points = float(window), int(min_points)

    def select(self, L) -> np.ndarray:
        L = np.asarray(L, float)
        keep = L <= L.min() * np.exp(self.window)
        if keep.sum() < self.min_points:
            keep = np.zeros(L.size, bool)
            keep[np.argsort(L)[: self.min_points]] = True
        return keep

    def fit(self, L, P, w, start=None):
        k = self.select(L)
        return super().fit(np.asarray(L)[k], np.asarray(P)[k], np.asarray(w)[k])


class SigmoidMap:
    """P = floor + (ceil - floor) sigmoid(k (L0 - L)); params (log k, L0[, floor])."""

    name = "sigmoid"
    names = ("log k", "L0", "floor")

    loss = "cauchy"  # robust: one checkpoint far off the curve (WSC jumps) cannot bend it
    f_scale = 1.5  # residuals beyond ~1.5 weighted standard errors are down-weighted

    def __init__(self, chance: float, floor: str = "fit", ceiling: float = 100.0) -> None:
        self.chance, self.floor, self.ceiling = float(chance), floor, float(ceiling)

    def _floor(self, p):
        return self.chance if self.floor == "chance" or len(p) < 3 else p[2]

    def predict(self, p, L):
        z = np.exp(p[0]) * (p[1] - np.asarray(L, float))
        f = self._floor(p)
        return f + (self.ceiling - f) / (1.0 + np.exp(-np.clip(z, -500, 500)))

    def _fmax(self) -> float:
        return min(self.chance + 10.0, self.ceiling - 1.0)

    def bound_note(self, p) -> str:
        """Said after the parameters where the fitted floor sits on a bound of [0, chance + 10]
        (its interval then collapses onto the bound, e.g. "floor 35 [35, 35]")."""
        if self.floor == "chance" or len(p) < 3:
            return ""
        for b, what in ((self._fmax(), "upper bound, chance + 10"), (0.0, "lower bound, 0")):
            if abs(float(p[2]) - b) < 1e-6 * max(1.0, b):
                return f" (floor on its {what}: the scores do not pin it)"
        return ""

    def fit(self, L, P, w, start=None):
        L, P, w = (np.asarray(v, float) for v in (L, P, w))
        fmax = self._fmax()
        k = 2 if self.floor == "chance" else 3
        lo = np.array([-6.0, float(L.min()) - 20.0, 0.0])[:k]
        hi = np.array([4.0, float(L.max()) + 20.0, fmax])[:k]

        def res(p):
            return (self.predict(p, L) - P) * w

        def jac(p):
            ek = np.exp(p[0])
            z = np.clip(ek * (p[1] - L), -500, 500)
            sg = 1.0 / (1.0 + np.exp(-z))
            f = self._floor(p)
            ds = (self.ceiling - f) * sg * (1.0 - sg)
            cols = [ds * z, ds * ek] + ([1.0 - sg] if k == 3 else [])
            return np.stack(cols, axis=1) * w[:, None]

        if start is not None:
            starts = [start]
        else:
            f0 = float(np.clip(np.percentile(P, 10), 0.0, fmax - 1e-6))
            l0s = (float(L.min()) - 1.0, float(L.min()), float(np.median(L)))
            starts = [np.array([lk, l0, f0])[:k] for lk in (-1.0, 0.0, 1.0) for l0 in l0s]
        best = None
        for s in starts:
            s = np.clip(s, lo + 1e-9, hi - 1e-9)
            try:
                r = least_squares(
                    res,
                    s,
                    jac=jac,
                    bounds=(lo, hi),
                    x_scale="jac",
                    loss=self.loss,
                    f_scale=self.f_scale,
                    max_nfev=None if start is None else 100,
                )
            except ValueError:
                continue
            if best is None or r.cost < best.cost:
                best = r
        return best.x
