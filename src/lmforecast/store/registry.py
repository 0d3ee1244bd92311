"""`load`, the one loader for every file lmforecast saves: a saved estimator is read once and
handed to the class its ``kind`` names in `store.kinds.ESTIMATORS`; a saved result (an OSL
fit, a backtest, an isoFLOP analysis, ...) to the ``from_json`` of its class in
`store.kinds.RESULTS`. Classes are imported by name on first use (`store` imports no method
package)."""

from __future__ import annotations

from importlib import import_module
from pathlib import Path

from ..errors import InputError
from .checker import source_label
from .envelope import load_json
from .kinds import COMMANDS, ESTIMATORS, RESULTS, wrong_kind


def saved_kind(text_or_path) -> str | None:
    """The ``kind`` field of a saved fit or result (a path or JSON text), or None when it is no
    JSON object with one (the reader that then loads it names the problem in one line)."""
    try:
        d = load_json(text_or_path)
    except InputError:
        return None
    kind = d.get("kind") if isinstance(d, dict) else None
    return kind if isinstance(kind, str) else None


def _known() -> str:
    return ", ".join([*ESTIMATORS, *RESULTS])


def estimator_class(kind: str) -> type:
    """The class that reads a saved file of `kind`, estimator or result (imported on first
    use)."""
    where = ESTIMATORS.get(kind) or RESULTS.get(kind)
    if where is None:
        raise InputError(
            f"unknown saved kind {kind!r}; the kinds lmforecast.load reads are {_known()}"
        )
    module, name = where.split(":")
    return getattr(import_module(module), name)


def load(path: str | Path):
    """What `path` holds: the fitted estimator (saved by its ``save`` or a CLI ``fit --out``)
    or the result (saved by a command's ``--out``: `OSLResult`, `SalienceFit`,
    `BacktestResult`, `IsoFlopResult`, ...), of the class its ``kind`` names, checked field by
    field by that class's reader. A file of no known kind is one `InputError` listing the
    kinds."""
    where = source_label(path)
    d = load_json(Path(path), "saved lmforecast file")
    kind = d.get("kind")  # load_json returns a JSON object or refuses the file
    if isinstance(kind, str) and kind in ESTIMATORS:
        return estimator_class(kind).from_dict(d, where)
    if isinstance(kind, str) and kind in RESULTS:
        return estimator_class(kind).from_json(Path(path))
    got = f"kind {kind!r}" if isinstance(kind, str) else "no 'kind' field"
    raise InputError(
        f"{where}: not a saved lmforecast fit or result ({got}); the kinds lmforecast.load "
        f"reads are {_known()}"
    )


__all__ = [
    "COMMANDS",
    "ESTIMATORS",
    "RESULTS",
    "estimator_class",
    "load",
    "saved_kind",
    "wrong_kind",
]
