"""IsoFLOP profiles: validate a table of runs and group it into compute budgets."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pandas loads inside the functions that use it
    import pandas as pd

from ..data.validate import numeric_column
from ..errors import DomainWarning, InputError

MIN_SIZES = 3  # a parabola in log N needs three sizes per budget
# runs whose FLOPs lie within 5% of the previous run's (sorted) share a budget: a ladder that
# records each run's exact FLOPs (attention, embeddings, a rounded step count) spreads one
# nominal budget over a few percent, while isoFLOP budgets sit at least ~1.5x apart
BUDGET_TOLERANCE = 0.05


def budget_flops(N, D) -> np.ndarray:
    """6ND rounded to three significant digits: the budget a run belongs to when the table
    names none (runs of one isoFLOP profile agree to rounding of their token counts)."""
    return np.array([float(f"{v:.3g}") for v in 6.0 * np.asarray(N, float) * np.asarray(D, float)])


def group_budgets(C) -> tuple[np.ndarray, int]:
    """(budget C of every run, number of distinct FLOPs values merged): sorted FLOPs chained
    into one budget while each lies within `BUDGET_TOLERANCE` of the one before; a merged
    budget's C is the geometric mean of its runs' FLOPs (an exact repeat keeps its value)."""
    C = np.asarray(C, float)
    order = np.argsort(C, kind="stable")
    labels = np.zeros(C.size, int)
    for k in range(1, C.size):
        same = C[order[k]] <= C[order[k - 1]] * (1 + BUDGET_TOLERANCE)
        labels[order[k]] = labels[order[k - 1]] + (0 if same else 1)
    out, merged = C.copy(), 0
    for g in np.unique(labels):
        vals = C[labels == g]
        if np.unique(vals).size > 1:
            merged += np.unique(vals).size
            out[labels == g] = float(np.exp(np.mean(np.log(vals))))
    return out, merged


def isoflop_table(
    df: pd.DataFrame,
    n_col: str = "N",
    d_col: str = "D",
    c_col: str = "C",
    loss_col: str = "loss",
    what: str = "runs",
    min_sizes: int = MIN_SIZES,
    budget_col: str = "budget",
) -> pd.DataFrame:
    """Columns C, N, D, loss, budget (index of the budget, grouped by C).

    A `budget_col` column, when present, names each run's budget (its nominal FLOPs, or any
    label: then C is the geometric mean of the group's FLOPs). Else runs are grouped by C taken
    from the table when present, else 6ND rounded to three significant digits, FLOPs within
    `BUDGET_TOLERANCE` of each other sharing one budget (`group_budgets`). D = C/(6N) when only
    C is given. Every budget must hold at least `min_sizes` distinct sizes. What the grouping
    did is said in ``attrs["grouping"]`` (shown by `isoflop fit`).
    """
    import pandas as pd

    cols = list(df.columns)
    if len(df) == 0:
        raise InputError(f"{what}: the table has no rows")
    for name, col, default in (("c_col", c_col, "C"), ("d_col", d_col, "D")):
        if col != default and col not in cols:  # named, so never silently ignored
            raise InputError(
                f"--{name.replace('_', '-')} {col!r} ({name}=): no such column in {what}; it "
                f"has {', '.join(map(repr, map(str, cols)))}"
            )
    missing = [c for c in (n_col, loss_col) if c not in cols]
    if d_col not in cols and c_col not in cols:
        missing.append(f"{d_col} (or {c_col})")
    if missing:
        raise InputError(
            f"{what}: missing column(s) {', '.join(map(repr, missing))}; found "
            f"{', '.join(map(repr, cols))}"
        )
    N = numeric_column(df, n_col, positive=True, what=what)
    L = numeric_column(df, loss_col, positive=True, what=what)
    if c_col in cols:
        C = numeric_column(df, c_col, positive=True, what=what)
        D = numeric_column(df, d_col, positive=True, what=what) if d_col in cols else C / (6.0 * N)
    else:
        D = numeric_column(df, d_col, positive=True, what=what)
        C = budget_flops(N, D)
    C, grouping = _budgets(df, C, budget_col, c_col if c_col in cols else "6ND", what)
    out = pd.DataFrame({"C": C, "N": N, "D": D, "loss": L})
    budgets = np.unique(C)
    out["budget"] = np.searchsorted(budgets, C)
    # one order whatever the file's: the bootstrap resamples rows by position
    out = out.sort_values(["budget", "N", "loss"], kind="stable").reset_index(drop=True)
    rep = out.duplicated(["budget", "N"], keep=False)
    if rep.any():
        g = out[rep].iloc[0]
        warnings.warn(
            f"{what}: {int(rep.sum())} rows share a budget and a size with another row "
            f"(e.g. C={g['C']:.4g}, N={g['N']:.4g}): seed replicates are fine, but several "
            "recipes or data sets mixed in one table give an exponent of none of them; "
            "fit each recipe on its own",
            DomainWarning,
            stacklevel=2,
        )
    for b, g in out.groupby("budget"):
        k = g["N"].nunique()
        if k < min_sizes:
            raise InputError(
                f"{what}: budget C={budgets[b]:.4g} has {k} model size(s); an isoFLOP profile "
                f"needs at least {min_sizes} sizes per budget ({grouping}; runs whose FLOPs "
                f"differ by more than {100 * BUDGET_TOLERANCE:g}% are separate budgets: add a "
                f"{budget_col!r} column naming each run's budget)"
            )
    if len(budgets) < 2:
        raise InputError(
            f"{what}: one compute budget ({budgets[0]:.4g}); the power laws "
            "N*(C), D*(C) need at least 2 budgets"
        )
    out.attrs["grouping"] = grouping
    return out


def _budgets(df: pd.DataFrame, C: np.ndarray, budget_col: str, source: str, what: str):
    """(the budget C of every run, a sentence on how runs were grouped into budgets)."""
    import pandas as pd

    if budget_col in df.columns:
        labels = df[budget_col]
        if labels.isna().any():
            raise InputError(
                f"{what}: column {budget_col!r} has an empty cell (row "
                f"{int(np.flatnonzero(labels.isna())[0]) + 1})"
            )
        num = pd.to_numeric(labels, errors="coerce")
        if num.notna().all() and (num > 0).all():
            return num.to_numpy(float), (
                f"budgets from column {budget_col!r} (its values as the budgets' FLOPs)"
            )
        out = np.asarray(C, float).copy()
        for _, idx in df.groupby(labels.astype(str), sort=False).indices.items():
            out[idx] = float(np.exp(np.mean(np.log(out[idx]))))
        return out, (
            f"budgets from column {budget_col!r} (each budget's C: the geometric mean "
            f"of its runs' {source})"
        )
    grouped, merged = group_budgets(C)
    n = np.unique(grouped).size
    if merged:
        return grouped, (
            f"{merged} distinct {source} values grouped into budgets (runs within "
            f"{100 * BUDGET_TOLERANCE:g}% of each other share one; its C is their "
            f"geometric mean): {n} budgets"
        )
    return grouped, f"budgets by {source}: {n} budgets"
