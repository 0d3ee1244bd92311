"""The log-log shape diagnostic behind the zoo's law-fit limit (docs/zoo.md, Known limits)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lmforecast.laws import get_law
from lmforecast.zoo import load_zoo
from lmforecast.zoo.diagnostics import local_log_log_slopes, steepening_steps


def _runs(N, loss, ratio=20.0):
    N = np.asarray(N, float)
    return pd.DataFrame({"N": N, "D": ratio * N, "loss": loss})


def test_slopes_hand_worked():
    # L = 10 N^-0.5 exactly: every local slope is -0.5, nothing steepens
    N = np.array([1e3, 1e4, 1e5])
    s = local_log_log_slopes(_runs(N, 10 * N**-0.5))
    assert np.allclose(s["slope"], -0.5) and steepening_steps(s) == 0
    # a concave curve: losses 4, 3.6, 2.7 at N = 1e3, 1e4, 1e5 -> slopes log10(0.9), log10(0.75)
    s = local_log_log_slopes(_runs(N, [4.0, 3.6, 2.7]))
    assert s["slope"].tolist() == pytest.approx(
        [np.log(0.9) / np.log(10), np.log(0.75) / np.log(10)]
    )
    assert steepening_steps(s) == 1
    # runs at other ratios are ignored
    mixed = pd.concat([_runs(N, [4.0, 3.6, 2.7]), _runs([5e3], [1.0], ratio=80)])
    assert len(local_log_log_slopes(mixed)) == 2


@settings(max_examples=60, deadline=None)
@given(
    E=st.floats(0.01, 3),
    logA=st.floats(-2, 6),
    logB=st.floats(-2, 6),
    alpha=st.floats(0.05, 1.5),
    beta=st.floats(0.05, 1.5),
    gamma=st.floats(0.05, 3),
    ratio=st.sampled_from([5.0, 20.0, 80.0]),
)
def test_every_member_of_the_law_family_is_convex_in_log_log(
    E, logA, logB, alpha, beta, gamma, ratio
):
    # module docstring: along D = k N the slope can only flatten, so a steepening zoo curve is
    # out of the family's reach
    law = get_law("chinchilla-gamma")
    N = np.logspace(3, 7, 25)
    params = dict(E=E, A=10**logA, B=10**logB, alpha=alpha, beta=beta, gamma=gamma)
    loss = law.predict(params, N=N, D=ratio * N)
    s = local_log_log_slopes(_runs(N, loss, ratio))
    assert steepening_steps(s) == 0


def test_bundled_zoo_steepens_so_the_law_family_cannot_follow_it():
    # what the shipped tables show (docs/zoo.md): at 20 tokens/parameter the curve steepens
    # between the largest sizes, i.e. is concave in log-log where the law family is convex
    s = local_log_log_slopes(load_zoo().supervised_runs())
    assert len(s) >= 4 and (s["slope"] < 0).all()
    assert steepening_steps(s) >= 1
    assert s["slope"].iloc[-1] < s["slope"].iloc[1:-1].max()  # the top is steeper than the middle
