"""FLP and FLP-M (Chen et al., "Scaling Laws for Predicting Downstream Performance in LLMs")."""

from .candidates import CANDIDATES, LossToPerformanceComparison, compare_loss_to_performance
from .mixture import FLPM
from .model import FLP, METHODS, relative_error
from .single_distribution import SingleDistributionCheck, single_distribution_check
from .tasks import TaskSettings, known_tasks, table1, table1_flops, table2, task_settings

__all__ = [
    "CANDIDATES",
    "FLP",
    "FLPM",
    "LossToPerformanceComparison",
    "METHODS",
    "SingleDistributionCheck",
    "compare_loss_to_performance",
    "relative_error",
    "single_distribution_check",
    "TaskSettings",
    "known_tasks",
    "table1",
    "table1_flops",
    "table2",
    "task_settings",
]
