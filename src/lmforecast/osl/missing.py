"""OSL's missing-score policy (Ruan et al., App. B.3): empty benchmark cells are imputed by
iterative PCA as the paper does, and said in a note; ``missing="refuse"`` refuses the table
instead. Also the note naming the columns that span the capability space when some of the
paper's benchmarks are absent. `missing_notes` gives the notes `lmforecast osl ...` prints."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from ..errors import InputError
from ..params import Options
from .data import BASE_METRICS, MODEL, default_metrics

#: what to do with empty benchmark cells: impute them (App. B.3) or refuse the table
MISSING = Options(("impute", "refuse"))


def missing_notes(
    table: pd.DataFrame,
    *,
    metrics=None,
    target: str | None = None,
    exclude=(),
    missing: str = "impute",
) -> list[str]:
    """Notes on a benchmark `table` (as `osl.data.read_benchmarks` returns it): the benchmark
    columns used (`metrics`, default `default_metrics`) when some of the paper's are absent,
    and how many cells are empty among the models with a `target` score (imputed as App. B.3
    does); InputError naming the first empty cell with ``missing="refuse"``."""
    MISSING.check("missing", missing)
    notes = []
    exclude = tuple(exclude) + ((target,) if target else ())  # the target is never a predictor
    if not metrics:
        with warnings.catch_warnings():  # the fit itself says which columns it leaves out
            warnings.simplefilter("ignore")
            metrics = default_metrics(table, exclude)
        known = [m for m in BASE_METRICS if m in table.columns]
        absent = [m for m in BASE_METRICS if m not in table.columns and m not in exclude]
        if known and absent:
            notes.append(
                f"benchmarks: the capability space uses {', '.join(metrics)}; the paper's "
                f"{', '.join(absent)} {'is' if len(absent) == 1 else 'are'} not in the table"
            )
    metrics = [m for m in metrics if m in table.columns and m != target]
    if not metrics or not all(pd.api.types.is_numeric_dtype(table[m]) for m in metrics):
        return notes  # the fit names the problem
    if target in table.columns:  # models without the target are not fitted: not counted
        table = table[table[target].notna()].reset_index(drop=True)
    miss = np.isnan(table[metrics].to_numpy(float))
    if not miss.any():
        return notes
    i, j = (int(k[0]) for k in np.nonzero(miss))
    if missing == "refuse":
        raise InputError(
            f"benchmarks: column {metrics[j]!r} row {i + 1} ({table[MODEL].iloc[i]}) is empty "
            f"and missing='refuse' (CLI: --missing refuse) was given ({int(miss.sum())} empty "
            "cell(s) in the benchmark columns); fill them, or use missing='impute' (CLI: "
            "--missing impute, the paper's PCA imputation)"
        )
    notes.append(
        f"benchmarks: {int(miss.sum())} empty cell(s) in {int(miss.any(axis=0).sum())} benchmark "
        "column(s) were imputed by iterative PCA as the paper does (App. B.3); "
        "missing='refuse' (CLI: --missing refuse) refuses them"
    )
    return notes


__all__ = ["MISSING", "missing_notes"]
