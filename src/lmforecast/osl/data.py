"""Benchmark tables for observational scaling laws (Ruan et al. 2024, App. B.1).

The paper's table format (Tables B.1/B.2 and the authors' public CSVs) is wide: columns `Model`,
`Model Family`, `Model Size (B)`, `Pretraining Data Size (T)`, `FLOPs (1E21)`, then one column
per benchmark (`-` or empty is missing). Tidy long tables (one row per model x benchmark) are
pivoted into that shape.

Scores may be fractions (0-1, as the paper's tables write them) or points (0-100, the package's
unit, `lmforecast.scores`): `to_fractions` is the estimators' door, turning each score column
into the fractions Eq. 6 and the capability space are written in (`score_unit="auto"` reads a
column whose finite values all lie in [0, 1] as fractions, any other as points).
"""

from __future__ import annotations

import csv
import warnings
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from ..data.io import read_table
from ..data.validate import check_columns
from ..errors import InputError, fmt_value
from ..scores import check_unit, scale_of

MODEL, FAMILY = "Model", "Model Family"
SIZE, DATA, FLOPS = "Model Size (B)", "Pretraining Data Size (T)", "FLOPs (1E21)"
META_COLUMNS = (MODEL, FAMILY, SIZE, DATA, FLOPS)
FLOPS_UNIT = 1e21  # the `FLOPs (1E21)` column is in units of 1e21 FLOPs

# Sec. 3.2 / B.1.1: the eight base benchmarks ("Winograd" = Winogrande, 4.7 item 10)
BASE_METRICS = (
    "MMLU",
    "ARC-C",
    "HellaSwag",
    "Winograd",
    "TruthfulQA",
    "GSM8K",
    "XWinograd",
    "HumanEval",
)
# B.1.2: the instruction-tuned models' standard benchmarks (Arena-Elo is not a predictor)
INSTRUCT_METRICS = ("MMLU", "ARC-C", "HellaSwag", "Winogrande", "TruthfulQA", "GSM8K", "HumanEval")
NOT_PREDICTORS = ("Arena-Elo", "MTBench")

# App. B.1.1: the 21 families evaluated for the paper (77 models, Table B.1).
EVAL_FAMILIES = (
    "Llama-2",
    "Llama",
    "Llama-3",
    "Qwen1.5",
    "Qwen",
    "Mistral",
    "Mixtral",
    "Yi",
    "Gemma",
    "Falcon",
    "Phi",
    "Pythia",
    "BLOOM",
    "GPT-Neo/J",
    "OPT",
    "MPT",
    "XGLM",
    "CodeLlama",
    "StarCoder",
    "StarCoder2",
    "DeepSeek-Coder",
)
# Sec. 4 / C.3: the 20 models (8 families) released May-Sept 2024 and added to the authors' table
# after publication as a preregistration test set. Five of them carry a Table B.1 family name.
PREREGISTRATION_MODELS = (
    "meta-llama/Meta-Llama-3.1-405B-FP8",
    "meta-llama/Meta-Llama-3.1-70B",
    "meta-llama/Meta-Llama-3.1-8B",
    "Qwen/Qwen1.5-110B",
    "Qwen/Qwen2-72B",
    "Qwen/Qwen2-57B-A14B",
    "Qwen/Qwen2-7B",
    "Qwen/Qwen2-1.5B",
    "Qwen/Qwen2-0.5B",
    "mistralai/Mixtral-8x22B-v0.1",
    "mistralai/Mistral-Nemo-Base-2407",
    "deepseek-ai/DeepSeek-V2",
    "deepseek-ai/DeepSeek-Coder-V2-Base",
    "01-ai/Yi-1.5-34B",
    "01-ai/Yi-1.5-9B",
    "01-ai/Yi-1.5-6B",
    "google/gemma-2-27b",
    "google/gemma-2-9b",
    "google/gemma-2-2b",
    "ai21labs/Jamba-v0.1",
)
_LONG_BENCH = ("benchmark", "metric", "task")
_LONG_VALUE = ("score", "value", "accuracy")


def _bundled(name: str) -> Path:
    return Path(str(resources.files("lmforecast").joinpath(f"data/bundled/osl/{name}")))


