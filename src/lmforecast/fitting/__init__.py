"""The shared fitting engine: robust losses, grid + L-BFGS-B fits, results (the bootstrap
refits live in `lmforecast.uncertainty.bootstrap`).

The names load on first use (module ``__getattr__``): a forecast from a saved fit needs
`FitResult` and the losses, not the optimiser."""

from importlib import import_module

from .losses import Loss, huber, squared
from .result import FitResult

_WHERE = {
    "fit_law": ".engine",
    "refit_from": ".engine",
    "grid_to_array": ".engine",
}
_SUBMODULES = ("engine", "varpro", "threads", "schema")

__all__ = [
    "fit_law",
    "refit_from",
    "grid_to_array",
    "Loss",
    "huber",
    "squared",
    "FitResult",
]


def __getattr__(name: str):
    if name in _WHERE:
        value = getattr(import_module(_WHERE[name], __name__), name)
        globals()[name] = value
        return value
    if name in _SUBMODULES:  # `lmforecast.fitting.engine` without importing it first
        return import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
