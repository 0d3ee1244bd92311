"""Forecast uncertainty by resampling whole runs and blocks within a run.

Neighbouring points of one training curve are not independent (the loss wanders slowly around
the law), so a curve's residuals are resampled in contiguous blocks (the stationary bootstrap of
Politis & Romano 1994: blocks of geometric length with mean `block`,
`uncertainty.resample.stationary_indices`), and the runs of a model
are resampled whole when it has several. Each replicate moves the fitted parameters by one
Gauss-Newton step on the resampled log residuals (the linearised bootstrap), so hundreds of
replicates cost a few linear solves; a forecast's replicate is its Jacobian times that step.
"""

from __future__ import annotations

import numpy as np

from ..uncertainty.resample import resample_counts, stationary_indices

NULL_RTOL = 1e-7  # singular values below this fraction of the largest span unidentified directions


def block_length(n: int) -> float:
    """Mean block length for a curve of `n` points: a quarter of the curve, at least 1."""
    return max(1.0, n / 4.0)


def replicate_steps(
    J: np.ndarray,
    resid: np.ndarray,
    run_of: np.ndarray,
    n_rep: int,
    seed: int,
    whole_runs: bool = True,
    block: float | None = None,
) -> np.ndarray:
    """(n_rep, P) Gauss-Newton parameter steps: each replicate draws the runs with replacement
    (when there are two or more and `whole_runs`) and, within each drawn run, its residuals by
    the stationary block bootstrap; the step solves the weighted least squares J d = e*."""
    rng = np.random.default_rng(seed)
    runs = np.unique(run_of)
    members = [np.flatnonzero(run_of == r) for r in runs]
    scale = np.linalg.norm(J, axis=0)
    scale[scale == 0] = 1.0
    Js = J / scale
    grams = [Js[m].T @ Js[m] for m in members]  # each run's J'J, summed per replicate
    out = np.zeros((n_rep, J.shape[1]))
    for b in range(n_rep):
        if whole_runs and len(runs) >= 2:
            counts = resample_counts(rng, len(runs))
        else:
            counts = np.ones(len(runs), dtype=np.int64)
        gram = np.zeros((J.shape[1], J.shape[1]))
        rhs = np.zeros(J.shape[1])
        for c, m, g in zip(counts, members, grams, strict=True):
            for _ in range(int(c)):
                bl = block_length(m.size) if block is None else float(block)
                gram += g
                rhs += Js[m].T @ resid[m][stationary_indices(m.size, bl, rng)]
        if not rhs.any():
            continue
        out[b] = (np.linalg.pinv(gram, rcond=NULL_RTOL**2, hermitian=True) @ rhs) / scale
    return out


def null_basis(J: np.ndarray) -> np.ndarray:
    """(P, k) directions of fit space the fitted points do not identify (relative singular
    values below `NULL_RTOL`, on columns scaled to unit norm)."""
    scale = np.linalg.norm(J, axis=0)
    dead = scale == 0
    scale[dead] = 1.0
    _, s, vt = np.linalg.svd(J / scale, full_matrices=J.shape[0] < J.shape[1])
    s_full = np.zeros(J.shape[1])
    s_full[: s.size] = s
    small = s_full <= NULL_RTOL * max(float(s_full.max()), 1e-300)
    basis = vt[small].T / scale[:, None]
    return basis / np.maximum(np.linalg.norm(basis, axis=0), 1e-300)


__all__ = ["block_length", "null_basis", "replicate_steps"]
