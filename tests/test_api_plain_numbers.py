"""The Python API returns plain floats for scalars and arrays for arrays."""

from __future__ import annotations

import numpy as np

from lmforecast.supervised import SupervisedScalingLaw


def test_scalar_answers_are_plain_floats():
    m = SupervisedScalingLaw.from_preset("hoffmann2022")
    a = m.allocate(1e22)
    assert all(type(v) is float for v in (a.C, a.N, a.D, a.loss))
    assert repr(a).startswith("Allocation(C=1e+22, N=5160473684.85")
    assert type(m.predict(1e9, 2e10)) is float
    lo, hi = m.predict_interval(1e9, 2e10)
    assert type(lo) is float and type(hi) is float and lo < m.predict(1e9, 2e10) < hi


def test_array_answers_stay_arrays():
    m = SupervisedScalingLaw.from_preset("hoffmann2022")
    a = m.allocate([1e21, 1e22])
    assert isinstance(a.N, np.ndarray) and a.N.shape == (2,)
    L = m.predict([1e9, 2e9], 2e10)
    assert isinstance(L, np.ndarray) and L.shape == (2,) and L[1] < L[0]
