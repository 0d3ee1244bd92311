"""`load`, the one loader for every saved fit: it reads the file once and hands it to the
estimator class its ``kind`` names in the table of `store.kinds`, imported by name on first
use (`store` imports no method package)."""

from __future__ import annotations

from importlib import import_module
from pathlib import Path

from ..errors import InputError
from .checker import source_label
from .envelope import load_json
from .kinds import COMMANDS, ESTIMATORS, wrong_kind


def saved_kind(text_or_path) -> str | None:
    """The ``kind`` field of a saved fit or result (a path or JSON text), or None when it is no
    JSON object with one (the reader that then loads it names the problem in one line)."""
    try:
        d = load_json(text_or_path)
    except InputError:
        return None
    kind = d.get("kind") if isinstance(d, dict) else None
    return kind if isinstance(kind, str) else None


def estimator_class(kind: str) -> type:
    """The estimator class that reads a saved file of `kind` (imported on first use)."""
    if kind not in ESTIMATORS:
        raise InputError(
            f"unknown saved-fit kind {kind!r}; the kinds lmforecast.load reads are "
            f"{', '.join(ESTIMATORS)}"
        )
    module, name = ESTIMATORS[kind].split(":")
    return getattr(import_module(module), name)


def load(path: str | Path):
    """The fitted estimator saved at `path` (by its ``save`` or a CLI ``fit --out``), of the
    class its ``kind`` names: the file is read once, then checked field by field by that
    class's ``from_dict``. A file of no known kind is one `InputError` listing the kinds."""
    where = source_label(path)
    d = load_json(Path(path), "saved lmforecast fit")
    kind = d.get("kind")  # load_json returns a JSON object or refuses the file
    if not isinstance(kind, str) or kind not in ESTIMATORS:
        got = f"kind {kind!r}" if isinstance(kind, str) else "no 'kind' field"
        raise InputError(
            f"{where}: not a saved lmforecast estimator ({got}); the kinds lmforecast.load "
            f"reads are {', '.join(ESTIMATORS)}"
        )
    return estimator_class(kind).from_dict(d, where)


__all__ = ["COMMANDS", "ESTIMATORS", "estimator_class", "load", "saved_kind", "wrong_kind"]
