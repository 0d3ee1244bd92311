"""Where a downstream forecast leaves what its fit saw, said at predict time (one line each).

Three cases get a `ForecastReachWarning` (docs/downstream.md, "Where a forecast is not
measured"):

- compute below the smallest fitted model's: stage 1 is fitted on the finals and says nothing
  below them (the saturating law put piqa's LAMBADA loss at 3228 nats at 1e15 FLOPs, read as
  19 points);
- compute more than e^R_MAX (about 7.4x) above the largest fitted model's: r = ln(C / largest
  C) > 2, the distance beyond which `supervised` warns too; the downstream backtests measured
  forecasts and intervals on targets a few times past the fitted models (Pythia 2.8B from
  <= 1B is 2.7x), none as far as 7x;
- a point below the task's chance level *and* below every fitted model's final score (the
  lowest of them, whichever model scored it: on logiqa pythia-160m's 19.05 sits below
  pythia-70m's 21.04), by more than the evaluation noise (at least 1 point). The chance level
  is not a hard floor (harness accuracies sit below it on some tasks: reading 8), so the point
  is not clipped; a forecast below both is outside anything measured. The same threshold
  (`score_floor`) is the lower clip of the interval's replicates. A forecaster without
  `lowest_` (a member view) uses the lower of its smallest and largest models' scores.

Each kind is said once per fitted forecaster (a loop over many budgets does not repeat it; the
message names the farthest point). Backtests, which extrapolate on purpose, silence them; the
check prediction of `DownstreamForecaster.from_json` marks none as said.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ..errors import DomainWarning, first_time
from .chance import chance_level

R_MAX = 2.0  # ln units: warn beyond e^2 ~ 7.4x the largest fitted compute (as `supervised`)


class ForecastReachWarning(DomainWarning):
    """A downstream forecast lies outside the fitted compute range or below chance (silenced
    inside `downstream backtest`, which extrapolates on purpose)."""


def fitted_ends(runs) -> tuple[dict, dict]:
    """(smallest, lowest) of the fitted models' finals `runs` (sorted by compute): the smallest
    model, where the fitted compute range starts ({model, C, score}, the mean score of the
    finals sharing that compute), and the lowest final score ({model, score}), the floor of
    the below-chance check."""
    low = runs["C"] <= runs["C"].min() * (1 + 1e-9)
    smallest = {
        "model": str(runs["model"].iloc[0]),
        "C": float(runs["C"].iloc[0]),
        "score": float(runs.loc[low, "score"].mean()),
    }
    k = int(np.argmin(runs["score"].to_numpy(float)))
    return smallest, {"model": str(runs["model"].iloc[k]), "score": float(runs["score"].iloc[k])}


def _lowest(est) -> dict:
    """The lowest final score among the fitted models ({model, score}); for a forecaster
    without it, the lower of its smallest and largest models' scores."""
    low = getattr(est, "lowest_", None)
    if low is not None:
        return low
    known = [x for x in (getattr(est, "smallest_", None), est.largest_) if x is not None]
    return min(known, key=lambda x: float(x["score"]))


