"""Helpers every CLI command shares: JSON output, atomic file writes, output-path checks."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..store import (
    atomic_write_bytes,
    atomic_write_folder,
    atomic_write_text,
    safe_write,
    to_jsonable,
)
from ..store.safe_write import check_writable_dir, probe_folder
from .argtypes import open_unit_interval, positive_float, positive_floats

__all__ = [  # re-exported for CLI code: the writer is the store's, the converters argtypes'
    "check_writable_dir",
    "open_unit_interval",
    "positive_float",
    "positive_floats",
    "atomic_write_bytes",
    "atomic_write_folder",
    "atomic_write_text",
    "to_jsonable",
]


def print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(to_jsonable(obj), indent=None) + "\n")


def emit(args: argparse.Namespace, contract: Any, summary: str) -> int:
    """A handler's last step: the JSON contract with ``--json``, else the text summary."""
    if args.json:
        print_json(contract)
    else:
        print(summary)
    return 0


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
    probe_folder(parent, str(p))
    if p.exists() and not os.access(p, os.W_OK):
        raise InputError(f"{p}: the existing file is read-only")
    return Path(path)


def figure_format(out: Path, html_ok: bool = False, flag: str = "--out") -> str:
    """The figure format `out`'s extension names (png when it has none), checked before any
    work (`store.figures.figure_format`)."""
    from ..store.figures import figure_format as fmt

    return fmt(out, flag, html_ok)


def refuse_flags(given: dict[str, bool], why: str) -> None:
    """One error naming every flag in `given` that was set (True) where it does not apply:
    a flag is refused, never ignored."""
    on = [flag for flag, is_set in given.items() if is_set]
    if on:
        raise InputError(f"{', '.join(on)} {why}")


# extensions that name a file format: an output written in another format under one of them
# (JSON in `x.png`) is refused; names without a known extension are written as given
KNOWN_FORMATS = {
    ".json": "JSON",
    ".jsonl": "JSONL",
    ".ndjson": "JSONL",
    ".csv": "CSV",
    ".tsv": "TSV",
    ".parquet": "Parquet",
    ".png": "PNG",
    ".pdf": "PDF",
    ".svg": "SVG",
    ".jpg": "JPEG",
    ".jpeg": "JPEG",
    ".html": "HTML",
    ".htm": "HTML",
    ".txt": "text",
    ".md": "Markdown",
    ".xlsx": "Excel",
    ".xls": "Excel",
    ".ods": "OpenDocument spreadsheet",
    ".pkl": "pickle",
    ".pickle": "pickle",
    ".npy": "NumPy",
    ".npz": "NumPy",
    ".feather": "Feather",
    ".h5": "HDF5",
    ".hdf5": "HDF5",
    ".yaml": "YAML",
    ".yml": "YAML",
    ".xml": "XML",
}


def check_out_format(path: Path | None, ok: tuple[str, ...], flag: str = "--out") -> None:
    """Refuse an output name whose extension names another format than the one written."""
    if path is None:
        return
    ext = path.suffix.lower()
    if ext in KNOWN_FORMATS and ext not in ok:
        want = KNOWN_FORMATS[ok[0]]
        raise InputError(
            f"{flag} {path.name!r}: this command writes {want}, not "
            f"{KNOWN_FORMATS[ext]}; name it {path.stem}{ok[0]}"
        )


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


class OneValue(argparse._StoreAction):
    """A value flag with several spellings (``--compute-col``/``--c-col``): two of its
    spellings given different values are refused, never silently the last one."""

    def __call__(self, parser, namespace, values, option_string=None):
        seen = namespace.__dict__.setdefault("_spellings", {})
        prev = seen.get(self.dest)
        if prev is not None and prev[0] != option_string and prev[1] != values:
            a, b = (f"{v:g}" if isinstance(v, float) else repr(v) for v in (prev[1], values))
            raise argparse.ArgumentError(
                self,
                f"{prev[0]} {a} and {option_string} {b} spell one flag with two different "
                "values; give it once",
            )
        seen[self.dest] = (option_string, values)
        setattr(namespace, self.dest, values)


def require_runs(args: argparse.Namespace) -> str:
    """The runs table named by ``--runs``; one-line error if missing."""
    path = getattr(args, "runs", None)
    if path is None:
        raise InputError("--runs TABLE is required (a CSV/TSV/Parquet/JSONL table of runs)")
    return path
