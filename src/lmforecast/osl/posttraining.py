"""Post-training analysis (Ruan et al. 2024, Sec. 4.3, Fig. 6): how a technique's gain scales.

Fit the observational law once on the metric without the technique (e.g. GSM8K naive prompting)
and once with it (CoT, CoT + self-consistency), on the same models and holdout; express both in
reference-family-equivalent FLOPs (Eq. 8) and report the gap Y_with - Y_without along that axis.
Scores, the curves and the gap are in points (0-100); the test MSEs in points^2.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..display import SummaryDisplay
from ..errors import InputError
from .data import META_COLUMNS, read_benchmarks
from .fit import merge_targets
from .model import ObservationalScalingLaw
from .result import OSLResult


@dataclass
class PostTrainingGap(SummaryDisplay):
    """The two fits and the gap curve over log10 f-equivalent FLOPs."""

    without: OSLResult
    with_: OSLResult
    curve: pd.DataFrame  # log10_flops_equiv, y_without, y_with, gap (points)

    def contract(self) -> dict:
        """What `osl gap --json` prints: both fits' contracts and the gap curve by column."""
        return {
            "without": self.without.contract(),
            "with": self.with_.contract(),
            "curve": {c: self.curve[c].tolist() for c in self.curve.columns},
        }

    def summary(self) -> str:
        c = self.curve
        i_max = int(np.argmax(c["gap"].to_numpy()))
        gap, at = c["gap"].iloc[i_max], c["log10_flops_equiv"].iloc[i_max]
        return "\n".join(
            [
                f"Post-training gap: {self.with_.target} - {self.without.target} (Sec. 4.3)",
                f"test MSE (squared points) without: {_mse(self.without.test_mse)}   with: "
                f"{_mse(self.with_.test_mse)}",
                f"largest gap {gap:.2f} points at 10^{at:.2f}"
                f" {self.without.reference_family}-equivalent FLOPs",
            ]
        )


def _mse(v) -> str:
    return "-" if v is None else f"{v:.4g}"


def post_training_gap(
    benchmarks: pd.DataFrame,
    without: str,
    with_: str,
    *,
    targets: pd.DataFrame | None = None,
    log10_flops_grid: np.ndarray | None = None,
    **law_options,
) -> PostTrainingGap:
    """Fit both targets with the same settings and compare them on the C-bar axis (Eq. 8).

    The two laws' PCA spaces may differ (each is fitted on its own training split), so the
    comparison is made where they agree by construction: reference-family-equivalent FLOPs.
    Options are `ObservationalScalingLaw`'s (`score_unit` included: the tables may hold
    fractions or points). Each fit leaves the other target out of its predictors (and of the
    "left out" warning), and so do the columns of `targets` (targets, not benchmarks); the
    same column on both sides is refused (its gap is 0 by construction).
    """
    if str(without) == str(with_):
        raise InputError(
            f"--without and --with (without=, with_=) name the same column "
            f"{without!r}; a technique's gap needs two target columns"
        )
    not_benchmarks = [
        c for c in (targets.columns if targets is not None else ()) if c not in META_COLUMNS
    ]
    benchmarks = merge_targets(read_benchmarks(benchmarks), targets)  # once, for both fits
    fits = []
    for t, other in ((without, with_), (with_, without)):
        opts = dict(law_options)
        if not opts.get("metrics"):  # named metrics are the user's choice: kept as given
            ours = [
                c
                for c in (other, *not_benchmarks)  # an unknown target: fit names it
                if c != t and c in benchmarks.columns
            ]
            opts["exclude_metrics"] = tuple(
                dict.fromkeys([*opts.get("exclude_metrics", ()), *ours])
            )
        est = ObservationalScalingLaw(x="pcs", **opts).fit(benchmarks, t)
        if est.result_.reference is None:
            raise InputError(
                f"target {t!r}: no reference-family projection; the table needs at least two "
                f"{est.reference_family} models with FLOPs"
            )
        fits.append(est.result_)
    if log10_flops_grid is None:
        lo = np.nanmin([p["log10_flops_equiv"] for p in fits[0].predictions])
        hi = np.nanmax([p["log10_flops_equiv"] for p in fits[0].predictions])
        log10_flops_grid = np.linspace(lo, hi, 101)
    grid = np.asarray(log10_flops_grid, float)
    y0 = fits[0].predict_from_log_flops_equiv(grid)
    y1 = fits[1].predict_from_log_flops_equiv(grid)
    curve = pd.DataFrame({"log10_flops_equiv": grid, "y_without": y0, "y_with": y1, "gap": y1 - y0})
    return PostTrainingGap(fits[0], fits[1], curve)
