"""`OSLResult`: a fitted observational (or compute-baseline) law with its holdout evaluation,
intervals (App. C.8), summary and exact JSON round trip."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from ..display import SummaryDisplay
from ..errors import InputError
from ..fitting import FitResult
from ..laws.sigmoid import H_BOUNDS, ObservationalSigmoid, sigmoid
from ..params import check, check_kind
from ..scores import points
from ..store import Checker, dump_json, load_json, source_label
from .capability import Imputer
from .data import (
    FLOPS_UNIT,
    MODEL,
)
from .schema import check_osl_result
from .splits import describe_holdout

X_KINDS = ("pcs", "flops", "size")
POINTS2 = 1e4  # an MSE on the law's scale (fractions) times this is in points^2


FORMAT_VERSION = 1


@dataclass
class OSLResult(SummaryDisplay):
    """A fitted observational (or compute-baseline) law with its holdout evaluation.

    Units: scores are points (0-100, `lmforecast.scores`). `predictions` has one record per
    model with the target: split, observed and predicted Y (points), log10 FLOPs, predictors,
    the prediction interval `lower`/`upper` (points) and (PC law) log10 of the f-equivalent
    FLOPs; `train_mse`/`test_mse` are in points^2. The law itself (Eq. 6: `fit`, `params`,
    `covariance`, `sigma`, `extrapolation_sigma`, `reference`) is on the scale it is fitted
    on: fractions (0-1), or the metric-range-normalised y'. JSON round-trips bit-for-bit.
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
    # Sec. 4 / App. C: the target's metric range (LO, HI), in points; the law is fitted to the
    # min-max normalised y' = (y - LO) / (HI - LO). Parameters, MSEs (in points^2 of y', i.e.
    # 10^4 y'^2) and the C-bar form live on that normalised scale; predictions, forecasts and
    # intervals are reported on the original one, in points.
    metric_range: list[float] | None = None
    # App. B.3 imputation state of the PC law (`capability.Imputer.to_dict`): lets a saved fit
    # impute a new model's missing benchmark cells as the fit did. None for a compute or size
    # predictor, which is never imputed.
    imputation: dict[str, list] | None = None

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
        """Y at f-equivalent FLOPs (Alg. 1, C-bar form): (1-h) + h sigma(w log10 C + b), in
        points (a metric range undone)."""
        if self.reference is None:
            raise ValueError("no reference-family projection (Eq. 7-8) in this fit")
        z = self.reference["w"] * (np.asarray(log10_flops, float) - np.log10(FLOPS_UNIT))
        z = z + self.reference["b"]
        h = self.params["h"]
        return self.to_original((1 - h) + h * sigmoid(z))

    def predictions_frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.predictions)

    # ---- metric range ------------------------------------------------------------------------
    def to_original(self, v) -> np.ndarray:
        """The law's scale -> points: 100 y (fractions), or LO + (HI - LO) y' with a metric
        range (LO, HI in points)."""
        v = np.asarray(v, float)
        if self.metric_range is None:
            return points(v)
        lo, hi = self.metric_range
        return lo + (hi - lo) * v

    def _clip_range(self) -> tuple[float, float]:
        """Interval clip in points: [0, 100] without a metric range, else [min(0, LO), HI]
        (a model may score below chance, never above the metric's top)."""
        if self.metric_range is None:
            return 0.0, 100.0
        lo, hi = self.metric_range
        return min(0.0, lo), hi

    # ---- intervals (App. C.8) --------------------------------------------------------------
    @property
    def has_intervals(self) -> bool:
        return bool(self.covariance) and self.sigma is not None and bool(self.dof)

    def _check_intervals(self, level: float) -> None:
        if not self.has_intervals:
            raise InputError("this OSL fit has no interval information (refit it)")
        check("level", level)

    @property
    def prediction_sigma(self) -> float:
        """Noise scale of a new model's score on the law's scale (fractions, or y'):
        max(in-sample residual SD, backtest RMSE)."""
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
        """Interval of Y in points at predictors X (n, K) (PCs, or log10 FLOPs / size).

        Delta method on the law's scale: Var(Y_hat) = g^T Cov g with g the gradient of Eq. 6 in
        the parameters; kind="prediction" (default) adds `prediction_sigma`^2. Half-width
        t_{dof} * SD; the interval is mapped to points (`to_original`) and clipped to the score
        range [0, 100], or [min(0, LO), HI] with a metric range.
        """
        level = self.level if level is None else level
        self._check_intervals(level)
        check_kind(kind)
        if isinstance(X, pd.DataFrame):  # a benchmark table, not predictors
            raise InputError(
                "OSLResult.predict_interval takes predictors (PCs, or log10 FLOPs "
                "/ size); for a benchmark table use lmforecast.osl."
                "forecast_saved_fit(result, table, level)"
            )
        X = np.atleast_2d(np.asarray(X, float))
        law = ObservationalSigmoid(self.n_components)
        th = np.asarray(self.fit.theta, float)[None, :]
        pred, J = law.predict_and_jacobian(th, {f"x{i + 1}": X[:, i] for i in range(X.shape[1])})
        var = np.einsum("ij,jk,ik->i", J[0], np.asarray(self.covariance, float), J[0])
        if kind == "prediction":
            var = var + self.prediction_sigma**2
        half = float(stats.t.ppf(0.5 + level / 2, self.dof)) * np.sqrt(np.clip(var, 0, None))
        a, b = self._clip_range()
        lo, hi = self.to_original(pred[0] - half), self.to_original(pred[0] + half)
        return np.clip(lo, a, b), np.clip(hi, a, b)

    def _predictor_matrix(self) -> np.ndarray:
        pf = self.predictions_frame()
        return pf[[f"x{i + 1}" for i in range(self.n_components)]].to_numpy(float)

    def forecasts(self, level: float | None = None) -> list[dict[str, Any]]:
        """Held-out (test) models: observed y, forecast y_pred and its prediction interval, in
        points."""
        level = self.level if level is None else level
        pf = self.predictions_frame()
        if pf.empty:
            return []
        test = (pf["split"] == "test").to_numpy()
        if not test.any():
            return []
        iv = (
            self.predict_interval(self._predictor_matrix()[test], level)
            if self.has_intervals
            else (np.full(test.sum(), np.nan),) * 2
        )
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
            f"holdout: {describe_holdout(self.holdout)}",
        ]
        lines.append(
            "scores in points (0-100); the law is fitted on fractions (Eq. 6, h in [0.8, 1])"
        )
        if self.metric_range is not None:
            lo, hi = self.metric_range
            lines.append(
                f"metric range: ({lo:g}, {hi:g}) points; fitted to y' = (y - {lo:g}) / "
                f"{hi - lo:g}: parameters and MSEs on that scale, forecasts and intervals on "
                "the original"
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
            f"{'train MSE, pts^2 (n)':<22}{self.train_mse:.4e} ({self.n_train})",
            f"{'test MSE, pts^2 (n)':<22}"
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
                f"forecasts add residual SD {self._pts(self.sigma):.3g} points"
                + (
                    f" or backtest RMSE {self._pts(e):.3g} points, the larger"
                    if e is not None
                    else ""
                )
            )
            fc = self.forecasts()
            if fc:
                inside = sum(f["interval"][0] <= f["y"] <= f["interval"][1] for f in fc)
                w = np.median([f["interval"][1] - f["interval"][0] for f in fc])
                lines.append(
                    f"held-out models inside their {100 * self.level:g}% prediction interval: "
                    f"{inside} of {len(fc)} (median width {w:.3g} points)"
                )
        lines.append("-" * 64)
        return "\n".join(lines)

    def _pts(self, v: float) -> float:
        """An error on the law's scale in points (of y' with a metric range, as the MSEs)."""
        return 100.0 * float(v)

    def __str__(self) -> str:  # pragma: no cover
        return self.summary()

    def contract(self, level: float | None = None) -> dict[str, Any]:
        """The CLI's `osl fit --json` object: fit (MSEs in points^2, Eq. 6 parameters on
        fractions), App. C.8 parameter intervals and one forecast per held-out model with its
        prediction interval (`"interval": [lo, hi]`, points)."""
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
    def from_dict(cls, d: dict[str, Any], where: str = "saved OSL fit") -> OSLResult:
        c = Checker(where)
        c.kind(c.obj(d), "OSLResult", label="saved OSL fit", required=False)
        check_osl_result(d, c, X_KINDS)
        d = dict(d)
        d.pop("kind", None)
        d.pop("format_version", None)
        d["fit"] = FitResult.from_dict(c.get(d, "fit"), where, "fit")
        if d["x"] == "pcs":  # a PC law imputes a new model's missing cells as the fit did
            Imputer.from_dict(c.get(d, "imputation"), len(d["metrics"]), c)
        try:
            return cls(**d)
        except TypeError as exc:
            raise InputError(f"saved OSL fit: {exc}") from None

    @classmethod
    def from_json(cls, text_or_path: str | Path) -> OSLResult:
        return cls.from_dict(load_json(text_or_path, "saved OSL fit"), source_label(text_or_path))
