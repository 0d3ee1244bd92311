"""Helpers every CLI command shares: JSON output, atomic file writes, progress flags."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError


def add_output_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print machine-readable JSON on stdout")
    p.add_argument("--quiet", action="store_true", help="no progress bars")


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


def print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(to_jsonable(obj), indent=None) + "\n")


def emit(args: argparse.Namespace, contract: Any, summary: str) -> int:
    """A handler's last step: the JSON contract with ``--json``, else the text summary."""
    if args.json:
        print_json(contract)
    else:
        print(summary)
    return 0


def check_writable(path: str | Path | None) -> Path | None:
    """Fail early (before any work) if an output file cannot be written."""
    if path is None:
        return None
    p = Path(path)
    if p.exists() and p.is_dir():
        raise InputError(f"{p}: is a directory, expected a file path")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.exists():
        raise InputError(f"{p}: folder {parent} does not exist")
    return p


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write via a temporary file and rename, so a failure leaves no partial output."""
    p = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=p.parent if str(p.parent) else ".")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.replace(tmp, p)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def parse_float(text: str, flag: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise InputError(f"{flag}: {text!r} is not a number") from None


def positive_float(flag: str):
    """argparse type: a positive finite float, error naming the flag."""

    def conv(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not (math.isfinite(v) and v > 0):
            raise argparse.ArgumentTypeError(f"{text!r} must be a positive number")
        return v

    conv.__name__ = flag
    return conv


def open_unit_interval(text: str) -> float:
    """argparse type: a number strictly between 0 and 1 (e.g. an interval's level)."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not (0.0 < v < 1.0):
        raise argparse.ArgumentTypeError(f"{text!r} must be strictly between 0 and 1")
    return v


def add_level_flag(p: argparse.ArgumentParser, default: float = 0.9) -> None:
    """The shared ``--level`` flag of every forecasting verb (prediction-interval level)."""
    p.add_argument(
        "--level",
        type=open_unit_interval,
        default=default,
        help=f"prediction-interval level, strictly between 0 and 1 (default {default:g}); "
        'the JSON output carries it as "interval": [lo, hi]',
    )
