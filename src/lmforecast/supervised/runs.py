"""Read a supervised runs table: columns N, D (or C) and loss, validated at the door."""

from __future__ import annotations

import sys
import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from ..data.validate import numeric_column
from ..errors import InputError
from . import forms as fm

if TYPE_CHECKING:  # pandas loads where a table is read or built, not at import
    import pandas as pd

# below these, no language model was ever trained (the bundled toy zoo: N >= 3e3, D >= 1.6e4,
# largest D 3e6), but sizes in billions (N) or token counts in billions or millions (D) land
# there (every value; for N, any value: sizes in millions put only the small models below 1e3)
UNIT_LIMITS = (
    ("N", 1e3, "1e3", "parameters are counted one by one (a 70M model is 7e7)"),
    ("D", 1e5, "1e5", "tokens are counted one by one (20B tokens is 2e10)"),
)
LOSS_MAX = 20.0  # nats: a language model's cross-entropy is a few nats, even at initialisation


def warn_units(data: pd.DataFrame, n_col: str, d_col: str, loss_col: str) -> None:
    """Warn (not refuse) about values in likely wrong units: N or D in millions or billions, a
    loss in percent or a perplexity, which fit without error and forecast nonsense."""
    names = {"N": n_col, "D": d_col}
    for key, floor, floor_text, why in UNIT_LIMITS:
        v = data[key].to_numpy(float)
        low = int(np.sum(v < floor))
        if low == v.size:
            warnings.warn(
                f"column {names[key]!r}: every value is below {floor_text} "
                f"(largest {v.max():.4g}): {why}; in millions or billions?",
                stacklevel=4,
            )
        elif low and key == "N":  # sizes in millions: the small ones fall below, the rest not
            warnings.warn(
                f"column {names[key]!r}: {low} of {v.size} values are below "
                f"{floor_text} (smallest {v.min():.4g}): {why}; in millions?",
                stacklevel=4,
            )
    top = float(data["loss"].max())
    if top > LOSS_MAX:
        warnings.warn(
            f"column {loss_col!r}: losses up to {top:.4g}, but a cross-entropy is a few nats; a "
            "perplexity (use its log) or a percent?",
            stacklevel=4,
        )


def runs_from_frame(
    df: pd.DataFrame,
    n_col: str = "N",
    d_col: str = "D",
    c_col: str = "C",
    loss_col: str = "loss",
    what: str = "runs",
    replicates: str | None = None,
    u_col: str = "U",
) -> pd.DataFrame:
    """Validate a runs table and return columns N, D, loss (D = C/(6N) when only C is given).

    Rows sharing (N, D) are refused unless `replicates` is "mean" or "keep"
    (`forms.collapse_replicates`); the replicate spread is stored in ``attrs["replicate_sd"]``.
    Rows sharing (N, D) whose unique tokens (column `u_col`, where present) differ are repeated-data
    runs, not replicates: always refused (`--form data-constrained` models them)."""
    import pandas as pd

    if len(df) == 0:
        raise InputError(f"{what}: the table has no rows")
    cols = list(df.columns)
    if n_col not in cols or loss_col not in cols or (d_col not in cols and c_col not in cols):
        need = [n_col, f"{d_col} (or {c_col})", loss_col]
        missing = [
            c
            for c, ok in zip(
                need, [n_col in cols, d_col in cols or c_col in cols, loss_col in cols]
            )
            if not ok
        ]
        raise InputError(
            f"{what}: missing column(s) {', '.join(map(repr, missing))}; found "
            f"{', '.join(map(repr, cols))} (name them with --n-col/--d-col/--c-col/"
            "--loss-col; Python: n_col=, d_col=, c_col=, loss_col=)"
        )
    N = numeric_column(df, n_col, positive=True, what=what)
    if d_col in cols:
        D = numeric_column(df, d_col, positive=True, what=what)
    else:
        D = numeric_column(df, c_col, positive=True, what=what) / (6.0 * N)
    L = numeric_column(df, loss_col, positive=True, what=what)
    out = pd.DataFrame({"N": N, "D": D, "loss": L})
    warn_units(out, n_col, d_col if d_col in cols else c_col, loss_col)
    if u_col in cols:
        fm.refuse_repeated_data(out, numeric_column(df, u_col, positive=True, what=what), u_col)
    budget = None
    if {d_col, c_col} <= set(cols):  # a C beside D is only read for grouping: never refused
        budget = pd.to_numeric(df[c_col], errors="coerce").to_numpy(float)
        budget = budget if np.all(np.isfinite(budget) & (budget > 0)) else None
    out, sd = fm.collapse_replicates(out, replicates)
    out.attrs["replicate_sd"] = sd
    if budget is not None:  # the user's own budgets group isoFLOP profiles (`optima_scatter`)
        by_nd = pd.Series(budget).groupby([df[n_col].to_numpy(float), D]).first()
        out.attrs["budget"] = by_nd.loc[list(zip(out["N"], out["D"]))].to_numpy(float)
    return out


