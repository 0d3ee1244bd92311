"""Distillation scaling laws and compute-optimal distillation (Busbridge et al. 2025)."""

from .inputs import distill_runs_from_frame
from .model import DistillationScalingLaw
from .presets import DISTILL_PRESETS
from .simulate import distillation_design, simulate_distillation_runs

__all__ = [
    "DistillationScalingLaw",
    "distill_runs_from_frame",
    "DISTILL_PRESETS",
    "distillation_design",
    "simulate_distillation_runs",
]
