"""Edges of the supervised and data-constrained laws; each test fails on code where:

1. the data-constrained law lowers the loss for a pool U > D (nan at U = 1e12) or takes N <= 0;
2. the besiroglu2024 preset's interval falls below its own floor E;
3. `--no-intervals` drops `--bootstrap` / `--calibration` in silence;
4. hand-edited stack weights and compute laws in a saved fit are read;
5. `--n-cutoffs`, `--no-stack`, `--u-col` are ignored where they do nothing;
6. `data-constrained epochs` extrapolates 1000x beyond the fitted runs without a word;
7. a preset's kind="confidence" interval raises a raw ValueError about bootstrapping.
"""

from __future__ import annotations

import json
import math
import re
import warnings

import numpy as np
import pandas as pd
import pytest

from lmforecast.dataconstrained import DataConstrainedLaw
from lmforecast.errors import InputError
from lmforecast.examples import path
from lmforecast.laws import get_law
from lmforecast.supervised import SupervisedScalingLaw
from lmforecast.supervised.reach import ReachWarning

DC_RUNS = path("dataconstrained/runs.csv")
SUP_RUNS = path("supervised/runs.csv")


@pytest.fixture(scope="module")
def dc():
    """The bundled data-constrained runs (N 1e7-6e8, U 1e8-1e9, up to 25 epochs), 4 refits."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return DataConstrainedLaw(bootstrap=4, n_polish=4, seed=0).fit(pd.read_csv(DC_RUNS))


@pytest.fixture(scope="module")
def stacked():
    """A default (stacked) point fit of the bundled supervised runs, as saved JSON."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = SupervisedScalingLaw(intervals=False, n_jobs=1).fit(pd.read_csv(SUP_RUNS))
    assert m.result_.meta.get("stack"), "the bundled runs stack"
    return json.loads(m.to_json())


# ---- 1. data-constrained predictions: U_eff = min(U, D); bad inputs refused ------------------
def test_a_pool_larger_than_the_tokens_seen_counts_as_one_partial_epoch(dc):
    at_d = dc.predict(N=6e8, D=1e9, U=1e9)
    assert dc.predict(N=6e8, D=1e9, U=2e9) == at_d  # was 3.4303 < 3.4931
    assert dc.predict(N=6e8, D=1e9, U=1e12) == at_d  # was nan
    lo, hi = dc.predict_interval(6e8, 1e9, 2e9)
    lo1, hi1 = dc.predict_interval(6e8, 1e9, 1e9)
    assert (lo, hi) == (lo1, hi1)
    # the registered law reads U the same way (fit-space theta, as the bootstrap uses it)
    law = get_law("data-constrained")
    theta = np.asarray(dc.result_.theta)
    assert law.predict(theta, N=6e8, D=1e9, U=5e9) == law.predict(theta, N=6e8, D=1e9, U=1e9)
    # more unique data at a fixed D < U never lowers the loss below U = D; fewer raises it
    assert dc.predict(6e8, 1e9, 2.5e8) > at_d
    assert dc.effective_data(1e9, 3e9) == pytest.approx(1e9, rel=1e-15)


@pytest.mark.parametrize(
    "args, name, value",
    [((-1, 1e9, 1e9), "N", "-1"), ((6e8, 1e9, 0), "U", "0"), ((6e8, 0.0, 1e9), "D", "0"),
     ((6e8, math.inf, 1e9), "D", "inf"), ((6e8, 1e9, math.nan), "U", "nan"),
     ((math.inf, 1e9, 1e9), "N", "inf")],
)  # fmt: skip
def test_non_positive_or_non_finite_inputs_are_refused_by_name(dc, args, name, value):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy RuntimeWarning on the way
        for f in (dc.predict, dc.predict_interval, dc.effective_params):
            with pytest.raises(InputError, match=rf"^{name} must be a finite number > 0, got "
                               rf"{value}$"):  # fmt: skip
                f(*args)


def test_epochs_advice_refuses_bad_n_and_u(dc):
    with pytest.raises(InputError, match="^U must be a finite number > 0, got 0$"):
        dc.epochs_advice(6e8, 0)
    with pytest.raises(InputError, match="one N and one U"):
        dc.epochs_advice([6e8, 1e9], 1e9)


# ---- 2. a preset's interval stays inside its own draws ---------------------------------------
def _draw_losses(name, N, D):
    m = SupervisedScalingLaw.from_preset(name)
    s = np.asarray(m.result_.meta["intervals"]["param_samples"], float)
    law = get_law(m.result_.law)
    return np.exp(law.predict_target(s, {"N": np.array([N]), "D": np.array([D])})[:, 0]), s


