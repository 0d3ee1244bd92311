"""Fast scoring of the App. F.2 initialisation grid (216,000 starts) for the distillation law.

The grid is a Cartesian product and Eq. 49 separates: log L_S = log L_T + softplus(K1 + K2 -
log L_T) with K1 = gamma' LSE(log A' - alpha' log N_S, log B' - beta' log D_S) depending only on
the five "student" coordinates (675 combinations) and K2 = -c0 log L_T - c1 f1 softplus(...)
depending only on the four "teacher" coordinates (320 combinations). Both blocks are computed
once; scoring a start is then one add, one softplus and the Huber penalty per run, several times
cheaper than evaluating the whole law per start. Scores are identical to `Objective.batch`.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..errors import InputError
from ..fitting.losses import Loss
from ..laws.distillation import DistillationLaw

_STUDENT = ("log_A'", "log_B'", "alpha'", "beta'", "gamma'")
_TEACHER = ("c0", "c1", "f1", "log_d1")
_CHUNK = 250_000  # elements per vectorised pass (a few MB: the passes stay in cache)


def _mesh(axes: list[np.ndarray]) -> np.ndarray:
    return np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, len(axes))


def _huber_into(r: np.ndarray, d: float, out: np.ndarray) -> None:
    """`Loss.value` of a Huber loss written into `out`, overwriting `r`: the same operations
    in the same order (bit for bit), without its temporaries."""
    np.multiply(r, 0.5, out=out)
    out *= r  # 0.5 * r * r
    np.abs(r, out=r)
    small = r <= d
    r -= 0.5 * d
    r *= d  # d * (|r| - d / 2)
    np.copyto(out, r, where=~small)


def score_product_grid(
    law: DistillationLaw,
    X: Mapping[str, np.ndarray],
    t: np.ndarray,
    loss: Loss,
    grid: Mapping[str, np.ndarray],
) -> tuple[np.ndarray, np.ndarray]:
    """(starts (S, 9), objective (S,)) for the Cartesian grid, in `grid_to_array` order."""
    axes = [np.atleast_1d(np.asarray(grid[p.name], float)) for p in law.parameters]
    lo = np.array([p.lower for p in law.parameters])
    hi = np.array([p.upper for p in law.parameters])
    axes = [np.clip(a, lo[i], hi[i]) for i, a in enumerate(axes)]
    S1 = _mesh(axes[:5])  # student block
    S2 = _mesh(axes[5:])  # teacher block
    lnN, lnD = np.log(X["N_S"]), np.log(X["D_S"])
    lT, lsup = np.log(X["L_T"]), np.log(X["L_sup"])
    with np.errstate(all="ignore"):
        m = np.logaddexp(S1[:, :1] - S1[:, 2:3] * lnN, S1[:, 1:2] - S1[:, 3:4] * lnD)
        K1 = S1[:, 4:5] * m  # (n1, n)
        c0, c1, f1, ld1 = (S2[:, i : i + 1] for i in range(4))
        z = (lT - lsup - ld1) / f1
        K2 = -c0 * lT - c1 * f1 * np.logaddexp(0.0, z) - lT  # (n2, n), log L_T folded in
        t0 = np.asarray(t, float) - lT
        n1, n2, n = K1.shape[0], K2.shape[0], lT.size
        out = np.empty((n1, n2))
        step = max(1, min(n1, _CHUNK // (n2 * n)))
        buf = np.empty((step, n2, n))
        tmp = np.empty((step, n2, n))
        huber = loss.name == "huber"
        for s in range(0, n1, step):
            k = min(step, n1 - s)
            w, v = buf[:k], tmp[:k]
            np.add(K1[s : s + k, None, :], K2[None, :, :], out=w)
            np.logaddexp(0.0, w, out=w)
            w -= t0
            if huber:
                _huber_into(w, loss.delta, v)
            else:
                v = loss.value(w)
            v.sum(axis=-1, out=out[s : s + k])
    out = out.ravel()
    out[~np.isfinite(out)] = np.inf
    starts = np.concatenate(
        [np.repeat(S1, n2, axis=0), np.tile(S2, (n1, 1))], axis=1
    )  # row i*n2 + j = (S1[i], S2[j]), the meshgrid 'ij' order
    return starts, out


__all__ = ["score_product_grid"]


def fixed_grid(law: DistillationLaw, grid: Mapping[str, np.ndarray] | None, fixed):
    """The fit's initialisation grid (`grid`, None: the App. F.2 grid) and L-BFGS-B bounds with
    the `fixed` natural coefficients (e.g. {"gamma'": 0.764}) pinned: a one-value grid axis
    and equal bounds each. Returns (grid, bounds, the fit-space names of the fixed axes);
    InputError for an unknown coefficient or a value outside its bounds."""
    grid = dict(grid if grid is not None else law.default_grid())
    bounds = list(law.bounds)
    names = [p.natural_name for p in law.parameters]
    fixed_axes = set()
    for name, value in (fixed or {}).items():
        if name not in names:
            raise InputError(
                f"fixed (--fix): unknown coefficient {name!r}; known: "
                f"{', '.join(law.natural_names)}"
            )
        idx = names.index(name)
        p = law.parameters[idx]
        v = float(p.from_natural(float(value)))
        if not p.lower <= v <= p.upper:
            raise InputError(f"fixed: {name} = {value} is outside its bounds")
        grid[p.name] = np.array([v])
        bounds[idx] = (v, v)
        fixed_axes.add(p.name)
    return grid, bounds, fixed_axes
