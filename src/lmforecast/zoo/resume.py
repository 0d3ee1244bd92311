"""Resuming a killed zoo build: which files of an earlier attempt may be trusted."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np

from ..errors import DomainWarning

#: Result fields that are positive counts or rates (every ``loss*`` field is too).
POSITIVE = ("N", "N_total", "D", "tokens_per_param", "batch", "lr", "steps", "C", "C_FN")


def _bad_losses(rec: dict) -> str | None:
    """Why the checkpoints' or token losses cannot be a trained run's (None: they can): a
    checkpoint loss is > 0, a token loss (-log p) >= 0, all finite."""
    for i, ck in enumerate(rec.get("checkpoints") or []):
        if not isinstance(ck, dict):
            return None  # reported by the caller
        for k, v in ck.items():
            if (
                str(k).startswith("loss")
                and v is not None
                and not (
                    isinstance(v, int | float)
                    and not isinstance(v, bool)
                    and np.isfinite(v)
                    and v > 0
                )
            ):
                return f"checkpoint {i}: {k} = {v!r} is not a positive number"
    for i, t in enumerate(rec.get("token_losses") or []):
        vals = t.get("losses") if isinstance(t, dict) else None
        if not isinstance(vals, list):
            return f"token losses {i} are not a list"
        arr = np.asarray(
            [v if isinstance(v, int | float) and not isinstance(v, bool) else np.nan for v in vals],
            float,
        )
        if not (np.isfinite(arr).all() and (arr >= 0).all()):
            return f"token losses {i} hold a value that is not a number >= 0"
    return None


def load_result(path: Path, run_id: str, numbers) -> dict | None:
    """A finished run's ``result.json`` when it is whole and this run's: a JSON object naming
    the run `run_id`, with finite numbers in the fields `numbers` (what the tables read) and
    lists of checkpoints and token losses. Anything else (hand-edited, truncated, another
    run's, hostile) is warned about and the run is redone, never trusted."""
    why = None
    try:
        rec = json.loads(path.read_text())
    except (OSError, ValueError, RecursionError) as exc:
        rec, why = None, " ".join(str(exc).split())[:80] or type(exc).__name__
    if why is None:
        if not isinstance(rec, dict):
            why = "not a JSON object"
        elif rec.get("model") != run_id:
            why = f"names run {str(rec.get('model'))[:40]!r}, not {run_id!r}"
        else:
            bad = [
                k
                for k in numbers
                if isinstance(rec.get(k), bool)
                or not isinstance(rec.get(k), int | float)
                or not np.isfinite(rec[k])
            ]
            neg = (
                []
                if bad
                else [
                    k
                    for k in numbers
                    if (k in POSITIVE or str(k).startswith("loss")) and rec[k] <= 0
                ]
            )
            if bad:
                why = f"field {bad[0]!r} is missing or not a finite number"
            elif neg:
                why = f"field {neg[0]!r} holds {rec[neg[0]]!r}; it must be > 0"
            elif (w := _bad_losses(rec)) is not None:
                why = w
            elif not isinstance(rec.get("checkpoints"), list) or not rec["checkpoints"]:
                why = "no checkpoints"
            elif not all(isinstance(r, dict) for r in rec["checkpoints"]):
                why = "checkpoints are not JSON objects"
            elif not isinstance(rec.get("token_losses"), list):
                why = "no token losses"
    if why is None:
        return rec
    warnings.warn(f"{path}: corrupt result ({why}); redoing the run", DomainWarning, stacklevel=2)
    return None
