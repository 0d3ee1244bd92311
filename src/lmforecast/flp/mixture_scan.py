"""FLP-M's mixture scan (Chen et al., Sec. 6.1): predicted score over mixing ratios at a total
compute, the best ratio and how sure it is, and the warnings when a scan or a forecast leaves
the sampling models' range. `FLPM`'s methods of the same names call these functions."""

from __future__ import annotations

import itertools
import math
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..errors import DomainWarning, InputError
from ..uncertainty.percentile import percentile_interval
from .intervals import BOUNDS, interval_or_none


def optimize_mixture(est, flops: float, start: float, stop: float, step: float) -> MixtureCurve:
    """Sec. 6.1: the predicted score of a fitted `FLPM` over mixing ratios (`ratio_grid`
    start:stop:step) at total compute `flops`, and the best ratio; warns where the scan leaves
    the sampling models' shares or compute range."""
    if not (np.isfinite(flops) and flops > 0):
        raise InputError(f"total FLOPs must be > 0, got {flops}")
    R = ratio_grid(len(est.sources_), start, stop, step)
    warn_outside_shares(est, R)
    perf = est.predict(R * flops)
    warn_compute_range(est, flops, flops, "mixture scan")
    return MixtureCurve(
        est.sources_,
        R,
        perf,
        float(flops),
        target=est.settings_.name,
        share_range=est.share_range_,
    )


def mixture_intervals(curve: MixtureCurve, draws, best_interval, n_sources: int, level: float):
    """How sure the Sec. 6.1 scan `curve` is: the `level` prediction interval of the score at
    the best ratio (`best_interval`, (lo, hi) of length 1), and the percentile interval of the
    best ratio itself over the bootstrap `draws` (B, m) of the scanned scores (confidence draws:
    no run noise) of a fitted FLP-M with `n_sources` sources. Each draw is clipped to [0, 100]
    points like the point scan and takes its own best ratio by the same rule (`best_in`: the
    first of tied ratios); a flat draw (every ratio ties, e.g. all clipped to 100) has none and
    is left out (counted in "flat_draws"). The interval always holds the point's best ratio
    (widened to it if need be). Returns {"performance": [lo, hi] or None (undefined at a bound,
    flp.intervals), "best_ratio": [lo, hi] (last source's share; for K > 2, per source), or
    None where the point scan is flat (no best ratio) or every draw is, and "flat_draws"}."""
    P = np.clip(draws, *BOUNDS)
    flat = np.array([_flat(p) for p in P], bool)
    lo, hi = best_interval
    out = {
        "performance": interval_or_none(lo[0], hi[0]),
        "best_ratio": None,
        "flat_draws": int(flat.sum()),
    }
    if curve.flat or flat.all():
        return out
    best = curve.ratios[[best_in(p) for p in P[~flat]]]
    rlo, rhi = percentile_interval(best, level, method="inverted_cdf")
    point = curve.ratios[curve.best_index]
    rlo, rhi = np.minimum(rlo, point), np.maximum(rhi, point)  # never without the pick
    if n_sources == 2:
        out["best_ratio"] = [float(rlo[-1]), float(rhi[-1])]
    else:
        out["best_ratio"] = [rlo.tolist(), rhi.tolist()]
    return out


# The warnings below are raised two calls under an `FLPM` method (the method, a function of
# this module, the warning helper), so stacklevel 4 names the line that called the method.
def warn_if_extrapolating(est, flops_per_source) -> None:
    """DomainWarning when a total compute exceeds 10x the largest sampling model's of a fitted
    `FLPM` (the `flp predict` rule) or falls below the smallest one's, or a mixture gives a
    source a share the sampling models never had."""
    F = est._as_flops(flops_per_source)
    warn_outside_shares(est, F / F.sum(1, keepdims=True), "the forecast mixture")
    warn_compute_range(est, float(F.sum(1).max()), float(F.sum(1).min()), "forecast")


