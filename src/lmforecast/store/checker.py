"""`Checker`: field-by-field validation of a loaded saved result.

A saved result is a user-editable file, so it is input like any table: each loader checks it
before building objects from it, and any problem is an `InputError` naming the file and the
field (``params.alpha``, ``stage2.theta[3]``) with the value found. The schemas themselves live
beside each result class (`fitting.schema`, `flp.schema`, ...).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping
from typing import Any

import numpy as np

from ..errors import InputError, fmt_value
from .kinds import ESTIMATORS, wrong_kind

#: The format version every result type of this release writes (and the one it reads).
FORMAT_VERSION = 1


def source_label(where: object) -> str:
    """`where` on one line for a message: a path is kept whole (its file name is the point),
    inline JSON text is cut to 80 characters and anything else to 1,000."""
    flat = " ".join(str(where).split())
    cap = 80 if flat.startswith("{") else 1000
    return flat if len(flat) <= cap else flat[: cap - 3] + "..."


class Checker:
    """Field-by-field checks with messages ``<where>: field <path>: <problem> (got <value>)``."""

    def __init__(self, where: str, prefix: str = ""):
        self.where = source_label(where)
        self.prefix = f"{prefix}." if prefix else ""

    def fail(self, path: str, problem: str, value: Any = ...) -> None:
        got = "" if value is ... else f" (got {fmt_value(value)})"
        raise InputError(f"{self.where}: field {self.prefix + path!r}: {problem}{got}")

    # ---- containers ------------------------------------------------------------------------
    def obj(self, d: Any, path: str = "") -> Mapping:
        if not isinstance(d, Mapping):
            if path:
                self.fail(path, "must be a JSON object", d)
            raise InputError(f"{self.where}: expected a JSON object, got {type(d).__name__}")
        return d

    def get(self, d: Mapping, key: str, path: str = "") -> Any:
        full = f"{path}.{key}" if path else key
        if key not in d:
            self.fail(full, "is missing")
        return d[key]

    def keys(self, d: Mapping, allowed: Iterable[str], path: str = "") -> None:
        extra = [k for k in d if k not in set(allowed)]
        if extra:
            full = f"{path}.{extra[0]}" if path else str(extra[0])
            self.fail(full, "is not a known field of this result type")

    def list_(self, v: Any, path: str, length: int | None = None, min_len: int = 0) -> list:
        if not isinstance(v, list):
            self.fail(path, "must be a JSON list", v)
        if length is not None and len(v) != length:
            self.fail(path, f"must have {length} entries, has {len(v)}")
        if len(v) < min_len:
            self.fail(path, f"must have at least {min_len} entries, has {len(v)}")
        return v

    # ---- scalars ---------------------------------------------------------------------------
    def num(
        self,
        v: Any,
        path: str,
        *,
        finite: bool = True,
        lo: float | None = None,
        hi: float | None = None,
        lo_open: bool = False,
        hi_open: bool = False,
        none: bool = False,
    ) -> float | None:
        if v is None and none:
            return None
        if isinstance(v, bool) or not isinstance(v, int | float):
            self.fail(path, "must be a number", v)
        f = float(v)
        if math.isnan(f) or math.isinf(f):
            if finite:
                self.fail(path, "must be a finite number", v)
            return f
        if lo is not None and (f < lo or (lo_open and f == lo)):
            self.fail(path, f"must be {'>' if lo_open else '>='} {fmt_value(lo)}", v)
        if hi is not None and (f > hi or (hi_open and f == hi)):
            self.fail(path, f"must be {'<' if hi_open else '<='} {fmt_value(hi)}", v)
        return f

    def int_(self, v: Any, path: str, *, lo: int | None = 0, none: bool = False) -> int | None:
        if v is None and none:
            return None
        if isinstance(v, bool) or not isinstance(v, int):
            self.fail(path, "must be an integer", v)
        if lo is not None and v < lo:
            self.fail(path, f"must be >= {lo}", v)
        return v

    def bool_(self, v: Any, path: str) -> bool:
        if not isinstance(v, bool):
            self.fail(path, "must be true or false", v)
        return v

    def str_(self, v: Any, path: str, choices: Iterable[str] | None = None, none: bool = False):
        if v is None and none:
            return None
        if not isinstance(v, str):
            self.fail(path, "must be a string", v)
        if choices is not None and v not in set(choices):
            self.fail(path, f"must be one of {', '.join(sorted(choices))}", v)
        return v

    def nums(self, v: Any, path: str, length: int | None = None, **kw) -> list[float]:
        v = self.list_(v, path, length)
        return [self.num(x, f"{path}[{i}]", **kw) for i, x in enumerate(v)]

    def matrix(self, v: Any, path: str, ncols: int | None = None, **kw) -> list[list[float]]:
        v = self.list_(v, path)
        for i, row in enumerate(v):
            self.nums(row, f"{path}[{i}]", ncols, **kw)
        return v

    # ---- envelope --------------------------------------------------------------------------
    def record(self, d, fields: Iterable[str], kind: str, *, label: str) -> Mapping:
        """A saved record: an object with exactly `fields` plus the envelope (``kind``,
        ``format_version``), every field present; returns it."""
        d = self.obj(d)
        fields = tuple(fields)
        self.kind(d, kind, label=label)
        self.keys(d, (*fields, "kind", "format_version"))
        for k in fields:
            self.get(d, k)
        return d

    def kind(
        self,
        d: Mapping,
        kind: str,
        *,
        label: str | None = None,
        versions: Collection[int] = (FORMAT_VERSION,),
        required: bool = True,
    ) -> None:
        """``kind`` names this result type and ``format_version`` is one of `versions` (the
        versions this release reads). `label` names the file type in the error (``saved FLP
        fit``); a saved estimator of another kind is refused naming both kinds
        (`kinds.wrong_kind`); with ``required=False`` a file without the envelope is
        accepted."""
        k = d.get("kind")
        if k is None and not required:
            pass
        elif k != kind and (kind in ESTIMATORS or (isinstance(k, str) and k in ESTIMATORS)):
            raise wrong_kind(self.where, k, kind)
        elif k != kind:
            found = f"a saved {k!r} result" if isinstance(k, str) else "no lmforecast result"
            raise InputError(
                f"{self.where}: not a {label or 'saved ' + kind}: it is {found} "
                f"(field 'kind' is {fmt_value(k)})"
            )
        v = d.get("format_version")
        if v is None and not required:
            return
        if isinstance(v, bool) or not isinstance(v, int) or v not in set(versions):
            known = ", ".join(str(x) for x in sorted(versions))
            self.fail(
                "format_version",
                f"unknown version of a saved {kind}; this release reads version {known} "
                "(re-create the file with this release)",
                v,
            )


def check_array(c: Checker, v: Any, path: str, shape: tuple, *, finite: bool = True):
    """A nested list of numbers of the given shape (None in `shape`: any length)."""

    def walk(x, depth, p):
        if depth == len(shape):
            c.num(x, p, finite=finite)
            return
        c.list_(x, p, shape[depth])
        for i, y in enumerate(x):
            walk(y, depth + 1, f"{p}[{i}]")

    walk(v, 0, path)
    return np.asarray(v, float)
