"""Variable projection: solve a law's linear coefficients exactly on a grid of its exponents.

In L = E + A N^-alpha + B D^-beta the coefficients (E, A, B) enter linearly once the exponents
are fixed (Golub & Pereyra 1973; for Approach 3 see Hoffmann et al. 2022 and the Open-Athena
analysis of Approach 3). A law declares that structure with `Law.linear_blocks` (basis
columns at fixed nonlinear coordinates, `laws.base.LinearBlock`); this module turns every point of
a small exponent grid into a start whose linear coefficients are (near-)optimal for the engine's
objective, sum_i w_i rho(log prediction_i - log y_i):

1. non-negative least squares on the relative residual (Phi c - y) / y, the first-order
   expansion of log(Phi c) - log y;
2. a few Gauss-Newton / IRLS steps on the log residual itself, with the Huber weights
   min(1, delta / |r|) (squared loss: weight 1), each step again an NNLS problem;
3. every iterate is scored with the true objective and each grid point keeps its best one.

The projected starts then go through the engine's unchanged L-BFGS-B polish on the true
objective over all parameters, so the minimised objective is exactly the one the grid path
minimises (docs/fitting.md). NNLS with k <= 3 coefficients is solved for a whole batch at once by
enumerating the active sets (2^k - 1 unconstrained least-squares problems on the Gram matrix).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping

import numpy as np

from ..laws.base import Law
from .losses import Loss

IRLS_STEPS = 3


def nnls_batched(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """argmin_{c >= 0} ||A_g c - b_g|| for every g: A (G, n, k), b (G, n) -> c (G, k).

    Exact for small k: the optimum is the unconstrained least-squares solution on its support,
    so the best feasible (all-positive) subset solution is the NNLS solution. Columns are scaled
    to unit norm first (basis columns like N^-alpha span 30 orders of magnitude); the subset
    systems (k <= 3) are solved in closed form, and a numerically singular one is skipped.
    """
    cols = [np.ascontiguousarray(A[:, :, j]) for j in range(A.shape[2])]
    return nnls_columns(cols, np.ascontiguousarray(b))


def _solve_small(gs: list[list[np.ndarray]], hs: list[np.ndarray]):
    """Solve the batched m x m systems (m <= 3) gs c = hs; returns (c list, solvable mask)."""
    m = len(hs)
    if m == 1:
        d = gs[0][0]
        ok = d > 1e-300
        return [hs[0] / np.where(ok, d, 1.0)], ok
    if m == 2:
        (a, b_), (_, d) = gs
        det = a * d - b_ * b_
        ok = det > 1e-12 * a * d
        inv = 1.0 / np.where(ok, det, 1.0)
        return [(d * hs[0] - b_ * hs[1]) * inv, (a * hs[1] - b_ * hs[0]) * inv], ok
    a, b_, c = gs[0]
    _, e, f = gs[1]
    i = gs[2][2]
    A_ = e * i - f * f
    B_ = -(b_ * i - c * f)
    C_ = b_ * f - c * e
    E_ = a * i - c * c
    F_ = -(a * f - b_ * c)
    I_ = a * e - b_ * b_
    det = a * A_ + b_ * B_ + c * C_
    ok = det > 1e-12 * a * e * i
    inv = 1.0 / np.where(ok, det, 1.0)
    h0, h1, h2 = hs
    return [
        (A_ * h0 + B_ * h1 + C_ * h2) * inv,
        (B_ * h0 + E_ * h1 + F_ * h2) * inv,
        (C_ * h0 + F_ * h1 + I_ * h2) * inv,
    ], ok


def nnls_columns(cols: list[np.ndarray], b: np.ndarray) -> np.ndarray:
    """`nnls_batched` with the k basis columns given as a list of (G, n) arrays."""
    k = len(cols)
    if k > 3:
        raise ValueError(f"nnls_batched solves up to 3 coefficients, got {k}")
    G = cols[0].shape[0]
    raw = [[None] * k for _ in range(k)]
    for i in range(k):
        for j in range(i, k):
            raw[i][j] = raw[j][i] = np.einsum("gn,gn->g", cols[i], cols[j])
    scale = [np.sqrt(raw[i][i]) for i in range(k)]
    scale = [np.where((s > 0) & np.isfinite(s), s, 1.0) for s in scale]
    gram = [[raw[i][j] / (scale[i] * scale[j]) for j in range(k)] for i in range(k)]
    h = [np.einsum("gn,gn->g", a, b) / s for a, s in zip(cols, scale)]
    best = np.zeros((G, k))
    best_val = np.zeros(G)  # relative to ||b||^2: c = 0 gives 0
    for size in range(1, k + 1):
        for idx in itertools.combinations(range(k), size):
            gs = [[gram[i][j] for j in idx] for i in idx]
            hs = [h[i] for i in idx]
            sol, ok = _solve_small(gs, hs)
            for v in sol:
                ok = ok & (v > 0)
            val = -sum(v * hv for v, hv in zip(sol, hs))  # c'Gc - 2h'c = -h'c at the solution
            upd = ok & (val < best_val)
            for j, v in zip(idx, sol):
                best[:, j] = np.where(upd, v, np.where(upd, 0.0, best[:, j]))
            for j in set(range(k)) - set(idx):
                best[:, j] = np.where(upd, 0.0, best[:, j])
            best_val = np.where(upd, val, best_val)
    return best / np.stack(scale, axis=1)


def _loss_weights(loss: Loss, r: np.ndarray) -> np.ndarray:
    if loss.name == "squared":
        return np.ones_like(r)
    a = np.abs(r)
    return np.where(a <= loss.delta, 1.0, loss.delta / np.maximum(a, 1e-300))


def project_block(basis: np.ndarray, t: np.ndarray, loss: Loss, w=None, steps: int = IRLS_STEPS):
    """Coefficients c (G, k) >= 0 minimising (approximately) sum w rho(log(Phi c) - t)."""
    cols = [np.ascontiguousarray(basis[:, :, j]) for j in range(basis.shape[2])]
    y = np.exp(t)
    sw = np.ones_like(t) if w is None else np.sqrt(np.asarray(w, float))
    G = cols[0].shape[0]
    with np.errstate(all="ignore"):
        c = nnls_columns([a * (sw / y) for a in cols], np.broadcast_to(sw, (G, t.size)))
        best_c, best_f = c, np.full(G, np.inf)
        for step in range(steps + 1):
            p = sum(a * c[:, j : j + 1] for j, a in enumerate(cols))
            pos = p > 0
            r = np.where(pos, np.log(np.where(pos, p, 1.0)) - t, 0.0)
            v = loss.value(r) * (1.0 if w is None else w)
            f = np.where(pos.all(axis=1), v.sum(axis=1), np.inf)
            better = f < best_f
            best_c = np.where(better[:, None], c, best_c)
            best_f = np.where(better, f, best_f)
            if step == steps:
                break
            sq = np.sqrt(_loss_weights(loss, r)) * sw * pos
            q = sq / np.where(pos, p, 1.0)
            c = nnls_columns([a * q for a in cols], (1.0 - r) * sq)
    return best_c


def projected_starts(
    law: Law,
    X: Mapping[str, np.ndarray],
    t: np.ndarray,
    loss: Loss,
    w=None,
    bounds=None,
    thin: int = 1,
    steps: int = IRLS_STEPS,
) -> tuple[np.ndarray, np.ndarray]:
    """(starts (S, P), keys (S, q+1)): one projected fit-space start per point of every
    `law.linear_blocks(X)` grid, clipped to `bounds`; `keys` holds each start's block number
    and grid indices (neighbours differ by at most 1 in every index: see `representatives`).
    `thin=2` keeps every other value of each grid axis (refits near a known optimum).

    An exponent pinned by equal bounds (`--fix`) is projected AT its pinned value: the grid
    axis of that exponent collapses to it (`pin_grid`), so the linear coefficients are solved
    for the exponent the fit will keep. A pinned linear coefficient is only clipped."""
    b = np.array(bounds if bounds is not None else law.bounds, float)
    starts, keys = [], []
    blocks = law.linear_blocks(X)
    width = max(blk.grid.shape[1] for blk in blocks) + 1
    for i, blk in enumerate(blocks):
        nl = np.atleast_2d(np.asarray(blk.grid, float))
        if thin > 1:
            pos = [np.searchsorted(np.unique(nl[:, j]), nl[:, j]) for j in range(nl.shape[1])]
            nl = nl[np.all(np.stack(pos) % thin == 0, axis=0)]
        nl = pin_grid(blk, nl, b, X)
        c = project_block(blk.basis(nl, X), t, loss, w, steps)
        with np.errstate(all="ignore"):
            th = blk.theta(nl, c, X)
        th = np.where(np.isnan(th), b[:, 0], th)
        starts.append(np.clip(th, b[:, 0], b[:, 1]))
        idx = np.column_stack(
            [np.searchsorted(np.unique(nl[:, j]), nl[:, j]) for j in range(nl.shape[1])]
        )
        key = np.full((nl.shape[0], width), -1, int)
        key[:, 0] = i
        key[:, 1 : 1 + idx.shape[1]] = idx
        keys.append(key)
    return np.vstack(starts), np.vstack(keys)


def _unit_theta(blk, nl: np.ndarray, X) -> np.ndarray:
    """The block's fit-space parameters on grid `nl` with every linear coefficient 1."""
    k = blk.basis(nl[:1], X).shape[-1]
    with np.errstate(all="ignore"):
        return blk.theta(nl, np.ones((nl.shape[0], k)), X)


