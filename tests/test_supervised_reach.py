"""A forecast that reaches past what its interval was tested on says so at predict time, in
Python as on the CLI (ninth-session held-out checks: a Gemstones ladder at one token count,
forecast 17x further in D, missed by 14-25% inside a 3% interval, silently)."""

import warnings

import numpy as np
import pandas as pd
import pytest

from lmforecast.supervised import SupervisedScalingLaw


@pytest.fixture(scope="module")
def one_d_law():
    N = np.geomspace(1e7, 1e9, 8)
    D = np.full(8, 2e10)
    L = 1.7 + 400 / N**0.34 + 400 / D**0.28
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return SupervisedScalingLaw(n_jobs=1).fit(pd.DataFrame({"N": N, "D": D, "loss": L}))


def test_a_forecast_at_another_token_count_than_a_one_d_ladder_warns(one_d_law):
    with pytest.warns(UserWarning, match=r"all trained on about D=2e\+10 tokens.*17.5x away"):
        one_d_law.predict_interval(1e9, 3.5e11)


def test_a_forecast_within_the_ladder_token_count_is_quiet(one_d_law):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        one_d_law.predict_interval(2e9, 2e10)  # a larger model at the ladder's own D


def test_the_cli_says_it_once(cli, tmp_path, one_d_law):
    one_d_law.save(tmp_path / "fit.json")
    code, _, err = cli("supervised", "predict", "--fit", tmp_path / "fit.json", "--params", "1e9",
                       "--tokens", "3.5e11")  # fmt: skip
    assert code == 0
    assert err.count("all trained on about D=") == 1 and err.count("rough guess") == 1