def warn_outside_shares(est, R: np.ndarray, what: str = "mixture scan") -> None:
    """DomainWarning when mixtures `R` give a source a share outside the range of a fitted
    `FLPM`'s sampling models (the law has not seen such mixtures: extrapolation in mixture
    space)."""
    rng = est.share_range_
    out = []
    for i, s in enumerate(est.sources_):
        lo, hi = rng[s]
        if R[:, i].max() > hi + 1e-9 or R[:, i].min() < lo - 1e-9:
            a, b = f"{R[:, i].min():.3g}", f"{R[:, i].max():.3g}"
            got = a if a == b else f"{a}-{b}"
            out.append(f"{s} {got} (fitted {lo:.3g}-{hi:.3g})")
    if out:
        warnings.warn(
            f"{what} leaves the sampling models' shares: "
            + "; ".join(out)
            + "; forecasts there extrapolate in mixture space",
            DomainWarning,
            stacklevel=4,
        )


def warn_compute_range(est, high: float, low: float, what: str) -> None:
    """DomainWarning where `high` exceeds 10x the largest sampling model's compute of a fitted
    `FLPM` (the `flp predict` rule) or `low` falls below the smallest one's (intervals
    uncalibrated)."""
    if high > 10 * est.max_flops_:
        warnings.warn(
            f"{what} at {high:.3g} FLOPs extrapolates {high / est.max_flops_:.3g}x "
            "beyond the largest sampling model",
            DomainWarning,
            stacklevel=4,
        )
    m = est.min_flops_
    if low < m * (1 - 1e-9):
        warnings.warn(
            f"{what} at {low:.3g} FLOPs extrapolates {m / low:.3g}x below the smallest "
            f"sampling model ({m:.3g} FLOPs); its intervals are not calibrated there",
            DomainWarning,
            stacklevel=4,
        )


@dataclass
class MixtureCurve:
    """Predicted performance over mixing ratios (Sec. 6.1, Fig. 6)."""

    sources: tuple[str, ...]
    ratios: np.ndarray  # (m, K) shares of each source, rows sum to 1
    performance: np.ndarray  # (m,)
    flops: float
    target: str = "the score"  # the forecast task's name, for the notes
    share_range: dict | None = None  # {source: [min, max]} share of the sampling models

    @property
    def best_index(self) -> int:
        """Index of the best score (the first of tied ones, as for each bootstrap draw)."""
        return best_in(self.performance)

    @property
    def flat(self) -> bool:
        """Every scanned mixture forecasts the same score: the scan cannot rank them, so there
        is no best ratio."""
        return _flat(self.performance)

    @property
    def saturated(self) -> bool:
        """A flat scan at a score bound (0 or 100 points, where the forecasts are clipped)."""
        return self.flat and any(
            abs(float(self.performance[self.best_index]) - b) <= TIE_TOL for b in BOUNDS
        )

    @property
    def n_tied(self) -> int:
        """How many scanned mixtures share the best score (> 1: tied at the clipped bound)."""
        p = self.performance
        return int(np.sum(p >= p[self.best_index] - TIE_TOL))

    @property
    def best_ratio(self):
        """Share of the last source (two sources) or the whole share vector (K > 2); None when
        the scan is flat (`flat`: no best ratio)."""
        if self.flat:
            return None
        r = self.ratios[self.best_index]
        return float(r[-1]) if len(self.sources) == 2 else r.tolist()

    @property
    def at_scan_edge(self) -> bool:
        """Two sources, and the best share sits on an end of the scan that is not 0 or 1: a
        wider scan may find a better mixture."""
        return (
            len(self.sources) == 2
            and not self.flat
            and self.best_index in (0, len(self.performance) - 1)
            and 0.0 < self.best_ratio < 1.0
        )

    @property
    def tie_note(self) -> str | None:
        """What a scan with tied mixtures means (None when nothing ties)."""
        score, n = float(self.performance[self.best_index]), len(self.performance)
        if self.saturated:
            return (
                f"all {n} scanned mixtures forecast {self.target} {score:.2f} points, the "
                "end of the score range: the scan is saturated (forecasts are clipped there) "
                "and cannot rank the mixtures; the law is extrapolated past where it holds"
            )
        if self.flat:
            return (
                f"all {n} scanned mixtures forecast {self.target} {score:.2f} points: the "
                "forecast does not vary with the mixture at this compute (a flat scan), so it "
                "cannot rank the mixtures"
            )
        if self.n_tied > 1:
            clipped = ""
            if score in BOUNDS:
                clipped = " (forecasts are clipped to the score range [0, 100])"
            return (
                f"{self.n_tied} of {n} scanned mixtures tie at {score:.2f} points{clipped}: the "
                "best ratio is the first of them, the scan cannot rank them"
            )
        return None

    @property
    def edge_advice(self) -> str | None:
        """At the end of the scan (`at_scan_edge`): scan further, or (where the scan already
        reaches the sampling models' own extreme share) the optimum may lie beyond what was
        sampled. None elsewhere."""
        if not self.at_scan_edge:
            return None
        rng, src, share = self.share_range, self.sources[-1], float(self.best_ratio)
        if rng and not (rng[src][0] + 1e-9 < share < rng[src][1] - 1e-9):
            return (
                f"the sampling models' extreme {src} share, so the optimum may lie beyond what "
                "was sampled (a wider scan would extrapolate in mixture space)"
            )
        return "widen the scanned ratios (CLI: --ratios)"

    @property
    def notes(self) -> list[str]:
        """The scan's notes, as the CLI prints them: the edge advice and the tie note."""
        edge = self.edge_advice
        notes = [f"best ratio at the end of the scanned range: {edge}"] if edge else []
        return notes + ([self.tie_note] if self.tie_note else [])

    def curve(self) -> list:
        if len(self.sources) == 2:
            return [[float(r[-1]), float(p)] for r, p in zip(self.ratios, self.performance)]
        return [[r.tolist(), float(p)] for r, p in zip(self.ratios, self.performance)]

    def to_frame(self) -> pd.DataFrame:
        df = pd.DataFrame(self.ratios, columns=[f"ratio_{s}" for s in self.sources])
        df["performance"] = self.performance
        return df


