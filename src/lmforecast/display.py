"""How estimators and results show themselves, in a terminal and in a notebook.

Following scikit-learn's convention, an estimator's ``repr`` lists the constructor arguments
that differ from their defaults (``SupervisedScalingLaw(form='chinchilla', bootstrap=50)``), so
it can be pasted back as code. In Jupyter (``_repr_html_``) a fitted estimator or a result shows
its ``summary()``, the text a researcher pastes into a paper; an unfitted estimator says so.
"""

from __future__ import annotations

import html
import inspect

from .errors import not_fitted

MAX_VALUE_CHARS = 60
_NOT_FITTED = (RuntimeError, ValueError)  # what `summary()` raises before `fit` (NotFittedError)


def _same(value, default) -> bool:
    if value is default:
        return True
    if default is None and isinstance(value, dict | list | tuple) and not value:
        return True  # `fixed=None` stored as {}: still the default
    try:
        return type(value) is type(default) and bool(value == default)
    except (TypeError, ValueError):  # arrays and frames: never "equal" to a default
        return False


def _short(value) -> str:
    r = repr(value)
    return r if len(r) <= MAX_VALUE_CHARS else r[: MAX_VALUE_CHARS - 3] + "..."


def estimator_repr(obj) -> str:
    """``Class(arg=value, ...)`` over the constructor arguments that differ from the defaults;
    ``Class.from_preset('name')`` for an estimator built from published coefficients."""
    res = getattr(obj, "result_", None)
    preset = (getattr(res, "meta", None) or {}).get("preset")
    if isinstance(preset, str) and hasattr(type(obj), "from_preset"):
        return f"{type(obj).__name__}.from_preset({preset!r})"
    parts = []
    params = inspect.signature(type(obj).__init__).parameters
    stored = getattr(obj, "_param_attrs", {})  # argument -> attribute, where the names differ
    for name, p in list(params.items())[1:]:
        attr = stored.get(name, name)
        if attr is None:
            continue
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or not hasattr(obj, attr):
            continue
        value = getattr(obj, attr)
        if inspect.ismethod(value) or (p.default is not p.empty and _same(value, p.default)):
            continue
        parts.append(f"{name}={_short(value)}")
    return f"{type(obj).__name__}({', '.join(parts)})"


def summary_html(text: str) -> str:
    return f"<pre>{html.escape(text)}</pre>"


def _fitted(obj) -> bool:
    """Whether `fit` has run: it sets attributes ending in ``_`` (scikit-learn's convention)."""
    return any(k.endswith("_") and not k.startswith("_") for k in vars(obj))


class EstimatorDisplay:
    """Mixin for estimators: constructor arguments stored under their own names, or under the
    names a class maps them to in ``_param_attrs`` (an alias kept for old callers maps to
    ``None`` and is never shown)."""

    def __repr__(self) -> str:
        return estimator_repr(self)

    def __getattr__(self, name: str):
        # only reached when normal lookup fails, e.g. `exponents_` before fit (whose property
        # read a missing `params_`): name what is wrong, not an internal attribute
        if name.endswith("_") and not name.startswith("__") and not _fitted(self):
            raise not_fitted(self)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def _repr_html_(self) -> str:
        head = f"<code>{html.escape(repr(self))}</code>"
        if not hasattr(self, "summary"):
            return head
        try:
            text = self.summary()
        except _NOT_FITTED:
            return head + " <i>not fitted: call fit()</i>"
        return head + summary_html(text)


class SummaryDisplay:
    """Mixin for results with a ``summary()``: shown as that text in a notebook."""

    def _repr_html_(self) -> str:
        return summary_html(self.summary())


__all__ = ["EstimatorDisplay", "SummaryDisplay", "estimator_repr", "summary_html"]