@pytest.mark.parametrize("N, D", [(1e8, 2e9), (1e9, 2e10), (7.2e10, 1.33e12)])
def test_besiroglu_interval_never_falls_below_its_draws_or_their_floor(N, D):
    """The lower end stays within the draws' support (their lowest loss at the point, less the
    run noise and distance terms) and never below their smallest E (1.57)."""
    m = SupervisedScalingLaw.from_preset("besiroglu2024")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReachWarning)
        lo, hi = m.predict_interval(N, D)
    draws, s = _draw_losses("besiroglu2024", N, D)
    E_min = np.exp(s[:, 2]).min()
    assert lo >= E_min * (1 - 1e-12)  # was 1.2219 at (1e8, 2e9) under E's CI [1.70, 1.94]
    assert lo < draws.min() and lo < m.predict(N, D) < hi
    cal = m.result_.meta["intervals"]
    z, noise = 1.6448536269514722, float(cal.get("noise", 0.0))
    if N < 1e10:  # inside the runs (r = 0): the lowest draw less the run noise alone
        assert lo == pytest.approx(max(draws.min() * np.exp(-z * noise), E_min), rel=1e-9)


def test_besiroglu_numbers_before_and_after_and_other_presets_unchanged():
    b = SupervisedScalingLaw.from_preset("besiroglu2024")
    lo, hi = b.predict_interval(1e8, 2e9)
    assert lo == pytest.approx(1.8158081648476059, rel=1e-9)  # was 1.2219
    assert hi == pytest.approx(9.676379259992883, rel=1e-9)  # upper end unchanged
    # presets whose interval lay inside their draws keep it, number for number, far out too
    bb = SupervisedScalingLaw.from_preset("busbridge2025")
    # N = 1e8 lies below the paper's smallest model (143M): its distance term widens the interval
    # a little (from [2.95240, 3.06113])
    assert bb.predict_interval(1e8, 2e9) == pytest.approx(
        (2.9496436352468822, 3.063986251517586), rel=1e-12
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ReachWarning)
        far = bb.predict_interval(7.9957e10, 1.2006e12)
    assert far[0] == pytest.approx(1.6121, abs=2e-4)  # the distance term's allowance is kept
    h = SupervisedScalingLaw.from_preset("hoffmann2022").predict_interval(1e9, 2e10)
    assert h == pytest.approx((2.5589158834186865, 2.6013543728317408), rel=1e-12)


def test_cli_allocate_with_the_besiroglu_preset_keeps_above_its_floor(cli):
    code, out, err = cli("supervised", "allocate", "--preset", "besiroglu2024", "--flops",
                         "5.76e23", "--json")  # fmt: skip
    assert code == 0, err
    a = json.loads(out)
    _, s = _draw_losses("besiroglu2024", a["N"], a["D"])
    assert a["interval"][0] == pytest.approx(np.exp(s[:, 2]).min(), rel=1e-9)  # was 1.3788


# ---- 3. --no-intervals does not drop --bootstrap / --calibration in silence -----------------
@pytest.mark.parametrize(
    "extra, flag",
    [(["--bootstrap", "7"], "--bootstrap 7"),
     (["--calibration", "prior+backtest"], "--calibration"),
     (["--calibration", "prior"], "--calibration"),
     (["--form", "data-constrained", "--bootstrap", "5"], "--bootstrap 5")],
)  # fmt: skip
def test_no_intervals_refuses_what_it_would_drop(cli, tmp_path, extra, flag):
    runs = DC_RUNS if "data-constrained" in extra else SUP_RUNS
    out = tmp_path / "fit.json"
    code, _, err = cli("supervised", "fit", "--runs", runs, "--no-intervals", *extra, "--out", out)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert flag in err and "--no-intervals" in err
    assert not out.exists()


def test_bootstrap_0_with_no_intervals_is_consistent_and_runs(cli, tmp_path):
    out = tmp_path / "fit.json"
    code, _, err = cli("supervised", "fit", "--runs", SUP_RUNS, "--no-intervals", "--bootstrap",
                       "0", "--jobs", "1", "--quiet", "--out", out)  # fmt: skip
    assert code == 0, err
    assert json.loads(out.read_text())["bootstrap"] == []


def test_bootstrap_1_message_says_what_0_does(cli):
    code, _, err = cli("supervised", "fit", "--runs", SUP_RUNS, "--bootstrap", "1")
    assert code == 2 and "--bootstrap" in err
    assert "0 (no interval)" not in err  # a default fit at --bootstrap 0 still has one
    assert "0 (no resamples" in err and "--no-intervals" in err


