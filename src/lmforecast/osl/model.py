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
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from ..errors import DomainWarning, InputError
from ..fitting import FitResult, fit_law, squared
from ..laws.sigmoid import H_BOUNDS, ObservationalSigmoid, sigmoid
from ..store import Checker, dump_json, load_json
from .capability import CapabilitySpace
from .data import (
    FAMILY,
    FLOPS,
    FLOPS_UNIT,
    MODEL,
    SIZE,
    check_metrics,
    check_unit_interval,
    default_metrics,
    parse_metric_range,
    read_benchmarks,
)
from .holdout import LLAMA2_7B_FLOPS, cutoff_split, list_split, top_split

X_KINDS = ("pcs", "flops", "size")
FORMAT_VERSION = 1
BACKTEST_FRACTIONS = (0.1, 0.2, 0.3)  # strongest training models forecast by `extrapolation_scale`


@dataclass
class OSLResult:
    """A fitted observational (or compute-baseline) law with its holdout evaluation.

    `predictions` has one record per model with the target: split, observed and predicted Y,
    log10 FLOPs, predictors and (PC law) log10 of the f-equivalent FLOPs. JSON round-trips
    bit-for-bit.
    """

    target: str
    x: str
    metrics: list[str]
    n_components: int
    holdout: dict[str, Any]
    fit: FitResult
    train_mse: float
    test_mse: float | None
    n_train: int
    n_test: int
    heldout: list[str]
    explained_variance: list[float] = field(default_factory=list)
    components: list[list[float]] = field(default_factory=list)
    mean: list[float] = field(default_factory=list)
    reference_family: str | None = None
    reference: dict[str, float] | None = None  # w, b on log10(C / 1e21) (Table C.1 units)
    predictions: list[dict[str, Any]] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    # App. C.8 intervals: covariance of the fit-space parameters (h, alpha, beta), residual SD
    # and its degrees of freedom, and the rolling-backtest extrapolation scale
    covariance: list[list[float]] = field(default_factory=list)
    sigma: float | None = None
    dof: int | None = None
    extrapolation_sigma: float | None = None
    level: float = 0.9
    # Sec. 4 / App. C: the target's metric range (LO, HI); the law is fitted to the min-max
    # normalised y' = (y - LO) / (HI - LO). Parameters, MSEs and the C-bar form live on that
    # normalised scale; predictions, forecasts and intervals are reported on the original one.
    metric_range: list[float] | None = None

    # ---- parameters ------------------------------------------------------------------------
    @property
    def params(self) -> dict[str, Any]:
        p = self.fit.params
        return {
            "h": p["h"],
            "alpha": p["alpha"],
            "beta": [p[f"beta{i + 1}"] for i in range(len(p) - 2)],
        }

    def benchmark_weights(self) -> pd.Series:
        """beta^T gamma: the law's logit as a weighted sum of raw benchmark scores plus a bias.

        Only for the PC law (Fig. 5c/6b, Table C.1's third form).
        """
        if self.x != "pcs":
            raise ValueError("benchmark weights exist only for the PC law (x='pcs')")
        beta = np.asarray(self.params["beta"])
        w = beta @ np.asarray(self.components)
        bias = self.params["alpha"] - float(w @ np.asarray(self.mean))
        return pd.Series([*w, bias], index=[*self.metrics, "intercept"], name="weight")

    def predict_from_log_flops_equiv(self, log10_flops: np.ndarray) -> np.ndarray:
        """Y at f-equivalent FLOPs (Alg. 1, C-bar form): (1-h) + h sigma(w log10 C + b)."""
        if self.reference is None:
            raise ValueError("no reference-family projection (Eq. 7-8) in this fit")
        z = self.reference["w"] * (np.asarray(log10_flops, float) - np.log10(FLOPS_UNIT))
        z = z + self.reference["b"]
        h = self.params["h"]
        return (1 - h) + h * sigmoid(z)

    def predictions_frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.predictions)

    # ---- metric range ------------------------------------------------------------------------
    def to_original(self, v) -> np.ndarray:
        """Normalised scale -> the target's original scale: LO + (HI - LO) y'."""
        v = np.asarray(v, float)
        if self.metric_range is None:
            return v
        lo, hi = self.metric_range
        return lo + (hi - lo) * v

    def _clip_range(self) -> tuple[float, float]:
        """Interval clip on the original scale: [0, 1] without a metric range, else
        [min(0, LO), HI] (a model may score below chance, never above the metric's top)."""
        if self.metric_range is None:
            return 0.0, 1.0
        lo, hi = self.metric_range
        return min(0.0, lo), hi

    # ---- intervals (App. C.8) --------------------------------------------------------------
    @property
    def has_intervals(self) -> bool:
        return bool(self.covariance) and self.sigma is not None and bool(self.dof)

    def _check_intervals(self, level: float) -> None:
        if not self.has_intervals:
            raise InputError("this OSL fit has no interval information (refit it)")
        if not (isinstance(level, int | float) and 0 < level < 1):
            raise InputError(f"level must be strictly between 0 and 1, got {level!r}")

    @property
    def prediction_sigma(self) -> float:
        """Noise scale of a new model's score: max(in-sample residual SD, backtest RMSE)."""
        e = self.extrapolation_sigma
        return float(max(self.sigma, e if e is not None and np.isfinite(e) else 0.0))

    def param_intervals(self, level: float | None = None) -> dict[str, list[float]]:
        """Student-t (dof = n - p) Wald intervals of h, alpha, beta_k from the asymptotic
        covariance (App. C.8); h's interval is clipped to its bounds [0.8, 1] (Sec. 3.4)."""
        level = self.level if level is None else level
        self._check_intervals(level)
        q = float(stats.t.ppf(0.5 + level / 2, self.dof))
        se = np.sqrt(np.clip(np.diag(np.asarray(self.covariance, float)), 0, None))
        names = list(self.fit.params)
        out = {}
        for i, (name, v) in enumerate(zip(names, self.fit.theta)):
            lo, hi = v - q * se[i], v + q * se[i]
            if name == "h":
                lo, hi = max(lo, H_BOUNDS[0]), min(hi, H_BOUNDS[1])
            out[name] = [float(lo), float(hi)]
        return out

    def predict_interval(
        self, X, level: float | None = None, kind: str = "prediction"
    ) -> tuple[np.ndarray, np.ndarray]:
        """Interval of Y at predictors X (n, K) (PCs, or log10 FLOPs / size).

        Delta method: Var(Y_hat) = g^T Cov g with g the gradient of Eq. 6 in the parameters;
        kind="prediction" (default) adds `prediction_sigma`^2. Half-width t_{dof} * SD; the
        interval is clipped to the score range [0, 1]. With a metric range the interval is
        mapped back to the original scale and clipped to [min(0, LO), HI].
        """
        level = self.level if level is None else level
        self._check_intervals(level)
        if kind not in ("prediction", "confidence"):
            raise InputError(f"kind must be 'prediction' or 'confidence', got {kind!r}")
        X = np.atleast_2d(np.asarray(X, float))
        law = ObservationalSigmoid(self.n_components)
        th = np.asarray(self.fit.theta, float)[None, :]
        pred, J = law.predict_and_jacobian(th, {f"x{i + 1}": X[:, i] for i in range(X.shape[1])})
        var = np.einsum("ij,jk,ik->i", J[0], np.asarray(self.covariance, float), J[0])
        if kind == "prediction":
            var = var + self.prediction_sigma**2
        half = float(stats.t.ppf(0.5 + level / 2, self.dof)) * np.sqrt(np.clip(var, 0, None))
        if self.metric_range is None:
            return np.clip(pred[0] - half, 0.0, 1.0), np.clip(pred[0] + half, 0.0, 1.0)
        a, b = self._clip_range()
        lo, hi = self.to_original(pred[0] - half), self.to_original(pred[0] + half)
        return np.clip(lo, a, b), np.clip(hi, a, b)

    def _predictor_matrix(self) -> np.ndarray:
        pf = self.predictions_frame()
        return pf[[f"x{i + 1}" for i in range(self.n_components)]].to_numpy(float)

    def forecasts(self, level: float | None = None) -> list[dict[str, Any]]:
        """Held-out (test) models: observed y, forecast y_pred and its prediction interval."""
        level = self.level if level is None else level
        pf = self.predictions_frame()
        if pf.empty:
            return []
        test = (pf["split"] == "test").to_numpy()
        if not test.any():
            return []
        iv = self.predict_interval(self._predictor_matrix()[test], level) if self.has_intervals \
            else (np.full(test.sum(), np.nan),) * 2  # fmt: skip
        return [
            {"model": m, "y": y, "y_pred": p, "interval": [float(lo), float(hi)]}
            for m, y, p, lo, hi in zip(
                pf.loc[test, MODEL], pf.loc[test, "y"], pf.loc[test, "y_pred"], *iv
            )
        ]

    # ---- reporting -------------------------------------------------------------------------
    def summary(self) -> str:
        p = self.params
        beta = ", ".join(f"{b:.4g}" for b in p["beta"])
        lines = [
            f"Observational scaling law (Ruan et al. 2024, Eq. 6)    target: {self.target}",
            f"predictor: {self.x}" + (f" (K={self.n_components})" if self.x == "pcs" else ""),
            f"holdout: {self.holdout}",
        ]
        if self.metric_range is not None:
            lo, hi = self.metric_range
            lines.append(
                f"metric range: ({lo:g}, {hi:g}); fitted to y' = (y - {lo:g}) / {hi - lo:g}: "
                "parameters and MSEs on that scale, forecasts and intervals on the original"
            )
        lines += [
            "-" * 64,
        ]
        if self.has_intervals:
            ci = self.param_intervals()
            pct = f"{100 * self.level:g}%"
            head = f"{'parameter':<22}{'estimate':>12}{pct + ' lower':>15}{pct + ' upper':>15}"
            lines.append(head)
            for name, v in self.fit.params.items():
                lo, hi = ci[name]
                lines.append(f"{name:<22}{v:>12.4g}{lo:>15.4g}{hi:>15.4g}")
        else:
            lines += [
                f"{'h':<22}{p['h']:.4f}",
                f"{'alpha':<22}{p['alpha']:.4g}",
                f"{'beta':<22}[{beta}]",
            ]
        lines += [
            f"{'train MSE (n)':<22}{self.train_mse:.4e} ({self.n_train})",
            f"{'test MSE (n)':<22}"
            + (f"{self.test_mse:.4e} ({self.n_test})" if self.test_mse is not None else "-"),
        ]
        if self.explained_variance:
            ev = ", ".join(f"{v:.3f}" for v in self.explained_variance)
            lines.append(f"{'explained variance':<22}[{ev}]")
        if self.reference:
            lines.append(
                f"{'C-bar form':<22}X = {self.reference['w']:.3f} log10(C_{self.reference_family}"
                f"/1e21) {self.reference['b']:+.3f}"
            )
        if self.has_intervals:
            e = self.extrapolation_sigma
            lines.append(
                f"intervals: Student-t (dof {self.dof}) from the asymptotic covariance (App. C.8); "
                f"forecasts add residual SD {self.sigma:.3g}"
                + (f" or backtest RMSE {e:.3g}, the larger" if e is not None else "")
            )
            fc = self.forecasts()
            if fc:
                inside = sum(f["interval"][0] <= f["y"] <= f["interval"][1] for f in fc)
                w = np.median([f["interval"][1] - f["interval"][0] for f in fc])
                lines.append(
                    f"held-out models inside their {100 * self.level:g}% prediction interval: "
                    f"{inside} of {len(fc)} (median width {w:.3f})"
                )
        lines.append("-" * 64)
        return "\n".join(lines)

    def __str__(self) -> str:  # pragma: no cover
        return self.summary()

    def contract(self, level: float | None = None) -> dict[str, Any]:
        """The CLI's `osl fit --json` object: fit, App. C.8 parameter intervals and one forecast
        per held-out model with its prediction interval (`"interval": [lo, hi]`)."""
        level = self.level if level is None else level
        out = {
            "train_mse": self.train_mse,
            "test_mse": self.test_mse,
            "n_train": self.n_train,
            "n_test": self.n_test,
            "heldout": self.heldout,
            "params": self.params,
            "explained_variance": self.explained_variance,
        }
        if self.metric_range is not None:
            out["metric_range"] = list(self.metric_range)
        if self.has_intervals:
            out["level"] = float(level)
            out["param_intervals"] = self.param_intervals(level)
            out["forecasts"] = self.forecasts(level)
        return out

    # ---- persistence -----------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["fit"] = self.fit.to_dict()
        d["kind"] = "OSLResult"
        d["format_version"] = FORMAT_VERSION
        return d

    def to_json(self, path: str | Path | None = None) -> str:
        return dump_json(self.to_dict(), path, indent=1)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> OSLResult:
        c = Checker("saved OSL fit")
        c.kind(c.obj(d), "OSLResult", label="saved OSL fit", required=False)
        d = dict(d)
        d.pop("kind", None)
        d.pop("format_version", None)
        d["fit"] = FitResult.from_dict(c.get(d, "fit"), "saved OSL fit", "fit")
        try:
            return cls(**d)
        except TypeError as exc:
            raise InputError(f"saved OSL fit: {exc}") from None

    @classmethod
    def from_json(cls, text_or_path: str | Path) -> OSLResult:
        return cls.from_dict(load_json(text_or_path, "saved OSL fit"))


