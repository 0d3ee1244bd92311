"""Adapters that plug forecasting methods into the backtest engine (`engine.Adapter`).

An adapter has a `name` and `fit(train: DataFrame) -> fitted`; the fitted object has
`predict(test) -> array` and `interval(test, level) -> (lower, upper) | None`. To backtest a new
method (distillation, FLP, OSL, ...) write these two small classes; nothing else changes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import norm

from ..errors import InputError
from ..fitting import fit_law, huber
from ..laws.base import Law, Parameter
from .engine import compute_of


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
    """A supervised law `form` (chinchilla, chinchilla-gamma, overtrain, average).

    `intervals=True`: the default calibrated forecast interval (which itself backtests within the
    training runs). `intervals=False`: a point fit whose interval is the run scatter only
    (forecast * exp(+-z s_noise)); the default calibration consumes exactly that.
    """

    def __init__(self, form: str = "chinchilla-gamma", *, intervals: bool = True, **kwargs):
        self.form, self.intervals, self.kwargs = form, intervals, kwargs
        self.name = f"supervised:{form}"
        self.cols = {k: kwargs.pop(k) for k in ("n_col", "d_col", "c_col") if k in kwargs}
        self.loss_col = kwargs.pop("loss_col", "loss")

    def fit(self, train: pd.DataFrame) -> _SupervisedFitted:
        from ..supervised import SupervisedScalingLaw

        kw = dict(self.kwargs)
        starts = kw.pop("starts", None)
        kw.setdefault("n_jobs", 1)
        est = SupervisedScalingLaw(self.form, intervals=self.intervals, **kw)
        N, D = _n_d(train, **self.cols)
        loss_col = self.loss_col
        if not self.intervals and self.form != "average":
            data = _frame(N, D, train[loss_col])
            if starts is None:
                est.result_ = est._fit_form(self.form, data, 0)
            else:
                est.result_ = _quick_fit(est, data, *starts)
            est.params_ = dict(est.result_.params)
            est._train = data
        else:
            est.fit(N=N, D=D, loss=train[loss_col].to_numpy(float))
        return _SupervisedFitted(est, self.intervals, self.cols)


def _quick_fit(est, data, warm, grid):
    """Point fit from given starts: re-score `grid` on `data`, polish the 3 best plus `warm`."""
    from ..fitting.bootstrap import multistart_refit
    from ..fitting.engine import Objective
    from ..fitting.result import FitResult
    from ..laws import get_law

    law = get_law(est.form)
    X = {"N": data["N"].to_numpy(float), "D": data["D"].to_numpy(float)}
    y = data["loss"].to_numpy(float)
    lossf = est._lossf()
    th, f = multistart_refit(law, X, y, warm, grid, 2, lossf, maxiter=1000)
    with np.errstate(all="ignore"):
        t = law.target_of(y)
        resid = law.predict_target(th[None, :], X)[0] - t
    del Objective
    return FitResult(
        law=law.name,
        theta=th.tolist(),
        params=law.to_natural(th),
        objective=f,
        loss=lossf.to_dict(),
        n_obs=int(y.size),
        n_starts=int(len(grid)) + 1,
        n_polished=4,
        n_at_best=0,
        converged=True,
        residual_scale=float(1.4826 * np.median(np.abs(resid - np.median(resid)))),
    )


def _frame(N, D, loss):
    return pd.DataFrame({"N": N, "D": D, "loss": np.asarray(loss, float)})


class _SupervisedFitted:
    def __init__(self, est, intervals: bool, cols: dict):
        self.est, self.intervals, self.cols = est, intervals, cols

    def predict(self, test):
        return self.est.predict(*_n_d(test, **self.cols))

    def interval(self, test, level):
        N, D = _n_d(test, **self.cols)
        if self.intervals:
            return self.est.predict_interval(N, D, level=level)
        pred = self.est.predict(N, D)
        z = float(norm.ppf(0.5 + level / 2))
        s = np.sqrt(self.est.result_.residual_scale**2 + _delta_var(self.est, N, D))
        return pred * np.exp(-z * s), pred * np.exp(z * s)


def _delta_var(est, N, D) -> np.ndarray:
    """Delta-method variance of the log forecast: J(x) sigma^2 (J'J)^+ J(x)', J the law's
    analytic Jacobian at the fitted runs, sigma^2 the residual mean square; directions the runs do
    not identify (tiny singular values) are dropped rather than blown up."""
    res = est.result_
    data = getattr(est, "_train", None)
    if data is None:
        return np.zeros(np.broadcast(N, D).size)
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


class PersistenceBaseline:
    """Naive baseline: every forecast is the loss of the largest-compute fitted run (mean over
    ties). No interval."""

    name = "baseline:persistence"

    def __init__(self, compute_col: str = "C", target_col: str = "loss"):
        self.compute_col, self.target_col = compute_col, target_col

    def fit(self, train):
        C = compute_of(train, self.compute_col)
        y = train[self.target_col].to_numpy(float)
        return _Constant(float(np.mean(y[C == C.max()])))


class _Constant:
    def __init__(self, v):
        self.v = v

    def predict(self, test):
        return np.full(len(test), self.v)

    def interval(self, test, level):
        return None


class _PowerCompute(Law):
    """L(C) = E + A C^-a, fitted on log L (the 1-D compute law of Kaplan et al. 2020 style)."""

    name = "power-compute"
    inputs = ("C",)
    parameters = (
        Parameter("log_A", -20.0, 80.0, "A", "exp"),
        Parameter("log_E", -10.0, 5.0, "E", "exp"),
        Parameter("a", 0.0, 5.0),
    )

    def default_grid(self):
        return {
            "log_A": np.arange(0.0, 41.0, 4.0),
            "log_E": np.array([-1.0, -0.5, 0.0, 0.5, 1.0, 1.5]),
            "a": np.array([0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.8]),
        }

    def predict_target(self, theta, X):
        theta = np.atleast_2d(theta)
        lA, lE, a = theta[:, 0:1], theta[:, 1:2], theta[:, 2:3]
        v = lA - a * np.log(X["C"])[None, :]
        m = np.maximum(lE, v)
        return m + np.log(np.exp(lE - m) + np.exp(v - m))


class PowerLawBaseline:
    """Naive baseline: a 1-D power law in compute, L = E + A C^-a (Huber on log loss, grid +
    L-BFGS-B). Ignores how compute is split between N and D. No interval."""

    name = "baseline:power-law-C"

    def __init__(self, compute_col: str = "C", target_col: str = "loss"):
        self.compute_col, self.target_col = compute_col, target_col

    def fit(self, train):
        import warnings

        C = compute_of(train, self.compute_col)
        y = train[self.target_col].to_numpy(float)
        law = _PowerCompute()
        if len(y) < 3:
            return _Constant(float(np.mean(y[C == C.max()])))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = fit_law(law, {"C": C}, y, loss=huber(1e-3), n_polish=8)
        return _PowerFitted(law, np.asarray(res.theta), self.compute_col)


class _PowerFitted:
    def __init__(self, law, theta, compute_col):
        self.law, self.theta, self.compute_col = law, theta, compute_col

    def predict(self, test):
        return self.law.predict(self.theta, C=compute_of(test, self.compute_col))

    def interval(self, test, level):
        return None


def supervised_adapters(form: str, *, baselines: bool = True, compute_col: str = "C", **kw):
    """The adapters `lmforecast backtest --method supervised` runs: the form (default
    intervals) and, beside it, the naive baselines."""
    out = [SupervisedAdapter(form, **kw)]
    if baselines:
        out += [PersistenceBaseline(compute_col), PowerLawBaseline(compute_col)]
    return out
