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

from ..backtest.adapters import PersistenceBaseline, PowerLawBaseline
from .model import SupervisedScalingLaw
from .point_adapter import PointFitAdapter, _n_d
from .reach import ReachWarning


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
        # a backtest extrapolates on purpose (its table says how far): no reach warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ReachWarning)
            return self.est.predict_interval(*_n_d(test, **self.cols), level=level)

    def terms(self, test) -> dict:
        N, D = _n_d(test, **self.cols)
        t = self.est.forecast_terms(N, D)
        out = {
            "noise": np.full(len(N), t["noise"]),
            "s_boot": t["s_boot"],
            "s_inner": np.full(len(N), t["s_inner"]),
            "r_inner": np.full(len(N), t["r_inner"]),
        }
        if t["excess"] is not None:  # the stack's untested reach (`stack.untested_reach`)
            out["excess"] = t["excess"]
        cal = self.est.result_.meta.get("intervals") or {}
        if "k_user" in cal:  # calibration="prior+backtest": the user's own k and its count
            out["k_user"] = np.full(len(N), cal["k_user"])
            out["n_user"] = np.full(len(N), cal["backtest_forecasts"])
        return out


class PointAdapter(PointFitAdapter):
    """A point fit of `form` from scratch (no bootstrap); interval = run scatter and delta-method
    parameter spread (forecast * exp(+-z s))."""

    def __init__(self, form: str, *, loss: str = "huber", name: str | None = None, **kwargs):
        super().__init__(SupervisedScalingLaw, form, loss=loss, name=name, **kwargs)


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
