"""SalienceFit: a fitted capability salience vector for one task, saved as exact JSON.

It holds everything `predict` needs without the texts or features: the scoring LM's token
offsets and learned weights per text (the CSV W), the text lengths (N_c), and the Eq. 2 law.

Units: ``scores``, the predictions and intervals it returns, and ``chance`` are percentage points
(0-100); the MSEs in ``metrics`` and ``history`` are points^2. ``gamma``, ``alpha``, ``beta``,
``law`` and ``bootstrap`` are Eq. 2's parameters, written on fractions as the paper writes it
(``gamma = chance / 100``), and every prediction converts Eq. 2's fraction to points.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..display import SummaryDisplay
from ..errors import InputError
from ..fitting.result import FitResult
from ..params import check, check_kind
from ..scores import points
from ..store import dump_json, load_json, source_label
from .law import eq2_interval, sigmoid_law
from .mapping import map_losses_many
from .records import LossTable, loss_table
from .schema import check_salience

FORMAT_VERSION = 1


@dataclass(repr=False)
class SalienceFit(SummaryDisplay):
    """Result of `fit_salience`; `to_json`/`from_json` round-trip bit-for-bit. Scores,
    predictions and intervals are points (MSEs points^2); `gamma` is Eq. 2's, a fraction."""

    def __repr__(self) -> str:  # the dataclass repr printed every weight (65 KB)
        return (
            f"SalienceFit(task={self.task!r}, alpha={self.alpha:.6g}, beta={self.beta:.6g}, "
            f"gamma={self.gamma:g}, {len(self.text_ids)} texts, {len(self.models)} models, "
            f"{len(self.theta)} head weights)"
        )

    task: str
    gamma: float
    alpha: float
    beta: float
    activation: str
    extractor: dict
    theta: list[float]
    bias: float
    law: dict
    text_ids: list[str]
    text_lengths: list[int]
    offsets: list[list[list[int]]]
    weights: list[list[float]]
    models: list[str]
    splits: list[str]
    scores: list[float]
    capability: list[float]
    metrics: dict[str, Any]
    settings: dict[str, Any]
    history: list[list[float]] = field(default_factory=list)
    bootstrap: list[list[float]] = field(default_factory=list)  # (alpha, beta) per resample

    # ---- accessors -------------------------------------------------------------------------
    @property
    def n_chars(self) -> int:
        return int(sum(self.text_lengths))

    @property
    def chance(self) -> float:
        """The chance level in points (Eq. 2's `gamma` times 100)."""
        return points(self.gamma)

    def _eq2_points(self, C) -> np.ndarray:
        """Eq. 2 at capability scores C, in points."""
        return 100.0 * sigmoid_law(C, self.alpha, self.beta, self.gamma)

    @property
    def params(self) -> dict[str, float]:
        return {"alpha": self.alpha, "beta": self.beta}

    @property
    def law_result(self) -> FitResult:
        return FitResult.from_dict(self.law)

    def weights_of(self, text_id: str) -> tuple[np.ndarray, np.ndarray]:
        """(offsets (k, 2), weights (k,)) of one text: the CSV on that text (Fig. 9)."""
        i = self.text_ids.index(text_id)
        return np.asarray(self.offsets[i], np.int64).reshape(-1, 2), np.asarray(self.weights[i])

    def table(self) -> pd.DataFrame:
        """One row per fitted model: split, observed score, capability C (Eq. 1), prediction
        (scores in points)."""
        C = np.asarray(self.capability)
        return pd.DataFrame(
            {
                "model": self.models,
                "split": self.splits,
                "score": self.scores,
                "capability": C,
                "predicted": self._eq2_points(C),
            }
        )

    # ---- prediction ------------------------------------------------------------------------
    def capability_scores(self, table: LossTable) -> pd.Series:
        """Eq. 1 for every model of a loss table, after Algorithm 1 onto the stored tokens."""
        models = list(table)
        total = np.zeros(len(models))
        for i, tid in enumerate(self.text_ids):
            tgt = np.asarray(self.offsets[i], np.int64).reshape(-1, 2)
            lt = map_losses_many(
                [table[m][tid] for m in models],
                tgt,
                self.text_lengths[i],
                [f"model {m!r} text {tid!r}" for m in models],
            )
            total += lt @ np.asarray(self.weights[i])
        return pd.Series(total / self.n_chars, index=models, name="capability")

    def predict_records(self, records: Iterable[Mapping], level: float = 0.9) -> pd.DataFrame:
        """Predicted accuracy (Eq. 2, in points) of each model in loss records (M.jsonl format).

        With bootstrap samples, adds `lower`/`upper`: the `predict_interval` prediction
        interval at `level`.
        """
        lengths = dict(zip(self.text_ids, self.text_lengths))
        table = loss_table(records, lengths)
        C = self.capability_scores(table).to_numpy()
        out = pd.DataFrame(
            {
                "model": list(table),
                "capability": C,
                "predicted": self._eq2_points(C),
            }
        )
        if self.bootstrap:
            lo, hi = self.predict_interval(C, level)
            out["lower"], out["upper"] = lo, hi
        self._warn_outside(out)
        return out

    def fitted_range(self) -> tuple[float, float] | None:
        """(min, max) capability of the train models, those Eq. 2 was fitted on (None with
        fewer than 2)."""
        c = np.asarray([v for v, s in zip(self.capability, self.splits) if s == "train"], float)
        return (float(c.min()), float(c.max())) if c.size >= 2 else None

    def _warn_outside(self, out: pd.DataFrame) -> None:
        """Capability scores outside the train models' range are extrapolations of Eq. 2 that
        its interval does not widen for: one warning naming the farthest model, how far (in
        widths of that range) and how many; beyond one width "far" (another loss scale?)."""
        rng = self.fitted_range()
        if rng is None or out.empty:
            return
        lo, hi = rng
        c = out["capability"].to_numpy(float)
        gap = np.maximum(lo - c, c - hi)  # > 0 outside, in capability units
        out_of = np.isfinite(c) & (gap > 0)
        if not out_of.any():
            return
        i = int(np.argmax(np.where(out_of, gap, -np.inf)))
        width = hi - lo
        widths = gap[i] / width if width > 0 else np.inf
        side = "below" if c[i] < lo else "above"
        far = widths > 1
        warnings.warn(
            f"{int(out_of.sum())} of {len(c)} model(s) have a capability outside the range of "
            f"the train models Eq. 2 was fitted on [{lo:.4g}, {hi:.4g}]: model "
            f"{out['model'].iloc[i]!r} is at {c[i]:.4g}, {'far ' if far else ''}{side} it by "
            f"{gap[i]:.3g} ({widths:.2g} of its width); their predictions extrapolate Eq. 2 "
            "and the interval does not widen for that"
            + (" (losses on another scale or tokenizer?)" if far else ""),
            stacklevel=3,
        )

    def predict_interval(
        self, C, level: float = 0.9, kind: str = "prediction", seed: int = 0
    ) -> tuple[np.ndarray, np.ndarray]:
        """Percentile interval of the predicted accuracy at capability scores C, in points.

        kind="confidence": Eq. 2 over (alpha, beta) refitted on bootstrap resamples of the
        train models, W held fixed. kind="prediction" (default) adds Student-t noise scaled by
        the RMSE of the *validation* models (held out from the law fit; dof = their number) or,
        without validation models, the dof-corrected train RMSE (dof = n_train - 2): W is fitted
        on the train models, so their residuals understate the error of a new model. Neither
        accounts for the variability of W itself beyond what the validation error shows. The
        interval is computed on fractions (Eq. 2) and clipped to the accuracy range [0, 100].
        """
        if not self.bootstrap:
            raise InputError("this fit has no bootstrap samples (fit with bootstrap > 0)")
        level, kind = check("level", level), check_kind(kind)
        scale = self.residual_scale / 100.0  # points -> the fractions of Eq. 2
        lo, hi = eq2_interval(
            self.bootstrap, C, self.gamma, level, kind, scale, self.residual_dof, seed
        )
        return 100.0 * lo, 100.0 * hi

    @property
    def residual_scale(self) -> float:
        """RMSE of the validation models in points (dof-corrected train RMSE when there are
        none)."""
        m = self.metrics
        mse = m.get("validation_mse")
        if mse is not None:
            return float(np.sqrt(mse))
        n = self.splits.count("train")
        return float(np.sqrt(m["train_mse"] * n / max(n - 2, 1)))

    @property
    def residual_dof(self) -> int:
        """Degrees of freedom of `residual_scale`: validation models, else train models - 2."""
        n_val = self.splits.count("validation")
        return n_val if n_val else max(self.splits.count("train") - 2, 1)

    # ---- reporting -------------------------------------------------------------------------
    def _param_interval_line(self, level: float = 0.9) -> list[str]:
        """alpha, beta with percentile intervals over the bootstrap resamples (none without)."""
        b = np.asarray(self.bootstrap, float).reshape(-1, 2)
        b = b[np.isfinite(b).all(axis=1)]
        if len(b) < 2:
            return []
        (a0, a1), (b0, b1) = np.quantile(b, [(1 - level) / 2, (1 + level) / 2], axis=0).T
        return [
            f"{100 * level:g}% percentile intervals over {len(b)} resamples: alpha "
            f"[{a0:.5g}, {a1:.5g}]    beta [{b0:.5g}, {b1:.5g}]"
        ]

    def summary(self) -> str:
        """Plain-text table: law parameters (with bootstrap intervals), held-out MSEs against
        the baselines."""
        m = self.metrics
        w = np.concatenate([np.asarray(x) for x in self.weights]) if self.weights else np.zeros(0)
        lines = [
            f"Capability Salience Vector    task: {self.task}    chance: {self.chance:g} points "
            f"(gamma {self.gamma:g})",
            f"texts: {len(self.text_ids)}    target tokens: {w.size}    characters: "
            f"{self.n_chars}    models: {len(self.models)}    best step: {m.get('best_step')}",
            f"law: A = gamma + (1-gamma) sigmoid(alpha (C - beta)), A a fraction    alpha = "
            f"{self.alpha:.5g}    beta = {self.beta:.5g}",
            *self._param_interval_line(),
            "-" * 60,
            f"{'predictor':<14}{'train MSE':>15}{'valid MSE':>15}{'test MSE':>15}",
            "-" * 60,
        ]
        rows = [("CSV", m)] + [(k, v) for k, v in m.get("baselines", {}).items()]
        for name, d in rows:
            lines.append(
                f"{name:<14}"
                + "".join(
                    f"{_fmt(d.get(k)):>15}" for k in ("train_mse", "validation_mse", "test_mse")
                )
            )
        lines.append("-" * 60)
        lines.append("MSEs in points^2 (scores in percentage points, 0-100)")
        lines.append(f"features: {feature_source(self.extractor)}")
        st = self.settings
        if "optimizer" in st:
            lines.append(
                f"optimiser: {st['optimizer']} lr {st.get('lr'):g}, {st.get('n_steps')} steps"
                + (f" (preset {st['preset']})" if st.get("preset") else "")
                + (
                    "; the paper's setting is --preset paper (SGD)"
                    if st["optimizer"] != "sgd"
                    else ""
                )
            )
        if w.size:
            q = np.quantile(w, [0.1, 0.5, 0.9])
            lines.append(f"weights: 10%/50%/90% quantiles {q[0]:.4g} / {q[1]:.4g} / {q[2]:.4g}")
        return "\n".join(lines)

    def __str__(self) -> str:  # pragma: no cover
        return self.summary()

    # ---- persistence -----------------------------------------------------------------------
    def to_dict(self) -> dict:
        d = asdict(self)
        d["format_version"] = FORMAT_VERSION
        d["kind"] = "SalienceFit"
        return d

    def contract(self) -> dict:
        """The fit as `salience fit --json` prints it: held-out, validation and train MSE
        (points^2), each baseline's test MSE, the sigmoid law's parameters, gamma (Eq. 2's, a
        fraction) and the chance level (points), the task, the chosen step, the optimiser's
        settings and the feature extractor."""
        base = self.metrics["baselines"]
        return {
            "test_mse": self.metrics["test_mse"],
            "validation_mse": self.metrics["validation_mse"],
            "train_mse": self.metrics["train_mse"],
            "baseline_mse": {k: v["test_mse"] for k, v in base.items()},
            "params": self.params,
            "gamma": self.gamma,
            "chance": self.chance,
            "task": self.task,
            "best_step": self.metrics["best_step"],
            "optimizer": {
                k: self.settings.get(k) for k in ("preset", "optimizer", "lr", "n_steps")
            },
            "features": self.extractor.get("name"),
        }

    def to_json(self, path: str | Path | None = None) -> str:
        return dump_json(self.to_dict(), path, indent=None)

    @classmethod
    def from_dict(cls, d: Mapping) -> SalienceFit:
        d = dict(d)
        if d.pop("kind", None) != "SalienceFit":
            raise InputError("not a salience fit (expected a file written by `salience fit`)")
        d.pop("format_version", None)
        try:
            return cls(**d)
        except TypeError as exc:
            raise InputError(f"malformed salience fit: {exc}") from None

    @classmethod
    def from_json(cls, text_or_path: str | Path) -> SalienceFit:
        d = load_json(text_or_path, "salience fit")
        check_salience(d, source_label(text_or_path))
        return cls.from_dict(d)

    def save(self, path: str | Path) -> None:
        """Write the fit as JSON to `path` (what `salience fit --out` writes); `load` reads it."""
        self.to_json(path)

    @classmethod
    def load(cls, path: str | Path) -> SalienceFit:
        """A fit saved by `save` (or `salience fit --out`), validated field by field."""
        return cls.from_json(Path(path))


def feature_source(extractor: Mapping) -> str:
    """One line naming where the scoring head's features came from (Eq. 3 or the fallback)."""
    name = extractor.get("name")
    if name == "huggingface":
        return (
            f"final hidden states of the frozen LM {extractor.get('model_path')} "
            "(Eq. 3 scoring head)"
        )
    if name == "hashed-ngram":
        return (
            f"hashed n-grams, dim {extractor.get('dim')} (fallback: no scoring LM given; not "
            "Eq. 3's hidden states - use `salience fit --model DIR`)"
        )
    return str(name)


def _fmt(v) -> str:
    if v is None:
        return "-"
    return f"{v:.4e}"
