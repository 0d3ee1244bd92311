"""Score units of the observational scaling law: points (0-100) in and out, fractions (0-1)
accepted at the door (`score_unit`, `lmforecast.scores`); Eq. 6 runs on fractions inside."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from lmforecast.errors import InputError
from lmforecast.osl import PRESETS, ObservationalScalingLaw, get_preset, load_table_b1
from lmforecast.osl.data import META_COLUMNS

TARGET = "HumanEval"


def _points(t: pd.DataFrame) -> pd.DataFrame:
    """The same table with every score column x 100 (points)."""
    p = t.copy()
    for c in t.columns:
        if c not in META_COLUMNS and pd.api.types.is_numeric_dtype(t[c]):
            p[c] = t[c] * 100
    return p


def _fit(t, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ObservationalScalingLaw(**kw).fit(t, TARGET)


@pytest.fixture(scope="module")
def tables():
    frac = load_table_b1()
    return frac, _points(frac)


def test_fractions_and_points_give_identical_forecasts_in_points(tables):
    frac, pts = tables
    a, b = _fit(frac), _fit(pts)
    new_f, new_p = frac.tail(5).drop(columns=TARGET), pts.tail(5).drop(columns=TARGET)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ya, yb = a.predict(new_f), b.predict(new_p)
        ia, ib = a.predict_interval(new_f), b.predict_interval(new_p)
    # x / 100 is the fraction to the last bit or one off; the two fits' optimiser paths carry
    # that to ~1.5e-9 relative on some CPUs (a unit mistake is a factor of 100)
    np.testing.assert_allclose(ya, yb, rtol=1e-7)
    np.testing.assert_allclose(ia, ib, rtol=1e-7, atol=1e-9)
    # points: the held-out records carry the truth x 100 and forecasts on that scale
    pa, pb = a.result_.predictions_frame(), b.result_.predictions_frame()
    truth = frac.set_index("Model").loc[pa["Model"], TARGET].to_numpy()
    np.testing.assert_allclose(pa["y"], 100 * truth, rtol=1e-12)
    for c in ("y", "y_pred"):
        np.testing.assert_allclose(pa[c], pb[c], rtol=1e-7, atol=1e-9)
    for c in ("lower", "upper"):
        np.testing.assert_allclose(pa[c], pb[c], rtol=1e-7, atol=1e-9)
    assert pa["y_pred"].max() > 1 and ia[1].max() <= 100
    assert a.result_.test_mse == pytest.approx(b.result_.test_mse, rel=1e-7)
    # the law itself is the paper's, on fractions: identical parameters either way
    np.testing.assert_allclose(a.result_.fit.theta, b.result_.fit.theta, rtol=1e-7, atol=1e-9)
    assert 0.8 <= a.result_.params["h"] <= 1.0
    # one model (a row of its scores) gives a float in points
    one = new_p.iloc[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert b.predict(one) == pytest.approx(yb[0], rel=1e-12)


def test_the_mse_is_in_points_squared(tables):
    frac, _ = tables
    res = _fit(frac).result_
    pf = res.predictions_frame()
    te = (pf["split"] == "test").to_numpy()
    mse = float(np.mean((pf["y"][te] - pf["y_pred"][te]) ** 2))
    assert res.test_mse == pytest.approx(mse, rel=1e-9)  # 10^4 x the MSE on fractions
    assert "pts^2" in res.summary() and "points" in res.summary()


def test_a_fraction_table_declared_points_is_read_as_points(tables):
    """score_unit="points" on a table written in fractions: the values are taken as written,
    i.e. as scores below one point (the law still fits: Eq. 6 with h in [0.8, 1] reaches
    values near 0), so records and forecasts are the table's own numbers, not 100x them."""
    frac, _ = tables
    est = _fit(frac, score_unit="points")
    pf = est.result_.predictions_frame()
    truth = frac.set_index("Model").loc[pf["Model"], TARGET].to_numpy()
    np.testing.assert_allclose(pf["y"], truth, rtol=1e-12)  # not 100 x truth
    assert pf["y_pred"].max() < 2.0 and pf["upper"].max() <= 100  # about one point at most
    auto = _fit(frac)
    assert auto.result_.predictions_frame()["y_pred"].max() > 1.0
    # the reverse, a table in points declared fractions, is refused naming the cell
    with pytest.raises(InputError, match=r"column '.+' row \d+ \(.+\): value .+ outside \[0, 1\]"):
        _fit(_points(frac), score_unit="fraction")
    with pytest.raises(InputError, match="score_unit"):
        _fit(frac, score_unit="percent")


