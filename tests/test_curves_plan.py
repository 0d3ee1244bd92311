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


# ---- planning under a fitted multi-power law -------------------------------------------------
TRUTH = {"L0": 3.15, "A": 0.52, "alpha": 0.5, "B": 450.0, "C": 3.4e-4, "beta": 0.36, "gamma": 1.6}
PEAK, FLOOR, WARMUP = 3e-4, 3e-5, 400


@pytest.fixture(scope="module")
def fitted():
    """A multi-power law fitted to three simulated 8,000-step curves (constant, cosine, WSD)."""
    import pandas as pd

    from lmforecast.curves import CurveLaw, simulate_curves

    plan = pd.concat([
        schedules.constant(8000, PEAK, WARMUP, every=100).assign(run="constant"),
        schedules.cosine(8000, PEAK, FLOOR, WARMUP, every=100).assign(run="cosine"),
        schedules.wsd(8000, PEAK, FLOOR, 0.2, WARMUP, every=100).assign(run="wsd"),
    ], ignore_index=True)  # fmt: skip
    curves = simulate_curves(plan, TRUTH, noise=0.001, seed=3)
    return CurveLaw(law="mpl", n_boot=60).fit(curves)


def _final(est, tables):
    import pandas as pd

    sched = pd.concat([t.assign(run=f"r{i}") for i, t in enumerate(tables)], ignore_index=True)
    pred = est.predict(sched)
    return pred[sched.groupby("run", sort=False).tail(1).index.to_numpy()]


@pytest.fixture(scope="module")
def plan(fitted):
    from lmforecast.curves import plan_schedules

    return plan_schedules(fitted, 12_000)


def test_best_cooldown_matches_a_brute_force_scan(fitted, plan):
    fs = np.round(np.arange(0.0, 1.0 + 1e-9, 0.0025), 4)
    brute = _final(fitted, [schedules.wsd(12_000, PEAK, FLOOR, f, WARMUP, every=250) for f in fs])
    f_star = fs[int(np.argmin(brute))]
    assert plan.best_cooldown["fraction"] == pytest.approx(f_star, abs=0.0051)
    assert plan.best_cooldown["loss"] <= brute.min() + 1e-9
    assert 0.0 < plan.best_cooldown["fraction"] < 1.0  # an interior optimum under this law


def test_a_cooldown_beats_constant_as_the_law_implies(fitted, plan):
    t = plan.table.set_index("schedule")
    const = t.loc["constant", "loss"]
    for name in ("cosine", "linear_decay"):
        assert t.loc[name, "loss"] < const, name
    assert t.loc["wsd f=0.2", "loss"] < const - 0.03
    assert not t.loc["constant", "indistinguishable_from_best"]  # resolved by the draws
    assert plan.comparison == "draws"
    # the true law says the same: decaying the learning rate lowers the final loss
    from lmforecast.curves import simulate_curves

    truth = simulate_curves(
        schedules.constant(12_000, PEAK, WARMUP, every=200).assign(run="c"), TRUTH
    )["loss"].iloc[-1]
    truth_wsd = simulate_curves(
        schedules.wsd(12_000, PEAK, FLOOR, 0.2, WARMUP, every=200).assign(run="w"), TRUTH
    )["loss"].iloc[-1]
    assert truth_wsd < truth - 0.03
    assert t.loc["wsd f=0.2", "loss"] == pytest.approx(truth_wsd, rel=2e-3)


def test_the_best_monotone_schedule_is_monotone_and_no_worse_than_the_best_wsd(plan):
    m = plan.best_monotone
    lr = np.asarray(m["schedule"]["lr"])
    after = np.asarray(m["schedule"]["step"]) >= WARMUP
    assert (np.diff(lr[after]) <= 1e-15).all() and lr.min() >= FLOOR * (1 - 1e-9)
    assert m["loss"] <= plan.best_cooldown["loss"] + 1e-12
    assert m["loss"] == pytest.approx(plan.table["loss"].min())


def test_plan_forecasts_are_the_laws_forecasts_and_json_ready(fitted, plan):
    cos = schedules.cosine(12_000, PEAK, FLOOR, WARMUP, every=3).assign(run="new")
    fc = fitted.forecast(cos, final=True).table.iloc[0]
    row = plan.table.set_index("schedule").loc["cosine"]
    assert row["loss"] == pytest.approx(fc["loss"], rel=1e-12)
    assert row["lo"] <= row["loss"] <= row["hi"]
    d = json.loads(json.dumps(plan.to_dict(), allow_nan=False))
    assert d["steps"] == 12_000 and d["warmup_steps"] == WARMUP
    assert d["peak_lr"] == PEAK and d["floor_lr"] == pytest.approx(FLOOR)
    assert {s["schedule"] for s in d["schedules"]} >= {"constant", "cosine", "linear_decay"}
    for s in d["schedules"]:
        assert s["interval"] is None or s["interval"][0] <= s["loss"] <= s["interval"][1]


