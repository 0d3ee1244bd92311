"""Supervised laws as backtest adapters (`lmforecast.backtest.engine.Adapter`).

This lives in `supervised/` (the backtest engine is the lower layer and knows nothing of the
laws): `SupervisedAdapter` is the default fit with its calibrated intervals; `PointAdapter` a
point fit of one form from scratch whose interval is the run scatter plus the delta-method
parameter spread (what the `average` form's inner backtest consumes).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy.stats import norm

from ..backtest.adapters import PersistenceBaseline, PowerLawBaseline
from ..errors import InputError


def _n_d(df: pd.DataFrame, n_col: str = "N", d_col: str = "D", c_col: str = "C"):
    if n_col not in df.columns:
        raise InputError(f"runs: missing column {n_col!r} (parameters)")
    N = df[n_col].to_numpy(float)
    if d_col in df.columns:
        return N, df[d_col].to_numpy(float)
    if c_col in df.columns:
        return N, df[c_col].to_numpy(float) / (6.0 * N)
    raise InputError(f"runs: missing column {d_col!r} (or {c_col!r})")


class SupervisedAdapter:
    """`SupervisedScalingLaw(form, **kwargs)` with its default calibrated forecast interval.
    Its fitted object also exposes `terms(test)` (run scatter and bootstrap spread in log
    space), which the real-suite benchmark uses to re-choose the prior leave-one-suite-out."""

    def __init__(self, form: str = "auto", *, name: str | None = None, **kwargs):
        self.form, self.kwargs = form, dict(kwargs)
        self.name = name or f"supervised:{form}"
        self.cols = {k: self.kwargs.pop(k) for k in ("n_col", "d_col", "c_col") if k in kwargs}
        self.loss_col = self.kwargs.pop("loss_col", "loss")
        self.kwargs.pop("intervals", None)

    def fit(self, train: pd.DataFrame) -> _Fitted:
        from .model import SupervisedScalingLaw

        kw = dict(self.kwargs)
        kw.setdefault("n_jobs", 1)
        kw.setdefault("replicates", "mean")
        est = SupervisedScalingLaw(self.form, **kw)
        N, D = _n_d(train, **self.cols)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(N=N, D=D, loss=train[self.loss_col].to_numpy(float))
        return _Fitted(est, self.cols)


class _Fitted:
    def __init__(self, est, cols: dict):
        self.est, self.cols = est, cols

    def predict(self, test):
        return self.est.predict(*_n_d(test, **self.cols))

    def interval(self, test, level):
        return self.est.predict_interval(*_n_d(test, **self.cols), level=level)

    def terms(self, test) -> dict:
        N, D = _n_d(test, **self.cols)
        t = self.est.forecast_terms(N, D)
        out = {"noise": np.full(len(N), t["noise"]), "s_boot": t["s_boot"]}
        cal = self.est.result_.meta.get("intervals") or {}
        if "k_user" in cal:  # calibration="prior+backtest": the user's own k and its count
            out["k_user"] = np.full(len(N), cal["k_user"])
            out["n_user"] = np.full(len(N), cal["backtest_forecasts"])
        return out


class PointAdapter:
    """A point fit of `form` from scratch (no bootstrap); interval = run scatter and delta-method
    parameter spread (forecast * exp(+-z s))."""

    def __init__(self, form: str, *, loss: str = "huber", name: str | None = None, **kwargs):
        self.form, self.loss, self.kwargs = form, loss, kwargs
        self.name = name or f"point:{form}"

    def fit(self, train: pd.DataFrame) -> _PointFitted:
        from .model import SupervisedScalingLaw

        est = SupervisedScalingLaw(
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
        z = float(norm.ppf(0.5 + level / 2))
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


def supervised_adapters(form: str, *, baselines: bool = True, compute_col: str = "C", **kw):
    """The adapters `lmforecast backtest --method supervised` runs: the form (default
    intervals) and, beside it, the naive baselines."""
    out = [SupervisedAdapter(form, **kw)]
    if baselines:
        out += [PersistenceBaseline(compute_col), PowerLawBaseline(compute_col)]
    return out


def trust_methods(form: str = "auto", **kw) -> list:
    """The methods of the trust table (docs/trust.md): the default fit (its calibrated interval)
    and simple laws beside it: the 1-D compute law, chinchilla, and the over-training law fitted
    by squared log error as Gadre et al. fit it."""
    return [
        SupervisedAdapter(form, name="default", **kw),
        PowerLawBaseline(),
        PointAdapter("chinchilla"),
        PointAdapter("overtrain", loss="squared", name="overtrain-ls"),
    ]
