"""JSON text of saved results: one writer and one reader for every result type.

A saved result is a JSON object carrying ``kind`` (its result type) and ``format_version``;
Python's float repr round-trips exactly, so a result loads back bit-for-bit. `Checker.kind`
(in `store.checker`) refuses a file of another kind or of an unknown version.

The text is strict JSON (RFC 8259: no ``NaN`` or ``Infinity`` tokens, which jq, JavaScript and
most JSON libraries refuse). A non-finite float is written as ``null`` and its place and value are
listed under the top-level key ``non_finite`` (``[[path, "NaN" | "Infinity" | "-Infinity"], ...]``,
a path being the keys and list indices leading to it); `load_json` puts the values back, so the
result still loads bit-for-bit. A file with bare ``NaN`` tokens (as Python's `json` module
writes them by default) also loads.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from .checker import source_label
from .files import atomic_write_text


def to_jsonable(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return to_jsonable(obj.tolist())
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating | float):
        v = float(obj)
        return v if math.isfinite(v) else None
    if isinstance(obj, np.bool_):
        return bool(obj)
    return obj


def load_json(text_or_path: str | Path, what: str = "saved fit") -> dict:
    """The dict of a saved result given as a path or as JSON text; InputError naming the problem.

    An existing file always wins over inline JSON (a file may be named ``{x}.json``); text is
    taken as inline JSON only when it starts with ``{`` and is not an existing path.
    """
    s = str(text_or_path)
    label = source_label(s)
    p = Path(s) if len(s) < 4096 and "\n" not in s else None
    is_file = False
    if p is not None:
        try:
            is_file = p.is_file()
            is_dir = p.is_dir()
        except OSError:
            is_dir = False
        if is_dir:
            raise InputError(f"{p}: is a directory, expected a {what} (a JSON file)")
        if not is_file and os.path.exists(p):  # a FIFO would block the read, a device never end
            raise InputError(f"{p}: not a regular file (a FIFO or device), expected a {what}")
    if is_file:
        try:
            raw = p.read_bytes()
        except OSError as exc:
            raise InputError(f"{p}: cannot read: {exc.strerror or exc}") from None
        try:
            s = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(
                f"{p}: not a {what} (not UTF-8 text: byte {exc.start} is "
                f"0x{raw[exc.start]:02x}; is it a binary file?)"
            ) from None
    elif not s.lstrip().startswith("{"):
        raise InputError(f"{label}: no such file")
    try:
        d = json.loads(s)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{label}: not a {what} (invalid JSON at line {exc.lineno} column {exc.colno}: "
            f"{exc.msg})"
        ) from None
    except RecursionError:
        raise InputError(f"{label}: not a {what} (JSON nested too deeply)") from None
    except ValueError as exc:  # e.g. an integer of more than 4,300 digits
        why = str(exc).splitlines()[0][:120] if str(exc) else type(exc).__name__
        if "digits" in why:
            why = "a number written with more than 4,300 digits"
        raise InputError(f"{label}: not a {what} ({why})") from None
    if not isinstance(d, dict):
        raise InputError(f"{label}: not a {what} (expected a JSON object)")
    return _decode_non_finite(d, f"{label}: not a {what}")


NON_FINITE = "non_finite"
_TOKENS = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def _token(v: float) -> str:
    return "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")


def _encode_non_finite(d: dict) -> dict:
    """A copy of `d` with every non-finite float replaced by None and listed under NON_FINITE
    (absent when there is none)."""
    found: list[list] = []

    def walk(obj, path):
        if isinstance(obj, float | np.floating) and not math.isfinite(obj):
            found.append([list(path), _token(float(obj))])
            return None
        if isinstance(obj, dict):
            return {k: walk(v, (*path, str(k))) for k, v in obj.items()}  # JSON keys: text
        if isinstance(obj, list | tuple):
            return [walk(v, (*path, i)) for i, v in enumerate(obj)]
        return obj

    out = walk(d, ())
    if found:
        if NON_FINITE in d:
            raise ValueError(f"a saved result may not use the key {NON_FINITE!r}")
        out[NON_FINITE] = found
    return out


def _decode_non_finite(d: dict, where: str) -> dict:
    """Put back the non-finite floats `_encode_non_finite` listed; InputError if the list is
    not one it could have written."""
    if NON_FINITE not in d:
        return d
    entries = d.pop(NON_FINITE)
    bad = f"{where} ({NON_FINITE!r} must list [path, 'NaN' | 'Infinity' | '-Infinity'] pairs"
    if not isinstance(entries, list):
        raise InputError(f"{bad}, got {type(entries).__name__})")
    for e in entries:
        ok = isinstance(e, list) and len(e) == 2 and isinstance(e[0], list) and e[0]
        if not ok or e[1] not in _TOKENS:
            raise InputError(f"{bad}, got {e!r})")
        parent = d
        try:
            for k in e[0][:-1]:
                parent = parent[k]
            if parent[e[0][-1]] is not None:
                raise InputError(f"{bad}: {e[0]!r} is not null)")
        except (KeyError, IndexError, TypeError):
            raise InputError(f"{bad}: no value at {e[0]!r})") from None
        parent[e[0][-1]] = _TOKENS[e[1]]
    return d


def dump_json(d: dict, path: str | Path | None = None, indent: int | None = 1) -> str:
    """JSON text of a saved result (Python's float repr round-trips exactly), optionally written
    to `path`. Every result type of the package persists through this one function."""
    text = json.dumps(_encode_non_finite(d), indent=indent, allow_nan=False)
    if path is not None:  # atomic: a failed write leaves the previous file intact
        atomic_write_text(path, text)
    return text