def test_without_draws_the_comparison_falls_back_to_overlapping_intervals(fitted):
    from lmforecast.curves import CurveLaw, plan_schedules

    est = CurveLaw.from_dict(fitted.to_dict())
    for m in est.models_.values():
        m["replicates"] = []
    p = plan_schedules(est, 9000, floor_lr=1e-5)
    assert p.comparison == "overlap" and p.floor_lr == 1e-5
    t = p.table.set_index("schedule")
    lo, hi, best = t["lo"].to_numpy(), t["hi"].to_numpy(), int(np.argmin(t["loss"].to_numpy()))
    overlap = (lo <= hi[best]) & (hi >= lo[best])
    assert (t["indistinguishable_from_best"].to_numpy() == (overlap | ~np.isfinite(lo))).all()


def test_bad_plan_arguments(fitted):
    from lmforecast.curves import CurveLaw, plan_schedules

    with pytest.raises(InputError, match="not a run of the fit"):
        plan_schedules(fitted, 1000, run="cosin")
    with pytest.raises(InputError, match="warmup"):
        plan_schedules(fitted, 300)
    with pytest.raises(InputError, match="fitted CurveLaw"):
        plan_schedules(CurveLaw(), 1000)


def test_exponential_cooldowns_are_scanned_the_same_way(fitted):
    from lmforecast.curves import plan_schedules

    p = plan_schedules(fitted, 12_000, decay="exp")
    f = p.best_cooldown["fraction"]
    assert p.best_cooldown["decay"] == "exp" and "wsd-exp f=0.2" in set(p.table["schedule"])
    fs = np.round(np.arange(0.0, 1.0 + 1e-9, 0.0025), 4)
    brute = _final(fitted, [schedules.wsd(12_000, PEAK, FLOOR, g, WARMUP, "exp", every=250)
                            for g in fs])  # fmt: skip
    assert f == pytest.approx(fs[int(np.argmin(brute))], abs=0.0051)
    with pytest.raises(InputError, match="exponential cooldown needs a floor"):
        plan_schedules(fitted, 12_000, decay="exp", floor_lr=0.0)


def test_the_planned_cooldown_is_the_true_laws_within_the_fits_reach(plan):
    """Under the law the curves were simulated from, the best WSD cooldown for 12,000 steps is
    about 17% of the steps (the MPL paper's optimised schedules look like WSD with a 10-20%
    cooldown); the plan, from three fitted 8,000-step runs, lands beside it."""
    import pandas as pd

    from lmforecast.curves import simulate_curves

    fs = np.round(np.arange(0.0, 1.0 + 1e-9, 0.01), 2)
    sched = pd.concat([schedules.wsd(12_000, PEAK, FLOOR, f, WARMUP, every=200).assign(run=str(f))
                       for f in fs], ignore_index=True)  # fmt: skip
    true = simulate_curves(sched, TRUTH).groupby("run", sort=False).tail(1)["loss"].to_numpy()
    f_true = fs[int(np.argmin(true))]
    assert 0.1 <= f_true <= 0.25
    assert plan.best_cooldown["fraction"] == pytest.approx(f_true, abs=0.05)
    assert plan.best_cooldown["loss"] == pytest.approx(true.min(), rel=2e-3)


def test_a_lone_constant_run_plans_from_the_prior_and_says_so():
    """One constant-lr run: with the bundled prior the decay response is identified (from the
    prior: a cooldown beats constant, resolved) and the note says where it comes from; without a
    prior the note says it is not identified and the decaying schedules cannot be told apart."""
    from lmforecast.curves import CurveLaw, plan_schedules, simulate_curves

    one = simulate_curves(schedules.constant(8000, PEAK, WARMUP, every=200).assign(run="one"),
                          TRUTH, noise=0.001, seed=5)  # fmt: skip
    with_prior = plan_schedules(CurveLaw(n_boot=30).fit(one), 8000)
    note = with_prior.notes[0]
    assert "comes from the prior" in note and "L0, A and alpha" in note
    assert "not identified" not in note
    t = with_prior.table.set_index("schedule")
    assert not t.loc["constant", "indistinguishable_from_best"]
    assert t.loc["wsd f=0.2", "loss"] < t.loc["constant", "loss"]
    alone = plan_schedules(CurveLaw(n_boot=30, prior=None).fit(one), 8000)
    assert "not identified" in alone.notes[0] and "prior" not in alone.notes[0]
    assert alone.table["indistinguishable_from_best"].all()
