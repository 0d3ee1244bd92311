"""The estimator contract a notebook user relies on: one not-fitted
error for every estimator, predict takes the table fit takes, and mistakes at the door are
InputErrors that name the value, never internal tracebacks."""

import pandas as pd
import pytest

from lmforecast.backtest import rolling_origin
from lmforecast.dataconstrained import DataConstrainedLaw
from lmforecast.distill import DistillationScalingLaw
from lmforecast.downstream import DownstreamForecaster
from lmforecast.errors import InputError, NotFittedError
from lmforecast.examples import path
from lmforecast.flp import FLP, FLPM
from lmforecast.osl import ObservationalScalingLaw
from lmforecast.salience import CapabilitySalience
from lmforecast.supervised import SupervisedScalingLaw

RUNS = pd.read_csv(path("supervised/runs.csv"))

UNFITTED = [
    (SupervisedScalingLaw, "exponents_"),  # a property reading the missing params_
    (SupervisedScalingLaw, "result_"),
    (DistillationScalingLaw, "E_"),
    (FLP, "max_flops_"),
    (FLPM, "share_range_"),
    (ObservationalScalingLaw, "result_"),
    (DataConstrainedLaw, "params_"),
    (DownstreamForecaster, "result_"),
    (CapabilitySalience, "fit_"),
]


def _make(cls):
    if cls in (FLP, FLPM):
        return cls("ARC")
    if cls is DownstreamForecaster:
        return cls("flp")
    if cls is CapabilitySalience:
        return cls(chance=25)
    return cls()


@pytest.mark.parametrize("cls, attr", UNFITTED, ids=[f"{c.__name__}.{a}" for c, a in UNFITTED])
def test_a_learned_attribute_before_fit_is_one_not_fitted_error(cls, attr):
    est = _make(cls)
    with pytest.raises(NotFittedError, match=f"this {cls.__name__} is not fitted yet"):
        getattr(est, attr)
    assert not hasattr(est, attr)  # an AttributeError too, as in scikit-learn


def test_summary_and_predict_before_fit_raise_the_same_error():
    with pytest.raises(NotFittedError):
        ObservationalScalingLaw().predict(RUNS)  # was AttributeError: ... 'result_'
    with pytest.raises(NotFittedError):
        SupervisedScalingLaw().summary()


def test_predict_takes_the_table_fit_takes():
    law = SupervisedScalingLaw("chinchilla", intervals=False).fit(RUNS)
    head = RUNS.head(3)
    assert list(law.predict(head)) == list(law.predict(head["N"], head["D"]))
    with pytest.raises(InputError, match="missing column.*'D'"):
        law.predict(head.drop(columns=["D", "C"], errors="ignore"))
    with pytest.raises(InputError, match=r"got '7B' \(write 7e9"):
        law.predict(N="7B", D=1e10)


def test_mistakes_at_the_door_name_the_value():
    with pytest.raises(InputError, match="no rows"):
        SupervisedScalingLaw(intervals=False).fit(RUNS.iloc[:0])
    with pytest.raises(InputError, match="whole number >= 0, got 2.5"):
        SupervisedScalingLaw(bootstrap=2.5)
    with pytest.raises(InputError, match="'chinchilla' is not an adapter"):
        rolling_origin(RUNS, ["chinchilla"])


def test_supervised_fit_round_trips_through_to_json_as_the_other_estimators_do(tmp_path):
    law = SupervisedScalingLaw(bootstrap=4, n_jobs=1).fit(RUNS)
    text = law.to_json(tmp_path / "fit.json")
    assert (tmp_path / "fit.json").read_text() == text
    for back in (
        SupervisedScalingLaw.from_json(text),
        SupervisedScalingLaw.load(tmp_path / "fit.json"),
    ):
        assert back.to_json() == text
        assert list(back.predict_interval(RUNS.head(2))[0]) == list(
            law.predict_interval(RUNS.head(2))[0]
        )


def test_downstream_summary_gives_member_parameters_their_intervals():
    import re
    import warnings

    from lmforecast.data import load_pythia

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = DownstreamForecaster("ensemble", bootstrap=40).fit(load_pythia(), task="piqa")
    s = est.summary()
    line = next(ln for ln in s.splitlines() if ln.strip().startswith("local-linear:"))
    vals = re.findall(r"(w[01]) (\S+) \[(\S+), (\S+)\]", line)
    assert len(vals) == 2, line
    for _, v, lo, hi in vals:
        assert float(lo.rstrip(",")) <= float(v.rstrip(",")) <= float(hi.rstrip("],"))


def test_predict_takes_a_table_with_c_instead_of_d():
    law = SupervisedScalingLaw("chinchilla", intervals=False).fit(RUNS)
    head = RUNS.head(3)
    with_c = head[["N"]].assign(C=6.0 * head["N"] * head["D"])
    assert law.predict(with_c) == pytest.approx(law.predict(head))


def test_one_parameter_table_words_the_flag_and_the_argument_alike(cli):
    """`params.CONSTRAINTS` checks an estimator's argument and the CLI flag behind it: the same
    range, the same words, one line."""
    from lmforecast.params import CONSTRAINTS, Interval, check, check_kind

    with pytest.raises(InputError, match=r"^level must be strictly between 0 and 1, got 1.5$"):
        SupervisedScalingLaw.from_preset("busbridge2025").predict_interval(1e9, 2e10, level=1.5)
    code, out, err = cli("supervised", "predict", "--preset", "busbridge2025", "--params", "1e9",
                         "--tokens", "2e10", "--level", "1.5")  # fmt: skip
    assert code == 2 and out == "" and err.count("\n") == 1
    assert f"'1.5' must be {CONSTRAINTS['level'].bounds()}" in err
    with pytest.raises(InputError, match=r"^bootstrap must be >= 0, got -1$"):
        DistillationScalingLaw(bootstrap=-1)
    code, _, err = cli("distill", "fit", "--runs", "x.csv", "--bootstrap", "-1")
    assert code == 2 and "--bootstrap must be >= 0, got -1" in err
    assert check("bootstrap", 3.0) == 3 and isinstance(check("bootstrap", 3.0), int)
    odd = Interval(0, None, integer=True, exclude=(1,), why=" (one resample has no spread)")
    with pytest.raises(InputError, match=r"n must be >= 0 and not 1 \(one resample"):
        check("n", 1, odd)
    with pytest.raises(InputError, match="kind must be one of 'prediction', 'confidence', got"):
        check_kind("forecast")
