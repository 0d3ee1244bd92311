"""Validation helpers whose messages name the column, row and value at fault.

Row numbers in messages are 1-based data rows (the header is not counted).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pandas loads inside the functions that use it
    import pandas as pd

from ..errors import InputError, fmt_value


def check_columns(df: pd.DataFrame, required: Sequence[str], what: str = "table") -> None:
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise InputError(
            f"{what}: missing column(s) {', '.join(repr(m) for m in missing)}; "
            f"found {', '.join(repr(c) for c in df.columns)}"
        )


def numeric_column(
    df: pd.DataFrame,
    col: str,
    *,
    positive: bool = False,
    lower: float | None = None,
    upper: float | None = None,
    allow_nan: bool = False,
    what: str = "table",
) -> np.ndarray:
    """Column as float array; one-line error naming the first offending row and value."""
    import pandas as pd

    check_columns(df, [col], what)
    raw = df[col]
    vals = pd.to_numeric(raw, errors="coerce").to_numpy(float)
    bad_parse = np.isnan(vals) & raw.notna().to_numpy()
    if bad_parse.any():
        i = int(np.argmax(bad_parse))
        raise InputError(
            f"{what}: column {col!r} row {i + 1}: {fmt_value(raw.iloc[i])} is not a number"
        )
    if not allow_nan:
        nan = ~np.isfinite(vals)
        if nan.any():
            i = int(np.argmax(nan))
            raise InputError(
                f"{what}: column {col!r} row {i + 1}: value {fmt_value(raw.iloc[i])} is missing "
                "or not finite"
            )
    checks = []
    if positive:
        checks.append((vals <= 0, "must be > 0"))
    if lower is not None:
        checks.append((vals < lower, f"must be >= {lower:g}"))
    if upper is not None:
        checks.append((vals > upper, f"must be <= {upper:g}"))
    for mask, msg in checks:
        mask = mask & np.isfinite(vals)
        if mask.any():
            i = int(np.argmax(mask))
            raise InputError(
                f"{what}: column {col!r} row {i + 1}: value {fmt_value(vals[i])} {msg}"
            )
    return vals


def check_no_duplicates(
    df: pd.DataFrame,
    cols: Sequence[str],
    what: str = "table",
    *,
    values: Sequence[str] = (),
    hint: str | None = None,
    row_numbers: Sequence[int] | None = None,
) -> None:
    """Refuse two rows with the same key `cols` (one run listed twice).

    With `values`, the message says whether the second row repeats the first exactly or
    contradicts it (same key, different measured values). `hint` says how to make rows distinct.
    `row_numbers`: the 1-based row numbers of `df`'s rows in the user's table, when `df` is a
    subset of it (default: positions in `df`).
    """
    cols = list(cols)
    missing = [c for c in cols + list(values) if c not in df.columns]
    if missing:
        check_columns(df, cols + list(values), what)
    key = df[cols]
    dup = key.duplicated(keep="first").to_numpy()
    if not dup.any():
        return
    i = int(np.argmax(dup))
    same = (key == key.iloc[i]) | (key.isna() & key.iloc[i].isna())
    first = int(np.argmax(same.all(axis=1).to_numpy()))
    num = (lambda j: j + 1) if row_numbers is None else (lambda j: int(row_numbers[j]))
    keys = ", ".join(f"{c}={fmt_value(df[c].iloc[i])}" for c in cols)
    detail = ""
    diff = [c for c in values if not _same_value(df[c].iloc[i], df[c].iloc[first])]
    if diff:  # the same run twice with different measurements: a contradiction
        c = diff[0]
        detail = (
            f" but contradicts it: {c}={fmt_value(df[c].iloc[i])} here, "
            f"{fmt_value(df[c].iloc[first])} in row {num(first)}"
        )
    fix = hint or (
        f"rows are distinct runs only if they differ in {', '.join(repr(c) for c in cols)}; "
        "remove the repeated row"
    )
    raise InputError(f"{what}: row {num(i)} duplicates row {num(first)} ({keys}){detail}; {fix}")


def _same_value(a, b) -> bool:
    try:
        fa, fb = float(a), float(b)
    except (TypeError, ValueError):
        return a == b
    return (fa == fb) or (np.isnan(fa) and np.isnan(fb))


DEFAULT_MAX_ROWS = 100_000  # runs/checkpoints tables: real campaigns have thousands


def check_row_limit(n: int, limit: int, what: str) -> None:
    """Refuse, before any work, a table longer than `limit` rows (``--max-rows`` raises it):
    the fits' time grows with the rows, and a million-row table would run for hours."""
    if n > limit:
        raise InputError(
            f"{what}: {n:,} rows is more than the limit of {limit:,}; pass --max-rows {n} "
            "to fit it anyway (slow), or aggregate the table first"
        )


