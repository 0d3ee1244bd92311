"""FLP / FLP-M estimators end to end on studies simulated from known laws (flp.simulate)."""

import json
import warnings

import numpy as np
import pytest

from lmforecast.errors import DomainWarning, InputError
from lmforecast.flp import FLP, relative_error
from lmforecast.flp.mixture import FLPM
from lmforecast.flp.mixture_scan import ratio_grid
from lmforecast.flp.network import TwoLayerNetwork
from lmforecast.flp.simulate import domain_losses, flpm_score, simulate_flp, simulate_flpm

TASKS = ("ARC", "Hellaswag", "TriviaQA")


@pytest.fixture(scope="module")
def study():
    return simulate_flp(tasks=TASKS, seed=0)


@pytest.fixture(scope="module")
def mix():
    return simulate_flpm(tasks=("ARC", "RACE", "HumanEval"), seed=0)


@pytest.fixture(scope="module")
def flp_fits(study):
    return {t: FLP(t, bootstrap=100).fit(study.runs, study.checkpoints) for t in TASKS}


def test_stage1_recovers_simulated_loss_law(flp_fits, study):
    p = flp_fits["ARC"].stage1_.params
    assert p["alpha"] == pytest.approx(study.truth["alpha_N"], rel=0.03)


def test_stage2_recovers_post_emergence_slope(flp_fits, study):
    for t in ("ARC", "Hellaswag"):
        w1 = flp_fits[t].stage2_.params["w1"]
        assert w1 == pytest.approx(study.truth["tasks"][t]["w1"], rel=0.15), t


def test_flp_within_paper_bands_and_beats_fp(flp_fits, study):
    """Fig. 3: within 5% at 7B (one step beyond 3B) and 10% at 13B; FP is worse (Fig. 2)."""
    C = study.targets["C"].to_numpy()
    err_flp, err_fp = [], []
    for t, est in flp_fits.items():
        actual = study.targets[t].to_numpy()
        e = relative_error(est.predict(C), actual)
        err_flp.append(e)
        fp = FLP(t, method="fp", bootstrap=0).fit(study.runs, study.checkpoints)
        err_fp.append(relative_error(fp.predict(C), actual))
        assert e[1] < 0.10, t
        if t != "TriviaQA":  # fewest emerged points (12), like the paper's hardest case
            assert e[0] < 0.05, t
    assert np.mean(err_flp) < 0.5 * np.mean(err_fp)


def test_forecast_interval_carries_stage1_uncertainty(flp_fits, study):
    est = flp_fits["Hellaswag"]
    C = study.targets["C"].to_numpy()
    lo, hi = est.predict_interval(C, level=0.9)
    P = est.predict(C)
    assert np.all(lo < P) and np.all(P < hi)
    assert np.all((lo <= study.targets["Hellaswag"]) & (study.targets["Hellaswag"] <= hi))
    # parameter uncertainty grows with extrapolation distance, and the stage-1 spread matters
    frozen = FLP.from_dict(est.to_dict())
    frozen.stage1_.bootstrap = [frozen.stage1_.theta] * len(frozen.stage1_.bootstrap)
    lo2, hi2 = frozen.predict_interval(C, level=0.9, kind="confidence")
    lo3, hi3 = est.predict_interval(C, level=0.9, kind="confidence")
    assert np.all((hi3 - lo3) > (hi2 - lo2))
    assert (hi3 - lo3)[1] > (hi3 - lo3)[0]


def test_flp_json_round_trip_bit_for_bit(flp_fits):
    est = flp_fits["ARC"]
    text = est.to_json()
    back = FLP.from_json(text)
    assert back.to_json() == text
    C = np.array([5e22, 1e23])
    assert np.array_equal(back.predict(C), est.predict(C))
    assert np.array_equal(back.predict_interval(C)[0], est.predict_interval(C)[0])
    assert "Stage 2" in est.summary() and "kept" in est.summary()


