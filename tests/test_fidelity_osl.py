"""Issue 12 (paper fidelity), observational scaling laws: metric-range normalisation (Sec. 4),
Table C.1 presets and the Fig. 7 validation of V-optimal subset selection."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from lmforecast.errors import InputError
from lmforecast.osl import CapabilitySpace, ObservationalScalingLaw, load_table_b1
from lmforecast.osl.data import _bundled, default_metrics

B1 = str(_bundled("table_b1_base_models.csv"))


def _chance_task(seed=0, noise=0.03):
    """A 4-way multiple-choice task: y = 0.25 + 0.75 sigma(6 PC1 - 1) + noise (weak models
    score below chance)."""
    t = load_table_b1()
    S = CapabilitySpace(3).fit(t, default_metrics(t)).transform(t)
    rng = np.random.default_rng(seed)
    y = 0.25 + 0.75 / (1 + np.exp(-(6.0 * S[:, 0] - 1.0))) + rng.normal(0, noise, len(t))
    t["QA"] = y
    return t


def _fit(t, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ObservationalScalingLaw(3, **kw).fit(t, "QA").result_


def test_metric_range_keeps_below_chance_and_recovers_truth():
    t = _chance_task()
    below = int((t["QA"] < 0.25).sum())
    assert below >= 3  # the rows that a [0, 1] check on the normalised target used to refuse
    res = _fit(t, metric_range=(0.25, 1.0))
    assert res.n_train + res.n_test == len(t)  # below-chance models kept
    assert res.metric_range == [0.25, 1.0]
    pf = res.predictions_frame()
    np.testing.assert_allclose(pf["y"], t["QA"])  # records on the original scale
    te = (pf["split"] == "test").to_numpy()
    mse_range = float(np.mean((pf["y"][te] - pf["y_pred"][te]) ** 2))
    # reported MSE is on the normalised scale: (HI - LO)^2 times smaller than the original one
    assert res.test_mse == pytest.approx(mse_range / 0.75**2, rel=1e-9)
    # the fitted curve tracks the noiseless truth (SD across models ~0.2) within the noise SD
    truth = _chance_task(noise=0.0)["QA"].to_numpy()
    assert np.sqrt(np.mean((pf["y_pred"].to_numpy() - truth) ** 2)) < 0.03 < 0.2 < truth.std()
    # forecasts and intervals on the original scale; the floor 0.25 is reachable
    fc = res.forecasts()
    inside = sum(f["interval"][0] <= f["y"] <= f["interval"][1] for f in fc)
    assert inside >= 0.8 * len(fc)
    assert min(pf["y_pred"]) < 0.3


def test_metric_range_equals_fit_on_normalised_target():
    t = _chance_task(noise=0.0)  # noiseless: every normalised value in [0, 1]
    a = _fit(t, metric_range="0.25,1")
    t2 = t.copy()
    t2["QA"] = (t2["QA"] - 0.25) / 0.75
    b = _fit(t2)
    np.testing.assert_allclose(a.fit.theta, b.fit.theta, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(
        a.predictions_frame()["y_pred"], 0.25 + 0.75 * b.predictions_frame()["y_pred"], rtol=1e-9
    )
    lo_a, hi_a = a.predict_interval(a._predictor_matrix())
    lo_b, hi_b = b.predict_interval(b._predictor_matrix())
    np.testing.assert_allclose(hi_a, 0.25 + 0.75 * hi_b, rtol=1e-9, atol=1e-12)
    # round trip
    from lmforecast.osl import OSLResult

    c = OSLResult.from_json(a.to_json())
    assert c.metric_range == [0.25, 1.0] and c.to_json() == a.to_json()


@pytest.mark.parametrize("bad", ["1,0.25", "a,b", "0.5,0.5", "0.25", "0.25,1,2", "nan,1"])
def test_metric_range_bad_values(bad, cli, tmp_path):
    with pytest.raises(InputError, match="metric_range"):
        _fit(_chance_task(), metric_range=bad)
    out = tmp_path / "fit.json"
    t = _chance_task()
    csv = tmp_path / "b.csv"
    t.to_csv(csv, index=False)
    code, _, err = cli(
        "osl", "fit", "--benchmarks", csv, "--target", "QA", "--metric-range", bad, "--out", out
    )
    assert code == 2 and "--metric-range" in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_metric_range_above_top_refused():
    t = _chance_task()
    t.loc[3, "QA"] = 1.2
    with pytest.raises(InputError, match="above the top of --metric-range"):
        _fit(t, metric_range=(0.25, 1.0))


def test_cli_metric_range(cli, tmp_path):
    t = _chance_task()
    csv = tmp_path / "b.csv"
    t.to_csv(csv, index=False)
    out = tmp_path / "fit.json"
    code, stdout, err = cli(
        "osl", "fit", "--benchmarks", csv, "--target", "QA", "--metric-range", "0.25,1",
        "--out", out, "--json",
    )  # fmt: skip
    assert code == 0, err
    d = json.loads(stdout)
    assert d["metric_range"] == [0.25, 1.0]
    ys = {f["model"]: f["y"] for f in d["forecasts"]}
    truth = dict(zip(t["Model"], t["QA"]))
    assert all(ys[m] == pytest.approx(truth[m]) for m in ys)
    code, text, _ = cli("osl", "fit", "--benchmarks", csv, "--target", "QA", "--metric-range",
                        "0.25,1")  # fmt: skip
    assert "metric range: (0.25, 1)" in text
