"""Robust losses on residuals, vectorised over a batch of parameter vectors.

Huber on log-space residuals is the estimator of Hoffmann et al. (2022, Approach 3) and of the
distillation paper (Busbridge et al. 2025, App. F, Eq. 45/50).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Loss:
    """A per-residual penalty rho(r) with derivative rho'(r)."""

    name: str = "huber"
    delta: float = 1e-3

    def __post_init__(self) -> None:
        if self.name not in ("huber", "squared"):
            raise ValueError(f"unknown loss {self.name!r}; use 'huber' or 'squared'")
        if self.name == "huber" and not self.delta > 0:
            raise ValueError(f"huber delta must be > 0, got {self.delta}")

    def value(self, r: np.ndarray) -> np.ndarray:
        return self.value_and_derivative(r)[0]

    def derivative(self, r: np.ndarray) -> np.ndarray:
        if self.name == "squared":
            return r
        return np.clip(r, -self.delta, self.delta)

    def value_and_derivative(self, r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(rho(r), rho'(r)) in one pass. Huber as c (r - c/2) with c = clip(r, -delta, delta):
        r^2/2 inside the band, delta (|r| - delta/2) outside, bit for bit the two-branch formula
        (r - r/2 is exact in floating point), in three array operations instead of six."""
        if self.name == "squared":
            return 0.5 * r * r, r
        # clip as maximum then minimum: the same values as np.clip, without its Python wrapper
        # (this runs once per objective evaluation of every polish)
        c = np.minimum(np.maximum(r, -self.delta), self.delta)
        return c * (r - 0.5 * c), c

    def to_dict(self) -> dict:
        return {"name": self.name, "delta": self.delta}

    @classmethod
    def from_dict(cls, d: dict) -> Loss:
        return cls(name=d["name"], delta=d["delta"])


def huber(delta: float = 1e-3) -> Loss:
    return Loss("huber", delta)


def squared() -> Loss:
    return Loss("squared", 0.0)
