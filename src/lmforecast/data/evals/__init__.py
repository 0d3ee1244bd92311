"""lm-evaluation-harness results -> one tidy table, split by concept:

- `harness`: reading harness JSON (both layouts; the docstring there lists what is read);
- `table`: the tidy table's columns, dtypes, validation, reading and writing;
- `registry`: the built-in Pythia models and user models tables (params, tokens);
- `pythia`: the bundled Pythia zero-shot table;
- `views`: wide views (observational-scaling-law frame, salience scores).

Every public name is re-exported here, so `lmforecast.data.evals.<name>` keeps working.
"""

from .harness import parse_step, read_harness
from .pythia import load_pythia, make_pythia_table, read_evals
from .registry import (
    BUNDLED_PYTHIA_TASKS,
    PYTHIA_ARCHITECTURES,
    PYTHIA_FINAL_STEP,
    PYTHIA_TOKENS,
    PYTHIA_TOKENS_PER_STEP,
    PYTHIA_TOTAL_PARAMS,
    canonical_model_name,
    lookup_model,
    match_model_name,
    match_model_names,
    models_registry,
    pythia_models,
    read_models,
)
from .table import (
    ALL_COLUMNS,
    COLUMNS,
    META_COLUMNS,
    normalize,
    read_evals_table,
    write_evals_table,
)
from .views import (
    FAMILY_CHOICES,
    default_family,
    family_models,
    select_rows,
    to_benchmark_frame,
    to_scores,
)

__all__ = [
    "ALL_COLUMNS",
    "BUNDLED_PYTHIA_TASKS",
    "COLUMNS",
    "META_COLUMNS",
    "PYTHIA_ARCHITECTURES",
    "PYTHIA_FINAL_STEP",
    "PYTHIA_TOKENS",
    "PYTHIA_TOKENS_PER_STEP",
    "PYTHIA_TOTAL_PARAMS",
    "canonical_model_name",
    "FAMILY_CHOICES",
    "default_family",
    "family_models",
    "load_pythia",
    "lookup_model",
    "match_model_name",
    "match_model_names",
    "make_pythia_table",
    "models_registry",
    "normalize",
    "parse_step",
    "pythia_models",
    "read_evals",
    "read_evals_table",
    "read_harness",
    "read_models",
    "select_rows",
    "to_benchmark_frame",
    "to_scores",
    "write_evals_table",
]
