"""The cluster bootstrap of a law fitted from scratch: whole clusters (model sizes) redrawn.

A size's runs share its errors, so resampling rows would overstate what the data know; each
resample redraws the distinct model sizes with replacement (the cluster bootstrap, Davison &
Hinkley 1997, sec. 3.8; `resample.cluster_counts`) and refits the law FROM SCRATCH (its own
grid search and polish, never warm-started from the full-data optimum), so the spread cannot
depend on the optimiser path. The supervised stack's s_boot (docs/trust.md) reads it.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..errors import ConvergenceWarning, InputError
from ..fitting.engine import Objective, clip_to_bounds, fit_law, grid_to_array, use_varpro
from ..fitting.losses import Loss
from ..fitting.threads import single_blas_thread
from ..fitting.varpro import honours_pins, projected_starts, representatives
from ..parallel import map_tasks
from .resample import cluster_counts

BOOT_VARPRO = True  # resample starts by variable projection (False: score the grid)
BOOT_STARTS = 2  # best grid starts (scored on the resample) each resample polishes
BOOT_GRID_SHARE = (
    4  # each resample scores a fixed quarter of the form's grid (seeded, not data-chosen)
)
BOOT_MAXITER = 200

#: resamples x runs up to which ``n_jobs=-1`` (all cores) runs the cluster bootstrap in this
#: process: ~0.1 s per resample of 250 runs, while starting joblib workers that import the package
#: costs ~1.5 s (20 resamples of 250 runs: 3.1 s serial vs 3.8-4.8 s on 2 workers, whole CLI call)
SERIAL_WORK = 10_000


def cluster_bootstrap(
    law,
    X,
    y,
    lossf,
    *,
    n_boot: int,
    seed: int = 0,
    bounds=None,
    grid=None,
    n_jobs: int = 1,
    scheduler=None,
    progress: bool = False,
):
    """(n_boot, P) thetas: each resample draws the distinct model sizes with replacement (every
    run of a drawn size enters with the size's multiplicity as its weight) and is fitted from
    scratch: the whole grid scored on the resample, its BOOT_STARTS best polished. The draws are
    made up front from `seed`; the fits run through `parallel.map_tasks` (``n_jobs`` joblib
    workers or a Dask ``scheduler``), so the thetas are the same wherever they run."""

    N = np.asarray(X["N"], float)
    sizes, inv = np.unique(N, return_inverse=True)
    if sizes.size < 2:
        raise InputError("a cluster bootstrap needs at least two model sizes")
    g = clip_to_bounds(
        law, grid_to_array(law, grid if grid is not None else law.default_grid()), bounds
    )
    if len(g) > 100 * BOOT_GRID_SHARE:  # a fixed random quarter: a stride would pin an axis
        keep_rows = np.random.default_rng(12345).permutation(len(g))[: len(g) // BOOT_GRID_SHARE]
        g = g[np.sort(keep_rows)]
    rng = np.random.default_rng(seed)
    draws = [cluster_counts(rng, sizes.size) for _ in range(n_boot)]
    shared = {
        "law": law,
        "X": {k: np.asarray(v, float) for k, v in X.items()},
        "y": np.asarray(y, float),
        "inv": inv,
        "loss": lossf.to_dict(),
        "bounds": bounds,
        "grid": g,
    }
    n_chunks = max(1, min(n_boot, 64))
    chunks = [[draws[i] for i in c] for c in np.array_split(np.arange(n_boot), n_chunks) if c.size]
    if n_jobs < 0 and n_boot * len(y) <= SERIAL_WORK:
        n_jobs = 1  # all cores on a small bootstrap: starting workers costs more than it saves
    parts = map_tasks(
        _boot_chunk,
        chunks,
        shared=shared,
        scheduler=scheduler,
        n_jobs=n_jobs,
        desc=f"cluster bootstrap {law.name}",
        progress=progress,
        unit="resample",
        sizes=[len(c) for c in chunks],
    )
    out = [th for part in parts for th in part if th is not None]
    return np.asarray(out, float).reshape(len(out), len(law.parameters))


def _boot_chunk(counts_list, shared) -> list:
    """One task of `cluster_bootstrap` (plain data only): fit each resample of the chunk from
    scratch; None for a resample with fewer than two sizes or fewer runs than free parameters."""
    law, X, y, inv, bounds, g = (shared[k] for k in ("law", "X", "y", "inv", "bounds", "grid"))
    lossf = Loss.from_dict(shared["loss"])
    t = law.target_of(y)
    n_free = sum(lo != hi for lo, hi in (bounds or law.bounds))
    # a pinned exponent (--fix) is projected at its value; a pinned linear coefficient is not
    # (clipped starts land far from the resample's optimum), so such fits score the grid
    varpro = BOOT_VARPRO and honours_pins(law, X, bounds)
    out = []
    with single_blas_thread():
        for counts in counts_list:
            w = counts[inv].astype(float)
            keep = w > 0
            Xb = {k: v[keep] for k, v in X.items()}
            if np.unique(Xb["N"]).size < 2 or keep.sum() < n_free:
                out.append(None)
                continue
            obj = Objective(law, Xb, t[keep], lossf, w[keep])
            if varpro and use_varpro(law, Xb, "auto"):
                # starts projected on every other exponent-grid value: faster than scoring
                # the grid, the same optima (benchmarks/bench_cluster_bootstrap.py)
                gv, keys = projected_starts(
                    law, Xb, t[keep], lossf, w[keep], bounds, thin=2, steps=2
                )
                best = gv[representatives(keys, obj.batch(gv), BOOT_STARTS)]
            else:
                best = g[np.argsort(obj.batch(g))[:BOOT_STARTS]]
            with warnings.catch_warnings():  # capped refits by design: not the user's fit
                warnings.simplefilter("ignore", ConvergenceWarning)
                res = fit_law(
                    law,
                    Xb,
                    y[keep],
                    loss=lossf,
                    grid=best,
                    n_polish=BOOT_STARTS,
                    weights=w[keep],
                    bounds=bounds,
                    maxiter=BOOT_MAXITER,
                )
            out.append(res.theta)
    return out


__all__ = ["BOOT_STARTS", "BOOT_VARPRO", "cluster_bootstrap"]