@pytest.mark.parametrize("method", ["gpt4", "llama3"])
def test_other_baselines_fit_and_round_trip(study, method):
    est = FLP("ARC", method=method, bootstrap=20).fit(study.runs, study.checkpoints)
    P = est.predict([5.09e22])
    assert 25 < P[0] < 100
    assert FLP.from_json(est.to_json()).to_json() == est.to_json()


def test_no_emerged_checkpoint_is_an_error_with_counts(study):
    with pytest.raises(InputError, match=r"0 checkpoint\(s\) usable of 360 .* not improve"):
        FLP("TriviaQA", threshold=90).fit(study.runs, study.checkpoints)


def test_fraction_scores_give_the_points_fit(study):
    """A checkpoint table in fractions is converted at the door: the same fit as in points."""
    ck = study.checkpoints.assign(ARC=study.checkpoints["ARC"] / 100)
    a = FLP("ARC", bootstrap=40).fit(study.runs, study.checkpoints)
    b = FLP("ARC", bootstrap=40).fit(study.runs, ck)
    C = [1e21, 1e22, 1e23]
    np.testing.assert_allclose(b.predict(C), a.predict(C), rtol=1e-9)
    for x, y in zip(b.predict_interval(C), a.predict_interval(C)):
        np.testing.assert_allclose(x, y, rtol=1e-9)
    np.testing.assert_allclose(b.stage2_.theta, a.stage2_.theta, rtol=1e-9)
    assert b.filter_.counts() == a.filter_.counts()


# ---- network -----------------------------------------------------------------------------


def test_network_is_deterministic_and_learns_a_relu_map():
    rng = np.random.default_rng(0)
    X = rng.normal(2.5, 0.2, (300, 5))
    v = np.array([0.4, 0.3, 0.1, 0.1, 0.1])
    f = lambda X: 40 - 30 * np.maximum(0.0, X @ v - 2.4)  # noqa: E731
    y = f(X) + rng.normal(0, 0.3, 300)
    a = TwoLayerNetwork(seed=3).fit(X, y)
    b = TwoLayerNetwork(seed=3).fit(X, y)
    assert all(np.array_equal(p, q) for p, q in zip(a.params_, b.params_))
    Xt = rng.normal(2.5, 0.2, (200, 5))
    assert np.sqrt(np.mean((a.predict(Xt) - f(Xt)) ** 2)) < 0.6  # vs target std ~ 2.6
    c = TwoLayerNetwork.from_dict(json.loads(json.dumps(a.to_dict())))
    assert np.array_equal(c.predict(Xt), a.predict(Xt))


def test_network_matches_naive_reference_loop():
    """The vectorised trainer equals a per-sample loop (same init; standardised data, on which
    the trainer's own standardisation is the identity)."""
    from lmforecast.flp.network import naive_train

    rng = np.random.default_rng(1)
    X = rng.normal(0, 1, (20, 3))
    y = X @ np.array([1.0, -2.0, 0.5]) + 0.1
    Z = (X - X.mean(0)) / X.std(0)
    t = (y - y.mean()) / y.std()
    net = TwoLayerNetwork(steps=50, n_init=1, seed=4).fit(Z, t)
    W1, c1, W2, c2 = naive_train(Z, t, steps=50, seed=4)
    assert np.allclose(net.params_[0], W1, atol=1e-9)
    assert np.allclose(net.params_[1][0], c1, atol=1e-9)
    assert np.allclose(net.params_[2][:, 0], W2, atol=1e-9)
    assert net.params_[3][0, 0] == pytest.approx(c2, abs=1e-9)


# ---- FLP-M ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def flpm_fits(mix):
    return {t: FLPM(t).fit(mix.runs, mix.checkpoints) for t in ("ARC", "RACE", "HumanEval")}


