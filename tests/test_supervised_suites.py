"""Real-suite readers (via the shared_dir fixture), leave-one-suite-out bookkeeping and
the bundled prior's provenance."""

import numpy as np
import pandas as pd
import pytest

from lmforecast.data.suites import datablations_runs, gemstones_runs, porian_runs
from lmforecast.supervised import calibration as cb
from lmforecast.supervised.trust_table import load_summary


def test_readers_return_runs_tables(shared_dir):
    s = shared_dir / "data" / "suites"
    db = datablations_runs(s / "datablations")["c4"]
    assert (db["D"] <= db["U"] * (1 + 1e-9)).all()  # single-epoch rows only
    rep = db[(db["N"] == 2.81e9) & (db["D"] == 5.5e10)]
    assert len(rep) == 1 and int(rep["n_replicates"].iloc[0]) == 5
    raw = pd.read_csv(s / "datablations" / "runs.csv")
    raw = raw[(raw["N"] == 2.81e9) & (raw["D"] == 5.5e10) & (raw["D"] <= raw["U"])]
    assert rep["loss"].iloc[0] == pytest.approx(raw["loss"].mean())
    assert not db.duplicated(["N", "D"]).any()
    gm = gemstones_runs(s / "gemstones")["fineweb-edu"]
    assert gm["model"].nunique() == 22 and (gm.groupby("model")["step"].max() == 83475).all()
    assert np.allclose(gm["C"], 6.0 * gm["N"].astype(float) * gm["D"].astype(float))
    pr = porian_runs(s / "porian")
    assert len(pr) == 15 and all(not t.duplicated(["N", "D"]).any() for t in pr.values())


def _fake(suite, err, n=20, seed=0):
    rng = np.random.default_rng(seed)
    truth = np.full(n, 3.0)
    return pd.DataFrame({
        "suite": suite, "sub": "a", "split": "size-1", "method": "default",
        "truth": truth, "forecast": truth * np.exp(rng.normal(0, err, n)),
        "lower": np.nan, "upper": np.nan, "r": np.full(n, 1.0), "noise": 0.005, "s_boot": 0.0,
        "N": 1e9, "D": 2e10, "n_train": 10,
    })  # fmt: skip


def test_leave_one_suite_out_never_sees_the_held_out_suite():
    f = pd.concat([_fake("a", 0.2), _fake("b", 0.01, seed=1), _fake("c", 0.012, seed=2)])
    table, pooled, k_all = cb.loso_table(f)
    # a's k comes from b and c only: far too small for a's 20% errors
    assert pooled["k_loso"]["a"] == pytest.approx(cb.calibrate_k(f[f["suite"] != "a"]))
    cov = table.set_index("suite")["coverage"]
    assert cov["a"] < 0.3 and cov["b"] > 0.6
    # the all-suite k (the shipped prior) covers 90% with each suite weighted equally
    t = cb.rescale(f, k_all)
    inside = (t["lower"] <= t["truth"]) & (t["truth"] <= t["upper"])
    assert np.sum(cb.suite_weights(t) * inside) / np.sum(cb.suite_weights(t)) >= 0.9 - 1e-9


def test_bundled_prior_and_summary_carry_provenance():
    prior = cb.load_prior()
    assert prior["k"]["default"] > 0 and prior["provenance"]["script"].startswith("benchmarks/")
    assert set(prior["provenance"]["suites"]) == {"pythia", "datablations", "gemstones", "porian",
                                                  "zoo"}  # fmt: skip
    summ = load_summary()
    ks = summ["pooled"]["k_loso"]
    # the prior is chosen on all suites; each LOSO k left one out, so they bracket it
    for fam in ("default", "stack"):
        loso = [v[fam] for v in ks.values()]
        assert min(loso) <= prior["k"][fam] <= max(loso) * 1.5
    assert {v["suite"] for v in summ["verdicts"]} == set(ks)