def exponent_columns(blk, X) -> dict[int, int]:
    """{theta index: grid column} of the block's exponents: the fit-space parameters that
    `blk.theta` copies from a grid column (found by evaluating it on the grid)."""
    nl = np.atleast_2d(np.asarray(blk.grid, float))
    th = _unit_theta(blk, nl, X)
    out = {}
    for j in range(nl.shape[1]):
        if np.unique(nl[:, j]).size < 2:
            continue
        for i in range(th.shape[1]):
            if i not in out and np.array_equal(th[:, i], nl[:, j]):
                out[i] = j
                break
    return out


def pinned(bounds: np.ndarray) -> np.ndarray:
    """Indices of the parameters pinned by equal bounds."""
    return np.flatnonzero(bounds[:, 0] == bounds[:, 1])


def pin_grid(blk, nl: np.ndarray, bounds: np.ndarray, X, cols=None) -> np.ndarray:
    """The block's grid with every pinned exponent's column set to its pinned value (duplicate
    rows dropped, order kept); `cols`: the block's `exponent_columns`, when already known."""
    pins = pinned(bounds)
    if not pins.size:
        return nl
    cols = exponent_columns(blk, X) if cols is None else cols
    hit = [(cols[i], bounds[i, 0]) for i in pins if i in cols]
    if not hit:
        return nl
    nl = nl.copy()
    for j, v in hit:
        nl[:, j] = v
    _, first = np.unique(nl, axis=0, return_index=True)
    return nl[np.sort(first)]


