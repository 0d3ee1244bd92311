"""The law's N*(C), D*(C) interval (`allocate_interval`): where the runs form isoFLOP profiles,
the scatter of their own optima about the law's N* widens it into a prediction interval
(docs/trust.md, "Compute-optimal N*"); otherwise it stays the bootstrap spread, and says so."""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lmforecast.errors import InputError
from lmforecast.isoflop.simulate import simulate_isoflops
from lmforecast.supervised import SupervisedScalingLaw
from lmforecast.supervised.allocation import optima_scatter

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
BUDGETS = np.geomspace(1e18, 1e21, 6)


def _profiles(shift_sd=0.0, seed=0):
    t = simulate_isoflops(budgets=BUDGETS, seed=seed)
    rng = np.random.default_rng(seed)
    f = dict(zip(sorted(t["C"].unique()), np.exp(rng.normal(0, shift_sd, t["C"].nunique()))))
    return t.assign(N=t["N"] * t["C"].map(f), D=t["D"] / t["C"].map(f))[["N", "D", "loss"]]


@pytest.fixture(scope="module")
def profiles_fit():
    """The one `chinchilla` fit (no bootstrap) of the unshifted profiles, shared read-only: with
    shift_sd=0 every factor is exp(0) = 1.0, so `_profiles()` is bit for bit the simulated
    table's N, D, loss (the `plain` fit below), and no test writes to the estimator."""
    return SupervisedScalingLaw(form="chinchilla", bootstrap=0).fit(_profiles())


def test_optima_scatter_reads_each_budgets_vertex(profiles_fit):
    runs = _profiles()
    law = profiles_fit
    from lmforecast.compute.allocation import compute_optimal

    sc = optima_scatter(law.data_, lambda c: compute_optimal(law.params_, c, "6ND").N)
    assert sc["n"] == len(BUDGETS) and sc["rms"] < 0.05  # the law is the simulator's
    rng = np.random.default_rng(1)  # runs that are not profiles: no budget has 3 sizes
    loose = runs.assign(D=runs["D"] * np.exp(rng.uniform(-1, 1, len(runs))))
    assert optima_scatter(loose, lambda c: c * 0 + 1e9) is None


def test_scattered_optima_widen_the_interval_and_cover_a_held_out_budget():
    warnings.simplefilter("ignore")
    runs = _profiles(shift_sd=0.3, seed=3)
    C = 6 * runs["N"] * runs["D"]
    top = C > 5e20
    law = SupervisedScalingLaw(form="chinchilla", bootstrap=40, n_jobs=1).fit(runs[~top])
    sc = law.result_.meta["allocation"]
    assert sc["n"] == len(BUDGETS) - 1 and sc["rms"] > 0.1
    iv = law.allocate_interval(1e21)
    boot = dict(law.result_.meta)
    del law.result_.meta["allocation"]
    iv0 = law.allocate_interval(1e21)
    law.result_.meta.update(boot)
    assert np.log(iv["N"][1] / iv["N"][0]) > 2 * np.log(iv0["N"][1] / iv0["N"][0])
    N = float(law.allocate(1e21).N)
    assert iv["N"][0] < N < iv["N"][1] and iv["D"][0] < 1e21 / (6 * N) < iv["D"][1]
    back = SupervisedScalingLaw.from_json(law.to_json())
    assert back.result_.meta["allocation"] == sc


@pytest.mark.parametrize("edit", [{"rms": -1.0, "n": 5}, {"rms": 0.1, "n": 2}, {"rms": 0.1}])
def test_a_hand_edited_allocation_record_is_refused(profiles_fit, edit):
    d = json.loads(profiles_fit.to_json())
    d["meta"]["allocation"] = edit
    with pytest.raises(InputError, match="meta.allocation"):
        SupervisedScalingLaw.from_json(json.dumps(d))


@pytest.mark.slow
def test_porian_held_out_optima_are_covered(shared_dir):
    """`chinchilla`'s N* is a factor ~2 off Porian's optima; its bootstrap interval covered 0.07
    of the held-out budgets' optima, the prediction interval 0.9."""
    import trust_allocation

    warnings.simplefilter("ignore")
    path = shared_dir / "data/suites/porian/isoflops.csv"
    df = trust_allocation.forecasts(path, "chinchilla", holds=(1, 2))
    assert len(df) >= 40 and 0.8 <= df["covered"].mean() <= 0.98


