"""One downstream forecast as `downstream predict` (and `flp predict` on an `--evals` fit)
prints it (`DownstreamForecaster.forecast_one`): the score at a compute point with the
selected method's interval, the stage-1 loss, the below-persistence warning (`reach`) and,
against a known score, the absolute error and Eq. 4's relative error (Chen et al. 2024)."""

from __future__ import annotations

from ..errors import InputError
from ..flp.forecast import check_actual, warn_if_fraction
from ..forecast import Forecast
from .reach import persistence_warning


def point_forecast(est, kw: dict, level: float, actual: float | None = None) -> Forecast:
    """The forecast of a fitted `DownstreamForecaster` at `kw` ({"flops": C} or {"N": N,
    "D": D}), see the module docstring."""
    actual = check_actual(actual)
    P = est.predict(**kw)  # a float for one point
    P = P if isinstance(P, float) else float(P[0])
    persistence_warning(est, kw, P)
    L = est.predict_loss(**kw)
    res: dict = {
        "task": est.task_,
        "metric": est.metric_,
        "method": est.selected_,
        "performance": P,
        "loss": None if L is None else float(L[0]),
        "level": level,
    }
    try:
        lo, hi = est.predict_interval(**kw, level=level)
        res["interval"] = [float(lo[0]), float(hi[0])]
    except InputError:
        res["interval"] = None
    if actual is not None:
        warn_if_fraction(actual, P)
        res["abs_error"] = abs(P - actual)
        # Chen et al. Eq. 4, as `FLP.forecast_one` reports it
        res["relative_error"] = abs(P - actual) / actual if actual > 0 else None
    text = f"{est.task_} {est.metric_} ({est.selected_}): {P:.2f} points"
    iv = res["interval"]
    if iv:
        text += f" [{iv[0]:.2f}, {iv[1]:.2f}] ({level:g} PI)"
    if res["loss"] is not None:
        text += f"; {est.loss_task_} loss {res['loss']:.4f}"
    if "abs_error" in res:
        text += f"; absolute error {res['abs_error']:.2f} points"
    return Forecast(res, text, value=P, interval=iv, level=level)
