"""Holdout-cutoff robustness sweep of observational scaling laws (Ruan et al. 2024, App. C.4).

"For each task, we vary the FLOPs cutoff to control the ratio of the test set from 60% to 5%
(linearly spaced) ... and quantify the overall prediction performance using the area under the
error curve (AUE). For emergent tasks, we additionally include a variant ... that holds out test
data based on the accuracy on the task" (App. C.4, Figs. C.10-C.11). Predictors compared: the PC
law with K = 1..4 components (the "number of PCs" check of C.4) and the compute baselines, the
same Eq. 6 sigmoid on log10 training FLOPs or log10 model size (Sec. 4, METHODS 4.5).

Definitions used here (docs/osl.md, "Robustness sweep"):

- Pool: the models with the target and with every column a predictor or the split needs (FLOPs
  for the FLOPs baseline and the FLOPs cutoff, size for the size baseline), so that every
  predictor is scored on the same test models at every fraction.
- Split at nominal test fraction f over n pool models: test = models whose key (training FLOPs,
  or the target accuracy for the accuracy cutoff) is above a cutoff c, train = key <= c; c is the
  key value whose test count is closest to f * n (ties: the larger test set), with at least one
  test and one training model. Tied keys are never separated.
- Each split refits everything that sees data (imputation, PCA, the sigmoid) on its training
  models only (Sec. 4 leakage rule). One PCA with the largest K serves every K (the top-k
  principal axes do not depend on how many are kept).
- AUE = the trapezoid integral of test MSE over the nominal test fractions, from the smallest to
  the largest: sum_i (f_{i+1} - f_i) (MSE_i + MSE_{i+1}) / 2. With the default 12 fractions
  (0.60, 0.55, ..., 0.05) it equals 0.55 x the trapezoid-weighted mean test MSE.
- Units: benchmark and target scores may be fractions or points (`score_unit`,
  `data.to_fractions`); the fits run on fractions; MSEs and AUEs are reported in points^2 and
  an accuracy cutoff in points.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import ConvergenceWarning, DomainWarning, InputError
from ..fitting.threads import single_blas_thread
from ..parallel import backend_for, map_tasks
from .capability import CapabilitySpace
from .data import (
    FLOPS,
    FLOPS_UNIT,
    MODEL,
    SIZE,
    check_metrics,
    check_unit_interval,
    default_metrics,
    read_benchmarks,
    to_fractions,
)
from .fit import fit_sigmoid, merge_targets, predict_sigmoid
from .result import POINTS2
from .sweep_result import RobustnessResult, aue

DEFAULT_PREDICTORS = ("pcs:1", "pcs:2", "pcs:3", "pcs:4", "flops", "size")
SPLITS = ("flops", "accuracy")
_PCS = re.compile(r"^pcs:([0-9]+)$")


def sweep_fractions(n: int = 12, largest: float = 0.6, smallest: float = 0.05) -> np.ndarray:
    """The nominal test fractions of App. C.4: `n` values linearly spaced from 60% to 5%.

    The default 12 gives steps of 5 percentage points (0.60, 0.55, ..., 0.05).
    """
    if n < 2:
        raise InputError(f"--n-fractions must be at least 2 (AUE needs a curve), got {n}")
    if not 0 < smallest < largest < 1:
        raise InputError(
            f"test fractions must satisfy 0 < smallest < largest < 1, got {smallest}, {largest}"
        )
    return np.linspace(largest, smallest, n)


def threshold_split(key: np.ndarray, fraction: float) -> tuple[np.ndarray, float]:
    """Test mask key > c and the cutoff c, with the test count closest to fraction * n.

    c ranges over the key values that leave at least one model on each side; among equally
    close counts the larger test set wins. Returns (test mask, c = the largest training key).
    """
    key = np.asarray(key, float)
    n = key.size
    values = np.unique(key)[:-1]  # the largest value would leave no test model
    if values.size == 0:
        raise InputError("all models have the same cutoff key; no split is possible")
    n_test = n - np.searchsorted(np.sort(key), values, side="right")
    dist = np.round(np.abs(n_test - fraction * n), 9)
    best = np.lexsort((-n_test, dist))[0]
    c = float(values[best])
    return key > c, c


def _parse_predictor(name: str) -> int:
    """Number of predictor columns of a predictor name (`pcs:K`, `flops`, `size`)."""
    if name in ("flops", "size"):
        return 1
    m = _PCS.match(name)
    if not m or int(m.group(1)) < 1:
        raise InputError(
            f"--predictors (predictors=): unknown predictor {name!r}; use pcs:K (K >= 1), flops "
            f"or size"
        )
    return int(m.group(1))


class RobustnessSweep:
    """App. C.4 robustness check: refit every predictor at each test fraction; summarise by AUE.

    Parameters
    - predictors: `pcs:K` (the PC law with K components), `flops`, `size` (compute baselines).
    - split: "flops" (cutoff on training FLOPs, Figs. C.10/C.11a) or "accuracy" (cutoff on the
      target accuracy, Fig. C.11b).
    - fractions: nominal test fractions (default `sweep_fractions()`: 60% to 5%, 12 values).
    - metrics / exclude_metrics: benchmarks spanning the capability space (default: the paper's
      benchmarks present, minus the target).
    - score_unit: "auto", "points" or "fraction": the unit of the tables' scores.
    - n_polish: starts polished per fit. 4 (default) polishes the 4 best-scoring starts of the
      law's grid, ~5x faster than 16; 16 is exactly `ObservationalScalingLaw`'s fit, so each
      point equals the estimator with that holdout (benchmarks/bench_osl_robustness.py: AUEs
      within 0.3 points^2 of each other on GSM8K/HumanEval).
    - scheduler: where the cutoffs run (docs/scaling-out.md): None follows
      ``lmforecast.parallel.scheduler`` blocks and ``LMFORECAST_SCHEDULER``, else in this
      process, in order; ``"local:N"`` / ``"tcp://HOST:PORT"`` run them on Dask, same result.

    Learned: `result_` (RobustnessResult).
    """

    def __init__(
        self,
        predictors: Sequence[str] = DEFAULT_PREDICTORS,
        *,
        split: str = "flops",
        fractions: Sequence[float] | None = None,
        metrics: Sequence[str] | None = None,
        exclude_metrics: Sequence[str] = (),
        n_polish: int = 4,
        scheduler=None,
        score_unit: str = "auto",
    ) -> None:
        self.predictors = predictors
        self.split = split
        self.fractions = fractions
        self.metrics = metrics
        self.exclude_metrics = exclude_metrics
        self.n_polish = n_polish
        self.scheduler = scheduler
        self.score_unit = score_unit

    # ---- validation ------------------------------------------------------------------------
    def _check_config(self) -> tuple[list[str], dict[str, int], np.ndarray]:
        if self.split not in SPLITS:
            raise InputError(
                f"--split (split=) must be one of {', '.join(SPLITS)}, got {self.split!r}"
            )
        predictors = list(dict.fromkeys(self.predictors))
        if not predictors:
            raise InputError("--predictors (predictors=): name at least one predictor")
        dims = {p: _parse_predictor(p) for p in predictors}
        fr = sweep_fractions() if self.fractions is None else np.asarray(self.fractions, float)
        if fr.ndim != 1 or fr.size < 2:
            raise InputError("test fractions: need at least 2 (AUE needs a curve)")
        bad = ~((fr > 0) & (fr < 1))
        if bad.any():
            raise InputError(f"test fraction {fr[np.argmax(bad)]:g} is outside (0, 1)")
        if np.unique(fr).size != fr.size:
            raise InputError("test fractions must be distinct")
        if int(self.n_polish) < 1:
            raise InputError(f"n_polish must be >= 1, got {self.n_polish}")
        return predictors, dims, np.sort(fr)[::-1]

    def _metrics_for(self, table: pd.DataFrame, target: str) -> list[str]:
        for m in self.exclude_metrics:
            if m not in table.columns:
                raise InputError(f"--exclude-metric (exclude_metrics=): unknown metric {m!r}")
        if self.metrics:
            if target in self.metrics:
                raise InputError(f"target {target!r} is also a predictor metric; drop it")
            return [m for m in self.metrics if m not in self.exclude_metrics]
        return default_metrics(table, exclude=(target, *self.exclude_metrics))

    def _pool(
        self, table: pd.DataFrame, target: str, predictors: list[str]
    ) -> tuple[pd.DataFrame, list[str]]:
        """Models with the target and every column the split and the predictors need."""
        keep = table[target].notna().to_numpy().copy()
        need = []
        if self.split == "flops" or "flops" in predictors:
            need.append(FLOPS)
        if "size" in predictors:
            need.append(SIZE)
        for col in need:
            v = table[col].to_numpy(float)
            keep &= np.isfinite(v) & (v > 0)
        lacking = table.loc[table[target].notna().to_numpy() & ~keep, MODEL].tolist()
        if lacking:
            warnings.warn(
                f"{target}: {len(lacking)} model(s) lacking {' or '.join(map(repr, need))} "
                f"are left out of the sweep: {', '.join(lacking[:5])}"
                + (" ..." if len(lacking) > 5 else ""),
                DomainWarning,
                stacklevel=4,
            )
        return table.loc[keep].reset_index(drop=True), lacking

    # ---- fitting ---------------------------------------------------------------------------
    def fit(
        self,
        benchmarks: pd.DataFrame | str | Path,
        target: str | Sequence[str],
        targets: pd.DataFrame | None = None,
    ) -> RobustnessSweep:
        """Sweep each target (a column of the benchmarks, or of `targets` joined on Model)."""
        predictors, dims, fractions = self._check_config()
        table = merge_targets(read_benchmarks(benchmarks), targets)
        names = [target] if isinstance(target, str) else list(dict.fromkeys(target))
        if not names:
            raise InputError("--target: name at least one target column")
        for t in names:
            if t not in table.columns:
                raise InputError(
                    f"unknown target {t!r}; columns are {', '.join(map(repr, table.columns))}"
                )
        table = to_fractions(table, names, self.score_unit, "targets")[0]
        read = set(names)  # columns already in fractions (each converted once)
        for t in names:
            check_unit_interval(table, t, "targets")
        k_max = max((d for p, d in dims.items() if p.startswith("pcs:")), default=0)
        points: list[dict[str, Any]] = []
        aues: dict[str, dict[str, float]] = {}
        metrics_used: dict[str, list[str]] = {}
        n_models: dict[str, int] = {}
        dropped: dict[str, list[str]] = {}
        with backend_for(self.scheduler) as sched:  # one cluster for every target
            for t in names:
                metrics = self._metrics_for(table, t) if k_max else []
                if k_max:
                    if not metrics:
                        raise InputError("no benchmark metrics left to build the capability space")
                    new = [m for m in metrics if m not in read]
                    table = to_fractions(table, new, self.score_unit)[0]
                    read.update(new)
                    check_metrics(table, metrics)
                    if k_max > len(metrics):
                        raise InputError(
                            f"--predictors pcs:{k_max} needs at least {k_max} benchmark metrics; "
                            f"{t!r} has {len(metrics)} ({', '.join(metrics)})"
                        )
                data, lacking = self._pool(table, t, predictors)
                pts = self._sweep_target(
                    data, t, metrics, predictors, dims, k_max, fractions, sched
                )
                points.extend(pts)
                frame = pd.DataFrame(pts)
                aues[t] = {
                    p: aue(g["fraction"].to_numpy(), g["test_mse"].to_numpy())
                    for p, g in frame.groupby("predictor", sort=False)
                }
                metrics_used[t] = metrics
                n_models[t] = len(data)
                dropped[t] = lacking
        self.result_ = RobustnessResult(
            targets=names,
            split=self.split,
            fractions=[float(f) for f in fractions],
            predictors=predictors,
            points=points,
            aue=aues,
            metrics=metrics_used,
            n_models=n_models,
            dropped=dropped,
        )
        return self

    def _sweep_target(
        self,
        data: pd.DataFrame,
        target: str,
        metrics: list[str],
        predictors: list[str],
        dims: dict[str, int],
        k_max: int,
        fractions: np.ndarray,
        scheduler=None,
    ) -> list[dict[str, Any]]:
        n = len(data)
        if n < 4:
            raise InputError(f"{target}: {n} models in the sweep pool; need at least 4")
        y = data[target].to_numpy(float)
        if self.split == "flops":
            key = data[FLOPS].to_numpy(float) * FLOPS_UNIT
        else:
            key = y
        fixed = {}
        if "flops" in predictors:
            fixed["flops"] = np.log10(data[FLOPS].to_numpy(float))[:, None]
        if "size" in predictors:
            fixed["size"] = np.log10(data[SIZE].to_numpy(float))[:, None]
        shared = {
            "data": data[metrics] if k_max else None,
            "target": target,
            "metrics": metrics,
            "predictors": predictors,
            "dims": dims,
            "k_max": k_max,
            "y": y,
            "key": key,
            "fixed": fixed,
            "n_polish": self.n_polish,
            "cutoff_scale": 1.0 if self.split == "flops" else 100.0,  # accuracy: points
        }
        parts = map_tasks(
            _sweep_fraction,
            [float(f) for f in fractions],
            shared=shared,
            scheduler=scheduler,
            desc=f"robustness {target}",
            unit="cutoff",
        )
        out = [rec for recs, _, _ in parts for rec in recs]
        too_few = [name for _, names, _ in parts for name in names]
        failed = sum(n for _, _, n in parts)
        if too_few:
            warnings.warn(
                f"{target}: too few training models (< K + 2) for {', '.join(too_few[:4])}"
                + (" ..." if len(too_few) > 4 else "")
                + "; their test MSE and AUE are NaN",
                DomainWarning,
                stacklevel=4,
            )
        if failed:
            warnings.warn(
                f"{target}: {failed} sweep fit(s) did not converge (see the `converged` column)",
                ConvergenceWarning,
                stacklevel=4,
            )
        return out


def _sweep_fraction(f: float, shared: dict) -> tuple[list[dict[str, Any]], list[str], int]:
    """One cutoff of the sweep (a `map_tasks` task; plain data in, records out): split at test
    fraction `f`, refit the PCA and every predictor on the training models, score the test."""
    data, target, metrics = shared["data"], shared["target"], shared["metrics"]
    predictors, dims, k_max = shared["predictors"], shared["dims"], shared["k_max"]
    y, fixed = shared["y"], shared["fixed"]
    n = y.size
    test, cutoff = threshold_split(shared["key"], f)
    train = ~test
    n_tr = int(train.sum())
    too_few: list[str] = []
    failed = 0
    out = []
    with single_blas_thread():
        S = None
        if k_max and n_tr >= 3:
            k = min(k_max, n_tr, len(metrics))
            S = CapabilitySpace(k).fit(data.loc[train], metrics).transform(data)
        for p in predictors:
            K = dims[p]
            rec = {
                "target": target,
                "predictor": p,
                "fraction": f,
                "test_fraction": float(test.sum() / n),
                "cutoff": cutoff * shared.get("cutoff_scale", 1.0),
                "n_train": n_tr,
                "n_test": int(test.sum()),
                "train_mse": float("nan"),
                "test_mse": float("nan"),
                "converged": False,
            }
            out.append(rec)
            if n_tr < K + 2 or (p.startswith("pcs:") and (S is None or S.shape[1] < K)):
                too_few.append(f"{p} at {f:.0%}")
                continue
            X = fixed[p] if p in fixed else S[:, :K]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                fit = fit_sigmoid(X[train], y[train], n_polish=shared["n_polish"])
            pred = predict_sigmoid(fit, X)
            rec["train_mse"] = POINTS2 * float(np.mean((pred[train] - y[train]) ** 2))
            rec["test_mse"] = POINTS2 * float(np.mean((pred[test] - y[test]) ** 2))
            rec["converged"] = bool(fit.converged)
            failed += not fit.converged
    return out, too_few, failed


def robustness_sweep(
    benchmarks: pd.DataFrame | str | Path,
    target: str | Sequence[str],
    targets: pd.DataFrame | None = None,
    **options: Any,
) -> RobustnessResult:
    """App. C.4 in one call: `RobustnessSweep(**options).fit(...).result_`.

    `result.curves` is the tidy frame (target, predictor, fraction, test_fraction, cutoff,
    n_train, n_test, train_mse, test_mse (points^2), converged); `result.aue_table()` the AUE per
    predictor and target.
    """
    return RobustnessSweep(**options).fit(benchmarks, target, targets).result_
