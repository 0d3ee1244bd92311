"""Parameter constraints in one table, checked by estimators and by the CLI's flag policy.

As scikit-learn's ``_param_validation`` does, each constrained parameter name maps to a small
declarative constraint (`Interval` or `Options`); `check(name, value)` returns the value or
raises one `InputError` line naming the parameter and the value (``level must be strictly
between 0 and 1, got 1.5``). Estimators call it in ``__init__``/``fit``/``predict_interval``;
``cli.flags`` builds its range-checked argparse types from the same `Interval`s, so a flag and
the estimator argument behind it are refused with the same words.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field

from .errors import InputError

#: Upper limits of counts (a typo such as ``bootstrap=10**12`` is refused instead of running
#: for days).
MAX_BOOTSTRAP = 100_000
MAX_STEPS = 100_000
MAX_JOBS = 1024
MAX_SEED = 2**63 - 1


def _g(v) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


@dataclass(frozen=True)
class Interval:
    """A number in [lo, hi] (either end None: unbounded; `closed` says which ends are included:
    "both", "left", "right" or "neither"); `integer` asks for a whole number; values in
    `exclude` are refused with `why` appended."""

    lo: float | None = None
    hi: float | None = None
    closed: str = "both"
    integer: bool = False
    exclude: tuple = ()
    why: str = ""

    def bounds(self) -> str:
        """The range in words: ">= 0", "strictly between 0 and 1", "in [0, 1)"."""
        lo_in = self.closed in ("both", "left")
        hi_in = self.closed in ("both", "right")
        if self.lo is None and self.hi is None:
            return "a finite number"
        if self.hi is None:
            return f"{'>=' if lo_in else '>'} {_g(self.lo)}"
        if self.lo is None:
            return f"{'<=' if hi_in else '<'} {_g(self.hi)}"
        if not lo_in and not hi_in:
            return f"strictly between {_g(self.lo)} and {_g(self.hi)}"
        if lo_in and hi_in:
            return f"between {_g(self.lo)} and {_g(self.hi)}"
        return f"in {'[' if lo_in else '('}{_g(self.lo)}, {_g(self.hi)}{']' if hi_in else ')'}"

    def describe(self) -> str:
        return f"a whole number {self.bounds()}" if self.integer else self.bounds()

    def failure(self, v) -> str | None:
        """Why the number `v` is out of range (the words after "must be": the side it crosses,
        or "strictly between" for an open two-sided range), or None if it is in."""
        if not math.isfinite(v):
            return "a finite number"
        lo_in = self.closed in ("both", "left")
        hi_in = self.closed in ("both", "right")
        both_open = None not in (self.lo, self.hi) and not lo_in and not hi_in
        if self.lo is not None and (v < self.lo or (v == self.lo and not lo_in)):
            return self.bounds() if both_open else f"{'>=' if lo_in else '>'} {_g(self.lo)}"
        if self.hi is not None and (v > self.hi or (v == self.hi and not hi_in)):
            return self.bounds() if both_open else f"{'<=' if hi_in else '<'} {_g(self.hi)}"
        if v in self.exclude:
            return f"{self.bounds()} and not {_g(v)}{self.why}"
        return None

    def check(self, name: str, value):
        """`value` as an int or float, or InputError "`name` must be ..., got `value`"."""
        bad = InputError(f"{name} must be {self.describe()}, got {value!r}")
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise bad
        v = float(value)
        if self.integer:
            if not math.isfinite(v) or v != int(v):
                raise bad
            v = int(v)
        why = self.failure(v)
        if why is not None:
            raise InputError(f"{name} must be {why}, got {value!r}")
        return v


@dataclass(frozen=True)
class Options:
    """One of a fixed set of strings."""

    values: tuple = field(default_factory=tuple)

    def check(self, name: str, value):
        if not isinstance(value, str) or value not in self.values:
            raise InputError(
                f"{name} must be one of {', '.join(map(repr, self.values))}, got {value!r}"
            )
        return value


UNIT_OPEN = Interval(0.0, 1.0, "neither")
COUNT = Interval(0, MAX_BOOTSTRAP, "both", integer=True)

#: The interval kinds every estimator's ``predict_interval`` takes: "prediction" covers a new
#: observation (noise included), "confidence" the fitted curve only.
INTERVAL_KINDS = ("prediction", "confidence")

#: Parameter name -> constraint, shared by every estimator and CLI flag of that name.
CONSTRAINTS = {
    "level": UNIT_OPEN,
    "ci_level": UNIT_OPEN,
    "bootstrap": Interval(0, None, integer=True),
    "seed": Interval(0, MAX_SEED, "both", integer=True),
    "n_steps": Interval(0, MAX_STEPS, "both", integer=True),
    "steps": Interval(1, MAX_STEPS, "both", integer=True),
    "n_polish": Interval(0, 10_000, "both", integer=True),
    "holdout_top": UNIT_OPEN,
    "threshold": Interval(0.0, None),
    # a task's chance (random-guess) level, in points (0-100) in every estimator: `CHANCE_POINTS`
    "chance": Interval(0.0, None),
}

#: The chance level in percentage points (FLP, FLP-M, DownstreamForecaster, CapabilitySalience).
CHANCE_POINTS = Interval(0.0, 100.0, "left")


def check(name: str, value, constraint=None):
    """`value` checked against `constraint` (default: the table's entry for `name`)."""
    c = constraint if constraint is not None else CONSTRAINTS[name]
    return c.check(name, value)


def check_kind(kind, kinds=INTERVAL_KINDS):
    """An interval kind of ``predict_interval``; InputError naming the ones this class has."""
    return Options(tuple(kinds)).check("kind", kind)


__all__ = [
    "CHANCE_POINTS",
    "CONSTRAINTS",
    "COUNT",
    "INTERVAL_KINDS",
    "Interval",
    "MAX_BOOTSTRAP",
    "MAX_JOBS",
    "MAX_SEED",
    "MAX_STEPS",
    "Options",
    "UNIT_OPEN",
    "check",
    "check_kind",
]
