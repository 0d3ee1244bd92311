"""Estimators show their non-default arguments (pasteable as code) and, in a notebook, their
summary; results show their summary (lmforecast/display.py)."""

from __future__ import annotations

import html
import warnings

import numpy as np
import pandas as pd
import pytest

from lmforecast.backtest import PowerLawBaseline, rolling_origin
from lmforecast.dataconstrained.model import DataConstrainedLaw
from lmforecast.distill import DistillationScalingLaw
from lmforecast.downstream import DownstreamForecaster
from lmforecast.flp.mixture import FLPM
from lmforecast.flp.model import FLP
from lmforecast.osl.model import ObservationalScalingLaw
from lmforecast.salience.model import CapabilitySalience
from lmforecast.supervised import SupervisedScalingLaw

ESTIMATORS = [
    (SupervisedScalingLaw, {}),
    (DistillationScalingLaw, {}),
    (DownstreamForecaster, {}),
    (ObservationalScalingLaw, {}),
    (FLP, {"task": "piqa"}),
    (FLPM, {"task": "piqa"}),
    (DataConstrainedLaw, {}),
    (CapabilitySalience, {"chance": 25}),
]


def _runs(n=40, seed=0):
    rng = np.random.default_rng(seed)
    N = np.repeat(np.geomspace(2e7, 1e9, 8), n // 8)
    D = N * np.tile(np.geomspace(5, 200, n // 8), 8)
    L = 1.69 + 406.4 / N**0.34 + 410.7 / D**0.28
    return pd.DataFrame({"N": N, "D": D, "loss": L * np.exp(rng.normal(0, 0.003, n))})


@pytest.mark.parametrize("cls, required", ESTIMATORS, ids=lambda v: getattr(v, "__name__", ""))
def test_default_estimators_repr_as_their_call(cls, required):
    est = cls(**required)
    args = ", ".join(f"{k}={v!r}" for k, v in required.items())
    assert repr(est) == f"{cls.__name__}({args})"
    if hasattr(est, "summary"):
        assert "not fitted" in est._repr_html_()


def test_repr_lists_only_changed_arguments_and_pastes_back():
    est = SupervisedScalingLaw("chinchilla", bootstrap=50, fixed={"E": 1.7}, huber_delta=1e-4)
    text = repr(est)
    assert text == (
        "SupervisedScalingLaw(form='chinchilla', huber_delta=0.0001, bootstrap=50, "
        "fixed={'E': 1.7})"
    )
    again = eval(text, {"SupervisedScalingLaw": SupervisedScalingLaw})
    assert repr(again) == text
    assert repr(DataConstrainedLaw(fit="two-stage")) == "DataConstrainedLaw(fit='two-stage')"
    assert repr(FLPM("piqa", zero_floor=1e-2)) == "FLPM(task='piqa', zero_floor=0.01)"
    long = SupervisedScalingLaw(grid={"alpha": np.linspace(0, 1, 200)})
    assert "grid={'alpha': array([0." in repr(long) and repr(long).endswith("...)")


def test_fitted_estimator_and_its_result_show_the_summary_in_a_notebook():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = SupervisedScalingLaw("chinchilla", intervals=False).fit(_runs())
    page = est._repr_html_()
    assert page.startswith("<code>SupervisedScalingLaw(form=&#x27;chinchilla&#x27;")
    assert f"<pre>{html.escape(est.summary())}</pre>" in page and "not fitted" not in page
    assert est.result_._repr_html_() == f"<pre>{html.escape(est.result_.summary())}</pre>"
    bt = rolling_origin(_runs().assign(C=lambda d: 6 * d.N * d.D), [PowerLawBaseline()],
                        n_cutoffs=2)  # fmt: skip
    assert bt._repr_html_() == f"<pre>{html.escape(bt.summary())}</pre>"


def test_salience_head_summary_reports_the_selected_step():
    rng = np.random.default_rng(0)
    M, T = 12, 6
    L = rng.uniform(1.0, 4.0, (M, T))
    w_true = np.array([2.0, 0.1, 0.1, 2.0, 0.1, 0.1])
    acc = 0.25 + 0.75 / (1 + np.exp(4.0 * (L @ w_true / 10 - 1.5)))
    splits = np.array(["train"] * 8 + ["validation"] * 4)
    est = CapabilitySalience(25, lr=3e-2, n_steps=40).fit(np.eye(T), L, 10, acc, splits)
    text = est.summary()
    step = est.best_step_
    assert f"selected step {step} of 40" in text and f"alpha = {est.alpha_:.4g}" in text
    assert f"selection MSE {est.history_[step, 2]:.4g}" in text
    assert est.history_[step, 2] <= est.history_[0, 2]  # selected on the selection split
    assert f"<pre>{html.escape(text)}</pre>" in est._repr_html_()
    with pytest.raises(ValueError, match="not fitted"):
        CapabilitySalience(25).summary()


def test_preset_estimators_repr_as_the_call_that_builds_them():
    from lmforecast.distill import DistillationScalingLaw
    from lmforecast.supervised import SupervisedScalingLaw

    d = DistillationScalingLaw.from_preset("busbridge2025")
    assert repr(d) == "DistillationScalingLaw.from_preset('busbridge2025')"
    s = SupervisedScalingLaw.from_preset("hoffmann2022")
    assert repr(s) == "SupervisedScalingLaw.from_preset('hoffmann2022')"
    assert eval(repr(s), {"SupervisedScalingLaw": SupervisedScalingLaw}).params_ == s.params_
    # a fit to runs still shows its constructor arguments
    assert (
        repr(SupervisedScalingLaw(form="chinchilla")) == "SupervisedScalingLaw(form='chinchilla')"
    )
