"""Said when an observational law is fitted or used (one line each, docs/osl.md "When the
package warns"):

- `range_warning`: a new model's capability lies outside the models of the fit (train and
  held out, the ones whose forecasts meet a known score): its PC scores, or the law's linear
  predictor alpha + beta.x, beyond their range. A model scoring 99 points on every benchmark was
  forecast 98 [62, 100] points without a word; Eq. 6 there is an extrapolation nothing checked.
  Only beyond RANGE_SLACK (5%) of the range's width on either side: the README's own example
  (falcon-180B, PC-1 0.631 vs [-0.362, 0.624], 0.7% of the width past it) is not warned.
- `coverage_warning`: the fit's own 90% prediction intervals cover far fewer of its models
  than nominal (below level - 0.15 with >= 20 models, held out or train): the predictor (the
  PCs, or log10 FLOPs or size) explains the target poorly and its intervals are too narrow
  (TruthfulQA on the authors' table: 38 of 71 held-out models inside, 54%).
"""

from __future__ import annotations

import warnings

import numpy as np

from ..errors import DomainWarning

# a new model within 5% of the fit's range width past either end is not warned about: PCA
# scores of models of the fit's own families land a hair outside it (falcon-180B 0.7% past
# PC-1 on the README's HumanEval fit), which is no extrapolation worth a line; 0.99 on every
# benchmark is far beyond (the case the warning is for)
RANGE_SLACK = 0.05
COVERAGE_SLACK = 0.15  # warn below level - 0.15 (0.75 for 90% intervals)
COVERAGE_MIN_MODELS = 20  # ... over at least this many models (fewer: too noisy to say)


class CapabilityRangeWarning(DomainWarning):
    """A new model lies outside the capability range of an OSL fit's models."""


class IntervalCoverageWarning(DomainWarning):
    """An OSL fit's prediction intervals cover far fewer of its own models than nominal."""


def _label(res, k: int) -> str:
    if res.x == "pcs":
        return f"PC-{k + 1}"
    return "log10 FLOPs (1E21)" if res.x == "flops" else "log10 size (B)"


def _predictor(res) -> str:
    """The predictor of the fit in words, as the subject of "... explain(s) it"."""
    if res.x == "pcs":
        return "the PCs explain it"
    return (
        "log10 training FLOPs explains it" if res.x == "flops" else "log10 model size explains it"
    )


def range_warning(res, models, X, stacklevel: int = 3) -> None:
    """Warn once (naming the farthest model, how far, and how many) when rows of predictors
    `X` (n, K) lie outside the range of the models in `res.predictions`."""
    X = np.atleast_2d(np.asarray(X, float))
    pf = res.predictions_frame()
    cols = [f"x{i + 1}" for i in range(res.n_components)]
    if pf.empty or X.size == 0 or not set(cols) <= set(pf.columns):
        return
    F = pf[cols].to_numpy(float)
    F = F[np.isfinite(F).all(axis=1)]
    if len(F) < 2:
        return
    theta = np.asarray(res.fit.theta, float)
    z_fit, z = theta[1] + F @ theta[2:], theta[1] + X @ theta[2:]
    lo, hi, zlo, zhi = F.min(axis=0), F.max(axis=0), z_fit.min(), z_fit.max()
    span = np.where(hi > lo, hi - lo, 1.0)
    # excess beyond the range in units of its width: each PC, and the linear predictor
    ex_x = np.maximum(np.maximum(lo - X, X - hi), 0.0) / span
    ex_z = np.maximum(np.maximum(zlo - z, z - zhi), 0.0) / (zhi - zlo if zhi > zlo else 1.0)
    bad = np.isfinite(z) & ((ex_x.max(axis=1) > RANGE_SLACK) | (ex_z > RANGE_SLACK))
    if not bad.any():
        return
    score = np.where(bad, np.maximum(ex_x.max(axis=1), ex_z), -np.inf)
    i = int(np.argmax(score))
    k = int(np.argmax(ex_x[i]))
    names = list(models)
    parts = []
    if ex_z[i] > RANGE_SLACK:
        parts.append(f"linear predictor alpha + beta.x {z[i]:.3g} vs [{zlo:.3g}, {zhi:.3g}]")
    if ex_x[i, k] > RANGE_SLACK:
        parts.append(f"{_label(res, k)} {X[i, k]:.3g} vs [{lo[k]:.3g}, {hi[k]:.3g}]")
    warnings.warn(
        f"{res.target}: {int(bad.sum())} of {len(X)} model(s) lie outside the capability range "
        f"of the fit's {len(F)} models (by more than {100 * RANGE_SLACK:g}% of its width): "
        f"{names[i]!r} has {' and '.join(parts)}; its forecast "
        "extrapolates Eq. 6 past every model with a known score (read it and its interval as a "
        "rough guess)",
        CapabilityRangeWarning,
        stacklevel=stacklevel,
    )


def coverage_warning(res, stacklevel: int = 3) -> None:
    """Warn when the fit's prediction intervals at `res.level` cover fewer than level - 0.15 of
    its held-out models, or of its train models (each group counted with >= 20 models)."""
    if not res.has_intervals:
        return
    level = float(res.level)
    pf = res.predictions_frame()
    groups = []
    fc = res.forecasts(level)
    if len(fc) >= COVERAGE_MIN_MODELS:
        inside = sum(f["interval"][0] <= f["y"] <= f["interval"][1] for f in fc)
        groups.append(("held-out", inside, len(fc)))
    if not pf.empty and {"lower", "upper", "y"} <= set(pf.columns):
        tr = pf[pf["split"] == "train"]
        if len(tr) >= COVERAGE_MIN_MODELS:
            inside = int(((tr["lower"] <= tr["y"]) & (tr["y"] <= tr["upper"])).sum())
            groups.append(("train", inside, len(tr)))
    for name, inside, n in groups:
        if inside / n < level - COVERAGE_SLACK:
            warnings.warn(
                f"{res.target}: only {inside} of {n} {name} models ({100 * inside / n:.0f}%) lie "
                f"inside their {100 * level:g}% prediction interval: the intervals are too "
                f"narrow for this target ({_predictor(res)} poorly); widen them or do not "
                "trust them",
                IntervalCoverageWarning,
                stacklevel=stacklevel,
            )
            return


__all__ = [
    "CapabilityRangeWarning",
    "IntervalCoverageWarning",
    "RANGE_SLACK",
    "coverage_warning",
    "range_warning",
]
