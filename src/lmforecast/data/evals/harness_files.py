"""The files of lm-evaluation-harness results: paths walked to their *.json files (a folder
read recursively, a file reached twice read once), each parsed and refused unless it is harness
output (a JSON object with a `results` object), and the warning naming folder files skipped."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

from ...errors import InputError


def _harness_files(paths) -> list[tuple[Path, str]]:
    """(file, source label): files as given; directories walked for *.json (sorted)."""
    if isinstance(paths, str | Path):
        paths = [paths]
    out: list[tuple[Path, str]] = []
    for raw in paths:
        p = Path(raw)
        if not p.exists():
            raise InputError(f"{p}: no such file or directory")
        if p.is_dir():
            found = sorted(f for f in p.rglob("*.json") if f.is_file())
            if not found:
                raise InputError(f"{p}: no *.json files in this folder")
            out.extend((f, (Path(p.resolve().name) / f.relative_to(p)).as_posix()) for f in found)
        else:
            out.append((p, str(raw)))
    seen: set[Path] = set()  # a file reached twice (a folder and a file in it) is read once
    unique = []
    for f, label in out:
        key = f.resolve()
        if key not in seen:
            seen.add(key)
            unique.append((f, label))
    return unique


def harness_docs(paths, skipped: list[str] | None = None):
    """(file, source label, parsed results) of each file of `paths`. A file found by walking a
    folder that is not harness output (a stray `config.json`) is skipped and, with `skipped`
    given, listed there by its refusal message; a file named on its own is refused."""
    paths = [paths] if isinstance(paths, str | Path) else list(paths)
    named = {Path(p).resolve() for p in paths if Path(p).is_file()}
    for path, source in _harness_files(paths):
        try:
            doc = _load_json(path)
        except InputError as exc:
            if path.resolve() in named:
                raise
            if skipped is not None:
                skipped.append(str(exc))
            continue
        yield path, source, doc


def warn_skipped(skipped: list[str], stacklevel: int = 3) -> None:
    """One warning naming the folder files skipped as not harness output."""
    if skipped:
        more = f" and {len(skipped) - 3} more" if len(skipped) > 3 else ""
        shown = "; ".join(
            m.replace(": not lm-evaluation-harness output", "", 1) for m in skipped[:3]
        )
        warnings.warn(
            f"skipped {len(skipped)} file(s) in the folder(s) that are not "
            f"lm-evaluation-harness output: {shown}{more}",
            stacklevel=stacklevel,
        )


def _load_json(path: Path) -> dict:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{path}: not lm-evaluation-harness output (not UTF-8 text)") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{path}: not lm-evaluation-harness output (not JSON: {exc.msg} at line {exc.lineno})"
        ) from None
    except RecursionError:
        raise InputError(
            f"{path}: not lm-evaluation-harness output (JSON nested too deeply)"
        ) from None
    except ValueError as exc:  # e.g. an integer beyond Python's digit limit
        msg = " ".join(str(exc).split())[:100]
        raise InputError(f"{path}: not lm-evaluation-harness output ({msg})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), dict):
        raise InputError(f"{path}: not lm-evaluation-harness output (no 'results' object)")
    return doc
