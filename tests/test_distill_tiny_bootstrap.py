"""A tiny bootstrap says so: `distill fit --bootstrap 4` can give point estimates outside
their own 90% intervals; its note says the intervals are rough and names those estimates."""

from __future__ import annotations

from lmforecast.distill.uncertainty import MIN_RELIABLE_BOOTSTRAP, tiny_bootstrap_note


def test_tiny_bootstrap_warns_and_names_estimates_outside_their_interval():
    params = {"c0": 2.5, "f1": 0.09, "d1": 1.5}
    ci = {"c0": [2.6, 3.0], "f1": [0.05, 0.1], "d1": [1.0, 1.4]}
    note = tiny_bootstrap_note(4, params, ci, 0.9)
    assert note.startswith("only 4 bootstrap resamples: the 90% intervals are rough")
    assert "(c0, d1 outside their own interval)" in note


def test_enough_resamples_or_none_say_nothing():
    ci = {"c0": [2.6, 3.0]}
    assert tiny_bootstrap_note(MIN_RELIABLE_BOOTSTRAP, {"c0": 2.5}, ci, 0.9) is None
    assert tiny_bootstrap_note(0, {"c0": 2.5}, ci, 0.9) is None
    note = tiny_bootstrap_note(8, {"c0": 2.7}, ci, 0.8)
    assert "80% intervals are rough;" in note and "outside" not in note
