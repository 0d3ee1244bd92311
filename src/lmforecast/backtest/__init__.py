"""Backtesting forecasts: rolling origin in compute, generic over methods (docs/trust.md).

from lmforecast.backtest import rolling_origin, PersistenceBaseline
from lmforecast.supervised.adapter import SupervisedAdapter
bt = rolling_origin(runs, [SupervisedAdapter(), PersistenceBaseline()])

This package is the lower layer: it knows nothing of the laws it backtests (the supervised
adapter lives in `lmforecast.supervised.adapter`).
print(bt.summary())
"""

from .adapters import PersistenceBaseline, PowerLawBaseline
from .engine import (
    Adapter,
    BacktestResult,
    Fitted,
    check_cutoffs,
    choose_cutoffs,
    compute_of,
    forecast_split,
    rolling_origin,
)

__all__ = [
    "Adapter",
    "Fitted",
    "BacktestResult",
    "rolling_origin",
    "forecast_split",
    "choose_cutoffs",
    "check_cutoffs",
    "compute_of",
    "PersistenceBaseline",
    "PowerLawBaseline",
]
