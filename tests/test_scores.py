"""The package's one score unit (`lmforecast.scores`): points out, fractions or points in."""

from __future__ import annotations

import numpy as np
import pytest

from lmforecast import scores
from lmforecast.errors import InputError


def test_auto_reads_a_unit_interval_column_as_fractions_and_anything_else_as_points():
    assert scores.scale_of([0.0, 0.31, 1.0]) == 100.0
    assert scores.scale_of([0.0, 31.0, 64.5]) == 1.0
    np.testing.assert_array_equal(scores.to_points([0.25, 0.5]), [25.0, 50.0])
    np.testing.assert_array_equal(scores.to_points([25.0, 50.0]), [25.0, 50.0])
    # missing cells do not decide the unit
    np.testing.assert_array_equal(scores.to_points([0.25, np.nan]), [25.0, np.nan])


def test_a_declared_unit_overrides_the_reading_off_the_values():
    # points whose values are all at most 1 (an emergent task's small models) stay points
    np.testing.assert_array_equal(scores.to_points([0.2, 0.9], "points"), [0.2, 0.9])
    np.testing.assert_array_equal(scores.to_points([0.2, 0.9], "fraction"), [20.0, 90.0])


@pytest.mark.parametrize(
    "values, unit, shown",
    [
        ([0.2, 1.5], "fraction", "1.5"),
        ([30.0, 170.0], "auto", "170"),
        ([-3.0, 50.0], "points", "-3"),
    ],
)
def test_a_value_outside_its_units_range_is_refused_naming_it(values, unit, shown):
    with pytest.raises(InputError, match=rf"my column: value {shown} is outside"):
        scores.to_points(values, unit, "my column")


def test_an_unknown_unit_is_refused_naming_the_choices():
    with pytest.raises(InputError, match="score_unit must be one of auto, points, fraction"):
        scores.to_points([0.5], "percent")


def test_fraction_and_points_are_inverse_and_keep_scalars_scalar():
    assert scores.fraction(46.2) == pytest.approx(0.462)
    assert isinstance(scores.fraction(46.2), float)
    assert isinstance(scores.points(0.462), float)
    x = np.array([0.1, 0.25, 0.9])
    np.testing.assert_allclose(scores.fraction(scores.points(x)), x, rtol=1e-15)
