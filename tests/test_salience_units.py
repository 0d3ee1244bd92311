"""Capability Salience in the package's score unit: scores and chance in points at the door
(fraction tables converted), Eq. 2 on fractions inside, forecasts in points out."""

import json

import numpy as np
import pytest

from lmforecast.errors import InputError
from lmforecast.salience import CapabilitySalience, SalienceFit, fit_salience
from lmforecast.salience.law import sigmoid_law
from lmforecast.salience.simulate import planted_salience_data

KW = dict(task="t", n_steps=20, lr=1e-2, bootstrap=20)


@pytest.fixture(scope="module")
def data():
    return planted_salience_data(n_texts=20, seed=0)


def _tables(data):
    """The planted scores in points and the same table in fractions (points / 100, the floats
    a points table reaches Eq. 2 as)."""
    pts = data.scores[["model", "split", "score"]].assign(
        score=lambda d: (100 * d["score"]).round(8)
    )
    return pts, pts.assign(score=pts["score"] / 100)


@pytest.fixture(scope="module")
def both(data):
    """One fit per reading of the same table: points and fractions, each declared and auto."""
    pts, frac = _tables(data)
    runs = {
        "points": (pts, "points"),
        "auto-points": (pts, "auto"),
        "fraction": (frac, "fraction"),
        "auto-fraction": (frac, "auto"),
    }
    return {
        name: fit_salience(data.texts, data.records, table, chance=25, score_unit=unit, **KW)
        for name, (table, unit) in runs.items()
    }


def test_same_table_in_fractions_and_points_gives_the_same_forecasts(data, both):
    ref = both["points"]
    C = np.asarray(ref.capability)
    for name, fit in both.items():
        np.testing.assert_allclose(fit.scores, ref.scores, rtol=1e-9, err_msg=name)
        np.testing.assert_allclose(
            fit.table()["predicted"], ref.table()["predicted"], rtol=1e-7, err_msg=name
        )
        for a, b in zip(fit.predict_interval(C, 0.9), ref.predict_interval(C, 0.9)):
            np.testing.assert_allclose(a, b, rtol=1e-7, err_msg=name)
        for k in ("train_mse", "validation_mse", "test_mse"):
            assert fit.metrics[k] == pytest.approx(ref.metrics[k], rel=1e-7), (name, k)
        assert fit.alpha == pytest.approx(ref.alpha, rel=1e-7)
    # all in points: the table's scores, the predictions, the intervals
    tab = ref.table()
    assert tab["score"].max() > 1 and tab["predicted"].max() > 1
    assert tab["predicted"].between(25, 100).all()  # Eq. 2 lives above the chance level
    lo, hi = ref.predict_interval(C, 0.9)
    assert np.all((0 <= lo) & (lo <= hi) & (hi <= 100)) and hi.max() > 1


def test_estimator_same_table_in_fractions_and_points(data):
    from lmforecast.salience import HashedNgramFeatures, mapped_loss_matrix
    from lmforecast.salience.records import loss_table

    feats = HashedNgramFeatures(256).extract(data.texts)
    table = loss_table(data.records, {t: len(s) for t, s in data.texts.items()})
    pts, frac = _tables(data)
    L = mapped_loss_matrix(table, feats, pts["model"].tolist())
    kw = dict(lr=1e-2, n_steps=20, bootstrap=10)
    a = CapabilitySalience(25, **kw).fit(feats.H, L, feats.n_chars, frac["score"], pts["split"])
    b = CapabilitySalience(25, score_unit="points", **kw).fit(
        feats.H, L, feats.n_chars, pts["score"], pts["split"]
    )
    np.testing.assert_allclose(a.predict(L), b.predict(L), rtol=1e-7)
    np.testing.assert_allclose(a.predict_interval(L), b.predict_interval(L), rtol=1e-7)
    np.testing.assert_allclose(a.scores_, pts["score"], rtol=1e-12)  # points in, points kept
    assert a.predict(L).max() > 1 and isinstance(a.predict(L[0]), float)
    assert a.contract()["chance"] == 25 and a.contract()["gamma"] == 0.25
    assert a.contract()["train_mse"] == pytest.approx(b.contract()["train_mse"], rel=1e-7)


