"""Functional forms. Every law registers under a name so saved fits can rebuild it from JSON."""

from __future__ import annotations

from collections.abc import Callable

from ..errors import InputError
from .base import Law, Parameter

_REGISTRY: dict[str, Callable[..., Law]] = {}


def register_law(name: str):
    def deco(factory):
        _REGISTRY[name] = factory
        return factory

    return deco


def get_law(name: str, **options) -> Law:
    _load_builtin()
    if name not in _REGISTRY:
        raise InputError(f"unknown law {name!r}; known: {', '.join(sorted(_REGISTRY))}")
    return _REGISTRY[name](**options)


def available_laws() -> list[str]:
    _load_builtin()
    return sorted(_REGISTRY)


def _load_builtin() -> None:
    """Import every module of this package once; importing a module registers its laws."""
    import importlib
    import pkgutil

    global _LOADED
    if _LOADED:
        return
    for info in pkgutil.iter_modules(__path__):
        if info.name != "base":
            importlib.import_module(f"{__name__}.{info.name}")
    _LOADED = True


_LOADED = False

__all__ = ["Law", "Parameter", "register_law", "get_law", "available_laws"]
