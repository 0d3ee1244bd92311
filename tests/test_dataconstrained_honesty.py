"""The data-constrained fit says what the runs cannot pin: single-epoch runs do not give
R*_D = 2 (a grid starting value) as an estimate, and 16-epoch runs that put R*_D on its 1e5
bound (an epochs advice of "half value after 6.9e4 epochs") say so."""

import json
import warnings

import pytest

from lmforecast.dataconstrained import DataConstrainedLaw
from lmforecast.dataconstrained.simulate import simulate_runs
from lmforecast.errors import DomainWarning
from lmforecast.examples import path


@pytest.fixture(scope="module")
def three_epoch_fit():
    """One fit of runs of 1, 2 and 4 epochs, shared read-only by the tests of its saved form."""
    return DataConstrainedLaw(bootstrap=0, n_polish=4).fit(simulate_runs(epochs=(1, 2, 4), seed=0))


def test_single_epoch_runs_say_the_decay_constants_are_not_identified():
    d = simulate_runs(epochs=(1,), seed=0)
    with pytest.warns(DomainWarning, match="no run repeats data.*not identified"):
        DataConstrainedLaw(bootstrap=0, n_polish=4).fit(d)


def test_a_decay_constant_on_its_bound_is_named():
    import numpy as np

    from lmforecast.dataconstrained.model import _warn_unidentified
    from lmforecast.laws import get_law

    d = simulate_runs(seed=0)
    m = DataConstrainedLaw(bootstrap=0, n_polish=4).fit(d)
    res = m.result_
    res.theta = list(np.r_[res.theta[:5], np.log(1e5), res.theta[6]])  # R*_D on its bound
    res.params = get_law("data-constrained").to_natural(np.asarray(res.theta))
    with pytest.warns(DomainWarning, match=r"RD_star = 1e\+05 ended on its bound") as w:
        _warn_unidentified(get_law("data-constrained"), res, m.data_)
    assert "RN_star" not in str(w[0].message)


def test_well_identified_fit_is_quiet_and_its_summary_labels_the_interval():
    with warnings.catch_warnings():
        warnings.simplefilter("error", DomainWarning)
        m = DataConstrainedLaw(bootstrap=20).fit(simulate_runs(noise=0.003, seed=2))
    s = m.summary()
    assert "90% bootstrap percentile interval (20 warm-started refits)" in s
    assert "outside its own interval" not in s
    v = m.params_["beta"]
    m.result_.ci["beta"] = [v * 1.01, v * 1.02]  # as 5 refits gave on the datablations runs
    assert "estimate outside its own interval (beta)" in m.summary()


def test_epochs_beyond_the_fitted_runs_warn_even_from_a_saved_fit(three_epoch_fit, tmp_path):
    m = three_epoch_fit
    m.save(tmp_path / "dc.json")
    back = DataConstrainedLaw.load(tmp_path / "dc.json")
    with pytest.warns(DomainWarning, match="epochs up to 64.*at most 4"):
        back.epochs_advice(1e9, 1e10, epochs=[1, 2, 4, 8, 16, 32, 64])
    with warnings.catch_warnings():
        warnings.simplefilter("error", DomainWarning)
        assert back.epochs_advice(1e9, 1e10)["epochs"] == [1, 2, 4]  # default grid stops there
        ans = back.epochs_answer(1e9, 1e10)  # what `data-constrained epochs` prints
    a = back.epochs_advice(1e9, 1e10)
    assert ans.contract() == a and len(ans.summary().splitlines()) == 1 + len(a["epochs"])
    assert f"loss floor {a['loss_floor']:.4f}" in ans.summary()


def test_cli_two_stage_fit_and_max_rows(cli, tmp_path):
    runs = path("dataconstrained/runs.csv")
    code, out, err = cli("supervised", "fit", "--form", "data-constrained", "--runs", runs,
                         "--dc-fit", "two-stage", "--no-intervals", "--json")  # fmt: skip
    assert code == 0, err
    p = json.loads(out)["params"]
    joint = DataConstrainedLaw(bootstrap=0).fit(__import__("pandas").read_csv(runs)).params_
    assert p["E"] != joint["E"]  # stage 1 pinned E, A, B, alpha, beta on the single-epoch runs
    code, _, err = cli("supervised", "fit", "--form", "data-constrained", "--runs", runs,
                       "--max-rows", "10")  # fmt: skip
    assert code == 2 and "--max-rows" in err  # was ignored for this form
    code, _, err = cli("supervised", "fit", "--runs", path("supervised/runs.csv"),
                       "--dc-fit", "joint")  # fmt: skip
    assert code == 2 and "--dc-fit" in err


@pytest.mark.parametrize("field", ["max_epochs", "fitted_range"])
def test_a_saved_fit_without_a_field_every_fit_writes_is_refused(three_epoch_fit, tmp_path, field):
    from lmforecast.errors import InputError

    d = json.loads(three_epoch_fit.to_json())
    del d["meta"][field]
    (tmp_path / "dc.json").write_text(json.dumps(d))
    with pytest.raises(InputError, match=f"field 'meta.{field}': is missing") as e:
        DataConstrainedLaw.load(tmp_path / "dc.json")
    assert "\n" not in str(e.value)
