"""IsoFLOP estimators of compute-optimal allocation (Hoffmann et al. 2022, Approaches 1 and 2)."""

from .approaches import APPROACHES, approach3, budget_minima, fit_isoflop, power_laws
from .profiles import MIN_SIZES, isoflop_table
from .result import IsoFlopResult, check_isoflop
from .simulate import simulate_isoflops

__all__ = [
    "APPROACHES",
    "MIN_SIZES",
    "IsoFlopResult",
    "approach3",
    "budget_minima",
    "check_isoflop",
    "fit_isoflop",
    "isoflop_table",
    "power_laws",
    "simulate_isoflops",
]
