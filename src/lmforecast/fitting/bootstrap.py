"""Bootstrap confidence intervals: resample runs with replacement and refit (Besiroglu et al.
2024 procedure, as used for Table 6 of the distillation paper: 4,096 resamples, percentile CIs).

Each resample is warm-started from the full-data optimum (and, with `n_starts > 1`, from the other
distinct local optima the full fit found), so a refit costs one L-BFGS-B polish instead of a
whole grid: resampled data move the optimum a little, not to another basin. Resamples get
their own child seeds, so results do not depend on the number of worker processes.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from joblib import Parallel, delayed

from ..laws.base import Law
from .engine import refit_from
from .losses import Loss
from .result import FitResult
from .threads import single_blas_thread


def _run_chunk(law, X, y, starts, loss, bounds, seeds):
    n = y.size
    out = []
    with single_blas_thread():
        for ss in seeds:
            idx = np.random.default_rng(ss).integers(0, n, n)
            Xi = {k: v[idx] for k, v in X.items()}
            th, _ = refit_from(law, Xi, y[idx], starts, loss=loss, bounds=bounds)
            out.append(th)
    return out


def bootstrap_fit(
    law: Law,
    X: Mapping[str, np.ndarray],
    y: np.ndarray,
    result: FitResult,
    *,
    n_boot: int = 1000,
    level: float = 0.9,
    seed: int = 0,
    n_jobs: int = -1,
    bounds=None,
    progress: bool = False,
    n_starts: int = 1,
) -> FitResult:
    """Add percentile intervals (`ci`, `ci_level`) and the resampled thetas to `result`."""
    X = {k: np.asarray(X[k], float) for k in law.inputs}
    y = np.asarray(y, float)
    loss = Loss.from_dict(result.loss)
    starts = np.array(([result.theta] + result.warm_starts)[: max(1, n_starts)], float)
    children = np.random.SeedSequence(seed).spawn(n_boot)
    n_chunks = max(1, min(n_boot, 64))
    chunks = [c for c in np.array_split(np.arange(n_boot), n_chunks) if c.size]
    jobs = (
        delayed(_run_chunk)(law, X, y, starts, loss, bounds, [children[i] for i in c])
        for c in chunks
    )
    if progress:
        from tqdm.auto import tqdm

        jobs = tqdm(list(jobs), desc=f"bootstrap {law.name}", unit="chunk")
    if n_jobs == 1:
        parts = [_run_chunk(*j[1], **j[2]) for j in jobs]
    else:
        parts = Parallel(n_jobs=n_jobs)(jobs)
    thetas = np.array([th for part in parts for th in part])
    a = (1 - level) / 2
    nat = np.array([[p.to_natural(v) for p, v in zip(law.parameters, th)] for th in thetas])
    lo, hi = np.quantile(nat, [a, 1 - a], axis=0)
    result.ci = {name: [float(l_), float(h_)] for name, l_, h_ in zip(law.natural_names, lo, hi)}
    result.ci_level = float(level)
    result.bootstrap = thetas.tolist()
    result.bootstrap_seed = int(seed)
    return result
