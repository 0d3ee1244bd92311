"""Validation helpers whose messages name the column, row and value at fault.

Row numbers in messages are 1-based data rows (the header is not counted).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..errors import InputError


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
    raw = df[col]
    vals = pd.to_numeric(raw, errors="coerce").to_numpy(float)
    bad_parse = np.isnan(vals) & raw.notna().to_numpy()
    if bad_parse.any():
        i = int(np.argmax(bad_parse))
        raise InputError(f"{what}: column {col!r} row {i + 1}: {raw.iloc[i]!r} is not a number")
    if not allow_nan:
        nan = ~np.isfinite(vals)
        if nan.any():
            i = int(np.argmax(nan))
            raise InputError(
                f"{what}: column {col!r} row {i + 1}: value {raw.iloc[i]!r} is missing "
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
            raise InputError(f"{what}: column {col!r} row {i + 1}: value {vals[i]:g} {msg}")
    return vals


def check_no_duplicates(df: pd.DataFrame, cols: Sequence[str], what: str = "table") -> None:
    dup = df.duplicated(subset=list(cols), keep="first").to_numpy()
    if dup.any():
        i = int(np.argmax(dup))
        first = int(np.argmax((df[list(cols)] == df[list(cols)].iloc[i]).all(axis=1).to_numpy()))
        vals = ", ".join(f"{c}={df[c].iloc[i]!r}" for c in cols)
        raise InputError(f"{what}: row {i + 1} duplicates row {first + 1} ({vals})")
