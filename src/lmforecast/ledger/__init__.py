"""A forecast ledger in SQLite: register forecasts before the run, resolve, score.

See `docs/ledger.md`. `Ledger` writes and reads one file; `score_records` scores a selection.
"""

from .schema import SCHEMA_VERSION, create_v1
from .score import over_time, score_records, score_table, winkler_score
from .store import Ledger, open_ledger

__all__ = [
    "Ledger",
    "open_ledger",
    "score_records",
    "score_table",
    "over_time",
    "winkler_score",
    "create_v1",
    "SCHEMA_VERSION",
]