def test_random_runs_are_not_read_as_isoflop_profiles():
    """1,500 runs at random (N, D) put a few runs together at three digits of 6ND by chance
    (51 'budgets' before the share rule, an interval 14x too wide); not an isoFLOP design."""
    from lmforecast.compute.allocation import compute_optimal
    from lmforecast.laws import get_law

    rng = np.random.default_rng(0)
    N = np.exp(rng.uniform(np.log(1e7), np.log(1e10), 1500))
    D = np.exp(rng.uniform(np.log(1e9), np.log(1e12), 1500))
    law = get_law("chinchilla")
    p = {"E": 1.69, "A": 406.4, "B": 410.7, "alpha": 0.34, "beta": 0.28}
    loss = law.predict(p, N=N, D=D) * np.exp(rng.normal(0, 0.01, 1500))
    import pandas as pd

    runs = pd.DataFrame({"N": N, "D": D, "loss": loss})
    assert optima_scatter(runs, lambda c: compute_optimal(p, c, "6ND").N) is None
    # the same check keeps a real design: every run of the example profiles is on one
    assert optima_scatter(_profiles(), lambda c: compute_optimal(p, c, "6ND").N)["n"] == 6


def _n_star(c):
    from lmforecast.compute.allocation import compute_optimal
    from lmforecast.isoflop.simulate import HOFFMANN

    return compute_optimal(HOFFMANN, c, "6ND").N


def test_the_tables_own_budget_column_groups_the_profiles():
    """A user's C counts FLOPs their own way (here 6N(1 + 2e4/sqrt N): attention-like, per
    size), so 6ND of one budget's runs differ by size and never group at three digits; the
    table's C column, given beside D, groups them, and each profile's vertex is compared with the
    law's own vertex on the same runs: with the true law's losses the scatter is 0."""
    from lmforecast.isoflop.simulate import HOFFMANN
    from lmforecast.laws import get_law
    from lmforecast.supervised.runs import runs_from_frame

    t = simulate_isoflops(budgets=BUDGETS, seed=0)
    D = t["C"] / (6 * t["N"] * (1 + 2e4 / np.sqrt(t["N"])))
    loss = get_law("chinchilla").predict(HOFFMANN, N=t["N"].to_numpy(), D=D.to_numpy())
    runs = t.assign(D=D, loss=loss)[["N", "D", "loss", "C"]]

    def truth(N, D):
        return get_law("chinchilla").predict(HOFFMANN, N=N, D=D)

    assert optima_scatter(runs_from_frame(runs.drop(columns="C")), _n_star, truth) is None
    sc = optima_scatter(runs_from_frame(runs), _n_star, truth)
    assert sc is not None and sc["n"] == len(BUDGETS) and sc["rms"] < 1e-6  # on the truth
    scatter = np.exp(np.random.default_rng(1).normal(0, 0.01, len(runs)))
    noisy = runs.assign(loss=runs["loss"] * scatter)
    assert optima_scatter(runs_from_frame(noisy), _n_star, truth)["rms"] > 10 * sc["rms"]
    law = SupervisedScalingLaw(form="chinchilla", bootstrap=0).fit(runs)
    assert law.result_.meta["allocation"]["n"] == len(BUDGETS)
    mean = runs_from_frame(pd.concat([runs, runs.assign(loss=runs["loss"] * 1.01)]),
                           replicates="mean")  # fmt: skip
    assert len(mean) == len(runs) and optima_scatter(mean, _n_star, truth)["n"] == len(BUDGETS)


@pytest.mark.parametrize("unit", [1.0, 1 / 8.64e19, 2.0])  # FLOPs, PF-days, a 2x FLOPs count
def test_a_c_column_in_any_unit_gives_the_6nd_tables_scatter(profiles_fit, unit):
    """C only groups the runs: in PF-days (a first version read it as FLOPs and refused the fit:
    'budget 0.00116 FLOPs is too small') or twice 6ND (which it scored as the law being off),
    the scatter is the plain 6ND table's (6ND groups them: the own C is read only where 6ND
    finds no profiles)."""
    t = simulate_isoflops(budgets=BUDGETS, seed=0)[["N", "D", "loss", "C"]]
    # the plain 6ND table's fit is the shared fit of `_profiles()`: the same frame bit for bit
    pd.testing.assert_frame_equal(t.drop(columns="C"), _profiles(), check_exact=True)
    plain = profiles_fit
    law = SupervisedScalingLaw(form="chinchilla", bootstrap=0).fit(t.assign(C=t["C"] * unit))
    want, got = plain.result_.meta["allocation"], law.result_.meta["allocation"]
    assert got == want


def test_a_c_column_beside_d_with_gaps_is_not_refused():
    """C beside D only groups budgets: a blank in it falls back to 6ND, as before."""
    from lmforecast.supervised.runs import runs_from_frame

    t = simulate_isoflops(budgets=BUDGETS, seed=0)[["N", "D", "loss", "C"]].astype({"C": object})
    t.loc[3, "C"] = ""
    out = runs_from_frame(t)
    assert len(out) == len(t) and "budget" not in out.attrs
