"""FLP on a ladder of only 4 models: stage-1 bootstrap resamples that draw a single
run are dropped, and the saved fit must still load back (schema: one stage-1 draw per stage-2
draw) and predict, both through the library and through `flp fit --evals` / `flp predict`."""

import json

import numpy as np
import pytest

from lmforecast.flp import FLP
from lmforecast.flp.simulate import simulate_flp

PYTHIA_LADDER = "pythia-70m,pythia-160m,pythia-410m,pythia-1b"


@pytest.fixture(scope="module")
def ladder():
    study = simulate_flp(tasks=("ARC",), seed=0)
    runs = study.runs.sort_values("C").tail(4)  # the 4 largest: past emergence
    ck = study.checkpoints[study.checkpoints["model"].isin(runs["model"])]
    return runs, ck


def test_four_run_fit_round_trips_through_from_json(ladder, tmp_path):
    runs, ck = ladder
    est = FLP("ARC", bootstrap=200, seed=0).fit(runs, ck)
    # the case of the issue: some stage-1 resamples of 4 runs were degenerate and dropped
    n1 = len(est.stage1_.bootstrap)
    assert n1 == 200  # constant-input resamples are redrawn, never dropped
    assert len(est.stage2_.bootstrap) == n1  # paired draw for draw
    path = tmp_path / "flp.json"
    est.to_json(path)
    back = FLP.from_json(path)
    assert back.to_json() == est.to_json()
    C = np.array([1e22, 5e22])
    assert np.array_equal(back.predict(C), est.predict(C))
    lo, hi = back.predict_interval(C)
    lo0, hi0 = est.predict_interval(C)
    assert np.array_equal(lo, lo0) and np.array_equal(hi, hi0)
    assert np.all(lo <= back.predict(C)) and np.all(back.predict(C) <= hi)


def test_cli_fit_on_four_pythia_models_then_predict(cli, tmp_path):
    out = tmp_path / "f.json"
    code, _, err = cli("flp", "fit", "--evals", "pythia", "--task", "piqa", "--models",
                       PYTHIA_LADDER, "--method", "flp", "--out", out)  # fmt: skip
    assert code == 0, err
    code, stdout, err = cli("flp", "predict", "--fit", out, "--flops", "1e22", "--json")
    assert code == 0, err
    res = json.loads(stdout)
    lo, hi = res["interval"]
    # piqa is 2-way multiple choice: a forecast between chance (50) and 100 points, inside its
    # own finite interval
    assert 50 < res["performance"] < 100
    assert np.isfinite([lo, hi]).all() and lo <= res["performance"] <= hi
