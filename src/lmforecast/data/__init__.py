"""Tables in and out: readers for CSV/Parquet/JSONL and validation with row-level messages."""

from .evals import load_pythia, read_harness
from .io import read_table
from .validate import check_columns, check_no_duplicates, numeric_column

__all__ = [
    "read_table",
    "check_columns",
    "numeric_column",
    "check_no_duplicates",
    "read_harness",
    "load_pythia",
]
