"""Every downstream forecast (flp, flpm, osl, salience)
carries a prediction interval from a default fit, calibrated on simulated data with known truth,
clipped to the score range, with a validated --level, and saved fits still round-trip exactly."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lmforecast import examples
from lmforecast.errors import DomainWarning
from lmforecast.flp import FLP, FLPM
from lmforecast.flp.simulate import simulate_flp, simulate_flpm
from lmforecast.osl import ObservationalScalingLaw, OSLResult, load_table_b1
from lmforecast.osl.data import _bundled
from lmforecast.uncertainty.coverage import calibration_curve, summarise_intervals

ROOT = Path(__file__).resolve().parents[1]
FLP_EX = examples.path("flp/runs.csv").parent
SAL_EX = examples.path("salience/texts.jsonl").parent
B1 = str(_bundled("table_b1_base_models.csv"))


# ---- calibration on simulated data with known truth -------------------------------------------
def _osl_table(seed: int, n: int = 100) -> pd.DataFrame:
    """Models with a latent capability c (and a nuisance d) behind six benchmarks; the target
    follows Eq. 6 in c with h = 0.9 plus N(0, 0.03) noise; FLOPs grow with c."""
    rng = np.random.default_rng(seed)
    c, d = rng.uniform(-3, 2, n), rng.normal(0, 1, n)
    t = {
        "Model": [f"m{i}" for i in range(n)],
        "Model Family": [f"f{i % 9}" for i in range(n)],
        "FLOPs (1E21)": 10 ** (c + rng.normal(0, 0.3, n)),
    }
    coefs = [(1.0, 0, 0.3), (0.8, 0.5, -0.4), (1.2, -0.5, 0.2), (0.6, 0.2, 0.5), (1.0, 1.0, -0.2)]
    for j, (a, b, e) in enumerate([*coefs, (0.9, -1.0, 0.1)]):
        t[f"B{j}"] = np.clip(1 / (1 + np.exp(-(a * c + e * d + b))) + rng.normal(0, 0.01, n), 0, 1)
    t["T"] = np.clip(0.1 + 0.9 / (1 + np.exp(0.5 - 1.3 * c)) + rng.normal(0, 0.03, n), 0, 1)
    return pd.DataFrame(t)


@pytest.mark.slow
@pytest.mark.parametrize("holdout", ["random", "cutoff"])
def test_osl_intervals_cover_simulated_held_out_models(holdout):
    """240 held-out forecasts (8 simulated tables x 30): random held-out models (interpolation)
    and the Sec. 4 FLOPs cutoff (the strongest 30%, extrapolation)."""
    inside, conf_inside = [], []
    for seed in range(8):
        tab = _osl_table(seed)
        if holdout == "random":
            held = list(np.random.default_rng(100 + seed).choice(tab["Model"], 30, replace=False))
            est = ObservationalScalingLaw(3, holdout="list", heldout=held, reference_family="")
        else:
            cut = np.quantile(tab["FLOPs (1E21)"], 0.7) * 1e21
            est = ObservationalScalingLaw(3, cutoff_flops=cut, reference_family="")
        res = est.fit(tab, "T").result_
        fc = res.forecasts(0.9)
        inside += [f["interval"][0] <= f["y"] <= f["interval"][1] for f in fc]
        pf = res.predictions_frame()
        test = (pf["split"] == "test").to_numpy()
        lo, hi = res.predict_interval(pf[["x1", "x2", "x3"]].to_numpy()[test], 0.9, "confidence")
        y = pf["y"].to_numpy()[test]
        conf_inside += list((y >= lo) & (y <= hi))
        assert np.all(hi - lo < np.array([f["interval"][1] - f["interval"][0] for f in fc]))
    assert len(inside) >= 200
    assert 0.8 <= np.mean(inside) <= 0.97
    # a confidence interval (parameters only) is not a prediction interval: it misses most
    assert np.mean(conf_inside) < 0.6


@pytest.mark.slow
def test_flp_intervals_cover_simulated_7b_and_13b():
    """204 forecasts: 7B and 13B targets of 34 simulated studies x 3 tasks, default fits."""
    from lmforecast.flp.calibration import simulated_flp_forecasts

    f = simulated_flp_forecasts(range(34), ("ARC", "Hellaswag", "TriviaQA"))
    s = summarise_intervals(f, ("method",), 0.9).iloc[0]
    assert s["n"] >= 200 and 0.8 <= s["coverage"] <= 0.97
    cur = calibration_curve(f).set_index("level")["coverage"]
    assert cur.is_monotonic_increasing and 0.35 <= cur[0.5] <= 0.65


def test_flp_interval_is_prediction_not_confidence():
    s = simulate_flp(tasks=("ARC",), seed=3)
    est = FLP("ARC").fit(s.runs, s.checkpoints)
    C = s.targets["C"].to_numpy()
    lo_p, hi_p = est.predict_interval(C)
    lo_c, hi_c = est.predict_interval(C, kind="confidence")
    assert np.all(hi_c - lo_c < hi_p - lo_p)
    assert np.all((lo_p <= est.predict(C)) & (est.predict(C) <= hi_p))
    # the closed-form bootstrap gives the shared engine's resample optima
    assert len(est.stage2_.bootstrap) == 200 and est.stage2_.ci_level == 0.9
    assert "bootstrap refits per stage" in est.summary()


@pytest.mark.slow
def test_salience_intervals_cover_planted_held_out_models():
    """225 held-out forecasts: planted data (4 families x 40 models, known Eq. 2 truth, score
    noise 0.02), models split at random 40% train / 15% validation / 45% test, 3 seeds."""
    from lmforecast.salience.pipeline import fit_salience
    from lmforecast.salience.simulate import planted_salience_data

    inside = []
    for seed in range(3):
        d = planted_salience_data(n_texts=20, models_per_family=40, score_noise=0.02, seed=seed)
        u = np.random.default_rng(seed).random(len(d.scores))
        sc = d.scores.assign(split=np.where(u < 0.4, "train", np.where(u < 0.55, "validation",
                                                                       "test")))  # fmt: skip
        fit = fit_salience(d.texts, d.records, sc[["model", "split", "score"]],
                           chance=d.chance, seed=seed)  # fmt: skip
        te = fit.table().query("split == 'test'")
        lo, hi = fit.predict_interval(te["capability"].to_numpy(), 0.9)
        assert np.all((0 <= lo) & (hi <= 100))  # points, as the table's scores
        inside += list((te["score"] >= lo) & (te["score"] <= hi))
    assert len(inside) >= 200 and 0.8 <= np.mean(inside) <= 0.97


# ---- clipping to the score range --------------------------------------------------------------
def test_flp_clips_to_score_range_and_warns():
    s = simulate_flp(tasks=("ARC",), seed=0)
    est = FLP("ARC").fit(s.runs, s.checkpoints)
    assert est.predict([1e300], clip=False)[0] > 100
    with pytest.warns(DomainWarning, match="outside the score range"):
        p = est.predict([1e300])
    assert p[0] == 100.0
    lo, hi = est.predict_interval([1e300])
    # every draw is at the 100 bound: a zero-width [100, 100] would claim certainty, so the
    # interval is undefined (NaN; docs/flp.md "Intervals at the bounds")
    assert (np.isnan(lo[0]) and np.isnan(hi[0])) or 0 <= lo[0] < hi[0] <= 100
    with pytest.warns(DomainWarning, match="extrapolates"):
        est.warn_if_extrapolating(1e300)


def test_flpm_default_fit_has_clipped_intervals():
    s = simulate_flpm(tasks=("HumanEval",), seed=0)
    est = FLPM("HumanEval", steps=400).fit(s.runs, s.checkpoints)
    assert est.bootstrap == 50
    F = s.targets[["C_general", "C_code"]].to_numpy()
    lo, hi = est.predict_interval(F)
    assert np.all((0 <= lo) & (lo <= hi) & (hi <= 100))
    huge = F[-1:] * 1e12
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lo, hi = est.predict_interval(huge)
        p = est.predict(huge)
    assert 0 <= p[0] <= 100 and 0 <= lo[0] <= hi[0] <= 100


def test_osl_interval_clipped_to_unit_range_and_parameter_intervals():
    res = ObservationalScalingLaw().fit(load_table_b1(), "MMLU").result_
    lo, hi = res.predict_interval(np.array([[50.0, 0, 0], [-50.0, 0, 0]]))
    assert np.all((0 <= lo) & (lo <= hi) & (hi <= 100))  # points
    ci = res.param_intervals(0.9)
    assert set(ci) == {"h", "alpha", "beta1", "beta2", "beta3"}
    for name, v in res.fit.params.items():
        assert ci[name][0] <= v <= ci[name][1]
    assert 0.8 <= ci["h"][0] and ci["h"][1] <= 1.0
    wide = res.param_intervals(0.99)
    assert wide["beta1"][1] - wide["beta1"][0] > ci["beta1"][1] - ci["beta1"][0]
    assert "90% lower" in res.summary() and "App. C.8" in res.summary()


# ---- CLI: --json carries "interval", --level is validated -------------------------------------
@pytest.fixture(scope="module")
def fits(tmp_path_factory):
    from lmforecast.cli.main import main

    d = tmp_path_factory.mktemp("fits")
    flp, flpm, sal = d / "flp.json", d / "flpm.json", d / "sal.json"
    common = ["--json", "--quiet"]
    assert (
        main(
            [
                "flp",
                "fit",
                "--runs",
                str(FLP_EX / "runs.csv"),
                "--checkpoints",
                str(FLP_EX / "checkpoints.csv"),
                "--task",
                "ARC",
                "--out",
                str(flp),
                *common,
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "flpm",
                "fit",
                "--runs",
                str(FLP_EX / "mixture_runs.csv"),
                "--checkpoints",
                str(FLP_EX / "mixture_checkpoints.csv"),
                "--task",
                "HumanEval",
                "--steps",
                "400",
                "--out",
                str(flpm),
                *common,
            ]
        )
        == 0
    )
    assert main(["salience", "fit", "--texts", str(SAL_EX / "texts.jsonl"), "--losses",
                 str(SAL_EX / "losses.jsonl"), "--scores", str(SAL_EX / "scores.csv"), "--task",
                 "reasoning", "--chance", "0", "--steps", "60", "--out", str(sal),
                 *common]) == 0  # fmt: skip
    return {"flp": flp, "flpm": flpm, "salience": sal}


def _verbs(fits, out):
    return {
        "flp": ["flp", "predict", "--fit", fits["flp"], "--flops", "8.4e22"],
        "flpm": ["flpm", "predict", "--fit", fits["flpm"], "--flops-per-source", "6e20,2e20"],
        "osl": ["osl", "fit", "--benchmarks", B1, "--target", "MMLU", "--out", out],
        "salience": ["salience", "predict", "--fit", fits["salience"], "--losses",
                     SAL_EX / "new_losses.jsonl", "--out", out],
    }  # fmt: skip


def _intervals(verb, d):
    if verb in ("flp", "flpm"):
        return [(d["performance"], d["interval"])]
    if verb == "osl":
        return [(f["y_pred"], f["interval"]) for f in d["forecasts"]]
    return [(p["predicted"], p["interval"]) for p in d["predictions"]]


@pytest.mark.parametrize("verb", ["flp", "flpm", "osl", "salience"])
def test_cli_json_interval_per_forecast(cli, fits, tmp_path, verb):
    argv = _verbs(fits, tmp_path / "out")[verb]
    hi_range = 100.0  # every verb forecasts points (osl and salience included)
    widths = {}
    for level in ("0.9", "0.5"):
        code, out, err = cli(*argv, "--json", "--level", level)
        assert code == 0, err
        pairs = _intervals(verb, json.loads(out))
        assert pairs
        for pred, (lo, hi) in pairs:
            assert 0.0 <= lo <= hi <= hi_range
            if verb != "osl":  # OSL's held-out forecasts need not fall inside (they are scored)
                assert lo <= pred <= hi
        widths[level] = np.median([hi - lo for _, (lo, hi) in pairs])
    assert widths["0.5"] < widths["0.9"]


@pytest.mark.parametrize("verb", ["flp", "flpm", "osl", "salience"])
@pytest.mark.parametrize("level", ["0", "2", "nan"])
def test_cli_bad_level_exits_2_with_nothing_written(cli, fits, tmp_path, verb, level):
    out = tmp_path / "out"
    code, stdout, err = cli(*_verbs(fits, out)[verb], "--json", "--level", level)
    assert code == 2 and stdout == ""
    assert len(err.strip().splitlines()) == 1 and "--level" in err
    assert not out.exists()


def test_cli_flp_predict_clips_huge_compute(cli, fits):
    code, out, err = cli("flp", "predict", "--fit", fits["flp"], "--flops", "1e300", "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["performance"] == 100.0
    assert d["interval"] is None and d["interval_note"]  # never a zero-width [100, 100]
    assert "outside the score range" in err and "extrapolates" in err


def test_fit_help_says_intervals_come_from_bootstrap(cli):
    code, out, _ = cli("flp", "fit", "--help")
    text = " ".join(out.split())
    assert code == 0 and "prediction intervals of `flp predict` (default 200" in text


# ---- saved fits still round-trip bit-for-bit --------------------------------------------------
def test_saved_fits_round_trip(fits, tmp_path):
    from lmforecast.salience.result import SalienceFit

    for path, cls in ((fits["flp"], FLP), (fits["flpm"], FLPM), (fits["salience"], SalienceFit)):
        text = Path(path).read_text()
        assert cls.from_json(text).to_json() == text
    res = ObservationalScalingLaw().fit(load_table_b1(), "ARC-C").result_
    back = OSLResult.from_json(res.to_json())
    assert back.to_json() == res.to_json() and back.covariance == res.covariance
    X = back.predictions_frame()[["x1", "x2", "x3"]].to_numpy()
    assert np.array_equal(back.predict_interval(X)[0], res.predict_interval(X)[0])
    # a fit saved before intervals existed still loads (and says it has none)
    d = json.loads(res.to_json())
    for k in ("covariance", "sigma", "dof", "extrapolation_sigma", "level"):
        d.pop(k)
    old = OSLResult.from_dict(d)
    assert not old.has_intervals and "forecasts" not in old.contract()


# ---- report section ---------------------------------------------------------------------------
@pytest.mark.slow
def test_trust_downstream_report_section():
    from lmforecast.report.builder import SECTION_MODULES, ReportContext
    from lmforecast.report.sections.trust_downstream import build_section

    assert "lmforecast.report.sections.trust_downstream" in SECTION_MODULES
    sec = build_section(ReportContext(quick=True))
    n = sec.numbers
    osl = {r["method"]: r for r in n["osl_pooled"]}
    assert set(osl) == {"OSL (3 PCs)", "FLOPs sigmoid", "persistence"}
    assert osl["OSL (3 PCs)"]["n"] == 206  # Table B.1: 7 targets, models above 8.4e22 FLOPs
    # the PC law's intervals are far better calibrated than persistence's on real models
    assert osl["OSL (3 PCs)"]["coverage"] > 0.8 > 0.6 > osl["persistence"]["coverage"]
    flp = {(r["study"], r["method"]): r for r in n["flp"]}
    assert {("simulated", "FLP"), ("zoo", "FLP")} <= set(flp)
    assert flp[("simulated", "FLP")]["n"] == 18 and flp[("zoo", "FLP")]["n"] == 21
    assert any("<img" in b for b in sec.blocks)


def test_calibration_figure_draws_one_panel_per_table():
    import matplotlib.pyplot as plt

    from lmforecast.plots.intervals import calibration_figure

    cur = pd.DataFrame({"method": "m", "level": [0.5, 0.9], "n": 10, "coverage": [0.4, 0.8]})
    fig = calibration_figure({"a": cur, "b": cur})
    assert len(fig.axes) == 2 and len(fig.axes[0].lines) == 2
    plt.close(fig)


def test_flp_warns_when_interval_reaches_non_emergent_regime():
    s = simulate_flp(tasks=("ARC",), seed=0)
    est = FLP("ARC").fit(s.runs, s.checkpoints)
    with pytest.warns(DomainWarning, match="interval reaches below random"):
        est.warn_if_not_emerged(35.0, lower=29.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est.warn_if_not_emerged(35.0, lower=31.0)
