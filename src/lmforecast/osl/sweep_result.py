"""`RobustnessResult`: the curves of a robustness sweep (Sec. 4.3), their area under the error
curve, ranking, summary and exact JSON round trip."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..display import SummaryDisplay
from ..errors import InputError
from ..store import FORMAT_VERSION, Checker, dump_json, load_json


def aue(fractions: np.ndarray, mse: np.ndarray) -> float:
    """Area under the test-error curve (App. C.4): trapezoid of MSE over the test fractions."""
    f = np.asarray(fractions, float)
    m = np.asarray(mse, float)
    order = np.argsort(f)
    f, m = f[order], m[order]
    return float(np.sum(np.diff(f) * (m[1:] + m[:-1]) / 2.0))


@dataclass
class RobustnessResult(SummaryDisplay):
    """Test MSE (points^2) against test fraction per predictor and target, and the AUE
    (App. C.4).

    `points` are the tidy records (see `curves`); `aue` maps target -> predictor -> AUE.
    JSON round-trips bit-for-bit.
    """

    targets: list[str]
    split: str
    fractions: list[float]
    predictors: list[str]
    points: list[dict[str, Any]]
    aue: dict[str, dict[str, float]]
    metrics: dict[str, list[str]] = field(default_factory=dict)
    n_models: dict[str, int] = field(default_factory=dict)
    dropped: dict[str, list[str]] = field(default_factory=dict)

    @property
    def curves(self) -> pd.DataFrame:
        """One row per target x predictor x fraction: fraction (nominal), test_fraction
        (realised), cutoff (FLOPs, or accuracy), n_train, n_test, train_mse, test_mse,
        converged."""
        return pd.DataFrame(self.points)

    def aue_table(self) -> pd.DataFrame:
        """AUE with one row per predictor and one column per target (lower is better)."""
        return pd.DataFrame(self.aue).reindex(self.predictors)[self.targets]

    def best(self) -> dict[str, str]:
        """The predictor with the lowest AUE for each target."""
        t = self.aue_table()
        return {c: str(t[c].idxmin()) for c in t.columns if t[c].notna().any()}

    def rank(self) -> pd.DataFrame:
        """Rank of each predictor's AUE within each target (1 = lowest AUE)."""
        return self.aue_table().rank(axis=0, method="min")

    def head_to_head(self, a: str, b: str) -> pd.Series:
        """Per target: the share of test fractions at which predictor `a` has a lower test MSE
        than `b`. Complements the AUE, which one blow-up at a large test fraction can dominate.
        """
        for p in (a, b):
            if p not in self.predictors:
                raise InputError(f"predictor {p!r} is not in this sweep")
        c = self.curves
        wide = c.pivot_table(index=["target", "fraction"], columns="predictor", values="test_mse")
        wins = (wide[a] < wide[b]).groupby(level="target").mean()
        return wins.reindex(self.targets).rename(f"{a} < {b}")

    # ---- reporting -------------------------------------------------------------------------
    def summary(self) -> str:
        what = "training FLOPs" if self.split == "flops" else "target accuracy"
        f = self.fractions
        lines = [
            "Observational scaling laws: holdout-cutoff robustness (Ruan et al. 2024, App. C.4)",
            f"cutoff on {what}; {len(f)} test fractions from {max(f):.0%} to {min(f):.0%}",
            "AUE = trapezoid area under test MSE (points^2) vs test fraction (lower is better)",
            "-" * 72,
        ]
        table = self.aue_table()
        n = {t: self.n_models.get(t) for t in self.targets}
        table.columns = [f"{t} (n={n[t]})" for t in self.targets]
        lines.append(table.to_string(float_format=lambda v: f"{v:.4g}"))
        lines.append("-" * 72)
        best = self.best()
        lines.append("lowest AUE: " + ", ".join(f"{t}: {p}" for t, p in best.items()))
        lines.append("-" * 72)
        return "\n".join(lines)

    def __str__(self) -> str:  # pragma: no cover
        return self.summary()

    def contract(self) -> dict[str, Any]:
        """The CLI's `osl robustness --json` object."""
        return {
            "split": self.split,
            "fractions": self.fractions,
            "aue": self.aue,
            "best": self.best(),
            "n_models": self.n_models,
            "points": self.points,
        }

    # ---- persistence -----------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["kind"] = "RobustnessResult"
        d["format_version"] = FORMAT_VERSION
        return d

    def to_json(self, path: str | Path | None = None) -> str:
        return dump_json(self.to_dict(), path, indent=1)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RobustnessResult:
        Checker("saved robustness sweep").kind(
            d, "RobustnessResult", label="RobustnessResult (saved robustness sweep)", required=False
        )
        d = dict(d)
        d.pop("kind", None)
        d.pop("format_version", None)
        try:
            return cls(**d)
        except TypeError as exc:
            raise InputError(f"saved robustness sweep: {exc}") from None

    @classmethod
    def from_json(cls, text_or_path: str | Path) -> RobustnessResult:
        return cls.from_dict(load_json(text_or_path, "saved robustness sweep"))