COLUMN_ARGS = ("n_col", "d_col", "c_col", "loss_col", "u_col")


def runs_table(runs, *, N=None, D=None, C=None, loss=None, cols=None) -> pd.DataFrame:
    """The table a Python fit was given: a DataFrame, a mapping of columns, or arrays N, D (or
    C), loss; anything else, both at once, or an unknown column argument is an InputError."""
    import pandas as pd

    bad = sorted(set(cols or {}) - set(COLUMN_ARGS))
    if bad:
        raise InputError(
            f"fit: unknown argument(s) {', '.join(bad)}; the column arguments are "
            f"{', '.join(COLUMN_ARGS)}"
        )
    arrays = {k: v for k, v in (("N", N), ("D", D), ("C", C), ("loss", loss)) if v is not None}
    if runs is None:
        if "N" not in arrays or "loss" not in arrays or not ({"D", "C"} & set(arrays)):
            raise InputError("fit: give a table, or arrays N, D (or C) and loss")
        try:
            return pd.DataFrame({k: np.ravel(np.asarray(v, float)) for k, v in arrays.items()})
        except ValueError as exc:
            raise InputError(f"fit: arrays N, D/C, loss: {exc}") from None
    if arrays:
        raise InputError(f"fit: give a table or arrays ({', '.join(arrays)}), not both")
    if isinstance(runs, pd.DataFrame):
        return runs
    if isinstance(runs, Mapping):
        return pd.DataFrame(dict(runs))
    raise InputError(
        f"fit: expected a DataFrame or a mapping of columns (N, D or C, loss), got "
        f"{type(runs).__name__}; for a plain array use pd.DataFrame(a, columns=['N', 'D', 'loss'])"
    )


def positive_nd(N, D) -> tuple[np.ndarray, np.ndarray]:
    """N and D as float arrays; a value that is not > 0 (or NaN) is an InputError naming it (the
    laws' logarithms would otherwise return nan with numpy warnings). +inf is kept: the law's
    limit (infinite data, as the distillation ratios use it)."""
    # predict(runs) as fit(runs): its N and D columns. No DataFrame exists before pandas is
    # loaded, so a forecast from arrays does not import it just for this check.
    pd = sys.modules.get("pandas")
    if pd is not None and isinstance(N, pd.DataFrame):
        if D is not None:
            raise InputError("give a table with columns N and D, or N and D, not both")
        t = N
        if "D" not in t.columns and {"N", "C"} <= set(t.columns):  # as fit: D = C / (6 N)
            t = t.assign(D=t["C"].to_numpy(float) / (6.0 * t["N"].to_numpy(float)))
        missing = [c for c in ("N", "D") if c not in t.columns]
        if missing:
            raise InputError(
                f"table: missing column(s) {', '.join(map(repr, missing))} (or 'C' for D); "
                f"found {', '.join(map(repr, t.columns))}"
            )
        N, D = t["N"], t["D"]
    if D is None:
        raise InputError("give D (training tokens) beside N, or a table with columns N and D")
    try:
        N, D = np.asarray(N, float), np.asarray(D, float)
    except (TypeError, ValueError):
        bad = next(x for x in (N, D) if not _is_numeric(x))
        raise InputError(
            f"N and D must be numbers, got {bad!r}"
            + (" (write 7e9, not '7B')" if isinstance(bad, str) else "")
        ) from None
    for name, v in (("N", N), ("D", D)):
        bad = ~(v > 0)  # NaN, 0, negatives, -inf
        if bad.any():
            raise InputError(f"{name} must be > 0, got {v[bad].ravel()[0]:g}")
    return N, D


def _is_numeric(x) -> bool:
    try:
        np.asarray(x, float)
    except (TypeError, ValueError):
        return False
    return True
