"""Which rows a bootstrap resample draws: rows, clusters, strata and blocks.

The nonparametric bootstrap (Efron & Tibshirani 1993, ch. 6) redraws the n observations with
replacement; here each scheme is one function, so a method's replicates are reproducible from
its seed and two methods drawing the same way draw the same rows:

- rows: `resample_indices` (one resample from its own child seed, as `bootstrap.bootstrap_fit`
  and the FLP closed-form bootstrap draw, or from a running generator), `child_resamples`
  (all of them, degenerate ones redrawn), `resample_rows` (a (B, n) matrix from one
  generator), `resample_counts` (multinomial counts, for weighted refits), `resample_from`
  (draws from a subset of rows);
- residuals: `residual_draws` (the residual bootstrap: fitted values plus residuals redrawn);
- clusters: `cluster_counts` (whole clusters redrawn, e.g. every run of a model size: the
  cluster bootstrap of Davison & Hinkley 1997, sec. 3.8);
- strata: `stratified_indices` (each stratum redrawn within itself);
- blocks: `stationary_indices` (the stationary bootstrap of Politis & Romano 1994 for a
  serially dependent curve).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np


def resample_indices(seed, n: int) -> np.ndarray:
    """The rows of one bootstrap resample (n draws with replacement), from its child seed (a
    `Generator` given as `seed` is drawn from as it stands)."""
    return np.random.default_rng(seed).integers(0, n, n)


def child_resamples(
    seed, n_boot: int, n: int, degenerate: Callable[[np.ndarray], np.ndarray] | None = None
) -> np.ndarray:
    """(n_boot, n) rows: resample i is `resample_indices` of child i of SeedSequence(seed) (the
    rows `bootstrap.bootstrap_fit` refits). `degenerate(rows (k, n)) -> (k,) bool` given: a
    resample it flags is redrawn from the same child's stream (after its first draw) until it
    is not, so exactly `n_boot` usable resamples come back and resample i stays paired with
    another bootstrap's resample i."""
    children = np.random.SeedSequence(seed).spawn(n_boot)
    idx = np.stack([resample_indices(c, n) for c in children])
    if degenerate is None:
        return idx
    for i in np.flatnonzero(degenerate(idx)):
        rng = np.random.default_rng(children[i])
        rng.integers(0, n, n)  # the first draw, already in idx[i]
        while degenerate(idx[i][None])[0]:
            idx[i] = rng.integers(0, n, n)
    return idx


def resample_rows(rng: np.random.Generator, n_boot: int, n: int) -> np.ndarray:
    """(n_boot, n) rows drawn with replacement from one generator's stream."""
    return rng.integers(0, n, (n_boot, n))


def resample_counts(rng: np.random.Generator, n: int, size=None) -> np.ndarray:
    """How often each of n rows enters a resample (multinomial counts summing to n; `size`
    resamples at once): the bootstrap as integer weights of a weighted refit."""
    return rng.multinomial(n, np.full(n, 1.0 / n), size=size)


def resample_from(rng: np.random.Generator, rows: np.ndarray) -> np.ndarray:
    """One resample of the given rows (as many draws, with replacement): the bootstrap of a
    subset (e.g. the training models only)."""
    return rng.choice(rows, size=rows.size, replace=True)


def residual_draws(rng: np.random.Generator, residuals: np.ndarray, size) -> np.ndarray:
    """`size` residuals drawn with replacement: one replicate of the residual bootstrap
    (Efron & Tibshirani 1993, sec. 9.5: fitted values plus resampled residuals, the design
    held fixed)."""
    return rng.choice(residuals, size=size)


def cluster_counts(rng: np.random.Generator, n_clusters: int) -> np.ndarray:
    """How often each of `n_clusters` clusters enters one cluster-bootstrap resample (clusters
    drawn with replacement; every member of a drawn cluster enters with that multiplicity)."""
    return np.bincount(rng.integers(0, n_clusters, n_clusters), minlength=n_clusters)


def stratified_indices(rng: np.random.Generator, sizes: Sequence[int]) -> list[np.ndarray]:
    """One stratified resample: for each stratum of the given size, that many positions into it
    drawn with replacement (strata drawn in order from one stream)."""
    return [rng.integers(0, m, m) for m in sizes]


def stationary_indices(n: int, block: float, rng: np.random.Generator) -> np.ndarray:
    """`n` indices into 0..n-1 made of contiguous blocks (wrapping round) of geometric length
    with mean `block`: the stationary bootstrap's resample of one curve (Politis & Romano
    1994)."""
    if n <= 1:
        return np.zeros(n, dtype=np.int64)
    p = 1.0 / max(float(block), 1.0)
    new = rng.random(n) < p
    new[0] = True
    starts = rng.integers(0, n, size=n)
    at = np.flatnonzero(new)  # positions where a block begins
    which = np.cumsum(new) - 1  # the block each position belongs to
    return (starts[at][which] + np.arange(n) - at[which]) % n


__all__ = [
    "child_resamples",
    "cluster_counts",
    "resample_counts",
    "resample_from",
    "resample_indices",
    "resample_rows",
    "residual_draws",
    "stationary_indices",
    "stratified_indices",
]