def reach_warnings(est, C, P, stacklevel: int = 3) -> None:
    """Warn when the compute `C` (array) lies outside `est`'s fitted range or a forecast `P`
    (points, same shape) sits below chance and below every measured score."""
    C = np.atleast_1d(np.asarray(C, float)).ravel()
    P = np.broadcast_to(np.atleast_1d(np.asarray(P, float)), C.shape).ravel()
    if C.size == 0:
        return
    big, small = est.largest_, getattr(est, "smallest_", None)
    task = est.task_
    i = int(np.argmax(C))
    r = math.log(C[i] / float(big["C"]))
    if r > R_MAX and first_time(est, "above"):
        warnings.warn(
            f"{task}: {C[i]:.3g} FLOPs is {math.exp(r):.3g}x the largest fitted model's compute "
            f"({big['model']}, {float(big['C']):.3g}); the backtests measured forecasts and "
            f"intervals a few times past the fitted models, not beyond {math.exp(R_MAX):.1f}x: "
            "read it as a rough guess",
            ForecastReachWarning,
            stacklevel=stacklevel,
        )
    j = int(np.argmin(C))
    if small is not None and C[j] < float(small["C"]) * (1 - 1e-9) and first_time(est, "below"):
        warnings.warn(
            f"{task}: {C[j]:.3g} FLOPs is below the smallest fitted model's compute "
            f"({small['model']}, {float(small['C']):.3g}): no model was fitted there and the "
            "forecast extrapolates its curves downward (stage 1 diverges below its data): "
            "read it as a rough guess",
            ForecastReachWarning,
            stacklevel=stacklevel,
        )
    low = _lowest(est)
    ref = float(low["score"])
    floor = score_floor(est)
    k = int(np.argmin(P))
    if P[k] < floor and first_time(est, "chance"):
        warnings.warn(
            f"{task}: the forecast {P[k]:.2f} points at {C[k]:.3g} FLOPs is below the task's "
            f"chance level {float(est.chance_):g} and below every fitted model's final score "
            f"(lowest: {low['model']}, {ref:.2f}): no fitted model scored there (the chance "
            "level is no hard floor, so it is not clipped; read it as the fitted curve leaving "
            "its data)",
            ForecastReachWarning,
            stacklevel=stacklevel,
        )


def score_floor(est) -> float:
    """min(chance level, lowest fitted final score) less the evaluation noise (at least 1
    point), at least 0: below it no fitted model scored, nor does a model that guesses. The
    below-chance warning's threshold, and the lower clip of the interval's replicates (without
    it a trajectory's checkpoint term put piqa's lower end at 42.4 points
    against chance 50, below every checkpoint ever measured, step 0's 51.6 included)."""
    ref = float(_lowest(est)["score"])
    return max(0.0, min(float(est.chance_), ref) - max(float(est.eval_sd_), 1.0))


def chance_warning(task: str, chance, runs, stacklevel: int = 3) -> None:
    """A chance level given by the user (`--chance`, `chance=`) above every fitted model's
    final score: the sigmoid's floor (fitted in [0, chance + 10]; `sigmoid-chance`: chance) and
    the below-chance check above read it, so say it (as `salience fit` does for its floor).
    The bundled level itself is not questioned: near-chance tasks (ARC-Challenge on small
    models) score below it legitimately."""
    bundled = chance_level(task)
    if chance is None or runs.empty or (bundled is not None and float(chance) == bundled):
        return
    top = int(np.argmax(runs["score"].to_numpy(float)))
    best = float(runs["score"].iloc[top])
    if best < float(chance):
        warnings.warn(
            f"task {task!r}: chance level {float(chance):g} points (--chance, chance=) is above "
            f"every fitted model's final score (highest {best:.2f}, {runs['model'].iloc[top]}): "
            "is it right (points; 100 / number of options, e.g. 50 for two choices"
            + (f"; the bundled level of {task!r} is {bundled:g}" if bundled is not None else "")
            + ")?",
            DomainWarning,
            stacklevel=stacklevel,
        )


def persistence_warning(est, kw: dict, P: float) -> None:
    """A forecast P for more compute than the largest fitted model that scores below that
    model's own score (by more than its evaluation noise) contradicts persistence: say so."""
    big = est.largest_
    C = kw["flops"] if "flops" in kw else 6.0 * kw["N"] * kw["D"]
    if C > big["C"] and P < big["score"] - max(est.eval_sd_, 1.0):
        warnings.warn(
            f"{est.task_}: the forecast {P:.2f} at {C:.3g} FLOPs is below {big['model']}'s own "
            f"score {big['score']:.2f} at {big['C']:.3g} FLOPs (the fitted {est.selected_} "
            "forecast falls here); persistence would say the latter",
            stacklevel=2,
        )


__all__ = [
    "ForecastReachWarning",
    "R_MAX",
    "chance_warning",
    "fitted_ends",
    "persistence_warning",
    "reach_warnings",
    "score_floor",
]
