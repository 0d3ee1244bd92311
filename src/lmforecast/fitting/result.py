"""FitResult: what every law fit returns — parameters, diagnostics, intervals, JSON round-trip."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..display import SummaryDisplay
from ..laws import get_law
from ..store import dump_json, load_json
from .schema import LABEL, check_fit_result

FORMAT_VERSION = 1


@dataclass
class FitResult(SummaryDisplay):
    """Result of fitting a registered law. Floats survive `to_json`/`from_json` bit-for-bit."""

    law: str
    theta: list[float]
    params: dict[str, float]
    objective: float
    loss: dict
    n_obs: int
    n_starts: int
    n_polished: int
    n_at_best: int
    converged: bool
    message: str = ""
    residual_scale: float = 0.0
    rmse_target: float = 0.0
    warm_starts: list[list[float]] = field(default_factory=list)
    ci: dict[str, list[float]] = field(default_factory=dict)
    ci_level: float | None = None
    bootstrap: list[list[float]] = field(default_factory=list)  # fit-space theta per resample
    bootstrap_seed: int | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_published(
        cls,
        law: str,
        theta: list[float],
        params: dict[str, float],
        *,
        ci: dict[str, list[float]],
        ci_level: float | None,
        n_obs: int,
        loss: dict,
        meta: dict[str, Any],
    ) -> FitResult:
        """A result holding published coefficients (a paper's table), not a fit of ours."""
        return cls(
            law=law,
            theta=list(theta),
            params=dict(params),
            objective=float("nan"),
            loss=loss,
            n_obs=n_obs,
            n_starts=0,
            n_polished=0,
            n_at_best=0,
            converged=True,
            message="published coefficients",
            ci={k: list(v) for k, v in ci.items()},
            ci_level=ci_level,
            meta=meta,
        )

    # ---- law access ------------------------------------------------------------------------
    @property
    def law_(self):
        return get_law(self.law, **self.meta.get("law_options", {}))

    def predict(self, **inputs) -> np.ndarray:
        """Point prediction in observation space (e.g. loss) at the given inputs."""
        return self.law_.predict(np.asarray(self.theta), **inputs)

    def predict_interval(
        self, level: float = 0.9, kind: str = "confidence", seed: int = 0, **inputs
    ) -> tuple[np.ndarray, np.ndarray]:
        """Percentile interval of the forecast over bootstrap refits.

        kind="confidence" reflects parameter uncertainty only; kind="prediction" adds the fit's
        robust residual scale (in target space) so the interval covers a new run's observation.
        """
        if not self.bootstrap:
            raise ValueError("no bootstrap samples: fit with bootstrap>0 (or call .bootstrap_())")
        law = self.law_
        X = {k: np.asarray(inputs[k], float) for k in law.inputs}
        shape = np.broadcast_shapes(*(v.shape for v in X.values()))
        Xf = {k: np.broadcast_to(v, shape).ravel() for k, v in X.items()}
        T = law.predict_target(np.asarray(self.bootstrap, float), Xf)  # (B, n)
        if kind == "prediction":
            rng = np.random.default_rng(seed)
            T = T + rng.normal(0.0, self.residual_scale, size=T.shape)
        elif kind != "confidence":
            raise ValueError(f"kind must be 'confidence' or 'prediction', got {kind!r}")
        a = (1 - level) / 2
        lo, hi = np.nanquantile(T, [a, 1 - a], axis=0)
        lo, hi = law.from_target(lo), law.from_target(hi)
        lo, hi = np.minimum(lo, hi), np.maximum(lo, hi)
        return lo.reshape(shape), hi.reshape(shape)

    # ---- reporting -------------------------------------------------------------------------
    def summary(self) -> str:
        """A plain-text table a researcher can paste into a paper or notebook."""
        lines = [
            f"Law: {self.law}    runs: {self.n_obs}    loss: {self.loss['name']}"
            + (f" (delta={self.loss['delta']:g})" if self.loss["name"] == "huber" else ""),
            f"Objective: {self.objective:.6e}    starts: {self.n_starts}    polished: "
            f"{self.n_polished}    at best: {self.n_at_best}    converged: {self.converged}",
        ]
        if self.ci_level is not None and not self.bootstrap and self.ci:
            lines.append(f"Intervals: published {100 * self.ci_level:g}% intervals")
        elif self.ci_level is not None:
            lines.append(
                f"Bootstrap: {len(self.bootstrap)} resamples, {100 * self.ci_level:g}% "
                "percentile intervals"
            )
        lines.append("-" * 60)
        head = f"{'parameter':<12}{'estimate':>16}"
        if self.ci:
            head += f"{'lower':>16}{'upper':>16}"
        lines.append(head)
        lines.append("-" * 60)
        for name, v in self.params.items():
            row = f"{name:<12}{_fmt(v):>16}"
            if name in self.ci:
                lo, hi = self.ci[name]
                row += f"{_fmt(lo):>16}{_fmt(hi):>16}"
            lines.append(row)
        lines.append("-" * 60)
        return "\n".join(lines)

    def __str__(self) -> str:  # pragma: no cover - convenience
        return self.summary()

    # ---- persistence -----------------------------------------------------------------------
    def to_dict(self) -> dict:
        d = asdict(self)
        d["format_version"] = FORMAT_VERSION
        d["kind"] = "FitResult"
        return d

    def to_json(self, path: str | Path | None = None) -> str:
        """Serialise to JSON (never pickle). Python's float repr round-trips exactly."""
        return dump_json(self.to_dict(), path)

    @classmethod
    def from_dict(
        cls, d: dict, where: str = "saved fit", path: str = "", kind: str = "FitResult"
    ) -> FitResult:
        """Rebuild from `to_dict`, checking the schema (`fitting.schema.check_fit_result`) first:
        InputError naming `where` and the field for anything malformed or inconsistent. `kind`
        is the ``kind`` `d` holds (an estimator saved as its fit names its own class)."""
        check_fit_result(d, where, path, kind)
        d = dict(d)
        d.pop("format_version", None)
        d.pop("kind", None)
        d["theta"] = [float(v) for v in d["theta"]]
        d["params"] = {k: float(v) for k, v in d["params"].items()}
        return cls(**d)

    @classmethod
    def from_json(cls, text_or_path: str | Path) -> FitResult:
        d = load_json(text_or_path, LABEL)
        where = str(text_or_path) if not str(text_or_path).lstrip().startswith("{") else "fit"
        return cls.from_dict(d, where)


def _fmt(v: float) -> str:
    if v == 0 or (1e-3 <= abs(v) < 1e5):
        return f"{v:.5g}"
    return f"{v:.4e}"
