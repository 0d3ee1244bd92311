"""`Forecast`: one forecast as a method's ``forecast_one(...)`` returns it, with everything a
command prints about it, so a notebook user sees what a CLI user sees; `Answer`: the same for
an answer that is no single forecast (several models' forecasts with their held-out check).

It holds the point (`value`), its interval (None when there is none: `notes` then says why),
the level, the notes and warnings that qualify it (below emergence, at a score bound, beyond
the fitted range, ...), and `fields`, the method's named values in the order and under the
names of its JSON contract (``loss``, ``performance``, ``relative_error``, ...). `contract()` is
that JSON; `summary()` the text the command prints, its notes included.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .display import SummaryDisplay


@dataclass(frozen=True)
class Forecast(SummaryDisplay):
    """A point forecast with its interval and notes (see the module docstring)."""

    value: float
    interval: tuple[float, float] | None
    level: float | None
    notes: tuple[str, ...] = ()
    fields: dict = field(default_factory=dict)
    text: str = ""

    def contract(self) -> dict:
        """The forecast as JSON-able data, the method's field names (what ``--json`` prints)."""
        return dict(self.fields)

    def summary(self) -> str:
        """The forecast in words, its notes included (what the command prints)."""
        return self.text

    def __str__(self) -> str:
        return self.summary()


@dataclass(frozen=True)
class Answer(SummaryDisplay):
    """What a command prints, built by the library: `fields` (its JSON contract), `text` and
    the `notes` that qualify it."""

    fields: dict
    text: str
    notes: tuple[str, ...] = ()

    def contract(self) -> dict:
        """The answer as JSON-able data (what ``--json`` prints)."""
        return dict(self.fields)

    def summary(self) -> str:
        """The answer in words (what the command prints)."""
        return self.text

    def __str__(self) -> str:
        return self.summary()


__all__ = ["Answer", "Forecast"]
