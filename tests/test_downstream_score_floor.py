"""Downstream forecasts where the scores are not measured (docs/downstream.md, "Where a
forecast is not measured"): a score metric refused as the stage-1 loss; the interval floored at
the score floor (chance or the lowest fitted final, less the evaluation noise) and always holding
its own point; a warning when stage 1 has no residual degrees of freedom."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from lmforecast.data import load_pythia
from lmforecast.downstream import DownstreamForecaster
from lmforecast.downstream.noise import knob_replicates
from lmforecast.downstream.reach import score_floor
from lmforecast.errors import DomainWarning, InputError
from lmforecast.uncertainty.percentile import percentile_interval

FIVE = ["pythia-70m", "pythia-160m", "pythia-410m", "pythia-1b", "pythia-1.4b"]


@pytest.fixture(scope="module")
def evals():
    return load_pythia()


def _fit(evals, task, models=FIVE, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return DownstreamForecaster(bootstrap=30, **kw).fit(evals, task=task, models=models)


@pytest.mark.parametrize("metric", ["acc", "acc_norm", "acc,none"])
def test_a_score_metric_is_refused_as_the_stage1_loss(evals, metric, cli, tmp_path):
    with pytest.raises(InputError, match=r"--loss-metric \(loss_metric=\) .* is a score"):
        DownstreamForecaster(bootstrap=5).fit(evals, task="piqa", loss_task="piqa",
                                              loss_metric=metric)  # fmt: skip
    out = tmp_path / "f.json"
    code, _, err = cli("downstream", "fit", "--evals", "pythia", "--task", "piqa", "--loss-task",
                       "piqa", "--loss-metric", metric, "--out", out, "--quiet")  # fmt: skip
    assert code == 2 and "is a score" in err and err.count("\n") == 1 and not out.exists()


@pytest.mark.parametrize("task", ["piqa", "arc_easy"])
def test_an_early_checkpoint_interval_stops_at_the_score_floor(evals, task):
    """A 2.8B model at 1e10 tokens: the checkpoint term (ln 30 below the largest fitted final's
    tokens) put the lower end 8 points below chance; now it stops at the floor, the point and
    the upper end unchanged."""
    est = _fit(evals, task)
    floor = score_floor(est)
    assert est.chance_ - 1.5 <= floor < est.chance_  # chance below every final here
    N, D = np.full(3, 2.8e9), np.array([1e10, 1e11, 3e11])
    lo, hi = est.predict_interval(N=N, D=D)
    R, var, spread, point, gain = est.interval_parts(N=N, D=D)
    kw = dict(seed=est.seed, eval_weight=1.0, spread_weight=0.0, gain_sd=0.5, centre="median",
              extra_var=est.checkpoint_var(D, 3))  # fmt: skip
    lo0, hi0 = np.quantile(knob_replicates(R, var, spread, point, gain, **kw), [0.05, 0.95],
                           axis=0)  # fmt: skip
    assert lo0[0] < floor - 5  # unfloored: far below chance (the 42.35 / 17.16 a flat floor gave)
    assert lo[0] == pytest.approx(floor) and hi[0] == pytest.approx(hi0[0])
    assert np.all(lo >= floor - 1e-9) and np.all(lo <= point) and np.all(point <= hi)
    np.testing.assert_allclose(lo[1:], np.maximum(lo0[1:], floor))  # far from the floor: as before


def test_a_task_scoring_below_chance_keeps_its_lower_floor(evals):
    """logiqa's fitted models score below its chance level (25): the floor follows the lowest
    final score, so real sub-chance scores stay inside the interval's range."""
    est = _fit(evals, "logiqa")
    low = float(est.lowest_["score"])
    assert low < est.chance_ and score_floor(est) == pytest.approx(low - max(est.eval_sd_, 1))


def test_every_interval_holds_its_point(evals):
    """Every interval holds its point: lambada_openai with stage 1 power at level 0.5 gives
    65.40, which a median centred before the noise draws put outside [63.64, 65.13]."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = DownstreamForecaster(bootstrap=20, stage1="power").fit(
            evals, task="lambada_openai", models=FIVE
        )
    N = np.full(4, 2.8e9)
    D = np.array([3e10, 1e11, 3e11, 1e12])
    for level in (0.2, 0.5, 0.9):
        lo, hi = est.predict_interval(N=N, D=D, level=level)
        p = est.predict(N=N, D=D)
        assert np.all((lo <= p) & (p <= hi)), level


def test_percentile_interval_widens_only_to_hold_the_point():
    R = np.array([[1.0, 5.0], [2.0, 6.0], [3.0, 7.0]])
    lo, hi = percentile_interval(R, 0.5, point=[0.5, 6.0])
    np.testing.assert_allclose(lo, [0.5, 5.5])
    np.testing.assert_allclose(hi, [2.5, 6.5])


def test_stage1_without_residual_dof_warns_and_a_fourth_model_silences_it(evals):
    with pytest.warns(DomainWarning, match=r"stage 1 \('saturating', 3 parameters\) is fitted "
                      r"on 2 model finals.*--stage1 power"):  # fmt: skip
        DownstreamForecaster(bootstrap=10).fit(evals, task="piqa", models=FIVE[:2])
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        DownstreamForecaster(bootstrap=10).fit(evals, task="piqa", models=FIVE[:4])
    assert not [w for w in got if "residual bootstrap" in str(w.message)]


def test_a_point_below_the_floor_keeps_its_whole_spread(evals):
    """Below the fitted compute the point can sit under the floor (piqa at 1e18 FLOPs: 43.67
    against 48.94): clipping there collapsed the interval onto the point from below; the floor
    applies only where the point is at or above it."""
    est = _fit(evals, "piqa")
    floor = score_floor(est)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = est.predict(flops=[1e18, 1e20])
        lo, hi = est.predict_interval(flops=[1e18, 1e20])
    assert p[0] < floor and lo[0] < p[0] - 5  # its spread below the point is kept
    assert p[1] >= floor and lo[1] >= floor - 1e-9


def test_brier_score_is_not_refused_as_a_score():
    """A Brier score falls with compute, like a loss: not refused as 'a score that rises'."""
    import pandas as pd

    from lmforecast.downstream.tables import resolve_loss_task

    df = pd.DataFrame({"task": ["piqa"], "metric": ["brier_score"]})
    assert resolve_loss_task(df, "piqa", "auto", "brier_score") == ("piqa", ["brier_score"])