def merge_targets(
    benchmarks: pd.DataFrame, targets: pd.DataFrame | None, what: str = "targets"
) -> pd.DataFrame:
    """Join a targets table onto the benchmarks on `Model` (benchmark rows kept)."""
    if targets is None:
        return benchmarks
    if MODEL not in targets.columns:
        raise InputError(f"{what}: missing column 'Model' to join on")
    t = targets.copy()
    t[MODEL] = t[MODEL].astype(str).str.strip()
    dup = t.duplicated(subset=[MODEL]).to_numpy()
    if dup.any():
        i = int(np.argmax(dup))
        raise InputError(f"{what}: row {i + 1} repeats model {t[MODEL].iloc[i]!r}")
    extra = [c for c in t.columns if c != MODEL and c not in benchmarks.columns]
    if not set(t[MODEL]) & set(benchmarks[MODEL]):
        raise InputError(f"{what}: no model name matches the benchmarks table")
    out = benchmarks.merge(t[[MODEL, *extra]], on=MODEL, how="left")
    for c in extra:
        vals = pd.to_numeric(out[c].replace({"-": np.nan, "": np.nan}), errors="coerce")
        out[c] = vals.astype(float)
    return out


def fit_sigmoid(
    X: np.ndarray, y: np.ndarray, *, n_polish: int = 16, extra_starts: np.ndarray | None = None
) -> FitResult:
    """Least-squares fit of Eq. 6 (accuracy form) on predictors X (n, K) and accuracies y.

    Bounded non-linear least squares with h in [0.8, 1] (Sec. 3.4, METHODS 4.7 item 3) through
    the shared engine, from the law's start grid (plus any `extra_starts`). The one fit used by
    the estimator, the post-training gap and the App. C.4 robustness sweep.
    """
    X = np.asarray(X, float)
    K = X.shape[1]
    law = ObservationalSigmoid(K)
    Xd = {f"x{i + 1}": X[:, i] for i in range(K)}
    fit = fit_law(law, Xd, y, loss=squared(), n_polish=n_polish, extra_starts=extra_starts)
    fit.meta["law_options"] = {"k": K}
    return fit