@pytest.mark.slow
def test_flpm_beats_flp_on_mixtures(mix, flpm_fits):
    """Fig. 5: on mixtures FLP-M (M4 + network) beats FLP (average loss + linear)."""
    F = mix.targets[["C_general", "C_code"]].to_numpy()
    means = {}
    for t, est in flpm_fits.items():
        actual = mix.targets[t].to_numpy()
        e_m = relative_error(est.predict(F), actual)
        e_f = relative_error(
            FLP(t, bootstrap=0).fit(mix.runs, mix.checkpoints).predict(F.sum(1)), actual
        )
        means[t] = (e_m.mean(), e_f.mean())
        assert e_m.max() < 0.10, t
    assert means["HumanEval"][0] < 0.5 * means["HumanEval"][1]
    assert means["RACE"][0] < means["RACE"][1]
    assert np.mean([m for m, _ in means.values()]) < np.mean([f for _, f in means.values()])


def test_m4_domain_losses_within_paper_band(mix, flpm_fits):
    """Fig. 7: M4 predicts held-out domain losses within 2.5% relative error."""
    est = flpm_fits["ARC"]
    F = mix.targets[["C_general", "C_code"]].to_numpy()
    pred = est.predict_losses(F).to_numpy()
    actual = mix.targets[[f"loss_{d}" for d in est.domains_]].to_numpy()
    assert np.max(np.abs(pred / actual - 1)) < 0.025


@pytest.mark.slow
def test_mixture_optimum_close_to_truth(flpm_fits):
    """Sec. 6.1: at 3B compute the chosen ratio's true score is near the true optimum, and
    on ARC (interior optimum) it beats a code-free mixture."""
    C = 9.63212e21
    for t, est in flpm_fits.items():
        mc = est.optimize_mixture(C)
        assert mc.ratios.shape == (51, 2) and np.allclose(mc.ratios[:, 1], np.arange(51) / 100)
        truth = flpm_score(t, domain_losses(mc.ratios * C))
        assert truth[mc.best_index] > truth.max() - 0.6, t
    mc = flpm_fits["ARC"].optimize_mixture(C)
    truth = flpm_score("ARC", domain_losses(mc.ratios * C))
    assert 0.1 < mc.ratios[truth.argmax(), 1] < 0.5  # the simulated ARC optimum is interior
    assert truth[mc.best_index] > truth[0] + 1.0  # and the pick beats no code by > 1 point


@pytest.mark.slow
def test_mixture_intervals_bracket_the_pick_and_scans_outside_the_sampled_shares_warn(
    mix, flpm_fits
):
    C = 9.63212e21
    est = flpm_fits["ARC"]
    mc = est.optimize_mixture(C)
    iv = est.mixture_intervals(mc, 0.9)
    lo, hi = iv["performance"]
    assert lo < mc.performance[mc.best_index] < hi
    rlo, rhi = iv["best_ratio"]
    assert rlo <= mc.best_ratio <= rhi and 0 <= rlo and rhi <= 0.5
    narrow = est.mixture_intervals(mc, 0.5)["best_ratio"]
    assert rlo <= narrow[0] <= narrow[1] <= rhi  # nested: a percentile interval of the picks
    F = mix.runs[["C_general", "C_code"]].to_numpy()
    top = float((F[:, 1] / F.sum(1)).max())
    with warnings.catch_warnings():
        warnings.simplefilter("error", DomainWarning)
        est.optimize_mixture(C, 0.0, top, 0.01)  # inside the sampled shares: silent
    with pytest.warns(DomainWarning, match="mixture space"):
        est.optimize_mixture(C, 0.0, 1.0, 0.05)


def test_flpm_json_round_trip_and_alternative_mappers(mix, flpm_fits):
    est = flpm_fits["HumanEval"]
    text = est.to_json()
    back = FLPM.from_json(text)
    assert back.to_json() == text
    F = np.array([[6.7e21, 2.9e21]])
    assert np.array_equal(back.predict(F), est.predict(F))
    for mapper in ("domain-linear", "average"):
        alt = FLPM("HumanEval", mapper=mapper).fit(mix.runs, mix.checkpoints)
        assert FLPM.from_json(alt.to_json()).predict(F) == pytest.approx(alt.predict(F), abs=0)
    assert "stage 2: network" in est.summary()


