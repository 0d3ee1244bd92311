"""Holdout splits of the OSL paper (Sec. 4): which models are held out as "future" ones."""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..data.evals.registry import match_model_names
from ..errors import InputError
from .data import FLOPS, FLOPS_UNIT, MODEL
from .newmodels import models_without_target

LLAMA2_7B_FLOPS = 8.4e22  # Sec. 4: default cutoff, Llama-2-7B's training FLOPs (6ND)


def cutoff_split(table: pd.DataFrame, cutoff_flops: float = LLAMA2_7B_FLOPS) -> np.ndarray:
    """Test mask: models above the FLOPs cutoff, and models with unknown FLOPs (4.7 item 11)."""
    if not cutoff_flops > 0:
        raise InputError(f"--cutoff-flops (cutoff_flops=) must be > 0, got {cutoff_flops}")
    if FLOPS not in table.columns or not table[FLOPS].notna().any():
        raise InputError(  # every model would be held out: "0 training models" said nothing
            f"the FLOPs cutoff split needs column {FLOPS!r} (training compute in 1e21 FLOPs), "
            "which the table lacks or leaves empty: add it, or hold out models another way "
            "(--holdout-top F or --heldout MODELS)"
        )
    flops = table[FLOPS].to_numpy(float) * FLOPS_UNIT
    return ~(flops <= cutoff_flops * (1 + 1e-12))


def top_split(table: pd.DataFrame, target: str, fraction: float = 0.1) -> np.ndarray:
    """Test mask: the best `fraction` of models on the target, count rounded down (Sec. 4.2).

    Ties keep the table order (a stable sort, as the authors' `rank_by` split).
    """
    if not 0 <= fraction < 1:
        raise InputError(f"--holdout-top must be in [0, 1), got {fraction}")
    n_test = int(fraction * len(table))
    if fraction > 0 and n_test == 0:
        warnings.warn(
            f"--holdout-top {fraction:g} of {len(table)} models rounds down to none "
            "held out: nothing is tested",
            stacklevel=3,
        )
    order = np.argsort(-table[target].to_numpy(float), kind="stable")
    test = np.zeros(len(table), bool)
    test[order[:n_test]] = True
    return test


def list_split(table: pd.DataFrame, heldout: Sequence[str]) -> np.ndarray:
    """Test mask: the named models (each must be in the table; matched ignoring case, a typo
    named with the nearest model)."""
    names = match_model_names(
        heldout, table[MODEL].astype(str), "--heldout: model", "in the table (with the target)"
    )
    return table[MODEL].isin(names).to_numpy()


def train_complement(table: pd.DataFrame, target: str, train: Sequence[str]) -> list[str]:
    """The models to hold out so that the fit uses exactly `train` (matched ignoring case, a
    typo named): every other model with a `target` score. Refused when a named model has no
    target score, or when fewer than two are named."""
    known = table[MODEL].astype(str)
    names = match_model_names(train, known, "--train-models: model", "in the table")
    y = pd.to_numeric(table[target], errors="coerce") if target in table.columns else None
    has = known[y.notna().to_numpy()] if y is not None else known.iloc[:0]
    lacking = [n for n in names if n not in set(has)]
    if lacking:
        raise InputError(f"--train-models: model {lacking[0]!r} has no {target!r} score to fit")
    if len(names) < 2:
        raise InputError(f"--train-models: name at least 2 models to fit, got {len(names)}")
    return [m for m in has if m not in set(names)]


def holdout_plan(
    table: pd.DataFrame,
    target: str,
    *,
    heldout: Sequence[str] | None = None,
    train_models: Sequence[str] | None = None,
    holdout: str | None = None,
    holdout_top: float | None = None,
    cutoff_flops: float | None = None,
) -> tuple[str, dict, list[str]]:
    """(holdout, its keyword, models without the target) for `ObservationalScalingLaw`, from
    the first of: the held-out models named (`heldout`; those of them that lack the target are
    returned apart, to forecast after the fit), the complement of the training models named
    (`train_models`), `holdout="none"` (nothing held out), the top fraction `holdout_top`, and
    the FLOPs cutoff (`cutoff_flops`, Llama-2-7B's by default)."""
    if heldout is not None:
        names = match_model_names(heldout, table[MODEL], "--heldout: model", "in the table")
        new_models = models_without_target(table, target, names)
        return "list", {"heldout": [n for n in names if n not in new_models]}, new_models
    if train_models is not None:
        return "list", {"heldout": train_complement(table, target, train_models)}, []
    if holdout == "none":
        return "list", {"heldout": []}, []
    if holdout_top is not None:
        return "top", {"holdout_top": holdout_top}, []
    cutoff = cutoff_flops if cutoff_flops is not None else LLAMA2_7B_FLOPS
    return "cutoff", {"cutoff_flops": cutoff}, []


def describe_holdout(d: dict) -> str:
    """One readable line for a saved holdout description (`{"kind": "cutoff", ...}`)."""
    kind = d.get("kind")
    if kind == "cutoff":
        c = f"{float(d['cutoff_flops']):.3g}".replace("e+", "e")
        return f"models above {c} FLOPs (and models without FLOPs)"
    if kind == "top":
        return f"the best {100 * float(d['fraction']):g}% of models on the target"
    if kind == "list":
        models = list(d.get("models", []))
        return "the named models: " + ", ".join(models) if models else "no models (empty list)"
    if kind == "none":
        return "none (every model with the target is fitted)"
    return str(d)