def honours_pins(law: Law, X, bounds) -> bool:
    """Whether some linear block projects at every pinned parameter's value: each pin is one of
    its exponents, or a parameter the block holds constant at that value (gamma = 1 of the
    Chinchilla block). A pinned linear coefficient is honoured by no block."""
    b = np.array(bounds if bounds is not None else law.bounds, float)
    pins = pinned(b)
    if not pins.size:
        return True
    for blk in law.linear_blocks(X):
        cols = exponent_columns(blk, X)
        th = _unit_theta(
            blk, pin_grid(blk, np.atleast_2d(np.asarray(blk.grid, float)), b, X, cols), X
        )
        if all(i in cols or np.all(th[:, i] == b[i, 0]) for i in pins):
            return True
    return False


def representatives(keys: np.ndarray, scores: np.ndarray, k: int, pool: int = 200) -> np.ndarray:
    """Indices of up to k starts, best first, each the best of its grid neighbourhood (a local
    minimum of the profiled objective over the exponent grid), so distinct basins are polished
    rather than k neighbours of one basin."""
    order = np.argsort(scores, kind="stable")
    order = order[np.isfinite(scores[order])][:pool]
    if k <= 1:  # the best start is always the best of its neighbourhood
        return order[: max(k, 0)]
    kk = keys[order]
    same_block = kk[:, None, 0] == kk[None, :, 0]
    near = np.all(np.abs(kk[:, None, 1:] - kk[None, :, 1:]) <= 1, axis=-1) & same_block
    # i is a representative if no better-scored pool member is its neighbour
    better = np.tri(len(order), k=-1, dtype=bool)  # better[i, j]: j ranks before i
    is_rep = ~np.any(near & better, axis=1)
    return order[is_rep][:k]


__all__ = [
    "exponent_columns",
    "honours_pins",
    "nnls_batched",
    "nnls_columns",
    "pin_grid",
    "project_block",
    "projected_starts",
    "representatives",
]