def predict_sigmoid(fit: FitResult, X: np.ndarray) -> np.ndarray:
    """Eq. 6 (accuracy form) at predictors X (n, K) with a fit from `fit_sigmoid`."""
    X = np.asarray(X, float)
    law = ObservationalSigmoid(X.shape[1])
    return law.predict(np.asarray(fit.theta), **{f"x{i + 1}": X[:, i] for i in range(X.shape[1])})


def sigmoid_covariance(
    fit: FitResult, X: np.ndarray, y: np.ndarray
) -> tuple[np.ndarray, float, int]:
    """App. C.8: asymptotic covariance s^2 (J^T J)^+ of the least-squares parameters (h, alpha,
    beta) at the optimum, with s^2 = SSR / (n - p) (scipy `curve_fit`'s pcov, the authors' fit).
    Returns (covariance, s, dof)."""
    X = np.asarray(X, float)
    law = ObservationalSigmoid(X.shape[1])
    th = np.asarray(fit.theta, float)[None, :]
    pred, J = law.predict_and_jacobian(th, {f"x{i + 1}": X[:, i] for i in range(X.shape[1])})
    r = pred[0] - np.asarray(y, float)
    n, p = J[0].shape
    dof = max(n - p, 1)
    s2 = float(r @ r) / dof
    return s2 * np.linalg.pinv(J[0].T @ J[0]), float(np.sqrt(s2)), int(dof)


