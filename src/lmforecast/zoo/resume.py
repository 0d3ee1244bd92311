"""Resuming a killed zoo build: which files of an earlier attempt may be trusted."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np

from ..errors import DomainWarning


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
                k for k in numbers
                if isinstance(rec.get(k), bool) or not isinstance(rec.get(k), int | float)
                or not np.isfinite(rec[k])
            ]  # fmt: skip
            if bad:
                why = f"field {bad[0]!r} is missing or not a finite number"
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
