"""A shuffled table gives the same fit: the isoFLOP bootstrap and the OSL extrapolation scale
do not depend on the row order."""

import warnings

import numpy as np
import pandas as pd
import pytest

from lmforecast.errors import DomainWarning, InputError
from lmforecast.examples import path
from lmforecast.isoflop import fit_isoflop, isoflop_table


def test_isoflop_fit_is_the_same_for_a_shuffled_table_and_takes_a_raw_one():
    it = pd.read_csv(path("isoflop/runs.csv"))
    a = fit_isoflop(isoflop_table(it), n_boot=50)
    b = fit_isoflop(isoflop_table(it.sample(frac=1, random_state=1)), n_boot=50)
    assert a.to_json() == b.to_json()  # the interval moved with the order before
    assert fit_isoflop(it, n_boot=50).to_json() == a.to_json()  # was KeyError: 'budget'


def test_isoflop_table_refuses_no_rows_and_warns_on_repeated_budget_and_size():
    it = pd.read_csv(path("isoflop/runs.csv"))
    with pytest.raises(InputError, match="no rows"):
        isoflop_table(it.iloc[:0])
    with pytest.warns(DomainWarning, match="share a budget and a size"):
        isoflop_table(pd.concat([it, it.assign(loss=it["loss"] + 0.1)]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        isoflop_table(it)  # no repeats, no warning


def test_osl_extrapolation_scale_does_not_depend_on_row_order():
    from lmforecast.osl.fit import extrapolation_scale

    rng = np.random.default_rng(0)
    n = 40
    X = rng.normal(size=(n, 2))
    key = np.repeat(np.arange(n // 4), 4).astype(float)  # many tied FLOPs
    y = 1 / (1 + np.exp(-(X[:, 0] + 0.3 * key))) + rng.normal(0, 0.02, n)
    a = extrapolation_scale(X, y, key)
    p = rng.permutation(n)
    b = extrapolation_scale(X[p], y[p], key[p])
    assert a == pytest.approx(b, rel=1e-9)