def extrapolation_scale(
    X: np.ndarray,
    y: np.ndarray,
    key: np.ndarray,
    start: np.ndarray | None = None,
    fractions: Sequence[float] = BACKTEST_FRACTIONS,
) -> float | None:
    """RMSE of a rolling backtest inside the training set: for each fraction f, refit Eq. 6 on
    the models whose `key` (log FLOPs, or the fitted logit) is below the top f and forecast the
    top f. Pooled over fractions; None when no split leaves enough models (p + 2) to fit."""
    X, y, key = np.asarray(X, float), np.asarray(y, float), np.asarray(key, float)
    n, K = X.shape
    order = np.argsort(key, kind="stable")
    errs = []
    extra = None if start is None else np.atleast_2d(start)
    for f in fractions:
        n_te = max(1, int(round(f * n)))
        if n - n_te < K + 4:
            continue
        te = np.zeros(n, bool)
        te[order[-n_te:]] = True
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = fit_sigmoid(X[~te], y[~te], n_polish=2, extra_starts=extra)
        errs.append(predict_sigmoid(fit, X[te]) - y[te])
    if not errs:
        return None
    e = np.concatenate(errs)
    return float(np.sqrt(np.mean(e**2)))


class ObservationalScalingLaw:
    """Fit and validate an observational scaling law (Sec. 3.4, Alg. 1; holdouts of Sec. 4).

    Parameters
    - n_components: K principal components (3, Sec. 3.2).
    - x: "pcs" (the observational law), "flops" or "size" (compute baselines, log10 scale).
    - metrics / exclude_metrics: benchmarks spanning the capability space (default: the paper's
      benchmarks present, minus the target).
    - holdout: "cutoff" (train on FLOPs <= cutoff_flops; unknown FLOPs -> test), "top" (hold
      out the best `holdout_top` fraction, rounded down), "list" (`heldout` names) or "none".
    - reference_family: family f of Eq. 7-8 (Llama-2); h_bounds: [0.8, 1] (Sec. 3.4).
    - level: level of the parameter and forecast intervals reported by `summary()` (App. C.8).

    Learned: `result_` (OSLResult), `space_` (CapabilitySpace, PC law only), `table_`.
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

    @staticmethod
    def from_preset(name: str):
        """A preregistered Table C.1 law (App. C.9) by name, ready to `predict(benchmarks)` for
        new models without refitting (`lmforecast.osl.presets.PRESETS`; point forecasts)."""
        from .presets import get_preset

        return get_preset(name)

    # ---- validation ------------------------------------------------------------------------
    def _validate(self, table: pd.DataFrame, target: str) -> tuple[pd.DataFrame, list[str]]:
        if self.x not in X_KINDS:
            raise InputError(f"--x must be one of {', '.join(X_KINDS)}, got {self.x!r}")
        if target not in table.columns:
            raise InputError(
                f"unknown target {target!r}; columns are {', '.join(map(repr, table.columns))}"
            )
        for m in self.exclude_metrics:
            if m not in table.columns:
                raise InputError(f"--exclude-metric: unknown metric {m!r}")
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
            check_metrics(table, metrics)
        check_unit_interval(table, target, "targets", allow_below=self._range is not None)
        data = table[table[target].notna()].reset_index(drop=True)
        return data, metrics

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
        if self._range is not None and target in table.columns:
            lo, hi = self._range
            table = table.copy()
            table[target] = (table[target].astype(float) - lo) / (hi - lo)
        data, metrics = self._validate(table, target)
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
        if not (isinstance(self.level, int | float) and 0 < self.level < 1):
            raise InputError(f"level must be strictly between 0 and 1, got {self.level!r}")
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
        train_mse = float(np.mean((pred[train] - y[train]) ** 2))
        test_mse = float(np.mean((pred[test] - y[test]) ** 2)) if test.any() else None

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
            metric_range=None if self._range is None else [float(v) for v in self._range],
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
            warnings.warn(
                f"reference family {fam!r} has {len(ref)} model(s) with known FLOPs; "
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
    def _predictors(self, benchmarks) -> np.ndarray:
        res = self.result_
        table = read_benchmarks(benchmarks)
        if self.x == "pcs":
            check_metrics(table, res.metrics, "new models")
            return self.space_.transform(table)
        col = FLOPS if self.x == "flops" else SIZE
        raw = table[col].to_numpy(float)
        bad = ~(np.isfinite(raw) & (raw > 0))
        if bad.any():
            i = int(np.argmax(bad))
            raise InputError(f"new models: row {i + 1} has no positive {col!r}")
        return np.log10(raw)[:, None]

    def predict(self, benchmarks: pd.DataFrame) -> np.ndarray:
        """Predicted target for new models (PC law: from their benchmark scores), on the
        target's original scale (a metric range is undone)."""
        return self.result_.to_original(
            predict_sigmoid(self.result_.fit, self._predictors(benchmarks))
        )

    def predict_interval(
        self, benchmarks: pd.DataFrame, level: float = 0.9, kind: str = "prediction"
    ) -> tuple[np.ndarray, np.ndarray]:
        """Prediction interval (default) of the target for new models, clipped to [0, 1] or
        [min(0, LO), HI] with a metric range (`OSLResult.predict_interval`: App. C.8 delta
        method plus the extrapolation scale)."""
        return self.result_.predict_interval(self._predictors(benchmarks), level, kind)
