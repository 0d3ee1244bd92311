"""Loading a saved `DownstreamForecaster` with a check that it still forecasts (docs: a file
edited into something unusable is an `InputError` naming it, never a later traceback)."""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path

import numpy as np

from ..errors import REACH_SAID, InputError


def load_checked(cls, text_or_path):
    """`cls.from_dict` of a path or inline JSON text, then one forecast (and interval) at the
    largest fitted compute: any failure there is the file's problem, named in one line."""
    s = str(text_or_path)
    where = "inline JSON" if s.lstrip().startswith("{") else s
    try:
        if where != "inline JSON":
            p = Path(s)
            if not p.is_file():
                raise InputError(f"{s}: no such file")
            s = p.read_bytes().decode("utf-8")
        try:
            d = json.loads(s)
        except (ValueError, RecursionError) as exc:
            msg = " ".join(str(exc).split())[:120] or type(exc).__name__
            raise InputError(
                f"{where}: not a saved DownstreamForecaster (not JSON: {msg})"
            ) from None
        est = cls.from_dict(d, where)
        C = float(est.largest_["C"])
        if not (math.isfinite(C) and C > 0):
            raise ValueError(f"largest.C must be a positive number, got {C}")
        # stage 1 'nd' needs N and D: any split of C exercises it (20 tokens per parameter)
        N = math.sqrt(C / 120.0)
        kw = {"N": N, "D": 20.0 * N} if est.stage1 == "nd" else {"flops": C}
        with warnings.catch_warnings():  # a check of the file, not a forecast
            warnings.simplefilter("ignore")
            pt = lo = hi = est.predict(**kw)  # without replicates: no interval to check
        est.__dict__.pop(REACH_SAID, None)  # nothing was said: the first forecast warns
        if est.bootstrap > 1 or est.selected_ == "persistence":
            lo, hi = est.predict_interval(**kw)
        if not (np.all(np.isfinite(pt)) and np.all(np.isfinite([lo, hi]))):
            raise ValueError("its forecast is not finite")
        return est
    except InputError:
        raise
    except Exception as exc:  # noqa: BLE001 - any unusable content is the file's problem
        msg = " ".join(str(exc).split())[:160]
        raise InputError(
            f"{where}: not a valid saved DownstreamForecaster ({type(exc).__name__}: {msg}); "
            "re-create it with `downstream fit --out`"
        ) from None
