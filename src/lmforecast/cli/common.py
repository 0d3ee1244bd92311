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

from .. import safe_write
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


def _probe_folder(folder: Path, what: str) -> None:
    """Really try to create (and remove) a file in `folder`: permissions, read-only mounts,
    /proc and full disks all fail here, before any work starts."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=".lmforecast-probe-", dir=folder)
    except OSError as exc:
        raise InputError(
            f"{what}: cannot write in folder {folder} ({exc.strerror or type(exc).__name__})"
        ) from None
    os.close(fd)
    try:
        os.unlink(tmp)
    except OSError:  # pragma: no cover
        pass


def check_writable(path: str | Path | None, inputs=(), flag: str = "--out") -> Path | None:
    """Fail early (before any work) if an output file cannot be written, or would overwrite
    one of the command's `inputs`."""
    if path is None:
        return None
    p = Path(path)
    if str(path).strip() == "":
        raise InputError(f"{flag}: empty file name")
    check_not_input(p, inputs, flag)
    p, kind = safe_write.target_kind(p, flag)
    if kind == "special":  # a device or FIFO: written in place, never replaced
        if not os.access(p, os.W_OK):
            raise InputError(f"{p}: not writable")
        return Path(path)
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.exists():
        raise InputError(f"{p}: folder {parent} does not exist")
    if not parent.is_dir():
        raise InputError(f"{p}: {parent} is not a folder")
    _probe_folder(parent, str(p))
    if p.exists() and not os.access(p, os.W_OK):
        raise InputError(f"{p}: the existing file is read-only")
    return Path(path)


def check_writable_dir(path: str | Path) -> Path:
    """An output *folder*: it may exist (a folder) or not (its nearest existing ancestor must be
    writable)."""
    p = Path(path)
    if str(path).strip() == "":
        raise InputError("--out: empty folder name")
    if p.is_symlink() and not safe_write.follow_symlinks():
        raise InputError(
            f"{p}: is a symbolic link; refusing to write through it "
            "(pass --follow-symlinks to write into its target)"
        )
    if p.exists() and not p.is_dir():
        raise InputError(f"{p}: exists and is not a folder")
    probe = p
    while not probe.exists():
        probe = probe.parent if probe.parent != probe else Path(".")
        if str(probe) in ("", "."):
            probe = Path(".")
            break
    if not probe.is_dir():
        raise InputError(f"{p}: {probe} is not a folder")
    _probe_folder(probe, str(p))
    return p


def check_not_input(out: Path, inputs, flag: str = "--out") -> None:
    """Refuse an output path that is one of the inputs (writing it would destroy the input)."""
    if not out.exists():
        return
    for q in inputs:
        try:
            if q and Path(q).exists() and Path(q).samefile(out):
                raise InputError(
                    f"{out}: {flag} is also an input of this command; writing it would "
                    "destroy the input, choose another file"
                )
        except OSError:
            continue


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """Write via a temporary sibling file and rename, so a failure leaves no partial output and
    the previous file (if any) intact; devices and FIFOs are written in place, symbolic links
    refused unless followed (the output policy of `lmforecast.safe_write`)."""
    safe_write.write_bytes(path, data)


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write text atomically (see `atomic_write_bytes`)."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_folder(folder: str | Path, files: dict[str, bytes | str]) -> None:
    """Write a set of files so that readers see either all the old ones or all the new ones.

    The files are written into a temporary sibling folder; then the old folder (if any) is
    renamed aside, the new one renamed into place, and the old one removed. Files of the old
    folder that are not in `files` are carried over. A failure at any step leaves the previous
    folder as it was.
    """
    import shutil

    out = Path(folder)
    parent = out.parent if str(out.parent) else Path(".")
    parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}-new-", dir=parent))
    old = None
    try:
        if out.exists():
            for q in out.iterdir():
                if q.name not in files:
                    dest = tmp / q.name
                    if q.is_dir():
                        shutil.copytree(q, dest, symlinks=True)
                    else:
                        shutil.copy2(q, dest)
        for name, data in files.items():
            (tmp / name).write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
            os.chmod(tmp / name, 0o666 & ~_umask())
        os.chmod(tmp, 0o777 & ~_umask())
        if out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}-old-", dir=parent))
            os.rmdir(old)
            os.replace(out, old)
        try:
            os.replace(tmp, out)
        except BaseException:
            if old is not None:
                os.replace(old, out)
                old = None
            raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)


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


class _OldSpelling(argparse.Action):
    """A hidden positional kept for one release as an alias of a named input flag."""

    def __call__(self, parser, namespace, values, option_string=None):
        if values is None:
            return
        current = getattr(namespace, "runs", None)
        if current is not None and current != values:
            parser.error(f"the runs table is given twice ({current} and {values}); use --runs once")
        namespace.runs = values


def add_runs_flag(p: argparse.ArgumentParser, help: str) -> None:
    """``--runs TABLE``, the one spelling of a runs table across methods (flp, flpm, supervised,
    distill, backtest). The old positional ``RUNS`` still works, hidden, for one release."""
    p.add_argument("--runs", metavar="TABLE", default=None, help=help + " (required)")
    p.add_argument("runs_old", nargs="?", metavar="RUNS", action=_OldSpelling, default=None,
                   help=argparse.SUPPRESS)  # fmt: skip


def require_runs(args: argparse.Namespace) -> str:
    """The runs table named by ``--runs`` (or the old positional); one-line error if missing."""
    path = getattr(args, "runs", None)
    if path is None:
        raise InputError("--runs TABLE is required (a CSV/TSV/Parquet/JSONL table of runs)")
    args.runs = path
    return path