def load_table_b1() -> pd.DataFrame:
    """Table B.1 of the paper as printed: 77 base models, 21 families, 7 benchmarks (no GSM8K).

    The printed table omits GSM8K although Sec. 3.2 lists it (METHODS 4.7 item 1); use the
    authors' public CSV for the 8-benchmark analyses.
    """
    return read_benchmarks(_bundled("table_b1_base_models.csv"))


def load_table_b2() -> pd.DataFrame:
    """Table B.2 as printed: 27 instruction-tuned models (Arena-Elo raw, no GSM8K)."""
    return read_benchmarks(_bundled("table_b2_instruct_models.csv"))


def paper_base_models(table: pd.DataFrame) -> pd.DataFrame:
    """The paper's 77 base models from the authors' fuller public table.

    Rule (the authors' loader, App. B.1.1): keep rows whose `Model Family` is one of the 21
    evaluated families, then drop the 20 preregistration models added after publication
    (`PREREGISTRATION_MODELS`; Qwen1.5-110B, Mixtral-8x22B and Mistral-Nemo share a family name).
    """
    check_columns(table, [MODEL, FAMILY], "benchmarks")
    keep = table[FAMILY].isin(EVAL_FAMILIES) & ~table[MODEL].isin(PREREGISTRATION_MODELS)
    return table.loc[keep].reset_index(drop=True)


def _pivot_long(df: pd.DataFrame) -> pd.DataFrame:
    lower = {c.lower(): c for c in df.columns}
    bench = next(lower[c] for c in _LONG_BENCH if c in lower)
    value = next((lower[c] for c in _LONG_VALUE if c in lower), None)
    if value is None:
        raise InputError(
            f"benchmarks: long table has a {bench!r} column but no score column "
            f"(one of {', '.join(_LONG_VALUE)})"
        )
    keys = [c for c in META_COLUMNS if c in df.columns]
    dup = df.duplicated(subset=[MODEL, bench]).to_numpy()
    if dup.any():
        i = int(np.argmax(dup))
        raise InputError(
            f"benchmarks: row {i + 1} repeats model {fmt_value(df[MODEL].iloc[i])} on "
            f"{fmt_value(df[bench].iloc[i])}"
        )
    wide = df.pivot(index=MODEL, columns=bench, values=value)
    wide.columns = [str(c) for c in wide.columns]
    meta = df[keys].drop_duplicates(subset=[MODEL]).set_index(MODEL)
    out = meta.join(wide).reset_index()
    order = list(dict.fromkeys(df[MODEL]))
    return out.set_index(MODEL).loc[order].reset_index()


def check_row_lengths(path: str | Path, what: str = "benchmarks") -> None:
    """Refuse a CSV/TSV row with fewer (or more) fields than the header: a short row would
    otherwise be read as empty cells and imputed without the user having left them empty."""
    p = Path(path)
    sep = {".csv": ",", ".tsv": "\t"}.get(p.suffix.lower())
    if sep is None or not p.is_file():
        return
    try:
        with open(p, encoding="utf-8", newline="") as fh:
            rows = csv.reader(fh, delimiter=sep)
            header = next(rows, None)
            for i, row in enumerate(rows, start=1):
                if header is not None and row and len(row) != len(header):
                    raise InputError(
                        f"{what}: row {i} has {len(row)} field(s), the header has "
                        f"{len(header)}; leave a missing cell empty (keep its separator) or "
                        "write '-'"
                    )
    except (UnicodeDecodeError, csv.Error):
        return  # read_table reports unreadable files


