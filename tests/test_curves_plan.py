"""Schedule builders and schedule planning under a fitted curve law: the schedules are the
formulas they name, the best WSD cooldown matches a brute-force scan, a cooldown beats a constant
learning rate as the multi-power law implies, and the plan is JSON-ready."""

from __future__ import annotations

import json

import numpy as np
import pytest

from lmforecast.curves import schedules
from lmforecast.errors import InputError


# ---- schedules -------------------------------------------------------------------------------
def test_constant_with_warmup():
    s = schedules.constant(100, 1e-3, warmup_steps=10)
    assert list(s.columns) == ["step", "lr"] and list(s["step"]) == list(range(1, 101))
    np.testing.assert_allclose(s["lr"][:10], 1e-3 * np.arange(1, 11) / 10)
    assert (s["lr"][9:] == 1e-3).all()


def test_cosine_reaches_the_floor_at_the_last_step_and_halfway_is_the_mean():
    s = schedules.cosine(1010, 2e-3, 2e-4, warmup_steps=10).set_index("step")["lr"]
    assert s[10] == pytest.approx(2e-3) and s[1010] == pytest.approx(2e-4)
    assert s[510] == pytest.approx((2e-3 + 2e-4) / 2)
    assert (np.diff(s.loc[10:].to_numpy()) <= 0).all()


def test_wsd_linear_and_exponential_cooldowns():
    s = schedules.wsd(1000, 1e-3, 1e-5, 0.2).set_index("step")["lr"]
    assert (s.loc[:800] == 1e-3).all() and s[1000] == pytest.approx(1e-5)
    assert s[900] == pytest.approx((1e-3 + 1e-5) / 2)  # linear: halfway down at mid-cooldown
    e = schedules.wsd(1000, 1e-3, 1e-5, 0.2, decay="exp").set_index("step")["lr"]
    assert e[900] == pytest.approx(1e-4)  # exponential: the geometric mean at mid-cooldown
    assert schedules.cooldown_start(1000, 0.2) == 800


def test_linear_decay_and_sparse_rows_keep_the_last_step_and_the_corner():
    s = schedules.linear_decay(100, 1.0, 0.0).set_index("step")["lr"]  # peak at step 0
    assert s[50] == pytest.approx(0.5) and s[100] == 0.0
    np.testing.assert_allclose(np.diff(s.to_numpy()), -0.01)
    w = schedules.wsd(10_000, 1e-3, 0.0, 0.13, every=500)
    assert w["step"].iloc[-1] == 10_000 and 8700 in set(w["step"])  # the cooldown's corner
    dense = schedules.wsd(10_000, 1e-3, 0.0, 0.13).set_index("step")["lr"]
    np.testing.assert_allclose(np.interp(dense.index, w["step"], w["lr"]), dense, atol=1e-15)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: schedules.cosine(0, 1e-3, 0.0), "steps must be a whole number >= 1"),
        (lambda: schedules.cosine(100, -1e-3, 0.0), "peak_lr must be a positive"),
        (lambda: schedules.cosine(100, 1e-3, 2e-3), r"floor_lr must lie in \[0, peak_lr"),
        (lambda: schedules.wsd(100, 1e-3, 0.0, 1.5), r"cooldown_fraction must lie in \[0, 1\]"),
        (lambda: schedules.wsd(100, 1e-3, 0.0, 0.2, decay="exp"), "needs floor_lr > 0"),
        (lambda: schedules.constant(100, 1e-3, warmup_steps=100), "warmup_steps must be"),
        (lambda: schedules.make("step", 100, 1e-3), "unknown schedule 'step'"),
    ],
)
def test_bad_schedule_arguments_raise_input_errors(call, match):
    with pytest.raises(InputError, match=match):
        call()
