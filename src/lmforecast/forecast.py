"""What a command prints, built by the library, so a notebook user sees what a CLI user sees.

`Answer` holds `fields` (the command's JSON contract, its field names in its order),
the `text` it prints and the `notes` that qualify it (below emergence, at a score bound,
beyond the fitted range, no bootstrap refits, ...): `contract()` is the JSON, `summary()` the
text, notes included. `Forecast` is the answer of one forecast (a method's ``forecast_one``),
adding the point (`value`), its interval (None when there is none: a note then says why) and
the level.
"""

from __future__ import annotations

from dataclasses import dataclass

from .display import SummaryDisplay


@dataclass(frozen=True, eq=False)
class Answer(SummaryDisplay):
    """What a command prints: `fields` (its JSON contract), `text` and the `notes`."""

    fields: dict
    text: str
    notes: tuple[str, ...] = ()

    def contract(self) -> dict:
        """The answer as JSON-able data (what ``--json`` prints)."""
        return dict(self.fields)

    def summary(self) -> str:
        """The answer in words, its notes included (what the command prints)."""
        return self.text

    def __str__(self) -> str:
        return self.summary()


@dataclass(frozen=True, eq=False, kw_only=True)
class Forecast(Answer):
    """One forecast: the `Answer` with the point, its interval ((lo, hi) or None) and level."""

    value: float
    interval: tuple[float, float] | None
    level: float | None

    def __post_init__(self):
        iv = self.interval
        object.__setattr__(self, "interval", None if iv is None else (iv[0], iv[1]))
        object.__setattr__(self, "notes", tuple(self.notes))


__all__ = ["Answer", "Forecast"]
