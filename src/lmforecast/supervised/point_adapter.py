"""A point fit of one supervised form from scratch as a backtest adapter, for any estimator
class with `SupervisedScalingLaw`'s constructor: the `average` form's inner backtest passes its
own class, and `supervised.adapter.PointAdapter` binds the estimator (so this module imports
no estimator and the estimator can use it)."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import numpy as np

from ..errors import InputError
from ..uncertainty.normal import z_of

if TYPE_CHECKING:  # pandas loads where a table is read or built, not at import
    import pandas as pd


def _n_d(df: pd.DataFrame, n_col: str = "N", d_col: str = "D", c_col: str = "C"):
    if n_col not in df.columns:
        raise InputError(f"runs: missing column {n_col!r} (parameters)")
    N = df[n_col].to_numpy(float)
    if d_col in df.columns:
        return N, df[d_col].to_numpy(float)
    if c_col in df.columns:
        return N, df[c_col].to_numpy(float) / (6.0 * N)
    raise InputError(f"runs: missing column {d_col!r} (or {c_col!r})")


class PointFitAdapter:
    """A point fit of `form` from scratch (no bootstrap); interval = run scatter and delta-method
    parameter spread (forecast * exp(+-z s))."""

    def __init__(
        self, estimator, form: str, *, loss: str = "huber", name: str | None = None, **kwargs
    ):
        self.estimator, self.form, self.loss, self.kwargs = estimator, form, loss, kwargs
        self.name = name or f"point:{form}"

    def fit(self, train: pd.DataFrame) -> _PointFitted:
        est = self.estimator(
            self.form, loss=self.loss, intervals=False, n_jobs=1, replicates="mean", **self.kwargs
        )
        N, D = _n_d(train)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(N=N, D=D, loss=train["loss"].to_numpy(float))
        return _PointFitted(est)


class _PointFitted:
    def __init__(self, est):
        self.est = est

    def predict(self, test):
        return self.est.predict(*_n_d(test))

    def interval(self, test, level):
        N, D = _n_d(test)
        pred = self.est.predict(N, D)
        z = z_of(level)
        s = np.sqrt(self.est.result_.residual_scale**2 + _delta_var(self.est, N, D))
        return pred * np.exp(-z * s), pred * np.exp(z * s)


def _delta_var(est, N, D) -> np.ndarray:
    """Delta-method variance of the log forecast: J(x) sigma^2 (J'J)^+ J(x)', J the law's
    analytic Jacobian at the fitted runs, sigma^2 the residual mean square; directions the runs do
    not identify (tiny singular values) are dropped rather than blown up."""
    res, data = est.result_, est.data_
    law = res.law_
    th = np.asarray(res.theta)[None, :]
    Xtr = {"N": data["N"].to_numpy(float), "D": data["D"].to_numpy(float)}
    with np.errstate(all="ignore"):
        pred, J = law.predict_and_jacobian(th, Xtr)
        r = pred[0] - np.log(data["loss"].to_numpy(float))
        J = J[0]
        n, P = J.shape
        sigma2 = float(np.sum(r * r) / max(n - P, 1))
        cov = sigma2 * np.linalg.pinv(J.T @ J, rcond=1e-10, hermitian=True)
        Xte = {"N": np.asarray(N, float).ravel(), "D": np.asarray(D, float).ravel()}
        Jt = law.jacobian(th, Xte)[0]
        v = np.einsum("ij,jk,ik->i", Jt, cov, Jt)
    return np.where(np.isfinite(v) & (v > 0), v, 0.0)
