"""The shared flag policy: every verb's numeric flags are range-checked by argparse, at the door.

`apply_flag_policy` walks the finished parser and gives each flag of a known name its checked
type (so a method module declares ``--seed`` with ``type=int`` and still gets ``--seed >= 0``);
any other ``type=float`` flag must be a finite number. `preflight` runs before a handler: output
paths are writable (really tried) and are not one of the command's inputs, input paths that must
be files are not folders. Limits are documented in docs/reliability.md.
"""

from __future__ import annotations

import argparse
import math
import re
from pathlib import Path

from ..data.validate import DEFAULT_MAX_ROWS, check_row_limit
from ..errors import InputError
from ..params import MAX_BOOTSTRAP, MAX_JOBS, MAX_SEED, MAX_STEPS, Interval
from .argtypes import open_unit_interval
from .common import check_writable, check_writable_dir

#: SI suffixes of numeric flags: ``--params 3B`` is 3e9, ``--tokens 1.4T`` is 1.4e12.
SI_SUFFIXES = {"K": 1e3, "k": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}
_SI = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([KkMBT])\s*$")


def expand_si(text: str) -> str:
    """``"3B"`` -> ``"3000000000"`` (K, M, B, T: thousand, million, billion, trillion); any
    other text unchanged, for the flag's own converter to judge."""
    m = _SI.match(text) if isinstance(text, str) else None
    if m is None:
        return text
    v = float(m.group(1)) * SI_SUFFIXES[m.group(2)]
    return str(int(v)) if math.isfinite(v) and v == int(v) else repr(v)


def _with_si(conv):
    """The numeric converter `conv`, reading an SI suffix first."""

    def si(text: str):
        return conv(expand_si(text))

    si.__name__ = getattr(conv, "__name__", "number")
    si.si_suffixes = True
    return si