def test_chance_in_points_is_the_old_fraction_fit(data):
    """chance=25 now is chance=0.25 before the unit change: the same Eq. 2 law (alpha, beta),
    the predictions and intervals x 100, the MSEs x 1e4. The reference numbers are the
    pre-change fit (fractions in and out) of the same data and settings, made on another CPU:
    numpy's SIMD kernels differ between CPUs in the last bits, which the fit carries to ~6e-9
    relative; a unit mistake moves them by orders of magnitude, far past rel=1e-7."""
    fit = fit_salience(data.texts, data.records, data.scores[["model", "split", "score"]],
                       chance=25, **KW)  # fmt: skip
    assert fit.gamma == 0.25 and fit.chance == 25
    assert fit.alpha == pytest.approx(-29.823061356332804, rel=1e-7)
    assert fit.beta == pytest.approx(0.21964264327074848, rel=1e-7)
    assert fit.metrics["test_mse"] == pytest.approx(1e4 * 0.012154171984361325, rel=1e-7)
    base = fit.metrics["baselines"]["all_token"]["test_mse"]
    assert base == pytest.approx(1e4 * 0.050750250515042616, rel=1e-7)
    old_pred = [0.4170985220042961, 0.4980888706406307, 0.5982939194375592]
    np.testing.assert_allclose(fit.table()["predicted"][:3], 100 * np.array(old_pred), rtol=1e-7)
    lo, hi = fit.predict_interval(np.asarray(fit.capability[:3]), 0.9)
    old_lo = [0.14470222957387555, 0.33890716531034726, 0.20892114350123775]
    old_hi = [0.6411793194241825, 0.8068632925020652, 0.9023946212404385]
    np.testing.assert_allclose(lo, 100 * np.array(old_lo), rtol=1e-7)
    np.testing.assert_allclose(hi, 100 * np.array(old_hi), rtol=1e-7)
    # and the law underneath is Eq. 2 with gamma = chance / 100
    C = np.asarray(fit.capability)
    np.testing.assert_array_equal(
        fit.table()["predicted"], 100 * sigmoid_law(C, fit.alpha, fit.beta, 0.25)
    )


def test_a_loaded_fit_predicts_in_points(data, both, tmp_path):
    fit = both["auto-fraction"]
    fit.save(tmp_path / "f.json")
    again = SalienceFit.load(tmp_path / "f.json")
    assert again == fit and again.to_json() == fit.to_json()  # bit for bit, format_version 1
    assert json.loads(fit.to_json())["format_version"] == 1
    with pytest.warns(UserWarning, match="outside the range"):  # validation/test models
        pred = again.predict_records(data.records, level=0.9).set_index("model")
    tab = fit.table().set_index("model")
    np.testing.assert_allclose(pred.loc[tab.index, "predicted"], tab["predicted"], rtol=1e-12)
    assert pred["predicted"].max() > 1 and pred["upper"].max() <= 100
    np.testing.assert_allclose(again.scores, 100 * data.scores["score"], rtol=1e-7)
    # the estimator too: save, load, predict in points
    from lmforecast.salience import HashedNgramFeatures, mapped_loss_matrix
    from lmforecast.salience.records import loss_table

    feats = HashedNgramFeatures(128).extract(data.texts)
    table = loss_table(data.records, {t: len(s) for t, s in data.texts.items()})
    sc = data.scores
    L = mapped_loss_matrix(table, feats, sc["model"].tolist())
    est = CapabilitySalience(25, n_steps=5, bootstrap=5).fit(
        feats.H, L, feats.n_chars, sc["score"], sc["split"]
    )
    est.save(tmp_path / "e.json")
    back = CapabilitySalience.load(tmp_path / "e.json")
    assert back.to_json() == est.to_json()
    np.testing.assert_array_equal(back.predict(L), est.predict(L))
    np.testing.assert_array_equal(back.predict_interval(L)[1], est.predict_interval(L)[1])
    assert back.predict(L).max() > 1 and back.chance == 25 and back.gamma_ == 0.25


def test_chance_and_unit_refusals():
    H, L, n = np.eye(3), np.ones((3, 3)) + np.eye(3), 3
    split = ["train"] * 3
    with pytest.raises(InputError, match=r"give chance=25$"):  # a fraction beside fractions
        CapabilitySalience(0.25).fit(H, L, n, [0.3, 0.5, 0.7], split)
    with pytest.raises(InputError, match=r"give chance=25$"):
        CapabilitySalience(0.25, score_unit="fraction").fit(H, L, n, [0.3, 0.5, 0.7], split)
    # beside points, 0.25 is a quarter of a point; 0 and 1 are never read as fractions
    CapabilitySalience(0.25, n_steps=0, bootstrap=0).fit(H, L, n, [30, 50, 70], split)
    for g in (0, 1):
        CapabilitySalience(g, n_steps=0, bootstrap=0).fit(H, L, n, [0.3, 0.5, 0.7], split)
    for g in (100, -1, float("nan")):
        with pytest.raises(InputError, match=r"chance must be in \[0, 100\) points"):
            CapabilitySalience(g).fit(H, L, n, [30, 50, 70], split)
    with pytest.raises(InputError, match="score_unit must be one of auto, points, fraction"):
        CapabilitySalience(25, score_unit="percent")
    with pytest.raises(InputError, match=r"model 2 is 170; scores must be points in \[0, 100\]"):
        CapabilitySalience(25).fit(H, L, n, [30, 50, 170], split)
    with pytest.raises(InputError, match="model 1 is nan"):
        CapabilitySalience(25).fit(H, L, n, [30, np.nan, 70], split)
