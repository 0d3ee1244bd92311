"""Adapters that plug forecasting methods into the backtest engine (`engine.Adapter`).

An adapter has a `name` and `fit(train: DataFrame) -> fitted`; the fitted object has
`predict(test) -> array` and `interval(test, level) -> (lower, upper) | None`. To backtest a new
method (distillation, FLP, OSL, ...) write these two small classes; nothing else changes.
"""

from __future__ import annotations

import numpy as np

from ..fitting import fit_law, huber
from ..laws.compute_power import ComputePower
from .engine import compute_of


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
        law = ComputePower()
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
