"""lmforecast: forecast language-model loss and downstream performance before training.

`load` (any saved fit, returned as its estimator) loads on first use (module ``__getattr__``):
importing lmforecast stays light."""

from importlib import import_module

from .errors import ConvergenceWarning, DomainWarning, InputError

__version__ = "0.1.0"

_WHERE = {"load": ".store.registry"}

__all__ = ["InputError", "ConvergenceWarning", "DomainWarning", "load", "__version__"]


def __getattr__(name: str):
    if name in _WHERE:
        value = getattr(import_module(_WHERE[name], __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
