"""What one ledger record holds, how it is checked at the door, and its content digest."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

from ..errors import InputError, fmt_value

#: The columns of a forecast record, in table order (``id`` first, ``digest`` last).
FORECAST_FIELDS = (
    "id",
    "created",
    "lmforecast_version",
    "label",
    "method",
    "form",
    "run",
    "task",
    "N",
    "D",
    "budget",
    "point",
    "lo",
    "hi",
    "level",
    "fit_sha256",
    "input_sha256",
    "inputs",
    "corrects",
)
RESOLUTION_FIELDS = ("forecast_id", "observed", "resolved", "source")


def _canon(obj: dict, fields) -> str:
    vals = {}
    for k in fields:
        v = obj.get(k)
        if isinstance(v, float):
            v = repr(v)  # exact; NaN/inf cannot occur (checked at the door)
        vals[k] = v
    return json.dumps(vals, sort_keys=True, separators=(",", ":"))


def digest_forecast(rec: dict) -> str:
    """SHA-256 of a forecast record's content (every field but the digest itself)."""
    return hashlib.sha256(_canon(rec, FORECAST_FIELDS).encode()).hexdigest()


def digest_resolution(res: dict) -> str:
    return hashlib.sha256(_canon(res, RESOLUTION_FIELDS).encode()).hexdigest()


def sha256_file(path: str | Path | None) -> str | None:
    """SHA-256 of a file's bytes (None for no file)."""
    if path is None:
        return None
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{p}: no such file (to record its SHA-256 in the ledger)")
    h = hashlib.sha256()
    with open(p, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _opt_float(name: str, v, positive: bool = False) -> float | None:
    if v is None:
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        raise InputError(f"ledger record: {name} must be a number, got {fmt_value(v)}") from None
    if math.isnan(f):
        return None
    if positive and not (math.isfinite(f) and f > 0):
        raise InputError(f"ledger record: {name} must be a positive number, got {fmt_value(v)}")
    return f


def check_forecast(
    *,
    method: str,
    point,
    lo=None,
    hi=None,
    level=None,
    N=None,
    D=None,
    budget=None,
    point_inside: bool = False,
) -> dict:
    """The numeric fields of a forecast, validated (InputError naming the field).
    `point_inside`: also refuse a point outside its interval (a value typed by hand)."""
    if not isinstance(method, str) or not method.strip():
        raise InputError("ledger record: method must be a non-empty name")
    p = _opt_float("point", point)
    if p is None or not math.isfinite(p):
        raise InputError(f"ledger record: point must be a finite number, got {fmt_value(point)}")
    lo_, hi_ = _opt_float("lo", lo), _opt_float("hi", hi)
    if (lo_ is None) != (hi_ is None):
        raise InputError("ledger record: give both interval ends (lo and hi) or neither")
    lv = _opt_float("level", level)
    if lo_ is not None:
        if lo_ > hi_:
            raise InputError(
                f"ledger record: interval lo {fmt_value(lo_)} is above hi {fmt_value(hi_)}"
            )
        if lv is None or not 0 < lv < 1:
            raise InputError(
                f"ledger record: an interval needs its level in (0, 1), got {fmt_value(level)}"
            )
        if point_inside and not lo_ <= p <= hi_:  # typed by hand: a typo
            raise InputError(
                f"ledger record: point {fmt_value(p)} lies outside its interval "
                f"[{fmt_value(lo_)}, {fmt_value(hi_)}]"
            )
    elif lv is not None and not 0 < lv < 1:
        raise InputError(f"ledger record: level must be in (0, 1), got {fmt_value(level)}")
    return {
        "point": p,
        "lo": lo_,
        "hi": hi_,
        "level": lv,
        "N": _opt_float("N", N, positive=True),
        "D": _opt_float("D", D, positive=True),
        "budget": _opt_float("budget", budget, positive=True),
    }
