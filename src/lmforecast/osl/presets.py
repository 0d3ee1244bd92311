"""Table C.1 of Ruan, Maddison & Hashimoto (2024, arXiv 2405.10938, App. C.9): the fitted
observational scaling laws preregistered (May 2024) for forecasts of future models.

Each form is the logit of the normalised accuracy, phi^-1(Y, h) = sigma^-1((Y - (1 - h)) / h),
written three equivalent ways; we ship the third, a weighted sum of *raw* benchmark accuracies in
[0, 1] plus a bias (beta^T gamma of Fig. 5c/6b), because it needs neither the authors' PCA nor
their imputation: Y = (1 - h) + h sigma(sum_b w_b score_b + c) for any new model with those
benchmark scores. The C-bar form X = w log10(C-bar / 1e21) + b (f-equivalent FLOPs of the
reference family, Eq. 8) and the PC form (the authors' PCs, not reproducible here) are kept for
reference. Coefficients are copied from the table as printed (two decimals).

Units: the weights apply to accuracies as fractions, as Table C.1 writes them; a preset reads
benchmark tables in fractions or points (`score_unit`, `data.to_fractions`) and forecasts in
points (0-100, `lmforecast.scores`).

These are point forecasts: the table carries no parameter covariance, so a preset prediction has
no interval (refit with `ObservationalScalingLaw` on the underlying data for App. C.8 intervals).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import DomainWarning, InputError
from ..laws.sigmoid import sigmoid
from ..scores import points
from .data import MODEL, read_benchmarks, to_fractions

SOURCE = (
    "Ruan, Maddison & Hashimoto (2024), Observational Scaling Laws and the Predictability of "
    "Language Model Performance, arXiv 2405.10938, App. C.9, Table C.1"
)


@dataclass(frozen=True)
class PreregisteredLaw:
    """One Table C.1 row: Y = (1 - h) + h sigma(sum_b weights[b] * score_b + intercept)."""

    name: str
    task: str
    setup: str
    h: float
    weights: dict[str, float]
    intercept: float
    flops_form: tuple[float, float]  # X = w log10(C-bar / 1e21) + b
    reference_family: str
    pc_form: tuple[float, ...]  # (PC1, PC2, PC3, bias) of the authors' PCs
    source: str = SOURCE
    notes: str = ""
    metric_range: tuple[float, float] | None = field(default=None)

    @property
    def metrics(self) -> list[str]:
        return list(self.weights)

    def logit(self, benchmarks, score_unit: str = "auto") -> np.ndarray:
        """X = sum_b w_b score_b + c for each row (raw accuracies as fractions: a table in
        points is converted at the door, per `score_unit`); NaN, with a DomainWarning, for rows
        missing one of the preset's benchmarks."""
        t = read_benchmarks(benchmarks, "new models")
        missing = [m for m in self.metrics if m not in t.columns]
        if missing:
            raise InputError(
                f"new models: preset {self.name!r} needs benchmark column(s) "
                f"{', '.join(map(repr, missing))}"
            )
        t = to_fractions(t, self.metrics, score_unit, "new models")[0]
        S = t[self.metrics].to_numpy(float)
        incomplete = ~np.isfinite(S).all(axis=1)
        if incomplete.all():
            raise InputError(
                f"new models: no row has every benchmark preset {self.name!r} needs "
                f"({', '.join(self.metrics)})"
            )
        if incomplete.any():
            names = t.loc[incomplete, MODEL].astype(str).tolist()
            warnings.warn(
                f"{len(names)} model(s) lack a benchmark preset {self.name!r} needs and get no "
                f"forecast (Table C.1's weights need every score): {', '.join(names[:3])}"
                + (" ..." if len(names) > 3 else ""),
                DomainWarning,
                stacklevel=3,
            )
        off = np.isfinite(S) & ((S < 0) | (S > 1))
        if off.any():
            i, j = (int(v) for v in np.argwhere(off)[0])
            raise InputError(
                f"new models: row {i + 1} {self.metrics[j]!r} = {float(S[i, j]):g} is outside "
                "[0, 1] as a fraction (scores are fractions or points)"
            )
        return S @ np.array(list(self.weights.values())) + self.intercept

    def predict(self, benchmarks, score_unit: str = "auto") -> np.ndarray:
        """Eq. 6 (accuracy form) at the preset's logit, in points: the normalised accuracy, or
        the original scale when the task has a metric range (in fractions, as printed)."""
        return self._y(self.logit(benchmarks, score_unit))

    def _y(self, X: np.ndarray) -> np.ndarray:
        y = (1 - self.h) + self.h * sigmoid(X)
        if self.metric_range is not None:
            lo, hi = self.metric_range
            y = lo + (hi - lo) * y
        return points(y)

    def logit_from_flops_equiv(self, log10_flops) -> np.ndarray:
        """The C-bar form: X = w log10(C-bar / 1e21) + b (log10 of C-bar in FLOPs)."""
        w, b = self.flops_form
        return w * (np.asarray(log10_flops, float) - 21.0) + b

    def predictions(self, benchmarks, score_unit: str = "auto") -> pd.DataFrame:
        """One row per model: its logit X and forecast `y_pred` (points)."""
        t = read_benchmarks(benchmarks, "new models")
        X = self.logit(t, score_unit)
        return pd.DataFrame({MODEL: t[MODEL].to_numpy(), "logit": X, "y_pred": self._y(X)})

    def summary(self) -> str:
        w = " ".join(f"{v:+.2f} {k}" for k, v in self.weights.items())
        fw, fb = self.flops_form
        lines = [
            f"Preregistered observational scaling law: {self.task} ({self.setup})",
            f"source: {self.source}",
            f"Y = (1 - h) + h sigma(X), h = {self.h:.2f} (Y as a fraction; forecasts in points)",
            f"X = {w} {self.intercept:+.2f}",
            f"  = {fw:.2f} log10(C-bar_{self.reference_family} / 1e21) {fb:+.2f}",
            "no interval: Table C.1 gives point forms only (refit for App. C.8 intervals)",
        ]
        if self.notes:
            lines.append(self.notes)
        return "\n".join(lines)


