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
- `forecasts_at(ests, points)`: every fit's forecast at each point, and their task average
  (what `downstream predict` prints for several fits or points); `check_distinct_tasks`
  refuses the same task given in two files.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from ..errors import DomainWarning, InputError
from ..forecast import Answer
from ..params import check
from ..uncertainty.percentile import percentile_interval
from .forecaster import DownstreamForecaster


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
    lo, hi = percentile_interval(R, level, point=w @ pts)
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


def check_distinct_tasks(ests: list[DownstreamForecaster], paths: list[str]) -> None:
    """Several fits average over their tasks: a task given twice (the same fit twice, or one
    task under two metrics, e.g. acc and acc_norm) would be counted twice; refused naming the
    two files."""
    seen: dict[str, tuple[str, str]] = {}
    for est, path in zip(ests, paths):
        task, metric = str(est.task_), str(est.metric_)
        if task in seen:
            first, m0 = seen[task]
            why = (
                f"both fit {task!r} {metric}"
                if m0 == metric
                else f"both fit {task!r}, under metrics {m0} and {metric}"
            )
            raise InputError(
                f"--fit: {first} and {path}: {why}; the task average would count {task!r} "
                "twice: give each task once (forecast the other fit on its own)"
            )
        seen[task] = (path, metric)


def forecasts_at(ests, points: list[dict], *, level: float = 0.9) -> tuple[list, list]:
    """Each fitted forecaster's forecast at each point ({"flops": C} or {"N": N, "D": D}), and
    with several forecasters their task average at each point (`task_average`; the mean of the
    points without an interval when a fit has none, a `--bootstrap 0` fit). Returns (rows,
    average rows), each row a dict with the point, `performance` and `interval` ([lo, hi] or
    None); a row of `rows` also names its `task`, `metric` and `method`."""
    where = [{k: float(v) for k, v in kw.items()} for kw in points]
    at = {k: np.array([w[k] for w in where]) for k in where[0]}  # every point in one call
    per_task = []
    for est in ests:
        try:
            lo, hi = est.predict_interval(**at, level=level)
            ivs = [[float(a), float(b)] for a, b in zip(lo, hi)]
        except InputError:  # a fit saved with --bootstrap 0: no interval, as for one point
            ivs = [None] * len(where)
        per_task.append((est, np.asarray(est.predict(**at), float), ivs))
    rows = [
        {
            "task": est.task_,
            "metric": est.metric_,
            "method": est.selected_,
            **w,
            "performance": float(P[i]),
            "interval": ivs[i],
        }
        for i, w in enumerate(where)
        for est, P, ivs in per_task
    ]
    avg = []
    if len(ests) > 1 and all(ivs[0] for _, _, ivs in per_task):
        p, lo, hi = (
            np.ravel(v)
            for v in task_average(ests, at.get("flops"), N=at.get("N"), D=at.get("D"), level=level)
        )
        avg = [
            {**w, "performance": float(p[i]), "interval": [float(lo[i]), float(hi[i])]}
            for i, w in enumerate(where)
        ]
    elif len(ests) > 1:  # a --bootstrap 0 fit among them: the average's point, no interval
        ladder_warning(ests)
        p = np.mean([P for _, P, _ in per_task], axis=0)
        avg = [{**w, "performance": float(p[i]), "interval": None} for i, w in enumerate(where)]
    return rows, avg


def forecasts_answer(ests, points: list[dict], *, level: float = 0.9):
    """`forecasts_at` as an `Answer` (what `downstream predict` prints for several points or
    several fits): each task's forecast at each point, and with several tasks their average,
    one line each, a fit without an interval (``--bootstrap 0``) saying so."""
    rows, avg = forecasts_at(ests, points, level=level)
    fields: dict = {"level": level, "forecasts": rows}
    if avg:
        fields["average"] = {
            "tasks": [e.task_ for e in ests],
            "metrics": [e.metric_ for e in ests],
            "forecasts": avg,
        }

    def line(name, r):
        at = f"C={r['flops']:.4g}" if "flops" in r else f"N={r['N']:.4g} D={r['D']:.4g}"
        iv = r["interval"]
        return f"{name} at {at}: {r['performance']:.2f} points" + (
            f" [{iv[0]:.2f}, {iv[1]:.2f}]" if iv else " (no interval: a --bootstrap 0 fit)"
        )

    text = [line(f"{r['task']} {r['metric']} ({r['method']})", r) for r in rows]
    which = ", ".join(f"{e.task_} {e.metric_}" for e in ests)
    text += [line(f"average of {len(ests)} tasks ({which})", r) for r in avg]
    text.append(f"({level:g} prediction intervals)")
    return Answer(fields, "\n".join(text))
