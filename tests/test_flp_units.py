"""FLP / FLP-M score units (Chen et al., Sec. 3.3 and 4): points in and out, a score column in
fractions (as the lm-evaluation-harness writes accuracies) converted at the door (`score_unit`),
so a fraction table gives exactly the forecasts of the same table in points."""

import json
import warnings

import numpy as np
import pytest

from lmforecast.errors import InputError
from lmforecast.flp import FLP, compare_loss_to_performance, single_distribution_check
from lmforecast.flp.mixture import FLPM
from lmforecast.flp.simulate import simulate_flp, simulate_flpm, simulate_single_distribution
from lmforecast.flp.study import target_scores

C = [1e21, 1e22, 1e23]
F = np.array([[6.7e21, 2.9e21], [2e21, 2e20]])


@pytest.fixture(scope="module")
def study():
    return simulate_flp(tasks=("ARC",), seed=0)


@pytest.fixture(scope="module")
def mix():
    return simulate_flpm(tasks=("HumanEval",), seed=0)


def as_fraction(df, task):
    return df.assign(**{task: df[task] / 100})


def test_a_fraction_table_with_score_unit_points_is_read_as_points(study):
    """Declared points keep values <= 1 as points: no ARC checkpoint then clears 25 + 5."""
    ck = as_fraction(study.checkpoints, "ARC")
    with pytest.raises(InputError, match=r"need at least 2 emerged checkpoints") as e:
        FLP("ARC", score_unit="points").fit(study.runs, ck)
    assert "score below random 25 + 5" in str(e.value) and "\n" not in str(e.value)
    fit = FLP("ARC", bootstrap=0, score_unit="fraction").fit(study.runs, ck)
    ref = FLP("ARC", bootstrap=0).fit(study.runs, study.checkpoints)
    np.testing.assert_allclose(fit.predict(C), ref.predict(C), rtol=1e-9)


def test_a_points_table_declared_as_fraction_is_refused_in_one_line(study):
    ck = study.checkpoints
    i = int(ck["ARC"].to_numpy().argmax())
    with pytest.raises(InputError) as e:
        FLP("ARC", score_unit="fraction").fit(study.runs, ck)
    msg = str(e.value)
    assert msg.startswith(f"checkpoints: column 'ARC' row {i + 1}: value {ck['ARC'][i]:g}")
    assert "outside [0, 1]" in msg and "\n" not in msg


def test_a_negative_score_names_its_row(study):
    ck = study.checkpoints.copy()
    ck.loc[7, "ARC"] = -0.5
    with pytest.raises(InputError, match=r"^checkpoints: column 'ARC' row 8: .*-0\.5"):
        FLP("ARC").fit(study.runs, ck)


@pytest.mark.parametrize("method", ["fp", "gpt4"])
def test_fraction_table_gives_the_points_fit_for_the_baselines(study, method):
    ck = as_fraction(study.checkpoints, "ARC")
    a = FLP("ARC", method=method, bootstrap=20).fit(study.runs, study.checkpoints)
    b = FLP("ARC", method=method, bootstrap=20).fit(study.runs, ck)
    np.testing.assert_allclose(b.predict(C), a.predict(C), rtol=1e-9)
    for x, y in zip(b.predict_interval(C), a.predict_interval(C)):
        np.testing.assert_allclose(x, y, rtol=1e-9)


def test_flp_runs_only_fit_reads_fractions_too(study):
    """Without a checkpoint table the runs are the checkpoints: their column is converted."""
    runs = study.runs
    a = FLP("ARC", bootstrap=0).fit(runs)
    b = FLP("ARC", bootstrap=0).fit(as_fraction(runs, "ARC"))
    np.testing.assert_allclose(b.predict(C), a.predict(C), rtol=1e-9)