def test_a_fraction_column_with_a_stray_cell_is_refused_not_read_as_points(tables):
    frac, _ = tables
    t = frac.copy()
    t.loc[3, "MMLU"] = 2.0
    with pytest.raises(InputError, match=r"column 'MMLU' row 4 .*value 2 is above 1"):
        _fit(t)
    est = _fit(t, score_unit="points")  # declared: read as points, as asked
    assert est.scales_["MMLU"] == 1.0


def test_a_loaded_fit_predicts_in_points_and_round_trips_bit_for_bit(tables, tmp_path):
    frac, pts = tables
    est = _fit(frac)
    path = est.save(tmp_path / "osl.json")
    back = ObservationalScalingLaw.load(path)
    assert json.dumps(back.to_dict()) == json.dumps(est.to_dict())
    assert back.to_dict()["format_version"] == 1
    new = frac.tail(4).drop(columns=TARGET)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y0, y1 = est.predict(new), back.predict(new)
        y2 = back.predict(pts.tail(4).drop(columns=TARGET))  # a points table, same forecasts
    assert np.array_equal(y0, y1) and y1.max() > 1.0
    np.testing.assert_allclose(y2, y1, rtol=1e-9)


def test_metric_range_is_in_the_targets_own_unit(tables):
    frac, pts = tables
    a = _fit(frac, metric_range=(0.1, 1.0))  # HI <= 1: fractions, as the column
    b = _fit(pts, metric_range=(10, 100))
    assert a.result_.metric_range == b.result_.metric_range == [10.0, 100.0]
    # the same y' up to the last bit of x / 100; the optimiser's stopping carries that to ~1e-8
    np.testing.assert_allclose(
        a.result_.predictions_frame()["y_pred"], b.result_.predictions_frame()["y_pred"], rtol=1e-7
    )
    with pytest.raises(InputError, match="metric-range"):
        _fit(frac, metric_range=(10, 100), score_unit="fraction")


def test_presets_read_either_unit_and_forecast_points(tables):
    frac, pts = tables
    name = next(
        n for n, p in PRESETS.items() if set(p.weights) <= set(frac.columns)
    )  # Table B.1 has no GSM8K
    law = get_preset(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rows = frac.dropna(subset=law.metrics)
        a = law.predict(rows)
        b = law.predict(_points(rows))
    np.testing.assert_allclose(a, b, rtol=1e-9)
    assert np.all((0 <= a) & (a <= 100))


def test_cli_score_unit_is_honoured(cli, tables, tmp_path):
    frac, pts = tables
    fcsv, pcsv = tmp_path / "f.csv", tmp_path / "p.csv"
    frac.to_csv(fcsv, index=False)
    pts.to_csv(pcsv, index=False)
    base = ["osl", "fit", "--target", TARGET, "--json", "--quiet"]
    runs = {}
    for name, argv in {
        "auto-f": ["--benchmarks", fcsv],
        "auto-p": ["--benchmarks", pcsv],
        "points-f": ["--benchmarks", fcsv, "--score-unit", "points"],
    }.items():
        code, out, err = cli(*base, *argv)
        assert code == 0, err
        runs[name] = json.loads(out)
    ya = [f["y_pred"] for f in runs["auto-f"]["forecasts"]]
    assert ya == pytest.approx([f["y_pred"] for f in runs["auto-p"]["forecasts"]], rel=1e-7)
    # declared points: the fraction table's values are taken as points (not 100x)
    truth = dict(zip(frac["Model"], frac[TARGET]))
    fs = runs["points-f"]["forecasts"]
    assert [f["y"] for f in fs] == pytest.approx([truth[f["model"]] for f in fs], rel=1e-12)
    code, _, err = cli(*base, "--benchmarks", pcsv, "--score-unit", "fraction")
    assert code == 2 and "outside [0, 1]" in err and len(err.strip().splitlines()) == 1
    # predict --fit and pca take it too
    fit = tmp_path / "fit.json"
    code, _, err = cli("osl", "fit", "--benchmarks", fcsv, "--target", TARGET, "--out", fit,
                       "--quiet")  # fmt: skip
    assert code == 0, err
    code, _, err = cli("osl", "predict", "--fit", fit, "--benchmarks", pcsv, "--score-unit",
                       "fraction")  # fmt: skip
    assert code == 2 and "outside [0, 1]" in err
    code, out, err = cli("osl", "predict", "--fit", fit, "--benchmarks", pcsv, "--json")
    assert code == 0, err
    code, out2, err = cli("osl", "predict", "--fit", fit, "--benchmarks", fcsv, "--json")
    p1 = [r["y_pred"] for r in json.loads(out)["predictions"]]
    p2 = [r["y_pred"] for r in json.loads(out2)["predictions"]]
    assert p1 == pytest.approx(p2, rel=1e-9) and max(p1) > 1
    code, _, err = cli("osl", "pca", "--benchmarks", pcsv, "--score-unit", "fraction")
    assert code == 2 and "outside [0, 1]" in err
