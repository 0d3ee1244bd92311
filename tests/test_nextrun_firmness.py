"""How firmly the bootstrap refits pick the next run (`p_best`): the share of resamples of the
refits in which each candidate is the advised one (docs/toolbox.md, "The next run to train").
On the bundled example three candidates split the pick; across seeds the pick follows p_best."""

from __future__ import annotations

import collections
import functools
import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import lmforecast.examples
from lmforecast.errors import InputError
from lmforecast.nextrun import NextRunAdvice, advise

FILES = Path(lmforecast.examples.__file__).parent / "files"


@functools.cache
def _advice(seed):
    """The default advice (60 refits) on the bundled runs at `seed`, computed once per seed:
    the seed sweep, the distribution check and the save/load round trip read the same advice."""
    runs = pd.read_csv(FILES / "nextrun" / "runs.csv")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return advise(runs, 7e9, 1.4e11, budget=1e18, seed=seed)


def _best(a):
    return next(r for r in a.candidates if r["shrink"] >= 0.02)


def test_p_best_is_a_distribution_over_the_candidates():
    a = _advice(0)
    p = np.array([r["p_best"] for r in a.candidates])
    assert np.all((p >= 0) & (p <= 1)) and p.sum() == pytest.approx(1.0)
    assert _best(a)["p_best"] == p.max()  # the advised run is the modal pick
    assert f"advised in {100 * _best(a)['p_best']:.0f}% of resamples of the 60 refits" in a.message


@pytest.mark.slow
def test_p_best_predicts_how_often_other_seeds_pick_each_run():
    """Twelve seeds at 60 refits: no candidate is picked by every seed (so the advice
    can move with --seed), and each candidate's mean p_best is within 0.2 of how often it is picked;
    every advice whose pick is below 80% names a rival."""
    picks, shares, n = collections.Counter(), collections.defaultdict(list), 12
    for s in range(n):
        a = _advice(s)
        b = _best(a)
        picks[(b["N"], b["D"])] += 1
        for r in a.candidates:
            shares[(r["N"], r["D"])].append(r["p_best"])
        assert ("near-tied with N=" in a.message) == (b["p_best"] < 0.8)
    assert max(picks.values()) < n
    for k, v in shares.items():
        assert abs(np.mean(v) - picks[k] / n) <= 0.2, k


def test_a_clear_winner_is_picked_firmly():
    """Runs of Hoffmann's law; candidates: one cheap informative run among runs 100x dearer
    with the same information per run: the cheap one wins every resample."""
    rng = np.random.default_rng(0)
    N = np.repeat(np.geomspace(1e7, 1.6e8, 5), 2)
    D = N * np.tile([10.0, 40.0], 5)
    p = {"E": 1.69, "A": 406.4, "B": 410.7, "alpha": 0.34, "beta": 0.28}
    L = p["E"] + p["A"] / N ** p["alpha"] + p["B"] / D ** p["beta"]
    runs = pd.DataFrame({"N": N, "D": D, "loss": L * np.exp(rng.normal(0, 0.005, len(N)))})
    cand = pd.DataFrame({"N": [3e8, 3e8, 3e8], "D": [6e9, 6e11, 6e11 * 1.01]})
    a = advise(runs, 7e9, 1.4e11, candidates=cand, n_boot=30, seed=0, min_gain=0.0)
    assert a.candidates[0]["D"] == 6e9 and a.candidates[0]["p_best"] == 1.0
    assert "near-tied" not in a.message


def test_saved_advice_keeps_p_best_and_advice_without_it_is_refused():
    a = _advice(0)
    back = NextRunAdvice.from_json(a.to_json())
    assert back.to_json() == a.to_json()
    assert back.candidates[0]["p_best"] == a.candidates[0]["p_best"]
    d = json.loads(a.to_json())
    del d["candidates"][1]["p_best"]
    with pytest.raises(InputError, match=r"candidates\[1\]\.p_best.*missing"):
        NextRunAdvice.from_json(json.dumps(d))
    d["candidates"][1]["p_best"] = 0.0
    d["candidates"][0]["p_best"] = 1.5
    with pytest.raises(InputError, match=r"candidates\[0\]\.p_best"):
        NextRunAdvice.from_json(json.dumps(d))
