"""The observational scaling law estimator (Ruan et al. 2024, Sec. 3.4, Alg. 1, Eq. 6-8).

Fit Y = (1 - h) + h * sigma(beta^T S + alpha) (Eq. 6, accuracy form) from the top-K principal
components S of standard benchmarks, on training models only, and evaluate on a holdout of
stronger models; or use log training FLOPs / log model size as the single predictor (the compute
baselines of Sec. 4). Then express capability as f-equivalent FLOPs (Eq. 7-8) and attribute the
weight to the base benchmarks (beta^T gamma, Fig. 5c/6b).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..errors import DomainWarning, InputError
from ..fitting import FitResult, fit_law, squared
from ..fitting.result import dump_json, load_json
from ..laws.sigmoid import ObservationalSigmoid, sigmoid
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
    read_benchmarks,
)
from .holdout import LLAMA2_7B_FLOPS, cutoff_split, list_split, top_split

X_KINDS = ("pcs", "flops", "size")
FORMAT_VERSION = 1


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

    # ---- reporting -------------------------------------------------------------------------
    def summary(self) -> str:
        p = self.params
        beta = ", ".join(f"{b:.4g}" for b in p["beta"])
        lines = [
            f"Observational scaling law (Ruan et al. 2024, Eq. 6)    target: {self.target}",
            f"predictor: {self.x}" + (f" (K={self.n_components})" if self.x == "pcs" else ""),
            f"holdout: {self.holdout}",
            "-" * 64,
            f"{'h':<22}{p['h']:.4f}",
            f"{'alpha':<22}{p['alpha']:.4g}",
            f"{'beta':<22}[{beta}]",
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
        lines.append("-" * 64)
        return "\n".join(lines)

    def __str__(self) -> str:  # pragma: no cover
        return self.summary()

    def contract(self) -> dict[str, Any]:
        """The CLI's `osl fit --json` object."""
        return {
            "train_mse": self.train_mse,
            "test_mse": self.test_mse,
            "n_train": self.n_train,
            "n_test": self.n_test,
            "heldout": self.heldout,
            "params": self.params,
            "explained_variance": self.explained_variance,
        }

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
        from ..data.schema import Checker

        c = Checker("saved OSL fit")
        c.kind(c.obj(d), "OSLResult", required=False)
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
        check_unit_interval(table, target, "targets")
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
        fit = fit_sigmoid(Xall[train], y[train])
        pred = predict_sigmoid(fit, Xall)
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
        )
        log10_c = np.log10(data[FLOPS].to_numpy(float) * FLOPS_UNIT)
        records = pd.DataFrame(
            {
                MODEL: data[MODEL],
                FAMILY: data[FAMILY],
                "split": np.where(test, "test", "train"),
                "y": y,
                "y_pred": pred,
                "log10_flops": log10_c,
            }
        )
        for i in range(K):
            records[f"x{i + 1}"] = Xall[:, i]
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
    def predict(self, benchmarks: pd.DataFrame) -> np.ndarray:
        """Predicted target for new models (PC law: from their benchmark scores)."""
        res = self.result_
        table = read_benchmarks(benchmarks)
        if self.x == "pcs":
            check_metrics(table, res.metrics, "new models")
            X = self.space_.transform(table)
        else:
            col = FLOPS if self.x == "flops" else SIZE
            X = np.log10(table[col].to_numpy(float))[:, None]
        law = ObservationalSigmoid(res.n_components)
        return law.predict(
            np.asarray(res.fit.theta), **{f"x{i + 1}": X[:, i] for i in range(X.shape[1])}
        )
