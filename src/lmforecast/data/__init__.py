"""Tables in and out: readers for CSV/Parquet/JSONL and validation with row-level messages.

The names are loaded on first use (module ``__getattr__``): importing one submodule, e.g.
``lmforecast.data.io`` for a CLI verb, does not pull the evals harness reader and its pyarrow."""

from importlib import import_module

_WHERE = {
    "read_table": ".io",
    "check_columns": ".validate",
    "numeric_column": ".validate",
    "check_no_duplicates": ".validate",
    "read_harness": ".evals",
    "load_pythia": ".evals",
}

_SUBMODULES = ("evals", "io", "logs", "suites", "validate")

__all__ = list(_WHERE)


def __getattr__(name: str):
    if name in _WHERE:
        value = getattr(import_module(_WHERE[name], __name__), name)
        globals()[name] = value
        return value
    if name in _SUBMODULES:  # `lmforecast.data.evals` without importing it first, as before
        return import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
