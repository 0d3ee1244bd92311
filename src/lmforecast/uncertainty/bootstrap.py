"""Bootstrap confidence intervals: resample runs with replacement and refit (Besiroglu et al.
2024 procedure, as used for Table 6 of the distillation paper: 4,096 resamples, percentile CIs).

Two refit modes:

- warm (``n_polish=0``): each resample is polished from the full-data optimum (and, with
  `n_starts > 1`, from the other distinct local optima the full fit found). One L-BFGS-B run per
  resample, but a resample can never leave the full-data basin, so where the data do not pin a
  parameter the interval is far too narrow.
- multi-start (``n_polish=k > 0``): each resample re-scores the whole initialisation grid on its
  own data (one vectorised pass), then polishes its k best grid starts plus the warm starts and
  keeps the best. A resample can reach another basin, at the cost of k + 1 polishes. For laws
  with linear coefficients (`Law.linear_blocks`) the "grid" of a resample is its variable
  projection instead (`fitting.varpro`, ``method="auto"``): the linear coefficients are solved
  on the resample for the whole exponent grid in one batch, and the k best local minima of that
  profile are polished with the warm starts; ``method="grid"`` keeps the grid re-scoring.

Resamples get their own child seeds, so results do not depend on the number of worker processes.
The chunks of resamples run through `lmforecast.parallel.map_tasks`: local joblib workers by
default, or a Dask cluster (``scheduler=``, ``with lmforecast.parallel.scheduler(...)``,
``LMFORECAST_SCHEDULER``), bit-identical either way.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..fitting.engine import (
    Objective,
    clip_to_bounds,
    grid_to_array,
    polish_many,
    refit_from,
    use_varpro,
)
from ..fitting.losses import Loss
from ..fitting.result import FitResult
from ..fitting.threads import single_blas_thread
from ..fitting.varpro import projected_starts, representatives
from ..laws.base import Law
from ..parallel import map_tasks
from .percentile import percentile_interval
from .resample import resample_indices


def multistart_refit(
    law,
    X,
    y,
    warm,
    grid,
    n_polish,
    loss,
    bounds=None,
    maxiter: int = 2000,
    grid_scorer=None,
    method: str = "auto",
):
    """Refit on (X, y): score every `grid` start, polish the `n_polish` best plus `warm`.

    `grid` is an (S, P) array of fit-space starts scored with `Objective.batch`, or whatever
    `grid_scorer(law, X, target, loss, grid) -> (starts (S, P), scores (S,))` takes (e.g. the
    axes of a product grid that a law scores faster, `distill.fitting.score_product_grid`).
    With ``method="auto"`` and no `grid_scorer`, a law with `linear_blocks` is re-started by
    variable projection on (X, y) instead of re-scoring `grid` (which is then unused).
    Returns (theta, objective); `multistart_refit_detail` also says whether a grid start won.
    """
    th, f, _ = multistart_refit_detail(
        law, X, y, warm, grid, n_polish, loss, bounds, maxiter, grid_scorer, method
    )
    return th, f


def multistart_refit_detail(
    law,
    X,
    y,
    warm,
    grid,
    n_polish,
    loss,
    bounds=None,
    maxiter: int = 2000,
    grid_scorer=None,
    method: str = "auto",
):
    """`multistart_refit`, plus whether the winner came from the grid (not a warm start)."""
    t = law.target_of(y)
    obj = Objective(law, X, t, loss)
    if grid_scorer is None and use_varpro(law, X, method):
        # a refit starts near the full-data optimum (warm starts): half the grid resolution
        g, keys = projected_starts(law, X, t, loss, None, bounds, thin=2, steps=2)
        scores = obj.batch(g)
        best = representatives(keys, scores, n_polish)
    else:
        if grid_scorer is None:
            g, scores = grid, obj.batch(grid)
        else:
            g, scores = grid_scorer(law, X, t, loss, grid)
        best = np.argsort(scores)[:n_polish]
    best = best[np.isfinite(scores[best])]
    warm = np.atleast_2d(warm)
    starts = np.vstack([warm, g[best]])
    bnds = list(bounds) if bounds is not None else law.bounds
    thetas, objs, _ = polish_many(obj, starts, bnds, maxiter=maxiter)
    i = int(np.argmin(objs))
    return thetas[i], float(objs[i]), i >= len(warm)


def _run_chunk(
    law,
    X,
    y,
    starts,
    loss,
    bounds,
    seeds,
    grid=None,
    n_polish=0,
    maxiter=2000,
    grid_scorer=None,
    method="auto",
):
    """Refit each resample of `seeds`: rows (theta, objective, winner came from the grid)."""
    n = y.size
    out = []
    with single_blas_thread():
        for ss in seeds:
            idx = resample_indices(ss, n)
            Xi = {k: v[idx] for k, v in X.items()}
            if n_polish:
                th, f, from_grid = multistart_refit_detail(
                    law,
                    Xi,
                    y[idx],
                    starts,
                    grid,
                    n_polish,
                    loss,
                    bounds,
                    maxiter,
                    grid_scorer,
                    method,
                )
            else:
                th, f = refit_from(
                    law, Xi, y[idx], starts, loss=loss, bounds=bounds, maxiter=maxiter
                )
                from_grid = False
            out.append((np.asarray(th, float), float(f), bool(from_grid)))
    return out


def _resample_chunk(payload, shared):
    """One task of `bootstrap_fit` (plain data only): refit resamples ``payload`` (indices),
    child i of the root SeedSequence (``shared["entropy"]``, ``shared["spawn_key"]``)."""
    seeds = [
        np.random.SeedSequence(shared["entropy"], spawn_key=(*shared["spawn_key"], int(i)))
        for i in payload
    ]
    return _run_chunk(
        shared["law"],
        shared["X"],
        shared["y"],
        shared["starts"],
        Loss.from_dict(shared["loss"]),
        shared["bounds"],
        seeds,
        shared["grid"],
        shared["n_polish"],
        shared.get("maxiter", 2000),
        shared.get("grid_scorer"),
        shared.get("method", "auto"),
    )


def bootstrap_fit(
    law: Law,
    X: Mapping[str, np.ndarray],
    y: np.ndarray,
    result: FitResult,
    *,
    n_boot: int = 1000,
    level: float = 0.9,
    seed: int = 0,
    **kwargs,
) -> FitResult:
    """Add percentile intervals (`ci`, `ci_level`) and the resampled thetas to `result`.

    The resamples are `bootstrap_thetas`'s, and `kwargs` are its options: ``n_polish > 0``
    multi-starts every resample (re-scores `grid`, default the law's own grid, and polishes its
    ``n_polish`` best starts plus the ``n_starts`` warm starts), 0 warm-starts only;
    `grid_scorer` (a module-level function, see `multistart_refit`) scores `grid` in the law's
    own faster way; `scheduler` (docs/scaling-out.md): None follows
    ``lmforecast.parallel.scheduler`` blocks and ``LMFORECAST_SCHEDULER``, else joblib with
    `n_jobs` (default -1); ``"local:N"`` / ``"tcp://HOST:PORT"`` run the resamples on Dask. The
    thetas do not depend on the backend or the worker count. `bounds`, `progress`, `maxiter`
    (L-BFGS-B iterations per polish) and `method` (variable projection or grid re-scoring of
    multi-start resamples) as there.
    """
    thetas, _ = bootstrap_thetas(law, X, y, result, n_boot=n_boot, seed=seed, **kwargs)
    n_polish = kwargs.get("n_polish", 0)
    return attach_bootstrap(law, result, thetas, level=level, seed=seed, n_polish=n_polish)


def bootstrap_thetas(
    law: Law,
    X: Mapping[str, np.ndarray],
    y: np.ndarray,
    result: FitResult,
    *,
    n_boot: int,
    seed: int = 0,
    n_jobs: int = -1,
    bounds=None,
    progress: bool = False,
    n_starts: int = 1,
    n_polish: int = 0,
    grid=None,
    grid_scorer=None,
    scheduler=None,
    maxiter: int = 2000,
    desc: str | None = None,
    method: str = "auto",
) -> tuple[np.ndarray, int]:
    """The resampled fit-space thetas (n_boot, P) of `bootstrap_fit`, and how many resamples
    were won by a grid start rather than a warm start (0 for warm-only resamples).
    `method` ("auto", "grid", "varpro") picks how multi-start resamples are re-started
    (`multistart_refit`)."""
    X = {k: np.asarray(X[k], float) for k in law.inputs}
    y = np.asarray(y, float)
    loss = Loss.from_dict(result.loss)
    starts = np.array(([result.theta] + result.warm_starts)[: max(1, n_starts)], float)
    if not n_polish:
        grid = None
    elif grid_scorer is None and use_varpro(law, X, method):
        grid = None  # each resample projects its own starts
    elif grid_scorer is None:
        g = grid_to_array(law, grid if grid is not None else law.default_grid())
        grid = clip_to_bounds(law, g, bounds)
    elif grid is None:
        grid = law.default_grid()
    root = np.random.SeedSequence(seed)  # resample i uses root's child i (its spawn key)
    # tasks of <= 8 warm resamples (~0.1 s each), or of one multi-start resample (~0.3-10 s):
    # a cluster of up to n_boot workers stays busy; the chunking never changes the thetas
    per_task = 1 if n_polish else 8
    n_chunks = max(1, min(n_boot, 64), -(-n_boot // per_task))
    chunks = [c.tolist() for c in np.array_split(np.arange(n_boot), n_chunks) if c.size]
    shared = {
        "law": law,
        "X": X,
        "y": y,
        "starts": starts,
        "loss": loss.to_dict(),
        "bounds": bounds,
        "grid": grid,
        "n_polish": n_polish,
        "entropy": root.entropy,
        "spawn_key": root.spawn_key,
        "maxiter": maxiter,
        "grid_scorer": grid_scorer,
        "method": method,
    }
    parts = map_tasks(
        _resample_chunk,
        chunks,
        shared=shared,
        scheduler=scheduler,
        n_jobs=n_jobs,
        desc=desc or f"bootstrap {law.name}",
        progress=progress,
        unit="resample",
        sizes=[len(c) for c in chunks],
    )
    rows = [r for part in parts for r in part]
    thetas = np.array([r[0] for r in rows])
    return thetas, int(sum(r[2] for r in rows))


def attach_bootstrap(
    law: Law, result: FitResult, thetas: np.ndarray, *, level: float, seed: int, n_polish: int
) -> FitResult:
    """Fill `result`'s percentile intervals (`ci`, `ci_level`: the central `level` range of each
    natural-space coefficient over the resampled thetas) and `bootstrap` from thetas."""
    nat = np.array([[p.to_natural(v) for p, v in zip(law.parameters, th)] for th in thetas])
    lo, hi = percentile_interval(nat, level)
    result.ci = {name: [float(l_), float(h_)] for name, l_, h_ in zip(law.natural_names, lo, hi)}
    result.ci_level = float(level)
    result.bootstrap = thetas.tolist()
    result.bootstrap_seed = int(seed)
    result.meta["bootstrap_n_polish"] = int(n_polish)
    return result