def check_min_rows(n: int, minimum: int, what: str, why: str = "") -> None:
    """Refuse a table with fewer than `minimum` usable rows (a fit needs more data than
    parameters)."""
    if n < minimum:
        raise InputError(
            f"{what}: {n} usable row(s); at least {minimum} are needed"
            + (f" ({why})" if why else "")
        )


def check_run_tables(
    runs: pd.DataFrame,
    checkpoints: pd.DataFrame | None = None,
    model_col: str = "model",
    step_col: str = "step",
    what: str = "runs",
) -> None:
    """Each model is listed once in a runs table, each (model, step) once in a checkpoints table
    (a repeated row, or the same model twice with different numbers, is refused)."""
    for df, name in ((runs, what), (checkpoints, "checkpoints")):
        if df is not None and model_col in df.columns:
            col = df[model_col]
            blank = col.isna().to_numpy() | (col.astype(str).str.strip() == "").to_numpy()
            if blank.any():
                i = int(np.argmax(blank))
                raise InputError(
                    f"{name}: column {model_col!r} row {i + 1}: the model name is empty"
                )
    if model_col in runs.columns:
        others = [c for c in runs.columns if c != model_col]
        check_no_duplicates(
            runs,
            [model_col],
            what,
            values=others,
            hint=f"each final model appears once in {what} (column {model_col!r}); "
            "remove or rename the repeated row",
        )
    if checkpoints is not None and model_col in checkpoints.columns:
        key = [model_col] + ([step_col] if step_col in checkpoints.columns else [])
        if len(key) == 2:
            others = [c for c in checkpoints.columns if c not in key]
            check_no_duplicates(
                checkpoints,
                key,
                "checkpoints",
                values=others,
                hint=f"each (model, step) appears once (columns {model_col!r}, {step_col!r}); "
                "remove the repeated row",
            )


TEACHER_NAME_COLUMNS = ("model", "name", "teacher")


def check_teachers(df: pd.DataFrame, what: str = "teachers") -> None:
    """A table of existing teachers (`distill choose-teacher`): N_T, D_T and/or L_T positive and
    finite, each teacher listed once."""
    for c in ("N_T", "D_T", "L_T"):
        if c in df.columns:
            numeric_column(df, c, positive=True, what=what)
    key = [c for c in ("N_T", "D_T") if c in df.columns] or [c for c in ("L_T",) if c in df]
    if key:
        check_no_duplicates(
            df,
            key,
            what,
            values=[c for c in ("L_T",) if c in df.columns and c not in key],
            hint=f"each teacher appears once (columns {', '.join(map(repr, key))})",
        )
    nums = [c for c in ("N_T", "D_T", "L_T") if c in df.columns]
    for c in TEACHER_NAME_COLUMNS:  # a named teacher listed twice with different numbers
        if c in df.columns and nums:
            check_no_duplicates(
                df, [c], what, values=nums, hint=f"each teacher name ({c!r}) appears once"
            )
