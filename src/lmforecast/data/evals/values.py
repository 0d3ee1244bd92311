"""What a metric's value may be: the checks `evals import` and every tidy-table reader apply.

Readings (docs/evals.md, "Values"):
- fraction metrics (`acc`, `acc_norm`, `exact_match`, `f1`, `mc1`, `mc2`, `em`, ... with any
  harness filter): a fraction in [0, 1], as the harness writes them (never percentage points);
- perplexities (`ppl`, `perplexity`, `word_perplexity`, `byte_perplexity`, `<task>_ppl`): > 0;
- losses (`bits_per_byte`, `bpb`, `loss`, `nll`, `<task>_bpb`, log-likelihoods negated): >= 0;
- every value finite; a `stderr` is >= 0 and finite, or missing (the harness's "N/A").
Other metrics are only required to be finite.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

FRACTION_METRICS = (
    "acc",
    "acc_norm",
    "exact_match",
    "f1",
    "mc1",
    "mc2",
    "em",
    "acc_mutual_info",
    "brier_score",
    "pass@1",
)
PERPLEXITY_METRICS = ("ppl", "perplexity", "word_perplexity", "byte_perplexity")
LOSS_METRICS = ("bits_per_byte", "bpb", "loss", "nll")


def base_metric(metric: str) -> str:
    """`acc,none` -> `acc`; `exact_match,strict-match` -> `exact_match`."""
    return str(metric).split(",", 1)[0].strip().lower()


def value_problem(metric: str, value) -> str | None:
    """Why `value` cannot be a result of `metric` (None when it can)."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        return "is not a number"
    if not math.isfinite(v):
        return "is not a finite number"
    m = base_metric(metric)
    if m in FRACTION_METRICS and not 0.0 <= v <= 1.0:
        return f"is outside [0, 1] (metric {m!r} is a fraction)"
    if (m in PERPLEXITY_METRICS or m.endswith("_ppl")) and not v > 0:
        return f"must be > 0 (metric {m!r} is a perplexity)"
    if (m in LOSS_METRICS or m.endswith("_bpb")) and v < 0:
        return f"must be >= 0 (metric {m!r} is a loss)"
    return None


def stderr_problem(value) -> str | None:
    """Why `value` cannot be a standard error (None when it can; missing is allowed)."""
    if value is None:
        return None
    try:
        v = float(value)
    except (TypeError, ValueError):
        return "is not a number"
    if math.isnan(v):
        return None
    if not math.isfinite(v) or v < 0:
        return "must be a finite number >= 0"
    return None


def bad_values(metric, value) -> np.ndarray:
    """Vectorised `value_problem(metric, value) is not None` over two aligned columns (a value
    that is missing or not a number counts as bad)."""
    v = pd.to_numeric(pd.Series(value), errors="coerce").to_numpy(float)
    m = pd.Series(metric).astype(str).str.split(",", n=1).str[0].str.strip().str.lower()
    m = m.to_numpy(object)
    base = pd.Series(m)
    frac = base.isin(FRACTION_METRICS).to_numpy()
    ppl = (base.isin(PERPLEXITY_METRICS) | base.str.endswith("_ppl")).to_numpy()
    loss = (base.isin(LOSS_METRICS) | base.str.endswith("_bpb")).to_numpy()
    with np.errstate(invalid="ignore"):
        bad = ~np.isfinite(v)
        bad |= frac & ((v < 0) | (v > 1))
        bad |= ppl & ~(v > 0)
        bad |= loss & (v < 0)
    return bad
