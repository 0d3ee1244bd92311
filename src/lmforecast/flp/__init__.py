"""FLP and FLP-M (Chen et al., "Scaling Laws for Predicting Downstream Performance in LLMs")."""

from .mixture import FLPM
from .model import FLP, METHODS, relative_error
from .tasks import TaskSettings, known_tasks, table1, table1_flops, table2, task_settings

__all__ = [
    "FLP",
    "FLPM",
    "METHODS",
    "relative_error",
    "TaskSettings",
    "known_tasks",
    "table1",
    "table1_flops",
    "table2",
    "task_settings",
]