def read_benchmarks(source: str | Path | pd.DataFrame, what: str = "benchmarks") -> pd.DataFrame:
    """Read a benchmark table (paper wide format or tidy long) into the wide format.

    Missing values (`-`, empty) become NaN; metadata columns absent from the file are added as
    NaN (a model without `Model Family` is its own family). Model names must be unique.
    """
    if not isinstance(source, pd.DataFrame):
        check_row_lengths(source, what)
    df = source.copy() if isinstance(source, pd.DataFrame) else read_table(source)
    df.columns = [str(c).strip() for c in df.columns]
    if MODEL not in df.columns:  # `model` / `MODEL`, as tidy tables often spell it
        alias = [c for c in df.columns if c.lower() == MODEL.lower()]
        if len(alias) == 1:
            df = df.rename(columns={alias[0]: MODEL})
    check_columns(df, [MODEL], what)
    lower = {c.lower() for c in df.columns}
    if any(c in lower for c in _LONG_BENCH) and not any(m in df.columns for m in BASE_METRICS):
        df = _pivot_long(df)
    blank = df[MODEL].isna().to_numpy() | (df[MODEL].astype(str).str.strip() == "").to_numpy()
    if blank.any():
        i = int(np.argmax(blank))
        raise InputError(f"{what}: column {MODEL!r} row {i + 1}: the model name is empty")
    df[MODEL] = df[MODEL].astype(str).str.strip()
    dup = df.duplicated(subset=[MODEL]).to_numpy()
    if dup.any():
        i = int(np.argmax(dup))
        first = int(np.argmax((df[MODEL] == df[MODEL].iloc[i]).to_numpy()))
        raise InputError(
            f"{what}: row {i + 1} repeats model {df[MODEL].iloc[i]!r} of row {first + 1}; "
            "each model appears once (column 'Model'), remove or rename the repeated row"
        )
    if FAMILY not in df.columns:
        df[FAMILY] = df[MODEL]
    df[FAMILY] = df[FAMILY].where(df[FAMILY].notna(), df[MODEL]).astype(str)
    for c in (SIZE, DATA, FLOPS):
        if c not in df.columns:
            df[c] = np.nan
    for c in df.columns:
        if c in (MODEL, FAMILY):
            continue
        raw = df[c].replace({"-": np.nan, "": np.nan})
        vals = pd.to_numeric(raw, errors="coerce")
        bad = vals.isna() & raw.notna()
        if c not in META_COLUMNS and bad.any() and bad.sum() == raw.notna().sum():
            continue  # a text column (notes, links, dates): kept as text, never a benchmark
        if bad.any():
            i = int(np.argmax(bad.to_numpy()))
            raise InputError(
                f"{what}: column {c!r} row {i + 1}: {fmt_value(raw.iloc[i])} is not a number"
            )
        df[c] = vals.astype(float)
    for c in (SIZE, DATA, FLOPS):  # missing is allowed (NaN); a present value must be > 0
        v = df[c].to_numpy(float)
        bad = np.isinf(v) | (v <= 0)
        if bad.any():
            i = int(np.argmax(bad))
            raise InputError(
                f"{what}: column {c!r} row {i + 1} ({df[MODEL].iloc[i]}): value {v[i]:g} must be "
                "a positive number (or left empty when unknown)"
            )
    return df.reset_index(drop=True)


def default_metrics(table: pd.DataFrame, exclude: tuple[str, ...] = ()) -> list[str]:
    """Benchmark columns used for the capability space when none are named.

    The paper's benchmark names present in the table (other numeric columns are named in a
    warning, never dropped in silence); otherwise every numeric non-metadata column (Arena-Elo
    and MTBench are never predictors, B.1.2; a column of text only is never one).
    """
    skip = set(META_COLUMNS) | set(NOT_PREDICTORS) | set(exclude)
    numeric = [
        c for c in table.columns if c not in skip and pd.api.types.is_numeric_dtype(table[c])
    ]
    known = [c for c in (*BASE_METRICS, "Winogrande") if c in table.columns and c not in exclude]
    if not known:
        return numeric
    left = [c for c in numeric if c not in known]
    if left:  # never dropped in silence
        warnings.warn(
            f"benchmarks: the capability space uses the paper's benchmarks "
            f"({', '.join(known)}); numeric column(s) {', '.join(map(repr, left))} "
            "are left out (name every predictor with --metrics to use them)",
            stacklevel=2,
        )
    return known


def check_metrics(
    table: pd.DataFrame, metrics: list[str], what: str = "benchmarks", all_missing: bool = False
) -> None:
    """Named metrics exist, are not all missing (unless `all_missing`: new models whose cells
    are imputed), and lie in [0, 1] (fractions: run `to_fractions` on the table first)."""
    for m in metrics:
        if m not in table.columns:
            if what == "new models":  # a saved fit's predictor the new table lacks
                raise InputError(
                    f"new models: the table has no column {m!r}, a benchmark the "
                    f"fit uses ({', '.join(metrics)})"
                )
            raise InputError(
                f"{what}: unknown metric {m!r}; columns are "
                f"{', '.join(repr(c) for c in table.columns if c not in META_COLUMNS)}"
            )
        if not pd.api.types.is_numeric_dtype(table[m]):
            raise InputError(f"{what}: column {m!r} holds text, not benchmark scores")
        check_unit_interval(table, m, what, all_missing=all_missing, benchmark=True)


