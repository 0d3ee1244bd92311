"""The sigmoid of Alg. 1 step 3 (Eq. 6) fitted on a predictor matrix, its asymptotic
covariance (App. C.8) and the in-training backtest that scales prediction intervals."""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..errors import InputError
from ..fitting import FitResult, fit_law, squared
from ..laws.sigmoid import ObservationalSigmoid
from .data import META_COLUMNS, MODEL

BACKTEST_FRACTIONS = (0.1, 0.2, 0.3)  # strongest training models forecast by `extrapolation_scale`


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
    clash = [c for c in t.columns if c not in META_COLUMNS and c in benchmarks.columns]
    if clash:  # which of two columns of one name is the target would be a silent choice
        raise InputError(
            f"{what}: column(s) {', '.join(map(repr, clash))} are also in the "
            "benchmarks table; rename them in one of the two"
        )
    extra = [c for c in t.columns if c != MODEL and c not in benchmarks.columns]
    if not set(t[MODEL]) & set(benchmarks[MODEL]):
        raise InputError(f"{what}: no model name matches the benchmarks table")
    unknown = [m for m in t[MODEL] if m not in set(benchmarks[MODEL])]
    if unknown:  # a misspelt model would lose its data point without a word
        warnings.warn(
            f"{what}: {len(unknown)} model(s) not in the benchmarks table are "
            f"ignored: {', '.join(map(repr, unknown[:3]))}"
            f"{' ...' if len(unknown) > 3 else ''}",
            stacklevel=2,
        )
    out = benchmarks.merge(t[[MODEL, *extra]], on=MODEL, how="left")
    for c in extra:
        raw = t[c].replace({"-": np.nan, "": np.nan})
        num = pd.to_numeric(raw, errors="coerce")
        text = raw.notna() & num.isna()
        if text.any() and num.notna().any():  # a score column with a typo'd cell: it would
            i = int(np.flatnonzero(text.to_numpy())[0])  # drop that model without a word
            raise InputError(
                f"{what}: column {c!r} row {i + 1} (model {t[MODEL].iloc[i]!r}): "
                f"{t[c].iloc[i]!r} is not a number"
            )
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
    # ties in `key` (models of equal FLOPs) broken by the data, not the row order, and every
    # refit sees its rows in that order: a shuffled table gives the same splits and the same
    # optimiser path
    order = np.lexsort((y, *X.T[::-1], key))
    errs = []
    extra = None if start is None else np.atleast_2d(start)
    for f in fractions:
        n_te = max(1, int(round(f * n)))
        if n - n_te < K + 4:
            continue
        tr, te = order[:-n_te], order[-n_te:]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = fit_sigmoid(X[tr], y[tr], n_polish=2, extra_starts=extra)
        errs.append(predict_sigmoid(fit, X[te]) - y[te])
    if not errs:
        return None
    e = np.concatenate(errs)
    return float(np.sqrt(np.mean(e**2)))
