"""The shared fitting engine: robust losses, grid + L-BFGS-B fits, bootstrap, results."""

from .bootstrap import bootstrap_fit
from .engine import fit_law, grid_to_array, refit_from
from .losses import Loss, huber, squared
from .result import FitResult

__all__ = [
    "fit_law",
    "refit_from",
    "grid_to_array",
    "bootstrap_fit",
    "Loss",
    "huber",
    "squared",
    "FitResult",
]
