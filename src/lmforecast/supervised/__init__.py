"""Supervised compute laws L(N, D): fit, intervals, compute-optimal allocation, presets."""

from .model import BASE_FORMS, FORMS, SupervisedScalingLaw, runs_from_frame
from .presets import PRESETS

__all__ = ["SupervisedScalingLaw", "runs_from_frame", "PRESETS", "FORMS", "BASE_FORMS"]