def test_a_saved_flp_fit_without_its_largest_compute_is_refused(flp_fits):
    d = json.loads(flp_fits["ARC"].to_json())
    del d["stage2"]["meta"]["max_flops"]
    with pytest.raises(InputError, match="field 'stage2.meta.max_flops': is missing") as e:
        FLP.from_json(json.dumps(d))
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("field", ["max_flops", "min_flops", "share_range"])
def test_a_saved_flpm_fit_without_a_field_every_fit_writes_is_refused(flpm_fits, field):
    d = json.loads(flpm_fits["HumanEval"].to_json())
    domain = next(iter(d["stage1"]))
    del d["stage1"][domain]["meta"][field]
    with pytest.raises(InputError, match=f"field 'stage1.{domain}.meta.{field}': is missing") as e:
        FLPM.from_json(json.dumps(d))
    assert "\n" not in str(e.value)


def test_flpm_three_sources_and_simplex_grid():
    s = simulate_flpm(tasks=("HumanEval",), sources=("general", "code", "math"), seed=1)
    est = FLPM("HumanEval", steps=300).fit(s.runs, s.checkpoints)
    assert est.sources_ == ("general", "code", "math")
    with pytest.warns(DomainWarning, match="code 0-0.5 .fitted 0-0.25"):  # sampled up to 0.25
        mc = est.optimize_mixture(1e21, 0.0, 0.5, 0.1)
    assert np.allclose(mc.ratios.sum(1), 1) and mc.ratios.shape[1] == 3
    assert len(mc.best_ratio) == 3
    R = ratio_grid(3, 0, 0.5, 0.25)
    assert len(R) == 9  # every pair of {0, .25, .5} for the two non-first sources: sums <= 1
    assert np.allclose(R[:, 0], 1 - R[:, 1:].sum(1)) and R.min() >= 0
    assert len(ratio_grid(3, 0, 1, 0.5)) == 6  # (0,0) (0,.5) (0,1) (.5,0) (.5,.5) (1,0)


def test_flpm_bootstrap_interval(mix):
    est = FLPM("RACE", mapper="domain-linear", bootstrap=60).fit(mix.runs, mix.checkpoints)
    F = mix.targets[["C_general", "C_code"]].to_numpy()
    lo, hi = est.predict_interval(F, level=0.9)
    P = est.predict(F)
    assert np.all(lo < P) and np.all(P < hi)
    clo, chi = est.predict_interval(F, level=0.9, kind="confidence")
    assert np.all(chi - clo < hi - lo)
    back = FLPM.from_json(est.to_json())
    assert back.to_json() == est.to_json()
    assert np.array_equal(back.predict_interval(F)[0], lo)
    net = FLPM("RACE", bootstrap=20, steps=300).fit(mix.runs, mix.checkpoints)
    lo, hi = net.predict_interval(F)
    assert np.all(lo < hi) and net.network_.boot_params_[0].shape[0] >= 15


def test_fp_fits_sampling_points_better_but_extrapolates_worse(study):
    """Sec. 3.4: FP fits the emerged sampling points more closely than chained FLP (x = FLOPs
    spent so far), yet FLP forecasts the targets better."""
    ck = study.checkpoints
    C = study.targets["C"].to_numpy()
    wins = 0
    for t in ("ARC", "Hellaswag"):
        flp = FLP(t, bootstrap=0).fit(study.runs, ck)
        fp = FLP(t, method="fp", bootstrap=0).fit(study.runs, ck)
        kept = flp.filter_.kept
        x, y = ck["C"].to_numpy()[kept], ck[t].to_numpy()[kept]
        in_fp = np.sqrt(np.mean((fp.predict(x) - y) ** 2))
        in_flp = np.sqrt(np.mean((flp.predict(x) - y) ** 2))
        out_fp = relative_error(fp.predict(C), study.targets[t]).mean()
        out_flp = relative_error(flp.predict(C), study.targets[t]).mean()
        wins += (in_fp < in_flp) and (out_flp < out_fp)
    assert wins == 2
