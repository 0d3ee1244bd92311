"""Downstream forecasts from evaluation-harness tables: compute -> loss -> score, with the
paper's FLP (Chen et al.) kept as one method and the field's fixes for its failure modes
(sigmoid map with a floor, fits that keep near-chance checkpoints, ensembles, selection by
backtest error). See docs/downstream.md."""

from .backtest import Backtest, backtest, pythia_backtests
from .chance import chance_level, chance_table
from .forecaster import DEFAULT_METHOD, ENSEMBLE, METHODS, DownstreamForecaster
from .reach import ForecastReachWarning
from .tables import TaskData, flp_tables, task_data

__all__ = [
    "Backtest",
    "DEFAULT_METHOD",
    "DownstreamForecaster",
    "ENSEMBLE",
    "ForecastReachWarning",
    "METHODS",
    "TaskData",
    "backtest",
    "chance_level",
    "chance_table",
    "flp_tables",
    "pythia_backtests",
    "task_data",
]
