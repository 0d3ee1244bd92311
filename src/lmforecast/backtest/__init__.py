"""Backtesting forecasts: rolling origin in compute, generic over methods (docs/trust.md).

from lmforecast.backtest import rolling_origin, SupervisedAdapter, PersistenceBaseline
bt = rolling_origin(runs, [SupervisedAdapter("chinchilla-gamma"), PersistenceBaseline()])
print(bt.summary())
"""

from .adapters import PersistenceBaseline, PowerLawBaseline, SupervisedAdapter, supervised_adapters
from .engine import (
    Adapter,
    BacktestResult,
    Fitted,
    check_cutoffs,
    choose_cutoffs,
    compute_of,
    rolling_origin,
)

__all__ = [
    "Adapter",
    "Fitted",
    "BacktestResult",
    "rolling_origin",
    "choose_cutoffs",
    "check_cutoffs",
    "compute_of",
    "SupervisedAdapter",
    "PersistenceBaseline",
    "PowerLawBaseline",
    "supervised_adapters",
]