def check_observed(table: pd.DataFrame, metrics: list[str], what: str) -> None:
    """A model with no score on any benchmark of the capability space has nothing to place it
    by: its PCs would be pure imputation, presented as a forecast (refused, naming it)."""
    none = np.isnan(table[metrics].to_numpy(float)).all(axis=1)
    if none.any():
        i = int(np.argmax(none))
        label = table.index[i]  # the row in the user's table (the caller may pass a subset)
        row = int(label) + 1 if isinstance(label, int | np.integer) else i + 1
        more = f" (and {int(none.sum()) - 1} more)" if none.sum() > 1 else ""
        raise InputError(
            f"{what}: row {row} (model {table[MODEL].iloc[i]!r}){more} has no score on any "
            f"benchmark the capability space uses ({', '.join(metrics)}); add its scores or "
            "drop it"
        )


def check_unit_interval(
    table: pd.DataFrame,
    col: str,
    what: str,
    allow_below: bool = False,
    all_missing: bool = False,
    benchmark: bool = False,
    raw: pd.Series | None = None,
) -> None:
    """Values (fractions, after `to_fractions`) in [0, 1]; with `allow_below` (a
    metric-range-normalised target) values below 0 - models below chance - are legal and only
    values above 1 are refused. `raw`: the user's own values, shown in the message."""
    vals = numeric_column(table, col, what)
    if np.isnan(vals).all() and not all_missing:
        raise InputError(f"{what}: column {col!r} is all missing")
    bad = ((vals < 0) & (not allow_below)) | (vals > 1) | np.isinf(vals)
    if bad.any():
        i = int(np.argmax(bad))
        if allow_below:
            hint = "is above the top of --metric-range (LO,HI in the target's own unit)"
        elif benchmark:
            hint = "is outside [0, 1] as a fraction (scores are fractions or points)"
        else:
            hint = "is outside [0, 1] as a fraction (rescale it with --scale)"
        shown = vals[i] if raw is None else float(raw.iloc[i])  # the user's own value
        raise InputError(
            f"{what}: column {col!r} row {i + 1} ({table[MODEL].iloc[i]}): value "
            f"{float(shown):g} {hint}"
        )


def numeric_column(table: pd.DataFrame, col: str, what: str) -> np.ndarray:
    """Column `col` as floats (missing = NaN); a text cell is refused naming column and row."""
    num = pd.to_numeric(table[col], errors="coerce")
    text = table[col].notna() & num.isna()
    if text.any():
        i = int(np.flatnonzero(text.to_numpy())[0])
        raise InputError(
            f"{what}: column {col!r} row {i + 1}: {table[col].iloc[i]!r} is text, "
            "not a score (name a column of numbers)"
        )
    return num.to_numpy(float)


def column_scale(
    table: pd.DataFrame, col: str, unit: str = "auto", what: str = "benchmarks", raw=None
) -> float:
    """The factor that turns score column `col` into points: 100 when it reads as fractions, 1
    as points (`scores.scale_of` on the column; `unit` one of `scores.UNITS`). A text cell, an
    infinite value or a value outside the unit's range ([0, 1] or [0, 100]) is refused in one
    line naming the column, the row, the model and the value (`raw`: the user's own values);
    so is, under "auto", a column with fewer values above 1 than in (0, 1] (fractions with a
    stray cell: read as points, every other value would shrink 100-fold in silence)."""
    check_unit(unit, "score_unit (--score-unit)")
    vals = numeric_column(table, col, what)
    fin = vals[np.isfinite(vals)]
    read = unit
    if read == "auto":
        read = "fraction" if fin.size and fin.min() >= 0.0 and fin.max() <= 1.0 else "points"
        big, small = int((fin > 1.0).sum()), int(((fin > 0.0) & (fin <= 1.0)).sum())
        if read == "points" and big < small and fin.min() >= 0.0 and fin.max() <= 100.0:
            i = int(np.argmax(np.nan_to_num(vals, nan=0.0) > 1.0))  # fractions with a stray cell
            raise InputError(
                f"{what}: column {col!r} row {i + 1} ({table[MODEL].iloc[i]}): value "
                f"{vals[i]:g} is above 1 while {small} of its values lie in (0, 1]: fractions "
                "with a wrong cell, or points? fix the cell, or declare --score-unit "
                "(score_unit=) points"
            )
    top = 1.0 if read == "fraction" else 100.0
    bad = np.isinf(vals) | (vals < 0.0) | (vals > top)
    if bad.any():
        i = int(np.argmax(bad))
        shown = vals[i] if raw is None else float(raw.iloc[i])
        said = (
            "scores are fractions in [0, 1] or points in [0, 100]"
            if unit == "auto"
            else f"score_unit (--score-unit) is {unit}"
        )
        raise InputError(
            f"{what}: column {col!r} row {i + 1} ({table[MODEL].iloc[i]}): value "
            f"{float(shown):g} is outside [0, {top:g}] ({said})"
        )
    return scale_of(vals, read, f"{what}: column {col!r}")


