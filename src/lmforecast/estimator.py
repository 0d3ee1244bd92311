"""The contract every estimator keeps, and the machinery they share.

Every estimator (`SupervisedScalingLaw`, `DistillationScalingLaw`, `FLP`, `FLPM`,
`DownstreamForecaster`, `ObservationalScalingLaw`, `CapabilitySalience`, `DataConstrainedLaw`)
subclasses `Estimator` and has:

- configuration in ``__init__``, stored unchanged under the argument's name (or the attribute
  named in ``_param_attrs``), so `get_params` reads it back and ``type(est)(**est.get_params())``
  builds an unfitted copy (scikit-learn's ``clone`` works the same way); `set_params` returns
  the estimator;
- ``fit(...) -> self``; ``predict(...)``: a Python float for scalar inputs, an ndarray for
  array inputs (`point`);
- ``predict_interval(..., *, level=0.9, kind="prediction")``: "prediction" covers a new
  observation (noise included), "confidence" the fitted curve only; a class lists any other
  kind it has in ``interval_kinds`` (documented there) and refuses an unknown one;
- ``summary() -> str``; ``to_dict()`` / ``from_dict(d, where)``, and through them
  ``to_json`` / ``from_json`` / ``save(path) -> path`` / ``load(path)``, written by the one JSON
  writer of `store` (strict JSON, reloads bit-for-bit).
"""

from __future__ import annotations

import inspect
from pathlib import Path

import numpy as np

from .display import EstimatorDisplay
from .errors import InputError
from .params import INTERVAL_KINDS, check, check_kind
from .store import dump_json, load_json
from .store.checker import source_label


def point(value):
    """A prediction as the contract returns it: a Python float for a 0-d (scalar) result, an
    ndarray otherwise."""
    arr = np.asarray(value, float)
    return float(arr) if arr.ndim == 0 else arr


def scalar_like(*inputs) -> bool:
    """Whether every input is a scalar (a number or a 0-d array), so the prediction is one."""
    return all(np.ndim(v) == 0 for v in inputs if v is not None)


class Estimator(EstimatorDisplay):
    """Base class of every estimator: parameters, persistence and interval-kind checks."""

    #: the kinds ``predict_interval`` takes ("prediction" first: the default)
    interval_kinds: tuple[str, ...] = INTERVAL_KINDS
    #: what a saved file of this class is called in error messages
    saved_label: str = "saved fit"

    # ---- parameters (scikit-learn's get_params / set_params) -------------------------------
    @classmethod
    def _param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        names = []
        stored = getattr(cls, "_param_attrs", {})
        for name, p in list(sig.parameters.items())[1:]:
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or stored.get(name, name) is None:
                continue
            names.append(name)
        return names

    def get_params(self, deep: bool = True) -> dict:
        """The constructor arguments, as given (``type(self)(**self.get_params())`` is an
        unfitted copy). `deep` is accepted for scikit-learn; no parameter is an estimator."""
        stored = getattr(self, "_param_attrs", {})
        return {n: getattr(self, stored.get(n, n)) for n in self._param_names()}

    def set_params(self, **params):
        """Set constructor arguments by name; returns the estimator. An unknown name is an
        InputError listing the valid ones."""
        names = self._param_names()
        stored = getattr(self, "_param_attrs", {})
        for name, value in params.items():
            if name not in names:
                raise InputError(
                    f"{type(self).__name__} has no parameter {name!r}; its parameters are "
                    f"{', '.join(names)}"
                )
            setattr(self, stored.get(name, name), value)
        return self

    # ---- intervals -------------------------------------------------------------------------
    def _interval_args(self, level, kind) -> tuple[float, str]:
        """`level` and `kind` of ``predict_interval``, checked by the one parameter table."""
        return check("level", level), check_kind(kind, self.interval_kinds)

    # ---- persistence -----------------------------------------------------------------------
    def to_dict(self) -> dict:  # pragma: no cover - every estimator defines it
        raise NotImplementedError

    @classmethod
    def from_dict(cls, d: dict, where: str = "saved fit"):  # pragma: no cover
        raise NotImplementedError

    def to_json(self, path: str | Path | None = None) -> str:
        """The fit as strict JSON text (also written atomically to `path`)."""
        return dump_json(self.to_dict(), path)

    @classmethod
    def from_json(cls, text_or_path):
        """A fit from `to_json` text or a saved file, checked field by field."""
        d = load_json(text_or_path, cls.saved_label)
        return cls.from_dict(d, source_label(text_or_path))

    def save(self, path: str | Path) -> Path:
        """Write the fit to `path` (strict JSON, atomic); returns the path."""
        self.to_json(path)
        return Path(path)

    @classmethod
    def load(cls, path: str | Path):
        """A fit written by `save`."""
        return cls.from_json(Path(path))


__all__ = ["Estimator", "point", "scalar_like"]