@pytest.mark.parametrize("mapper", ["neural", "domain-linear", "average"])
def test_flpm_fraction_table_gives_the_points_fit(mix, mapper):
    kw = dict(mapper=mapper, steps=300, n_init=2, bootstrap=10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = FLPM("HumanEval", **kw).fit(mix.runs, mix.checkpoints)
        b = FLPM("HumanEval", **kw).fit(mix.runs, as_fraction(mix.checkpoints, "HumanEval"))
        np.testing.assert_allclose(b.predict(F), a.predict(F), rtol=1e-9)
        for x, y in zip(b.predict_interval(F), a.predict_interval(F)):
            np.testing.assert_allclose(x, y, rtol=1e-9)
    assert b.filter_.counts() == a.filter_.counts()
    with pytest.raises(InputError, match="need at least"):
        FLPM("HumanEval", score_unit="points", **kw).fit(
            mix.runs, as_fraction(mix.checkpoints, "HumanEval")
        )


def test_score_unit_round_trips_through_params_dicts_and_files(study, mix, tmp_path):
    ck = as_fraction(study.checkpoints, "ARC")
    est = FLP("ARC", bootstrap=10, score_unit="fraction")
    assert est.get_params()["score_unit"] == "fraction"
    assert est.set_params(score_unit="auto").score_unit == "auto"
    est.set_params(score_unit="fraction").fit(study.runs, ck)
    text = est.to_json()
    assert json.loads(text)["format_version"] == 1
    assert json.loads(text)["config"]["score_unit"] == "fraction"
    back = FLP.from_dict(est.to_dict())
    assert back.score_unit == "fraction" and back.to_json() == text
    loaded = FLP.load(est.save(tmp_path / "flp.json"))
    assert loaded.score_unit == "fraction" and loaded.to_json() == text
    assert np.array_equal(loaded.predict(C), est.predict(C))
    m = FLPM("HumanEval", steps=100, n_init=1, bootstrap=0, score_unit="auto")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m.fit(mix.runs, as_fraction(mix.checkpoints, "HumanEval"))
    text = m.to_json()
    assert json.loads(text)["config"]["score_unit"] == "auto"
    assert json.loads(text)["format_version"] == 1
    loaded = FLPM.load(m.save(tmp_path / "flpm.json"))
    assert loaded.score_unit == "auto" and loaded.to_json() == text
    assert np.array_equal(loaded.predict(F), m.predict(F))


def test_a_bad_score_unit_is_refused_by_constructors_and_saved_fits(study):
    for cls in (FLP, FLPM):
        with pytest.raises(InputError, match="score_unit must be one of auto, points, fraction"):
            cls("ARC", score_unit="percent")
    d = json.loads(FLP("ARC", bootstrap=0).fit(study.runs, study.checkpoints).to_json())
    d["config"]["score_unit"] = "percent"
    with pytest.raises(InputError, match=r"config\.score_unit") as e:
        FLP.from_dict(d)
    assert "\n" not in str(e.value)


def test_the_studies_read_fraction_checkpoints_and_targets():
    """Sec. 6.2 / 6.3: checkpoints and held-out targets in fractions give the points result."""
    m = simulate_single_distribution(tasks=("ARC",), seed=0)
    ck, tg = as_fraction(m.checkpoints, "ARC"), as_fraction(m.targets, "ARC")
    np.testing.assert_allclose(target_scores(tg, "ARC"), target_scores(m.targets, "ARC"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for fn, kw in (
            (compare_loss_to_performance, dict(steps=100, n_init=1)),
            (single_distribution_check, dict(steps=100, n_init=1)),
        ):
            a = fn(m.runs, m.checkpoints, m.targets, "ARC", **kw).predictions
            b = fn(m.runs, ck, tg, "ARC", **kw).predictions
            assert list(b["method"]) == list(a["method"])
            for col in ("actual", "predicted", "relative_error"):
                np.testing.assert_allclose(b[col], a[col], rtol=1e-9)
    with pytest.raises(InputError, match=r"need at least 2 emerged checkpoints"):
        compare_loss_to_performance(m.runs, ck, tg, "ARC", score_unit="points", steps=10)
    with pytest.raises(InputError, match=r"^targets: column 'ARC' row \d+: value .* \[0, 1\]"):
        compare_loss_to_performance(
            m.runs, m.checkpoints, m.targets, "ARC", score_unit="fraction", steps=10
        )
