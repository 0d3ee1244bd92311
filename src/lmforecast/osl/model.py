"""The observational scaling law estimator (Ruan et al. 2024, Sec. 3.4, Alg. 1, Eq. 6-8).

Fit Y = (1 - h) + h * sigma(beta^T S + alpha) (Eq. 6, accuracy form) from the top-K principal
components S of standard benchmarks, on training models only, and evaluate on a holdout of
stronger models; or use log training FLOPs / log model size as the single predictor (the compute
baselines of Sec. 4). Then express capability as f-equivalent FLOPs (Eq. 7-8) and attribute the
weight to the base benchmarks (beta^T gamma, Fig. 5c/6b).

Intervals (App. C.8, Fig. C.22: "confidence intervals for predictions from the non-linear
regression models"): the asymptotic least-squares covariance s^2 (J^T J)^-1 at the optimum (what
the authors' `curve_fit` returns as pcov) gives Student-t parameter intervals and, by the delta
method, forecast confidence intervals. Prediction intervals add a residual scale; because the
held-out models are *stronger* than every training model, that scale is the larger of the
in-sample residual SD and the RMSE of a rolling backtest inside the training set (fit on the
weaker models, forecast the strongest 10/20/30%; `extrapolation_scale`). docs/osl.md reports the
coverage of these intervals on held-out models.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import DomainWarning, InputError, did_you_mean, not_fitted
from ..estimator import Estimator, point
from ..params import check
from ..scores import check_unit
from ..store import Checker
from .capability import CapabilitySpace, Imputer
from .checks import coverage_warning, range_warning
from .data import (
    FAMILY,
    FLOPS,
    FLOPS_UNIT,
    MODEL,
    SIZE,
    check_metrics,
    check_observed,
    check_unit_interval,
    column_scale,
    default_metrics,
    numeric_column,
    parse_metric_range,
    read_benchmarks,
    to_fractions,
    warn_imputed,
)
from .fit import (
    extrapolation_scale,
    fit_sigmoid,
    merge_targets,
    predict_sigmoid,
    sigmoid_covariance,
)
from .presets import get_preset
from .result import POINTS2, X_KINDS, OSLResult
from .splits import LLAMA2_7B_FLOPS, cutoff_split, list_split, top_split


class ObservationalScalingLaw(Estimator):
    """Fit and validate an observational scaling law (Sec. 3.4, Alg. 1; holdouts of Sec. 4).

    Scores are in points (0-100, `lmforecast.scores`), in and out: `predict`,
    `predict_interval`, `summary()`, `contract()` and the `result_` records (y, y_pred, lower,
    upper) are points, its MSEs points^2. Fractions (0-1, as Ruan et al.'s tables write them)
    are accepted at the door: `score_unit="auto"` reads each benchmark column and the target as
    fractions when every finite value lies in [0, 1], as points otherwise ("fraction" or
    "points" declares it). Inside, Eq. 6 (h in [0.8, 1]), the PCA and the App. C.8 covariance
    run on fractions, as the paper writes them; the fitted parameters, `sigma` and
    `extrapolation_sigma` of `result_` are on that scale.

    Parameters
    - n_components: K principal components (3, Sec. 3.2).
    - x: "pcs" (the observational law), "flops" or "size" (compute baselines, log10 scale).
    - metrics / exclude_metrics: benchmarks spanning the capability space (default: the paper's
      benchmarks present, minus the target).
    - holdout: "cutoff" (train on FLOPs <= cutoff_flops; unknown FLOPs -> test), "top" (hold
      out the best `holdout_top` fraction, rounded down), "list" (`heldout` names) or "none".
    - reference_family: family f of Eq. 7-8 (Llama-2); h_bounds: [0.8, 1] (Sec. 3.4).
    - level: level of the parameter and forecast intervals reported by `summary()` (App. C.8).
    - metric_range: (LO, HI) of the target in the target column's own unit (e.g. (0.25, 1) for
      a fraction column, (25, 100) for points); the law is fitted to (y - LO) / (HI - LO).
    - score_unit: "auto", "points" or "fraction": the unit of the benchmark and target scores
      read by `fit` and `predict` (`lmforecast.scores.UNITS`).

    Learned: `result_` (OSLResult), `space_` (CapabilitySpace, PC law only), `table_` (the
    models with the target, scores as the law sees them: fractions), `scales_` (each
    benchmark column's factor to points as read: 100 for fractions, 1 for points).
    """

    def __init__(
        self,
        n_components: int = 3,
        *,
        x: str = "pcs",
        metrics: Sequence[str] | None = None,
        exclude_metrics: Sequence[str] = (),
        holdout: str = "cutoff",
        cutoff_flops: float = LLAMA2_7B_FLOPS,
        holdout_top: float = 0.1,
        heldout: Sequence[str] | None = None,
        reference_family: str = "Llama-2",
        impute_components: int = 1,
        level: float = 0.9,
        metric_range: tuple[float, float] | str | None = None,
        score_unit: str = "auto",
    ) -> None:
        self.n_components = n_components
        self.x = x
        self.metrics = metrics
        self.exclude_metrics = exclude_metrics
        self.holdout = holdout
        self.cutoff_flops = cutoff_flops
        self.holdout_top = holdout_top
        self.heldout = heldout
        self.reference_family = reference_family
        self.impute_components = impute_components
        self.level = level
        self.metric_range = metric_range
        self.score_unit = score_unit

    @staticmethod
    def from_preset(name: str):
        """A preregistered Table C.1 law (App. C.9) by name, ready to `predict(benchmarks)` for
        new models without refitting (`lmforecast.osl.presets.PRESETS`; point forecasts)."""
        return get_preset(name)

    # ---- validation ------------------------------------------------------------------------
    def _validate(
        self, table: pd.DataFrame, target: str
    ) -> tuple[pd.DataFrame, list[str], pd.DataFrame]:
        """(models with the target, the predictor metrics, the whole table) with every score
        as fractions (`data.to_fractions`; the target min-max normalised by a metric range)."""
        unit = check_unit(self.score_unit, "score_unit (--score-unit)")
        if self.x not in X_KINDS:
            raise InputError(f"--x (x=) must be one of {', '.join(X_KINDS)}, got {self.x!r}")
        # one predictor: n_components is the default (3) or 1, nothing else to count
        if self.x != "pcs" and self.n_components not in (1, 3):
            raise InputError(
                f"--pcs (n_components=) applies to --x pcs, not --x {self.x} (one predictor)"
            )
        if target not in table.columns:
            raise InputError(
                f"unknown target {target!r}; columns are {', '.join(map(repr, table.columns))}"
            )
        for m in self.exclude_metrics:
            if m not in table.columns:
                raise InputError(f"--exclude-metric (exclude_metrics=): unknown metric {m!r}")
        if self.metrics:
            metrics = list(self.metrics)
            if target in metrics:
                raise InputError(f"target {target!r} is also a predictor metric; drop it")
            metrics = [m for m in metrics if m not in self.exclude_metrics]
        else:
            metrics = default_metrics(table, exclude=(target, *self.exclude_metrics))
        if self.x == "pcs":
            if not metrics:
                raise InputError("no benchmark metrics left to build the capability space")
            table, self.scales_ = to_fractions(table, metrics, unit)
            check_metrics(table, metrics)
            check_observed(table[table[target].notna()], metrics, "benchmarks")
        else:
            self.scales_ = {}
        table, raw, self._target_scale = self._target_fractions(table, target, unit)
        check_unit_interval(table, target, "targets", allow_below=self._range is not None, raw=raw)
        data = table[table[target].notna()].reset_index(drop=True)
        return data, metrics, table

    def _target_fractions(
        self, table: pd.DataFrame, target: str, unit: str
    ) -> tuple[pd.DataFrame, pd.Series, float]:
        """The target read in its unit and put on the law's scale: fractions
        (`data.column_scale`), or y' = (y - LO) / (HI - LO) with a metric range. LO and HI are
        in the target's own unit, which under "auto" they state (HI <= 1: fractions, else
        points); a value above HI is refused by `check_unit_interval`, below LO kept. Returns
        (table, the user's values, the target's factor to points)."""
        raw = table[target]
        table = table.copy()
        if self._range is None:
            scale = column_scale(table, target, unit, "targets")
            table[target] = raw.astype(float) / (100.0 / scale)
            return table, raw, scale
        lo, hi = self._range
        if unit == "auto":
            scale = 100.0 if hi <= 1.0 else 1.0
        else:
            scale = 100.0 if unit == "fraction" else 1.0
        top = 1.0 if scale == 100.0 else 100.0
        if lo < 0 or hi > top:
            read = "fractions" if scale == 100.0 else "points"
            raise InputError(
                f"--metric-range (metric_range=) {lo:g},{hi:g} lies outside [0, {top:g}], the "
                f"range of scores in {read}; give LO,HI in the target's own unit"
            )
        to_f = 100.0 / scale  # on fractions, as without a range (/ 1.0 is exact)
        lo_f, hi_f = lo / to_f, hi / to_f
        table[target] = (numeric_column(table, target, "targets") / to_f - lo_f) / (hi_f - lo_f)
        return table, raw, scale

    def _split(self, data: pd.DataFrame, target: str) -> np.ndarray:
        if self.holdout == "cutoff":
            return cutoff_split(data, self.cutoff_flops)
        if self.holdout == "top":
            return top_split(data, target, self.holdout_top)
        if self.holdout == "list":
            return list_split(data, self.heldout or [])
        if self.holdout == "none":
            return np.zeros(len(data), bool)
        raise InputError(f"holdout must be cutoff, top, list or none, got {self.holdout!r}")

    def _holdout_desc(self) -> dict[str, Any]:
        d: dict[str, Any] = {"kind": self.holdout}
        if self.holdout == "cutoff":
            d["cutoff_flops"] = float(self.cutoff_flops)
        elif self.holdout == "top":
            d["fraction"] = float(self.holdout_top)
        elif self.holdout == "list":
            d["models"] = list(self.heldout or [])
        return d

    # ---- fitting ---------------------------------------------------------------------------
    def fit(
        self,
        benchmarks: pd.DataFrame | str | Path,
        target: str,
        targets: pd.DataFrame | None = None,
    ) -> ObservationalScalingLaw:
        """Fit on the training split of the models that have the target; evaluate on the rest."""
        table = merge_targets(read_benchmarks(benchmarks), targets)
        self._range = parse_metric_range(self.metric_range, "metric_range")
        data, metrics, table = self._validate(table, target)
        test = self._split(data, target)
        K = int(self.n_components) if self.x == "pcs" else 1
        dropped: list[str] = []
        if self.x == "pcs":
            space = CapabilitySpace(K, self.impute_components)
            n_tr = int((~test).sum())
            if n_tr < K + 2:
                raise InputError(
                    f"{n_tr} training models with target {target!r}; need at least PCs + 2 = "
                    f"{K + 2}"
                )
            space.fit(data.loc[~test], metrics)
            Xall = space.transform(data)
            self.space_ = space
        else:
            col = FLOPS if self.x == "flops" else SIZE
            raw = data[col].to_numpy(float)
            known = np.isfinite(raw) & (raw > 0)
            if not known.all():
                dropped = data.loc[~known, MODEL].tolist()
                warnings.warn(
                    f"{len(dropped)} model(s) without {col!r} cannot use the {self.x} "
                    f"predictor and are left out: {', '.join(dropped[:5])}"
                    + (" ..." if len(dropped) > 5 else ""),
                    DomainWarning,
                    stacklevel=2,
                )
                data, test = data.loc[known].reset_index(drop=True), test[known]
                raw = raw[known]
            Xall = np.log10(raw)[:, None]
        y = data[target].to_numpy(float)
        train = ~test
        if train.sum() < K + 2:
            raise InputError(
                f"{int(train.sum())} training models with target {target!r}; need at least {K + 2}"
            )
        check("level", self.level)
        fit = fit_sigmoid(Xall[train], y[train])
        pred = predict_sigmoid(fit, Xall)
        cov, sigma, dof = sigmoid_covariance(fit, Xall[train], y[train])
        logc_tr = data[FLOPS].to_numpy(float)[train]
        key = (
            np.log10(logc_tr)
            if np.all(np.isfinite(logc_tr) & (logc_tr > 0))
            else fit.params["alpha"] + Xall[train] @ np.asarray(list(fit.theta)[2:])
        )
        ext = extrapolation_scale(Xall[train], y[train], key, np.asarray(fit.theta))
        # MSEs in points^2 (10^4 x the law's scale: fractions, or normalised with a range)
        train_mse = POINTS2 * float(np.mean((pred[train] - y[train]) ** 2))
        test_mse = POINTS2 * float(np.mean((pred[test] - y[test]) ** 2)) if test.any() else None

        result = OSLResult(
            target=target,
            x=self.x,
            metrics=metrics if self.x == "pcs" else [],
            n_components=K,
            holdout=self._holdout_desc(),
            fit=fit,
            train_mse=train_mse,
            test_mse=test_mse,
            n_train=int(train.sum()),
            n_test=int(test.sum()),
            heldout=data.loc[test, MODEL].tolist(),
            dropped=dropped,
            covariance=cov.tolist(),
            sigma=sigma,
            dof=dof,
            extrapolation_sigma=ext,
            level=float(self.level),
            metric_range=None
            if self._range is None
            else [float(v) * self._target_scale for v in self._range],
        )
        log10_c = np.log10(data[FLOPS].to_numpy(float) * FLOPS_UNIT)
        records = pd.DataFrame(
            {
                MODEL: data[MODEL],
                FAMILY: data[FAMILY],
                "split": np.where(test, "test", "train"),
                "y": result.to_original(y),
                "y_pred": result.to_original(pred),
                "log10_flops": log10_c,
            }
        )
        for i in range(K):
            records[f"x{i + 1}"] = Xall[:, i]
        records["lower"], records["upper"] = result.predict_interval(Xall, self.level)
        if self.x == "pcs":
            result.explained_variance = space.explained_variance_ratio_.tolist()
            result.components = space.components_.tolist()
            result.mean = space.mean_.tolist()
            result.imputation = space.imputer_.to_dict()
            self._reference(result, table)
            if result.reference is not None:
                z = fit.params["alpha"] + Xall @ np.asarray(result.params["beta"])
                records["log10_flops_equiv"] = (z - result.reference["b"]) / result.reference[
                    "w"
                ] + np.log10(FLOPS_UNIT)
        result.predictions = [
            {k: (None if isinstance(v, float) and not np.isfinite(v) else v) for k, v in r.items()}
            for r in records.to_dict(orient="records")
        ]
        self.table_ = data
        self.result_ = result
        coverage_warning(result)
        return self

    def _reference(self, result: OSLResult, table: pd.DataFrame) -> None:
        """Eq. 7-8: regress P = beta^T S + alpha on log10(C/1e21) within the reference family.

        Uses every model of the family in the benchmarks table with known FLOPs, whether or not
        it has the target or is held out (no labels involved; METHODS 4.7 item 7).
        """
        fam = self.reference_family
        if not fam:
            return
        ref = table[(table[FAMILY] == fam) & np.isfinite(table[FLOPS].to_numpy(float))]
        if len(ref) < 2:
            fams = sorted(map(str, table[FAMILY].dropna().unique()))
            hint = (
                ""
                if fam in fams
                else (
                    f" (not in column {FAMILY!r}{did_you_mean(fam, fams)})"
                    "; name one with --reference-family"
                )
            )
            warnings.warn(
                f"reference family {fam!r} has {len(ref)} model(s) with known FLOPs{hint}; "
                "f-equivalent FLOPs (Eq. 8) are not computed",
                DomainWarning,
                stacklevel=3,
            )
            return
        S = self.space_.transform(ref)
        P = result.fit.params["alpha"] + S @ np.asarray(result.params["beta"])
        logc = np.log10(ref[FLOPS].to_numpy(float))
        w, b = np.polyfit(logc, P, 1)
        result.reference_family = fam
        result.reference = {"w": float(w), "b": float(b), "n_models": int(len(ref))}

    # ---- convenience -----------------------------------------------------------------------
    def summary(self) -> str:
        """The fitted law's summary (`OSLResult.summary`: Eq. 6, App. C.8 intervals)."""
        if not hasattr(self, "result_"):
            raise not_fitted(self)
        return self.result_.summary()

    def contract(self, level: float | None = None) -> dict:
        """The fit as plain data (`OSLResult.contract`; `osl.answers.fit_answer` adds the
        held-out check and the forecasts of models without the target, as `osl fit` prints)."""
        if not hasattr(self, "result_"):
            raise not_fitted(self)
        return self.result_.contract(level)

    def _predictors(self, benchmarks) -> np.ndarray:
        res = self.result_
        table = read_benchmarks(benchmarks)
        if self.x == "pcs":
            table = to_fractions(table, res.metrics, self.score_unit, "new models")[0]
            check_metrics(table, res.metrics, "new models", all_missing=True)
            check_observed(table, res.metrics, "new models")
            warn_imputed(table, res.metrics, stacklevel=3)
            X = self.space_.transform(table)
        else:
            col = FLOPS if self.x == "flops" else SIZE
            raw = table[col].to_numpy(float)
            bad = ~(np.isfinite(raw) & (raw > 0))
            if bad.any():
                i = int(np.argmax(bad))
                raise InputError(f"new models: row {i + 1} has no positive {col!r}")
            X = np.log10(raw)[:, None]
        range_warning(res, table[MODEL], X, stacklevel=4)
        return X

    def predict(self, benchmarks: pd.DataFrame | Mapping | pd.Series) -> np.ndarray | float:
        """Predicted target for new models (PC law: from their benchmark scores, fractions or
        points per `score_unit`), in points (Eq. 6 at their PCs, a metric range undone). One
        model (a Series or a dict of its scores) gives a float, a table an ndarray."""
        one, table = _one_model(benchmarks)
        if not hasattr(self, "result_"):
            raise not_fitted(self)
        y = self.result_.to_original(predict_sigmoid(self.result_.fit, self._predictors(table)))
        return point(np.asarray(y, float)[0]) if one else np.asarray(y, float)

    def predict_interval(
        self, benchmarks: pd.DataFrame, *, level: float = 0.9, kind: str = "prediction"
    ) -> tuple[np.ndarray, np.ndarray]:
        """Interval of the target for new models in points, clipped to [0, 100] or
        [min(0, LO), HI] with a metric range (`OSLResult.predict_interval`: App. C.8 delta
        method; kind="prediction" adds the noise and extrapolation scale, "confidence" is the
        fitted law's alone)."""
        if not hasattr(self, "result_"):
            raise not_fitted(self)
        level, kind = self._interval_args(level, kind)
        table = _one_model(benchmarks)[1]
        return self.result_.predict_interval(self._predictors(table), level, kind)

    # ---- persistence -----------------------------------------------------------------------
    saved_label = "saved OSL fit"

    def to_dict(self) -> dict:
        """The constructor arguments and the fitted `OSLResult` (which holds the capability
        space: PCA mean, components and the App. B.3 imputation state)."""
        if not hasattr(self, "result_"):
            raise not_fitted(self)
        params = self.get_params()
        for k in ("metrics", "exclude_metrics", "heldout", "metric_range"):
            if params[k] is not None and not isinstance(params[k], str):
                params[k] = list(params[k])
        return {
            "kind": "ObservationalScalingLaw",
            "format_version": 1,
            "config": params,
            "result": self.result_.to_dict(),
        }

    @classmethod
    def from_dict(cls, d: dict, where: str = "saved OSL fit") -> ObservationalScalingLaw:
        """A fit from `to_dict`, checked field by field; the capability space is rebuilt from
        the result, so forecasts equal the fitted estimator's bit for bit."""
        c = Checker(where)
        c.kind(c.obj(d), "ObservationalScalingLaw", label=cls.saved_label)
        c.keys(d, ("kind", "format_version", "config", "result"))
        cfg = c.obj(c.get(d, "config"), "config")
        c.keys(cfg, cls._param_names(), "config")
        res = OSLResult.from_dict(c.get(d, "result"), where)
        cfg = {k: tuple(v) if k == "exclude_metrics" else v for k, v in cfg.items()}
        if isinstance(cfg.get("metric_range"), list):
            cfg["metric_range"] = tuple(cfg["metric_range"])
        est = cls(**cfg)
        est.result_ = res
        if res.x == "pcs":
            space = CapabilitySpace(res.n_components, est.impute_components)
            space.metrics_ = list(res.metrics)
            space.mean_ = np.asarray(res.mean, float)
            space.components_ = np.asarray(res.components, float)
            space.explained_variance_ratio_ = np.asarray(res.explained_variance, float)
            space.imputer_ = Imputer.from_dict(res.imputation, len(res.metrics), c)
            est.space_ = space
        return est


def _one_model(benchmarks) -> tuple[bool, pd.DataFrame]:
    """(whether it is one model, the benchmarks as a table): a Series or a dict of scalars is
    one model's row."""
    if isinstance(benchmarks, pd.Series):
        return True, benchmarks.to_frame().T.infer_objects()
    if isinstance(benchmarks, Mapping) and all(np.ndim(v) == 0 for v in benchmarks.values()):
        return True, pd.DataFrame([dict(benchmarks)])
    return False, benchmarks
