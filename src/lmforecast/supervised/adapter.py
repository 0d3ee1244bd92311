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
from ..backtest.suites import score_forecasts, suite_forecasts, suite_splits
from ..errors import InputError
from ..forecast import Answer
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


def check_trust_runs(runs: pd.DataFrame) -> pd.DataFrame:
    """The N, D, loss columns of `runs`, refused in one line where no honest split of
    `backtest.suites.suite_splits` leaves >= 3 model sizes and 8 runs to fit."""
    data = runs[["N", "D", "loss"]]
    if not suite_splits(data):
        raise InputError(
            f"no split leaves >= 3 model sizes and 8 runs to fit ({data['N'].nunique()} sizes, "
            f"{len(data)} runs)"
        )
    return data


def trust_table_answer(runs: pd.DataFrame, form: str = "auto", *, level: float = 0.9, **kw):
    """The trust table of docs/trust.md on the user's own runs (`backtest --suite`): the honest
    splits of `backtest.suites.suite_splits` (largest size out, two largest out, top 20% of
    compute out), each method of `trust_methods(form, **kw)` fitted below and forecasting
    above, scored per method (`score_forecasts`). An `Answer` whose fields are the level, the
    table and every forecast, and the forecasts as a table; `check_trust_runs` refuses runs
    too few to split."""
    data = check_trust_runs(runs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = suite_forecasts({"runs": {"runs": data}}, trust_methods(form, **kw), level=level)
    table = score_forecasts(f, by=("method",))
    text = (
        f"Trust table ({100 * level:g}% intervals; splits: {', '.join(dict.fromkeys(f['split']))}; "
        f"{len(f) // f['method'].nunique()} forecasts per method; a non-finite interval counts "
        "as a miss; coverage and mean error weigh each split equally, and each forecast within "
        "its split)\n" + table.to_string(index=False, float_format=lambda v: f"{v:.3g}")
    )
    fields = {
        "level": level,
        "table": table.to_dict(orient="records"),
        "forecasts": f.to_dict(orient="records"),
    }
    return Answer(fields, text), f
