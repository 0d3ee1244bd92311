"""An interval spanning the metric's whole range (such as a zoo FLP-M interval of [0, 100]
points) is uninformative: like a non-finite interval it is a failed forecast, counted
(`whole_range`) and never covered."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from lmforecast.uncertainty.coverage import calibration_curve, summarise_intervals


def _table(lower, upper, y, rng=(0.0, 100.0)) -> pd.DataFrame:
    n = len(y)
    return pd.DataFrame(
        {
            "method": "m",
            "level": 0.9,
            "y": y,
            "y_pred": y,
            "lower": lower,
            "upper": upper,
            "range_lower": np.full(n, rng[0]),
            "range_upper": np.full(n, rng[1]),
        }
    )


def test_whole_range_interval_is_a_counted_miss():
    # four forecasts, all with y inside [lower, upper]; two span the whole 0-100 range
    f = _table([40, 0, 0, 10, 0], [60, 100, 100, 100, np.inf], [50, 50, 20, 30, 40])
    s = summarise_intervals(f, ("method",), 0.9).iloc[0]
    assert s["n"] == 5
    assert s["whole_range"] == 2  # [0, 100] twice; [10, 100] is informative, [0, inf] non-finite
    assert s["nonfinite"] == 1
    assert s["coverage"] == 2 / 5  # only [40, 60] and [10, 100] cover
    cur = calibration_curve(f).set_index("level")["coverage"]
    assert cur[0.9] == 2 / 5


def test_tables_without_a_range_keep_finite_coverage():
    f = _table([0, 40], [100, 60], [50, 70]).drop(columns=["range_lower", "range_upper"])
    s = summarise_intervals(f, ("method",), 0.9).iloc[0]
    assert s["coverage"] == 0.5 and s["whole_range"] == 0


def test_flp_forecast_tables_carry_the_score_range():
    """The FLP/FLP-M backtests (report "How far to trust downstream forecasts") give the 0-100
    score range, so a clipped-to-everything interval counts as a miss there."""
    from lmforecast.flp.calibration import simulated_flp_forecasts

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f = simulated_flp_forecasts([0], ("ARC",), bootstrap=10)
    assert (f["range_lower"] == 0).all() and (f["range_upper"] == 100).all()
    before = summarise_intervals(f, ("method",), 0.9).iloc[0]
    assert before["whole_range"] == 0 and before["coverage"] == 1.0
    g = f.copy()
    g.loc[:, ["lower", "upper"]] = [0.0, 100.0]  # what FLP gives when a stage has no noise dof
    after = summarise_intervals(g, ("method",), 0.9).iloc[0]
    assert after["whole_range"] == after["n"] and after["coverage"] == 0.0
