"""Data-constrained scaling (Muennighoff et al. 2023): repeated epochs and excess parameters."""

from .model import FITS, DataConstrainedLaw, constrained_runs

__all__ = ["DataConstrainedLaw", "constrained_runs", "FITS"]