TIE_TOL = 1e-9  # points: scores closer than this tie (rounding is no ranking)


def best_in(scores) -> int:
    """Index of the highest finite score, the first of tied ones (NaN never wins)."""
    p = np.asarray(scores, float)
    p = np.where(np.isfinite(p), p, -np.inf)
    return int(np.argmax(p >= p.max() - TIE_TOL))


def _flat(scores) -> bool:
    """More than one score and all finite ones tied (nothing to rank)."""
    p = np.asarray(scores, float)
    p = p[np.isfinite(p)]
    return p.size > 1 and bool(p.max() - p.min() <= TIE_TOL)


MAX_RATIO_GRID = 1_000_000  # shares in a scan (0:1:1e-12 would ask for 7 TiB)


def ratio_grid(K: int, start=0.0, stop=0.5, step=0.01) -> np.ndarray:
    """Shares of K sources: for K = 2 the last source's share from start to stop by step
    (Sec. 6.1: 0 to 0.5 by 0.01); for K > 2 the simplex lattice with that step whose non-first
    shares each lie in [start, stop]."""
    if not (0 <= start <= stop <= 1) or not step > 0:
        raise InputError(
            f"ratio grid needs 0 <= start <= stop <= 1 and step > 0; got "
            f"{start:g}, {stop:g}, {step:g}"
        )
    # start, start + step, ... up to stop (never past it: 0:0.5:0.3 is 0 and 0.3)
    n_vals = math.floor((stop - start) / step + 1e-9) + 1  # checked before any array exists
    points = n_vals ** (K - 1) if n_vals <= MAX_RATIO_GRID else n_vals
    if points > MAX_RATIO_GRID:
        raise InputError(
            f"ratio grid {start:g}:{stop:g}:{step:g} for {K} sources has {points:,} candidate "
            f"points, more than the limit of {MAX_RATIO_GRID:,}; use a coarser step"
        )
    vals = np.round(start + step * np.arange(n_vals), 10)
    if K == 2:
        return np.column_stack([1 - vals, vals])
    rows = [r for r in itertools.product(vals, repeat=K - 1) if sum(r) <= 1 + 1e-9]
    if len(rows) > 200_000:
        raise InputError(f"ratio grid for {K} sources has {len(rows)} points; use a coarser step")
    R = np.array(rows, float)
    return np.column_stack([1 - R.sum(1), R])
