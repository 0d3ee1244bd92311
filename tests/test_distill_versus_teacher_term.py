"""Crossover and compute/token-ratio intervals carry the teacher's uncertainty where the
scenario trains or runs the teacher (docs/distill.md, "The teacher's uncertainty"): each draw's
teacher losses become E + (L - E) exp(u_b s_T), s_T at the point plan's teacher; the best case
(teacher chosen freely, no forecast) is unchanged."""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest

from lmforecast.distill import DistillationScalingLaw
from lmforecast.distill.plan_intervals import _draw_models
from lmforecast.distill.planning import get_scenario, plan_distillation
from lmforecast.distill.teacher_uncertainty import plan_teacher_log_sd
from lmforecast.distill.versus_supervised import (
    crossover_compute,
    crossover_interval,
    ratio_interval,
)

SEARCH = {"n_grid": 13, "bisections": 8}
SIZES = [1e9, 3e9]


@pytest.fixture(scope="module")
def preset():
    return DistillationScalingLaw.from_preset("busbridge2025")


@pytest.fixture(scope="module")
def point(preset):
    """The same law with its supervised law as bare coefficients: no interval, s_T = 0."""
    return DistillationScalingLaw.from_result(
        preset.result_, supervised=dict(preset.supervised_.params_)
    )


@functools.cache
def _crossover(sc):
    """The point crossover of SIZES under `sc` for the preset (the same in several tests)."""
    return crossover_compute(
        DistillationScalingLaw.from_preset("busbridge2025"), SIZES, sc, **SEARCH
    )


def _log_width(iv):
    lo, hi = (np.asarray(v, float) for v in iv)
    return np.log(hi / lo)


@pytest.mark.slow
def test_crossover_interval_widens_with_the_teacher_term_and_holds_the_point(preset, point):
    sc = "teacher-pretraining"
    # 10 draws: the teacher term widens the interval ~2.7x (20 draws: ~2.8x)
    a = crossover_interval(preset, SIZES, sc, 0.9, max_draws=10, **SEARCH)
    b = crossover_interval(point, SIZES, sc, 0.9, max_draws=10, **SEARCH)
    c = _crossover(sc)
    assert np.all(np.isfinite(a[1])) and np.all(_log_width(a) > 1.3 * _log_width(b))
    assert np.all((a[0] <= c) & (c <= a[1]))


def test_crossover_interval_is_the_draws_with_each_sizes_own_shift_by_hand(preset):
    # 3 draws (u_b = 0, +-0.97): the by-hand identity holds at any draw count
    sc, level, B = "teacher-pretraining", 0.8, 3
    got = crossover_interval(preset, SIZES, sc, level, max_draws=B, **SEARCH)
    c = _crossover(sc)
    sc_obj = get_scenario(sc)
    sd = plan_teacher_log_sd(preset, plan_distillation(preset, SIZES, c, sc), sc_obj)
    assert sd is not None and np.all(sd > 0)
    for i, n in enumerate(SIZES):
        vals = [np.log(crossover_compute(m, n, sc, **SEARCH)[0])
                for m in _draw_models(preset, B, sd[i])]  # fmt: skip
        lo, hi = np.quantile(vals, [0.1, 0.9], method="inverted_cdf")
        np.testing.assert_allclose([got[0][i], got[1][i]], np.exp([lo, hi]), rtol=1e-12)


@pytest.mark.slow
def test_ratio_interval_widens_with_the_teacher_term(preset, point):
    sc = "teacher-pretraining"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # 6 draws: the teacher term widens both ratios' intervals 2.2-3.7x (10 draws: 1.6-2.4x)
        a = ratio_interval(preset, SIZES, [2.4, 2.3], sc, max_draws=6)
        b = ratio_interval(point, SIZES, [2.4, 2.3], sc, max_draws=6)
    for k in ("compute_ratio", "token_ratio"):
        assert np.all(_log_width(a[k]) > 1.3 * _log_width(b[k])), k


def test_best_case_crossover_and_ratios_are_unchanged(preset, point):
    # 2 draws (teacher scores u_b = +-0.67): a teacher term drawn in the best case would move
    # both draws, so bit-for-bit equality needs no more
    a = crossover_interval(preset, SIZES, "best-case", 0.9, max_draws=2, **SEARCH)
    b = crossover_interval(point, SIZES, "best-case", 0.9, max_draws=2, **SEARCH)
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    r = ratio_interval(preset, SIZES, [2.4, 2.3], "best-case", max_draws=2)
    r0 = ratio_interval(point, SIZES, [2.4, 2.3], "best-case", max_draws=2)
    for k in r:
        np.testing.assert_array_equal(np.asarray(r[k]), np.asarray(r0[k]))


def test_a_ratio_pair_out_of_reach_keeps_its_shift_aligned(preset):
    """Pairs the supervised side cannot compare (target below its limit) are skipped inside the
    bisection; the per-pair teacher shift must follow the pairs that remain. 2 draws (u_b =
    +-0.67, both shifted): a misaligned shift moves them, so more draws check nothing more."""
    sc = "teacher-pretraining"
    iv = ratio_interval(preset, [1e9, 1e9, 3e9], [1.0, 2.4, 2.3], sc, max_draws=2)
    one = ratio_interval(preset, [1e9, 3e9], [2.4, 2.3], sc, max_draws=2)
    for k in iv:
        assert np.all(np.isnan(np.asarray(iv[k])[:, 0]))
        np.testing.assert_allclose(np.asarray(iv[k])[:, 1:], np.asarray(one[k]), rtol=1e-12)


def test_cli_basis_line_says_whether_the_teacher_was_drawn(cli, point, tmp_path):
    """The crossover and ratio basis lines name the teacher term only where it was drawn: a
    supervised law without uncertainty (given coefficients) holds the teacher at its point.
    2 draws, the fewest the CLI takes: the basis line does not depend on how many."""
    args = ["--student-params", "1e9", "--scenario", "teacher-pretraining", "--draws", "2"]
    code, out, err = cli("distill", "crossover", *args)
    assert code == 0, err
    assert "teacher loss L_T drawn" in out
    f = tmp_path / "pt.json"
    point.save(f)
    code, out, err = cli("distill", "crossover", *args, "--coefficients", f)
    assert code == 0, err
    assert "drawn" not in out and "that law carries no uncertainty" in out
    code, out, err = cli("distill", "crossover", "--student-params", "1e9", "--draws", "2")
    assert code == 0 and "teacher loss" not in out  # best case: no forecast teacher
    ratio = ["--student-params", "5e8", "--target-loss", "2.3", "--scenario", "teacher-inference"]
    code, out, err = cli("distill", "ratios", *ratio, "--draws", "2", "--coefficients", f)
    assert code == 0, err
    assert "that law carries no uncertainty" in out and "drawn" not in out


def test_a_law_given_coefficients_saves_and_loads_as_given(point, tmp_path):
    """`from_result(res, supervised=coefficients)` saves and loads as given: its meta keeps the
    given coefficients, not the preset's supervised fit, so no teacher term comes back."""
    from lmforecast.distill.teacher_uncertainty import supervised_has_interval

    f = tmp_path / "pt.json"
    point.save(f)
    back = DistillationScalingLaw.load(f)
    assert not supervised_has_interval(point.supervised_)
    assert not supervised_has_interval(back.supervised_) and back.to_json() == point.to_json()
    preset = DistillationScalingLaw.from_preset("busbridge2025")
    assert supervised_has_interval(preset.supervised_)  # the preset itself is untouched