def finite_float(text: str) -> float:
    """argparse type: any finite number."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(v):
        raise argparse.ArgumentTypeError(f"{text!r} must be a finite number")
    return v


def int_range(lo: int | None = None, hi: int | None = None, *, nonzero: bool = False, why=""):
    """argparse type: an integer in [lo, hi] (and != 0 with `nonzero`), checked by the
    parameter table's `params.Interval`."""
    rng = Interval(lo, hi, "both", integer=True)

    def conv(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from None
        bad = rng.failure(v)
        if bad is not None:
            raise argparse.ArgumentTypeError(f"must be {bad}{why}, got {text}")
        if nonzero and v == 0:
            raise argparse.ArgumentTypeError(f"must not be 0{why}")
        return v

    conv.__name__ = "int"
    return conv


def float_range(lo=None, hi=None, *, lo_open=False, hi_open=False):
    """argparse type: a finite number in a (half-)open or closed range (`params.Interval`)."""
    closed = {(False, False): "both", (True, False): "right", (False, True): "left"}
    rng = Interval(lo, hi, closed.get((lo_open, hi_open), "neither"))

    def conv(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
        if not math.isfinite(v):
            raise argparse.ArgumentTypeError(f"must be a finite number, got {text}")
        bad = rng.failure(v)
        if bad is not None:
            raise argparse.ArgumentTypeError(f"must be {bad}, got {text}")
        return v

    conv.__name__ = "float"
    return conv


def _named(conv, flag: str):
    """The converter with the flag named in its message: ``--steps must be >= 1, got 0``."""

    def named(text: str):
        try:
            return conv(text)
        except argparse.ArgumentTypeError as exc:
            msg = str(exc)
            raise argparse.ArgumentTypeError(
                msg if msg.startswith("'") else f"{flag} {msg}"
            ) from None

    named.__name__ = conv.__name__
    return named


_COUNT = int_range(0, MAX_BOOTSTRAP)


def bootstrap_converter(zero: str = "no interval"):
    """--bootstrap: 0 (`zero` says what that means for the verb) or 2 and more; one resample
    has no spread, and its "interval" is a point that need not even contain the forecast."""

    def bootstrap_count(text: str) -> int:
        n = _COUNT(text)
        if n == 1:
            raise argparse.ArgumentTypeError(
                f"must be 0 ({zero}) or >= 2 (an interval needs resamples to spread), got 1"
            )
        return n

    bootstrap_count.__name__ = "int"  # a checked int converter: `apply_flag_policy` keeps it
    return bootstrap_count


bootstrap_count = bootstrap_converter()

#: Flag name -> checked type. Applied to every verb that declares the flag.
FLAG_TYPES = {
    "--level": open_unit_interval,
    "--ci-level": open_unit_interval,
    "--seed": int_range(0, MAX_SEED),
    "--jobs": int_range(-MAX_JOBS, MAX_JOBS, nonzero=True, why=" (-1: all cores)"),
    "--bootstrap": bootstrap_count,
    "--steps": int_range(1, MAX_STEPS),
    "--pcs": int_range(1, 100),
    "--budget": int_range(1),
    "--n-fractions": int_range(1, 1000),
    "--n-polish": int_range(0, 10_000),
    "--boot-polish": int_range(0, 10_000),
    "--n-cutoffs": int_range(1, 1000),
    "--min-train": int_range(1),
    "--batch-size": int_range(1, 100_000),
    "--max-length": int_range(1, 10_000_000),
    "--feature-dim": int_range(1, 10_000_000),
    "--max-families": int_range(1),
    "--random": int_range(0, 100_000),
    "--holdout-top": float_range(0.0, 1.0, lo_open=True, hi_open=True),
    "--min-fraction": float_range(0.0, 1.0, lo_open=True, hi_open=True),
    "--max-fraction": float_range(0.0, 1.0, lo_open=True, hi_open=True),
    "--threshold": float_range(0.0),
    "--ratio-tol": float_range(0.0),
    "--top": int_range(1),
    "--max-rows": int_range(1),
    "--min-gain": float_range(0.0, 1.0, hi_open=True),
    "--zero-floor": float_range(0.0, 1.0, lo_open=True, hi_open=True),
}

#: Flags naming input files (a folder there is refused at the door).
INPUT_FILE_FLAGS = (
    "runs",
    "checkpoints",
    "targets",
    "benchmarks",
    "texts",
    "losses",
    "scores",
    "label_losses",
    "fit",
    "features",
    "teachers",
    "supervised",
    "coefficients",
)

#: Output files named by a flag other than --out.
OTHER_OUTPUT_FLAGS = ("plot",)
#: (command, verb) whose --out is a folder, not a file.
FOLDER_OUTPUTS = {("report", None), ("zoo", "build")}


def _parsers(parser: argparse.ArgumentParser):
    yield parser
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            for sp in dict.fromkeys(a.choices.values()):
                yield from _parsers(sp)


def _numeric(conv) -> bool:
    """Whether an argparse type converts numbers (int/float, or one of the checked converters,
    which are named ``int``/``float`` or after their flag)."""
    if conv in (int, float):
        return True
    name = getattr(conv, "__name__", "")
    return name in ("int", "float", "finite_float") or name.startswith("--")


def apply_flag_policy(parser: argparse.ArgumentParser) -> None:
    """Give every known flag its checked type, and every other float flag a finite check;
    every numeric flag reads SI suffixes (`expand_si`)."""
    for p in _parsers(parser):
        for a in p._actions:
            if not a.option_strings or a.choices is not None:
                continue
            name = next((o for o in a.option_strings if o in FLAG_TYPES), None)
            if name is not None and a.type in (int, float, None, open_unit_interval):
                if a.type is None and a.nargs == 0:
                    continue
                a.type = _named(FLAG_TYPES[name], name)
            elif a.type is float:
                a.type = finite_float
            if _numeric(a.type) and not getattr(a.type, "si_suffixes", False):
                a.type = _with_si(a.type)


def _inputs(args: argparse.Namespace) -> list[str]:
    out = []
    for k, v in vars(args).items():
        if k == "out" or k in OTHER_OUTPUT_FLAGS or callable(v):
            continue
        for x in v if isinstance(v, list | tuple) else [v]:
            if isinstance(x, str) and x and len(x) < 4096:
                out.append(x)
    return out


def add_max_rows_flag(p: argparse.ArgumentParser, default: int = DEFAULT_MAX_ROWS) -> None:
    """``--max-rows N``: the largest input table a fit reads (refused up front above it)."""
    p.add_argument(
        "--max-rows",
        type=int,
        default=default,
        metavar="N",
        help=f"refuse a table of more than N rows up front (default {default:,}; a fit's time "
        "grows with the rows: raise it knowingly)",
    )


def check_max_rows(df, args: argparse.Namespace, flag: str = "--runs") -> None:
    """One-line refusal of a table longer than ``--max-rows`` (see `add_max_rows_flag`)."""
    check_row_limit(len(df), getattr(args, "max_rows", DEFAULT_MAX_ROWS), f"{flag} table")


def osl_notes(args: argparse.Namespace) -> list[str]:
    """OSL's notes on the benchmark table (`osl.missing.missing_notes`: the columns used, the
    empty cells imputed as App. B.3 does), or its InputError with ``--missing refuse``. The
    notes are printed after the verb succeeds (a failing verb prints only its error line)."""
    from ..osl.data import read_benchmarks
    from ..osl.missing import missing_notes

    given = getattr(args, "metrics", None)
    return missing_notes(
        read_benchmarks(args.benchmarks),
        metrics=[t.strip() for t in given.split(",") if t.strip()] if given else None,
        target=getattr(args, "target", None),
        exclude=getattr(args, "exclude_metric", None) or (),
        missing=args.missing,
    )


def preflight(args: argparse.Namespace) -> list[str]:
    """Checks every verb gets before its handler runs (see the module docstring). Returns notes
    to print once the verb has succeeded."""
    notes: list[str] = []
    for k in INPUT_FILE_FLAGS:
        v = getattr(args, k, None)
        for x in v if isinstance(v, list | tuple) else [v]:
            if isinstance(x, str) and not x.strip():
                raise InputError(f"--{k.replace('_', '-')}: empty path")
            if isinstance(x, str) and (x.lstrip().startswith(("{", "[")) or "\n" in x):
                head = " ".join(x.split())[:40]
                raise InputError(
                    f"--{k.replace('_', '-')}: expects a file path, got inline text "
                    f"({head!r}...); save it to a file and pass its path"
                )
            try:
                is_dir = isinstance(x, str) and bool(x) and Path(x).is_dir()
            except OSError as exc:  # e.g. a name too long for the file system
                msg = f"--{k.replace('_', '-')}: not a usable path ({exc.strerror})"
                raise InputError(msg) from None
            if is_dir:
                raise InputError(f"--{k.replace('_', '-')} {x}: is a folder, expected a file")
    if getattr(args, "missing", None) is not None and getattr(args, "benchmarks", None):
        notes += osl_notes(args)
    out = getattr(args, "out", None)
    if isinstance(out, str):
        if (args.command, getattr(args, "verb", None)) in FOLDER_OUTPUTS:
            check_writable_dir(out)
        else:
            check_writable(out, _inputs(args))
    check_other_outputs(args)
    return notes


def check_other_outputs(args: argparse.Namespace) -> None:
    """Output flags besides ``--out`` (``--plot``): same checks, and none may name an input
    or another output of the command."""
    for k in OTHER_OUTPUT_FLAGS:
        v = getattr(args, k, None)
        if not isinstance(v, str):
            continue
        flag = f"--{k}"
        if v == getattr(args, "out", None):
            raise InputError(f"{flag} {v}: is also the --out file; choose another file")
        check_writable(v, _inputs(args), flag)


def parse_fixed(items: list[str]) -> dict[str, float]:
    """`--fix NAME=VALUE` (repeatable) as {name: value}; one-line error naming the item."""
    out = {}
    for it in items:
        name, sep, val = it.partition("=")
        if not sep:
            raise InputError(f"--fix: expected NAME=VALUE, got {it!r}")
        if name.strip() in out:  # the last one silently won
            raise InputError(
                f"--fix: {name.strip()} given twice ({it!r} after "
                f"{name.strip()}={out[name.strip()]:g}); give it once"
            )
        try:
            out[name.strip()] = float(val)
        except ValueError:
            raise InputError(f"--fix: {val!r} is not a number") from None
    return out