_BASE = ("MMLU", "ARC-C", "HellaSwag", "Winograd", "TruthfulQA", "GSM8K", "XWinograd", "HumanEval")
_NO_GSM = tuple(m for m in _BASE if m != "GSM8K")
_CHAT = ("MMLU", "ARC-C", "HellaSwag", "Winogrande", "TruthfulQA", "GSM8K", "HumanEval")


def _law(name, task, setup, h, metrics, w, c, flops, pcs, ref="Llama-2", **kw):
    if len(metrics) != len(w):
        raise AssertionError(name)
    return PreregisteredLaw(name, task, setup, h, dict(zip(metrics, w)), c, flops, ref, pcs, **kw)


EMERGENT, AGENT, POST = (
    "emergent capability, Sec. 4.1",
    "agentic, Sec. 4.2",
    "post-training, Sec. 4.3",
)
PRESETS: dict[str, PreregisteredLaw] = {
    p.name: p
    for p in (
        _law(
            "word-unscramble",
            "Word Unscramble",
            EMERGENT,
            1.00,
            _BASE,
            (1.02, 3.02, 5.73, 2.44, -1.06, 1.21, 2.48, -0.08),
            -12.28,
            (2.00, -6.11),
            (6.74, -3.22, -1.37, -4.93),
        ),
        _law(
            "persian-qa",
            "Persian QA",
            EMERGENT,
            1.00,
            _BASE,
            (2.08, 1.06, 1.13, 0.53, 0.36, 2.89, 0.66, 1.55),
            -7.98,
            (2.32, -8.43),
            (2.86, 3.18, -0.19, -5.26),
            metric_range=(0.25, 1.0),
            notes="Y is min-max normalised by the metric range (0.25, 1) (4-way multiple "
            "choice, Sec. 4.1); predictions are mapped back to accuracy",
        ),
        _law(
            "3-digit-subtraction",
            "3-Digit Subtraction",
            EMERGENT,
            1.00,
            _NO_GSM,
            (2.17, 2.32, -3.44, -7.96, 0.65, 34.27, 20.39),
            -20.99,
            (5.50, -8.92),
            (5.98, 8.74, 39.55, -4.68),
        ),
        _law(
            "2-digit-multiplication",
            "2-Digit Multiplication",
            EMERGENT,
            1.00,
            _NO_GSM,
            (1.62, 1.95, 0.55, -0.63, 0.14, 6.80, 6.52),
            -8.00,
            (2.22, -4.45),
            (3.60, 4.24, 8.05, -2.68),
        ),
        _law(
            "agentbench",
            "AgentBench",
            AGENT,
            0.99,
            _CHAT,
            (2.34, 0.82, 0.32, 0.54, 0.60, -0.42, 2.63),
            -6.37,
            (1.00, -5.52),
            (2.32, 0.79, -2.82, -2.96),
            ref="Llama-2-Chat",
        ),
        _law(
            "agentboard",
            "AgentBoard",
            AGENT,
            0.97,
            _CHAT,
            (-0.10, -0.31, -0.55, 0.14, 0.56, 2.28, 3.36),
            -5.06,
            (0.98, -6.60),
            (3.02, 2.60, 1.17, -2.98),
            ref="Llama-2-Chat",
        ),
        _law(
            "gsm-naive",
            "GSM8K Naive + Greedy",
            POST,
            1.00,
            _NO_GSM,
            (1.53, 1.30, 1.22, 0.75, 0.16, 0.13, 1.92),
            -5.97,
            (1.09, -4.77),
            (2.69, 1.55, -0.36, -3.57),
        ),
        _law(
            "gsm-cot",
            "GSM8K CoT + Greedy",
            POST,
            1.00,
            _NO_GSM,
            (5.03, 2.04, -0.10, 0.96, 1.75, -2.39, 2.58),
            -4.77,
            (2.04, -5.53),
            (2.56, 4.64, 4.21, -2.50),
        ),
        _law(
            "gsm-cot-sc",
            "GSM8K CoT + Self-Consistency",
            POST,
            1.00,
            _NO_GSM,
            (5.58, 2.27, -0.08, 1.11, 1.97, -2.78, 2.45),
            -4.95,
            (2.19, -5.74),
            (2.73, 4.82, 4.95, -2.49),
        ),
        _law(
            "bbh-naive",
            "BBH Naive + Greedy",
            POST,
            1.00,
            _NO_GSM,
            (1.41, 1.05, 0.75, 0.36, 0.11, 0.61, 3.63),
            -5.47,
            (1.26, -4.87),
            (2.70, 3.06, -0.84, -3.23),
        ),
        _law(
            "bbh-cot",
            "BBH CoT + Greedy",
            POST,
            1.00,
            _NO_GSM,
            (0.84, 1.30, 1.57, 0.42, -0.44, 1.96, 5.62),
            -6.61,
            (1.62, -5.03),
            (4.20, 3.81, -2.92, -3.12),
        ),
    )
}


def get_preset(name: str) -> PreregisteredLaw:
    """A Table C.1 law by name (see `PRESETS`); unknown names list the known ones."""
    if name not in PRESETS:
        raise InputError(f"unknown preset {name!r}; known: {', '.join(PRESETS)}")
    return PRESETS[name]


__all__ = ["PRESETS", "SOURCE", "PreregisteredLaw", "get_preset"]
