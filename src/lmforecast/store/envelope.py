"""JSON text of saved results: one writer and one reader for every result type.

A saved result is a JSON object carrying ``kind`` (its result type) and ``format_version``;
Python's float repr round-trips exactly, so a result loads back bit-for-bit. `Checker.kind`
(in `store.checker`) refuses a file of another kind or of an unknown version.
"""

from __future__ import annotations

import json
import math
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
    return d


def dump_json(d: dict, path: str | Path | None = None, indent: int | None = 1) -> str:
    """JSON text of a saved result (Python's float repr round-trips exactly), optionally written
    to `path`. Every result type of the package persists through this one function."""
    text = json.dumps(d, indent=indent, allow_nan=True)
    if path is not None:  # atomic: a failed write leaves the previous file intact
        atomic_write_text(path, text)
    return text
