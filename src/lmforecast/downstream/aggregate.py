"""Any checkpoint, any aggregate: a fitted forecaster's whole trajectory (score at every token
count D of a model with N parameters) and the task average people report, each with an
interval.

- `trajectory(est, N, D)`: the forecast at each (N, D), C = 6 N D (stage 1 `nd` reads N and D
  directly); a checkpoint is compute like any other to the compute -> loss -> score chain, so
  this is exact for suites whose checkpoints are comparable (constant learning rate, e.g.
  Gemstones) and an approximation mid-cosine-schedule (Pythia; docs/downstream.md).
- `task_average(ests, ...)`: the mean over tasks (optional weights) of the forecasts; its
  interval is the percentile range of the mean of the tasks' replicates. Replicate b of every
  task shares its bootstrap resample and the draw of the terms that move a model's every score
  together (the gain and checkpoint terms), while each task's evaluation noise is drawn apart
  (`noise.task_noise_draws`): harness noise comes from each task's own items, so it averages
  down over tasks (docs/downstream.md, "Any checkpoint, any aggregate"). A task given twice
  (the same fit, or one task under two metrics such as acc and acc_norm) is refused: it would
  count twice.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from ..errors import DomainWarning, InputError
from ..params import check
from .forecaster import DownstreamForecaster
from .noise import percentile_interval


def _kw(est: DownstreamForecaster, flops, N, D) -> dict:
    if flops is not None:
        return {"flops": flops}
    return {"N": N, "D": D}


def trajectory(est: DownstreamForecaster, N: float, D, *, level: float = 0.9) -> pd.DataFrame:
    """Forecast, interval and stage-1 loss at every token count in `D` for a model of `N`
    parameters: columns `N, D, C, score, lo, hi, loss`."""
    D = np.atleast_1d(np.asarray(D, float))
    if np.ndim(N) != 0:
        raise InputError("trajectory: N is one model's parameter count (a single number)")
    if not (np.isfinite(N) and N > 0) or not (np.all(np.isfinite(D)) and (D > 0).all()):
        raise InputError("trajectory: N and every D must be finite and > 0")
    Nv = np.full(D.shape, float(N))
    point = est.predict(N=Nv, D=D)
    lo, hi = est.predict_interval(N=Nv, D=D, level=level)
    loss = est.predict_loss(N=Nv, D=D)
    return pd.DataFrame(
        {
            "N": Nv,
            "D": D,
            "C": 6.0 * Nv * D,
            "score": point,
            "lo": lo,
            "hi": hi,
            "loss": np.full(D.shape, np.nan) if loss is None else loss,
        }
    )


def task_average(ests, flops=None, *, N=None, D=None, level: float = 0.9, weights=None):
    """(point, lo, hi) of the (weighted) mean score over the tasks of `ests` (fitted
    forecasters, one per task) at the same compute (or N and D)."""
    ests = list(ests)
    if not ests:
        raise InputError("task_average: no forecaster given")
    check("level", level)
    seen: dict[str, int] = {}
    for i, e in enumerate(ests):  # an average counting one task twice is not a task average
        j = seen.setdefault(str(e.task_), i)
        if j != i:
            raise InputError(
                f"task_average: forecasters {j} and {i} both fit task {e.task_!r} "
                f"({ests[j].metric_} and {e.metric_}); give each task once"
            )
    ladder_warning(ests)
    w = np.ones(len(ests)) if weights is None else np.asarray(weights, float)
    if w.shape != (len(ests),) or not np.all(np.isfinite(w)) or (w < 0).any() or w.sum() <= 0:
        raise InputError("task_average: weights must be one finite number >= 0 per task")
    w = w / w.sum()
    pts = np.stack([np.atleast_1d(e.predict(**_kw(e, flops, N, D))) for e in ests])
    reps = [e.replicates(**_kw(e, flops, N, D), eval_apart=True) for e in ests]
    B = min(r.shape[0] for r in reps)
    R = np.tensordot(w, np.stack([r[:B] for r in reps]), axes=1)
    lo, hi = percentile_interval(R, w @ pts, level)
    return w @ pts, lo, hi


def ladder_warning(ests) -> None:
    """Warn (once per call) when the fits' largest fitted models differ: a task average is of
    one model's scores, and its interval shares one ladder's bootstrap resamples across tasks
    (a Pythia fit averaged with a Gemstones fit would otherwise pass unremarked)."""
    tops: dict[str, list[str]] = {}
    for e in ests:
        tops.setdefault(str(e.largest_["model"]), []).append(str(e.task_))
    if len(tops) > 1:
        which = "; ".join(f"{m} ({', '.join(t)})" for m, t in tops.items())
        warnings.warn(
            f"task average: the fits' largest fitted models differ ({which}): the average "
            "assumes one ladder of models scored on every task; fits of different ladders are "
            "averaged as given",
            DomainWarning,
            stacklevel=3,
        )