def to_fractions(
    table: pd.DataFrame, columns, unit: str = "auto", what: str = "benchmarks"
) -> tuple[pd.DataFrame, dict[str, float]]:
    """The door of every OSL estimator: a copy of `table` with each score column of `columns`
    present in it as fractions (the unit Eq. 6, Table C.1 and the capability space are written
    in), and each column's factor to points (`column_scale`: 100 read as fractions, 1 as
    points). Other columns are left as they are."""
    check_unit(unit, "score_unit (--score-unit)")
    out = table.copy()
    scales = {}
    for c in dict.fromkeys(columns):
        if c not in out.columns or not pd.api.types.is_numeric_dtype(out[c]):
            continue  # unknown or text columns: refused by the checks that name them
        s = column_scale(out, c, unit, what)
        scales[c] = s
        if s != 100.0:
            out[c] = out[c].astype(float) * (s / 100.0)
    return out, scales


def parse_metric_range(value, flag: str = "--metric-range") -> tuple[float, float] | None:
    """A metric range (LO, HI) from 'LO,HI' or a pair; None passes through.

    The paper (Ruan et al. 2024, Sec. 4.1/App. C) min-max normalises a target by its metric
    range, e.g. (0.25, 1) for a 4-way multiple choice task: y' = (y - LO) / (HI - LO).
    """
    if value is None:
        return None
    if isinstance(value, str):
        parts = [t.strip() for t in value.split(",")]
    else:
        try:
            parts = list(value)
        except TypeError:
            raise InputError(f"{flag}: expected LO,HI, got {value!r}") from None
    if len(parts) != 2:
        raise InputError(f"{flag}: expected two numbers LO,HI, got {value!r}")
    try:
        lo, hi = (float(v) for v in parts)
    except (TypeError, ValueError):
        raise InputError(f"{flag}: LO and HI must be numbers, got {value!r}") from None
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise InputError(f"{flag}: LO and HI must be finite, got {value!r}")
    if not lo < hi:
        raise InputError(f"{flag}: LO must be below HI, got LO={lo:g}, HI={hi:g}")
    return lo, hi


def scale_target(col, scale: float, name: str):
    """The target divided by --scale (before its score unit is read: a column in points needs
    no --scale); a column already in [0, 1] (all at most 1 before, so at most 1/scale after)
    is warned about: the fit would run in the wrong units."""
    v = pd.to_numeric(col, errors="coerce")
    if scale > 1 and v.notna().any() and float(v.max()) <= 1.0:
        warnings.warn(
            f"--scale {scale:g}: column {name!r} is already in [0, 1] (largest "
            f"{float(v.max()):.4g}), so it becomes at most {1 / scale:.3g}; drop "
            "--scale?",
            stacklevel=2,
        )
    return v / scale


def warn_imputed(table: pd.DataFrame, metrics: list[str], stacklevel: int = 2) -> None:
    """Say which new models had empty benchmark cells that the capability space imputes (their
    forecast rests partly on the imputation, App. B.3)."""
    B = table[metrics].to_numpy(float)
    holes = np.isnan(B).any(axis=1)
    if holes.any():
        names = list(table.loc[holes, MODEL])
        warnings.warn(
            f"new models: {int(np.isnan(B).sum())} empty benchmark cell(s) imputed as the fit "
            f"does (App. B.3), in {', '.join(map(str, names[:3]))}"
            f"{' ...' if len(names) > 3 else ''}",
            stacklevel=stacklevel + 1,
        )