def test_python_refuses_a_calibration_without_intervals_and_labels_a_bootstrap_only_one():
    runs = pd.read_csv(SUP_RUNS)
    with pytest.raises(InputError, match="calibration='prior\\+backtest' needs intervals=True"):
        SupervisedScalingLaw(intervals=False, calibration="prior+backtest", stack=False).fit(runs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = SupervisedScalingLaw(intervals=False, bootstrap=3, n_jobs=1, stack=False).fit(runs)
    with pytest.warns(UserWarning, match="no calibrated forecast interval.*not calibrated"):
        lo, hi = m.predict_interval(7e9, 1.4e11)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # asked for by name: no warning
        # still given: the documented bootstrap-only interval (kind="bootstrap")
        assert m.predict_interval(7e9, 1.4e11, kind="bootstrap") == (lo, hi)
        m.predict_interval(1e9, 2e10)  # said once per fit


# ---- 4. saved stack weights and compute law are checked --------------------------------------
def _load_edited(d, fn):
    e = json.loads(json.dumps(d))
    fn(e["meta"])
    return SupervisedScalingLaw.from_json(json.dumps(e))


@pytest.mark.parametrize(
    "edit, field",
    [(lambda m: m["stack"]["weights"].update(form=5.0), "'meta.stack.weights'"),
     (lambda m: m["stack"]["weights"].update({"form": 0.0, "overtrain-ls": 0.0,
                                               "compute-law": 0.0}), "'meta.stack.weights'"),
     (lambda m: m["stack"]["weights"].update(extra=0.0), "'meta.stack.weights.extra'"),
     (lambda m: m["compute_law"].update(A=2.0), "'meta.compute_law.A'"),
     (lambda m: m["compute_law"].update(E=-1.0), "'meta.compute_law.E'"),
     (lambda m: m["compute_law"].update(a="x"), "'meta.compute_law.a'"),
     (lambda m: m["compute_law"].update(note=1), "'meta.compute_law.note'"),
     (lambda m: m["compute_law"]["theta"].__setitem__(0, 1.0), "'meta.compute_law.A'")],
)  # fmt: skip
def test_hand_edited_stack_weights_and_compute_law_are_refused(stacked, edit, field):
    with pytest.raises(InputError, match=f"field {field}"):
        _load_edited(stacked, edit)


def test_a_saved_stacked_fit_still_loads_bit_for_bit(stacked):
    text = json.dumps(stacked)
    back = SupervisedScalingLaw.from_json(text)
    assert json.loads(back.to_json()) == stacked
    w = stacked["meta"]["stack"]["weights"]
    rescaled = _load_edited(stacked, lambda m: m["stack"]["weights"].update(
        {k: v * (1 + 1e-12) for k, v in w.items()}))  # fmt: skip
    assert rescaled.predict(7e9, 1.4e11) == pytest.approx(back.predict(7e9, 1.4e11), rel=1e-9)


# ---- 5. flags that would do nothing are refused ----------------------------------------------
@pytest.mark.parametrize(
    "extra, words",
    [(["--n-cutoffs", "3"], "--n-cutoffs (n_cutoffs=) applies only to --form average"),
     (["--form", "chinchilla", "--n-cutoffs", "3"], "(n_cutoffs=) applies only to --form average"),
     (["--form", "chinchilla", "--no-stack"], "--no-stack applies only to --form auto"),
     (["--form", "average", "--no-stack"], "--no-stack applies only to --form auto"),
     (["--u-col", "unique"], "--u-col 'unique': the runs have no such column")],
)  # fmt: skip
def test_ignored_fit_flags_are_refused(cli, tmp_path, extra, words):
    out = tmp_path / "fit.json"
    code, _, err = cli("supervised", "fit", "--runs", SUP_RUNS, *extra, "--out", out)
    assert code == 2 and err.count("\n") == 1 and words in err, err
    assert not out.exists()


@pytest.mark.parametrize(
    "kw, words",
    [({"form": "chinchilla", "n_cutoffs": 3}, "n_cutoffs=) applies only to --form average"),
     ({"form": "chinchilla", "n_cutoffs": 4}, "n_cutoffs=) applies only to --form average")],
)  # fmt: skip
def test_the_estimator_refuses_arguments_that_would_do_nothing(kw, words):
    """The same refusals in Python as on the command line (`supervised.settings`), so a
    notebook never gets a silently ignored argument; where they apply they are accepted."""
    with pytest.raises(InputError, match=re.escape(words)):
        SupervisedScalingLaw(**kw)
    SupervisedScalingLaw(form="average", n_cutoffs=3)
    SupervisedScalingLaw("chinchilla", intervals=False, bootstrap=0, stack=False)


def test_the_flags_still_work_where_they_apply(cli, tmp_path):
    runs = tmp_path / "runs.csv"
    pd.read_csv(SUP_RUNS).assign(unique=lambda d: d["D"]).to_csv(runs, index=False)
    code, _, err = cli("supervised", "fit", "--runs", runs, "--u-col", "unique", "--no-stack",
                       "--no-intervals", "--jobs", "1", "--quiet", "--json")  # fmt: skip
    assert code == 0, err


# ---- 6. data-constrained epochs beyond the fitted runs warn ----------------------------------
def test_epochs_far_beyond_the_fitted_runs_warn_once(dc, tmp_path):
    rng = dc.result_.meta["fitted_range"]
    assert rng["N"] == [1e7, 6e8] and rng["U"] == [1e8, 1e9]
    dc.save(tmp_path / "dc.json")
    back = DataConstrainedLaw.load(tmp_path / "dc.json")
    assert json.loads(back.result_.to_json()) == json.loads(dc.result_.to_json())  # round trip
    with pytest.warns(ReachWarning, match=r"N=1e\+12 lies 1\.67e\+03x outside the fitted runs"):
        back.epochs_advice(1e12, 1e8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        back.epochs_advice(1e12, 1e8)  # said once per fit
        DataConstrainedLaw.load(tmp_path / "dc.json").epochs_advice(6e8, 1e9)  # inside
        DataConstrainedLaw.load(tmp_path / "dc.json").epochs_advice(4e9, 7e9)  # < 7.4x out
    with pytest.warns(ReachWarning, match=r"U=1e\+11 lies 100x outside"):
        DataConstrainedLaw.load(tmp_path / "dc.json").epochs_advice(1e8, 1e11)


def test_a_bad_range_is_refused(dc, tmp_path):
    d = json.loads(dc.to_json())
    d["meta"]["fitted_range"]["U"] = [1e9, 1e8]
    (tmp_path / "bad.json").write_text(json.dumps(d))
    with pytest.raises(InputError, match="field 'meta.fitted_range.U': must be"):
        DataConstrainedLaw.load(tmp_path / "bad.json")


def test_cli_epochs_warns_on_one_line(cli, dc, tmp_path):
    dc.save(tmp_path / "dc.json")
    code, out, err = cli("data-constrained", "epochs", "--fit", tmp_path / "dc.json",
                         "--params", "1e12", "--unique-tokens", "1e8")  # fmt: skip
    assert code == 0 and "epochs: loss" in out
    assert err.count("\n") == 1 and err.startswith("lmforecast: warning: N=1e+12")


# ---- 7. a preset has only its forecast interval ----------------------------------------------
@pytest.mark.parametrize("kind", ["confidence", "bootstrap"])
def test_a_preset_says_it_has_only_forecast_intervals(kind):
    m = SupervisedScalingLaw.from_preset("busbridge2025")
    with pytest.raises(InputError, match="preset carries only a forecast interval.*published CIs"
                       r".*kind='prediction'") as e:  # fmt: skip
        m.predict_interval(N=1e9, D=2e10, kind=kind)
    assert "bootstrap>0" not in str(e.value) and "bootstrap_()" not in str(e.value)
    assert isinstance(e.value, ValueError)  # callers falling back on ValueError still do
    lo, hi = m.predict_interval(N=1e9, D=2e10)
    assert lo < m.predict(1e9, 2e10) < hi
    kinds = "kind must be one of 'prediction', 'confidence', 'bootstrap'"
    with pytest.raises(InputError, match=kinds):
        m.predict_interval(N=1e9, D=2e10, kind="credible")


def test_a_preset_says_it_has_no_refits_for_an_allocation_interval(cli):
    m = SupervisedScalingLaw.from_preset("busbridge2025")
    with pytest.raises(InputError, match="'busbridge2025' preset has no bootstrap refits") as e:
        m.allocate_interval(1e22)
    assert isinstance(e.value, ValueError)  # the CLI's fallback (no N*/D* interval) still works
    code, out, err = cli("supervised", "allocate", "--preset", "busbridge2025", "--flops", "1e22",
                         "--json")  # fmt: skip
    assert code == 0 and json.loads(out)["N_interval"] is None, err
