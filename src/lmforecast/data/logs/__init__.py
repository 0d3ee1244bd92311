"""Training logs (W&B CSV exports, TensorBoard event files, JSONL/CSV step logs) to the runs and
checkpoints tables every method reads (`docs/logs.md`)."""

from .build import SCHEDULES, ImportedRuns, import_logs, parse_final, warn_if_misused
from .readers import FORMATS, read_log, wandb_kind

__all__ = [
    "FORMATS",
    "SCHEDULES",
    "ImportedRuns",
    "import_logs",
    "parse_final",
    "read_log",
    "wandb_kind",
    "warn_if_misused",
]
