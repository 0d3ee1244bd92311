"""argparse converters that read one flag's value: a positive number, a list of them, a level.

They import nothing heavy (the option catalog `cli.options`, which `lmforecast --help` reads,
holds them); the range-checked converters the flag policy applies live in `cli.flags`.
"""

from __future__ import annotations

import argparse
import math

from ..params import UNIT_OPEN


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


def positive_floats(flag: str):
    """argparse type: one positive number or a comma-separated list of them (a tuple)."""
    one = positive_float(flag)

    def conv(text: str) -> tuple[float, ...]:
        parts = [t.strip() for t in str(text).split(",")]
        if not all(parts):
            raise argparse.ArgumentTypeError(f"{text!r} has an empty item")
        return tuple(one(t) for t in parts)

    conv.__name__ = flag
    return conv


def open_unit_interval(text: str) -> float:
    """argparse type: a number strictly between 0 and 1 (e.g. an interval's level: the
    parameter table's `params.UNIT_OPEN`, as the estimators check it)."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if UNIT_OPEN.failure(v) is not None:
        raise argparse.ArgumentTypeError(f"{text!r} must be {UNIT_OPEN.bounds()}")
    return v
