"""The 1-D compute law as a supervised form (`compute`): the automatic form's fallback for 4 runs
(too few for a law in N and D), explicit `--form compute`, its saved fit, and its refusals."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from lmforecast.errors import InputError
from lmforecast.supervised import SupervisedScalingLaw

E, A, ALPHA = 1.8, 2.0e3, 0.16  # L = E + A C^-a, C = 6ND


def _ladder(n=4, seed=0, noise=0.0):
    """One run per size at 20 tokens per parameter (a small ladder), then two larger models."""
    N = np.array([7e7, 1.5e8, 4e8, 1e9, 3e9, 7e9])[: n + 2]
    D = 20 * N
    eps = np.random.default_rng(seed).normal(0, noise, N.size)
    L = (E + A * (6 * N * D) ** -ALPHA) * np.exp(eps)
    return pd.DataFrame({"N": N, "D": D, "loss": L})


def test_four_runs_fall_back_to_the_compute_law_and_recover_it():
    df = _ladder()
    fit, new = df.iloc[:4], df.iloc[4:]
    with pytest.warns(UserWarning, match="compute \\(simplest\\): 4 runs"):
        m = SupervisedScalingLaw().fit(N=fit["N"], D=fit["D"], loss=fit["loss"])
    assert m.result_.meta["form"] == "compute" and "stack" not in m.result_.meta
    assert m.params_["a"] == pytest.approx(ALPHA, rel=1e-3)
    assert m.params_["E"] == pytest.approx(E, rel=1e-3)
    pred = m.predict(new["N"], new["D"])
    np.testing.assert_allclose(pred, new["loss"], rtol=1e-4)
    lo, hi = m.predict_interval(new["N"], new["D"])
    assert np.all(lo < new["loss"]) and np.all(new["loss"] < hi) and np.all(np.isfinite(hi))
    assert hi[0] / lo[0] < hi[1] / lo[1]  # the prior's k r: wider 49x beyond than 9x beyond
    assert "Form: compute (simplest)" in m.summary()
    with pytest.raises(InputError, match="no compute-optimal N/D split"):
        m.allocate(1e21)


def test_three_runs_are_refused_naming_the_rows():
    df = _ladder()
    with pytest.raises(
        InputError, match="only 3 distinct runs \\(rows N=.*\\): a forecast needs at least 4"
    ) as e:
        SupervisedScalingLaw().fit(N=df["N"][:3], D=df["D"][:3], loss=df["loss"][:3])
    assert str(e.value).count("N=") == 3 and f"N={df['N'][0]:.4g}" in str(e.value)


def test_explicit_compute_form_is_the_compute_law_shown_beside_every_fit():
    rng = np.random.default_rng(1)
    N = 10 ** rng.uniform(7.5, 9.5, 40)
    D = N * 10 ** rng.uniform(0.5, 2.5, 40)
    L = (E + A * (6 * N * D) ** -ALPHA) * np.exp(rng.normal(0, 0.005, 40))
    m = SupervisedScalingLaw("compute", intervals=False).fit(N=N, D=D, loss=L)
    cl = m.result_.meta["compute_law"]
    for k in ("E", "A", "a"):
        assert m.params_[k] == pytest.approx(cl[k], rel=1e-5)


def test_saved_compute_fit_round_trips_and_the_cli_refuses_allocate(tmp_path, cli):
    df = _ladder(noise=0.002)
    runs = tmp_path / "runs.csv"
    df.iloc[:4].to_csv(runs, index=False)
    out = tmp_path / "fit.json"
    # the saved form and its round trip, not the interval: 6 resamples suffice
    code, _, err = cli("supervised", "fit", "--runs", runs, "--bootstrap", "6", "--out", out,
                       "--quiet")  # fmt: skip
    assert code == 0, err
    m = SupervisedScalingLaw.load(out)
    assert m.result_.meta["form"] == "compute"
    m.save(tmp_path / "again.json")
    assert (tmp_path / "again.json").read_text() == out.read_text()
    code, stdout, err = cli("supervised", "predict", "--fit", out, "--params", "7e9",
                            "--tokens", "1.4e11", "--json")  # fmt: skip
    assert code == 0, err
    got = json.loads(stdout)
    assert got["loss"] == pytest.approx(m.predict(7e9, 1.4e11), rel=1e-12)
    code, stdout, err = cli("supervised", "allocate", "--fit", out, "--flops", "1e22")
    assert code == 2 and "no compute-optimal N/D split" in err and len(err.splitlines()) == 1


@pytest.mark.slow
def test_on_real_constant_ratio_ladders_chinchilla_beats_the_compute_law(shared_dir):
    """benchmarks/trust_constant_ratio.py at 20 tokens per parameter: the evidence for keeping
    a law in N and D on such ladders (docs/trust.md)."""
    from bench_scripts import load

    mod = load("trust_constant_ratio")
    t = mod.run(shared_dir / "data", ratios=(1.3,), forms=("chinchilla", "compute"), holds=(1,))
    assert len(t) >= 12 and set(t["suite"]) >= {"porian", "gemstones"}
    assert t["chinchilla"].mean() < 0.8 * t["compute"].mean()


def test_compute_law_beside_a_fit_polishes_four_starts_and_reaches_the_stratified_optimum():
    # forms.compute_law polishes only the 4 best grid starts (stratify=False); the engine's
    # stratified choice (8 best + the best at every grid value) must not find a lower optimum
    from lmforecast.fitting import fit_law, huber
    from lmforecast.laws.compute_power import ComputeND
    from lmforecast.supervised import forms as fm

    df = _ladder(n=4, noise=0.01).iloc[:6]
    rng = np.random.default_rng(3)
    df = pd.concat([df, df.assign(D=df.D * 4, loss=df.loss * np.exp(rng.normal(-0.03, 0.01, 6)))])
    X = {"N": df.N.to_numpy(float), "D": df.D.to_numpy(float)}
    y = df.loss.to_numpy(float)
    full = fit_law(ComputeND(), X, y, loss=huber(1e-3), n_polish=8)
    quick = fit_law(ComputeND(), X, y, loss=huber(1e-3), n_polish=4, stratify=False)
    assert quick.n_polished == 4 < full.n_polished
    assert quick.objective <= full.objective * (1 + 1e-9)
    cl = fm.compute_law(df)
    np.testing.assert_allclose(cl["theta"], quick.theta, rtol=0, atol=0)


def test_a_ladder_at_one_token_count_fits_the_compute_law_and_widens_off_its_d():
    # final checkpoints of a ladder all trained on the same tokens: no D term can be fitted
    # (a 19-size Gemstones ladder was called chinchilla-gamma with E and A on their bounds)
    rng = np.random.default_rng(0)
    N = np.array([7e7, 1.6e8, 4.1e8, 1e9, 1.4e9, 2.8e9, 6.9e9])
    df = pd.DataFrame({"N": N, "D": 3e11, "loss": 1.8 + 400 / N**0.33 + rng.normal(0, 0.005, 7)})
    with pytest.warns(UserWarning, match="one token count"):
        m = SupervisedScalingLaw(bootstrap=5).fit(df.iloc[:-1])
    assert m.form_ == "compute"
    truth = df["loss"].iloc[-1]
    lo, hi = m.predict_interval(6.9e9, 3e11)
    assert lo < truth < hi
    # 10x fewer tokens than every fitted run is 10x outside the runs: a wider interval
    lo10, hi10 = m.predict_interval(6.9e9, 3e10)
    assert np.log(hi10 / lo10) > 1.5 * np.log(hi / lo)


def test_distance_counts_forecasts_below_the_fitted_runs():
    from lmforecast.supervised.calibration import fitted_range
    from lmforecast.supervised.intervals import distance

    cal = fitted_range(pd.DataFrame({"N": [1e8, 1e9], "D": [2e9, 2e10]}))
    r = distance([6 * 1e8 * 2e9, 6 * 1e7 * 2e9, 6 * 1e9 * 2e8], cal,
                 N=[1e8, 1e7, 1e9], D=[2e9, 2e9, 2e8])  # fmt: skip
    assert r[0] == 0 and r == pytest.approx([0, np.log(10), np.log(10)])
    old = {k: v for k, v in cal.items() if not k.startswith("min_")}  # a fit saved before
    assert distance([6 * 1e7 * 2e9], old, N=[1e7], D=[2e9])[0] == 0
