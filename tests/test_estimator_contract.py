"""Every estimator keeps one contract (`lmforecast.estimator`): fit on a bundled example returns
the estimator; predict gives a float for a scalar input and an ndarray for an array input;
predict_interval(..., *, level, kind="prediction") returns (lo, hi) holding the point, wider at
a higher level, and every kind a class lists gives ordered bounds; an unknown kind or level is
one InputError; save/load and to_dict/from_dict round-trip bit for bit with identical forecasts;
get_params rebuilds an unfitted copy holding the same objects (what scikit-learn's clone
checks), and set_params returns the estimator."""

from __future__ import annotations

import inspect
import json
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pytest

import lmforecast
from lmforecast import examples
from lmforecast.data import load_pythia
from lmforecast.dataconstrained import DataConstrainedLaw
from lmforecast.distill import DistillationScalingLaw
from lmforecast.downstream import DownstreamForecaster
from lmforecast.errors import InputError, NotFittedError
from lmforecast.estimator import Estimator
from lmforecast.flp import FLP, FLPM
from lmforecast.osl import ObservationalScalingLaw
from lmforecast.salience import CapabilitySalience
from lmforecast.salience.features import HashedNgramFeatures
from lmforecast.salience.pipeline import mapped_loss_matrix
from lmforecast.salience.records import loss_table, read_loss_records, read_scores, read_texts
from lmforecast.store.envelope import to_jsonable
from lmforecast.store.kinds import ESTIMATORS
from lmforecast.store.registry import estimator_class
from lmforecast.supervised import SupervisedScalingLaw

try:  # the curve laws of `lmforecast.curves`, where that package is present
    from lmforecast.curves import CurveLaw
except ImportError:  # pragma: no cover
    CurveLaw = None

SUP = pd.read_csv(examples.path("supervised/runs.csv"))
DISTILL_GRID = {
    "log_A'": [7.7], "log_B'": [10.1], "alpha'": [0.32], "beta'": [0.64], "gamma'": [0.76],
    "c0": [2.5], "c1": [522.6], "f1": [0.09], "log_d1": [0.27],
}  # fmt: skip


# Bootstrap counts are small: the contract (shapes, ordered bounds around the point, wider at a
# higher level, bit-for-bit round trips) holds at any count of at least a few replicates.
@dataclass
class Case:
    """How to build, fit and query one estimator class."""

    make: Any  # () -> unfitted estimator
    fit: Any  # est -> est.fit(...) on a bundled example
    scalar: tuple | None  # args of a scalar (one-point) input, None: the class takes tables only
    array: tuple  # args of an array input (3 points)
    kw: dict | None = None  # keyword arguments of both (e.g. N=, D=)


def _distill_runs():
    runs = pd.read_csv(examples.path("distill/distill_runs.csv"))
    sup = SUP.rename(columns={"N": "N_S", "D": "D_S", "loss": "L_S"})
    return pd.concat([runs, sup[["N_S", "D_S", "L_S"]]])


def _flp_fit(est):
    return est.fit(pd.read_csv(examples.path("flp/runs.csv")),
                   pd.read_csv(examples.path("flp/checkpoints.csv")))  # fmt: skip


def _flpm_fit(est):
    return est.fit(pd.read_csv(examples.path("flp/mixture_runs.csv")),
                   pd.read_csv(examples.path("flp/mixture_checkpoints.csv")))  # fmt: skip


PYTHIA_SMALL = ["pythia-70m", "pythia-160m", "pythia-410m", "pythia-1b", "pythia-1.4b"]


def _salience_data():
    texts = read_texts(examples.path("salience/texts.jsonl"))
    table = loss_table(read_loss_records(examples.path("salience/losses.jsonl")),
                       {t: len(s) for t, s in texts.items()})  # fmt: skip
    scores = read_scores(examples.path("salience/scores.csv"), "reasoning")
    feats = HashedNgramFeatures().extract(texts)
    models = scores["model"].tolist()
    L = mapped_loss_matrix(table, feats, models)
    return feats, L, scores["score"].to_numpy(float), scores["split"].to_numpy(str)


SAL = _salience_data()
OSL_TABLE = pd.read_csv(examples.path("osl/base_models.csv"))

CASES = {
    "SupervisedScalingLaw": Case(
        lambda: SupervisedScalingLaw("chinchilla", bootstrap=4, n_jobs=1, n_polish=4),
        lambda e: e.fit(SUP),
        (7e9, 1.4e11),
        ([1e9, 7e9, 3e10], [2e10, 1.4e11, 6e11]),
    ),
    "DistillationScalingLaw": Case(
        lambda: DistillationScalingLaw(
            grid=DISTILL_GRID,
            n_polish=1,
            bootstrap=4,
            boot_polish=1,
            boot_grid=DISTILL_GRID,
            n_jobs=1,
        ),  # fmt: skip
        lambda e: e.fit(_distill_runs()),
        (1e9, 2e10, 2.3),
        ([5e8, 1e9, 2e9], [1e10, 2e10, 4e10], [2.3, 2.3, 2.2]),
    ),
    "FLP": Case(lambda: FLP("ARC", bootstrap=40), _flp_fit, (1e22,), ([1e21, 1e22, 1e23],)),
    "FLPM": Case(
        lambda: FLPM("HumanEval", mapper="domain-linear", bootstrap=20),
        _flpm_fit,
        ([6.74e21, 2.89e21],),
        ([[6.74e21, 2.89e21], [1e21, 1e21], [2e21, 5e20]],),
    ),
    "DownstreamForecaster": Case(
        lambda: DownstreamForecaster(bootstrap=20),
        lambda e: e.fit(
            load_pythia(), task="arc_easy", loss_task="lambada_openai", models=PYTHIA_SMALL
        ),  # fmt: skip
        (),
        (),
        kw={"N": 2.775e9, "D": 3e11},
    ),
    "ObservationalScalingLaw": Case(
        lambda: ObservationalScalingLaw(3),
        lambda e: e.fit(OSL_TABLE, "HumanEval"),
        (OSL_TABLE.iloc[0],),
        (OSL_TABLE.head(3),),
    ),
    "CapabilitySalience": Case(
        lambda: CapabilitySalience(25, n_steps=30, bootstrap=50),
        lambda e: e.fit(SAL[0].H, SAL[1], SAL[0].n_chars, SAL[2], SAL[3]),
        (SAL[1][0],),
        (SAL[1][:3],),
    ),
    "DataConstrainedLaw": Case(
        lambda: DataConstrainedLaw(bootstrap=4, n_polish=4),
        lambda e: e.fit(pd.read_csv(examples.path("dataconstrained/runs.csv"))),
        (1e9, 4e10, 1e10),
        ([1e9, 2e9, 4e9], [4e10, 4e10, 8e10], [1e10, 1e10, 2e10]),
    ),
}
if CurveLaw is not None:
    CASES["CurveLaw"] = Case(
        lambda: CurveLaw(),
        lambda e: e.fit(examples.path("curves/curves.csv")),
        None,
        (pd.read_csv(examples.path("curves/schedule.csv")),),
    )


SLOW = {"DistillationScalingLaw", "DataConstrainedLaw"}  # fits of 10-25 s on a busy 2-core box


@pytest.fixture(
    scope="module",
    params=[pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in sorted(CASES)],
)
def case(request):
    c = CASES[request.param]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = c.make()
        fitted = c.fit(est)
    return request.param, c, est, fitted


def _pred(est, args, kw, **more):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.predict(*args, **(kw or {}), **more)


def _raw_interval(est, args, kw, **more):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return est.predict_interval(*args, **(kw or {}), **more)


def _interval(est, args, kw, **more):
    out = _raw_interval(est, args, kw, **more)
    return tuple(np.atleast_1d(np.asarray(v, float)) for v in out)


def test_predict_interval_returns_lo_hi(case):
    name, c, est, _ = case
    out = _raw_interval(est, c.array, c.kw)
    assert isinstance(out, tuple) and len(out) == 2


def test_every_estimator_class_is_in_the_conformance_cases():
    import lmforecast.curves  # noqa: F401  (CurveLaw, where present)

    def subclasses(cls):
        for s in cls.__subclasses__():
            yield s
            yield from subclasses(s)

    found = {c.__name__ for c in subclasses(Estimator) if c.__module__.startswith("lmforecast.")}
    assert found <= set(CASES), f"estimators without a conformance case: {found - set(CASES)}"


def test_fit_returns_the_estimator(case):
    _, _, est, fitted = case
    assert fitted is est


def test_predict_types(case):
    name, c, est, _ = case
    if c.scalar is not None:
        p = _pred(est, c.scalar, c.kw)
        assert type(p) is float and np.isfinite(p), (name, type(p))
    if c.array or c.kw is None:
        P = _pred(est, c.array, c.kw)
        assert isinstance(P, np.ndarray) and P.shape == (len(c.array[0]),), (name, P)
    else:  # the keyword form with arrays
        P = est.predict(**{k: np.array([v, v]) for k, v in c.kw.items()})
        assert isinstance(P, np.ndarray) and P.shape == (2,)


def test_interval_holds_the_point_at_every_kind_and_level(case):
    name, c, est, _ = case
    args = c.array
    point = np.atleast_1d(_pred(est, args, c.kw))
    lo, hi = _interval(est, args, c.kw, level=0.9)
    ok = np.isfinite(lo) & np.isfinite(hi)  # NaN: not identified, said so
    assert ok.any(), name
    assert np.all(lo[ok] <= point[ok] + 1e-12) and np.all(point[ok] <= hi[ok] + 1e-12), name
    assert np.array_equal(_interval(est, args, c.kw, level=0.9, kind="prediction")[0], lo)
    for kind in est.interval_kinds:  # every kind a class has gives finite bounds in order
        klo, khi = _interval(est, args, c.kw, level=0.9, kind=kind)
        both = np.isfinite(klo) & np.isfinite(khi)
        assert klo.shape == lo.shape and both.any() and np.all(klo[both] <= khi[both]), kind
    wide_lo, wide_hi = _interval(est, args, c.kw, level=0.99)
    both = ok & np.isfinite(wide_lo) & np.isfinite(wide_hi)
    assert np.all(wide_hi[both] - wide_lo[both] >= hi[both] - lo[both] - 1e-9), name


def test_contract_is_strict_json_with_the_fitted_coefficients(case):
    """contract() (what the fit verb prints with --json) exists on every class, serialises as
    strict JSON and carries the fit's numbers, all finite."""
    name, c, est, _ = case
    d = json.loads(json.dumps(to_jsonable(est.contract()), allow_nan=False))
    assert isinstance(d, dict) and d, name
    numbers = [v for v in pd.json_normalize(d).iloc[0].tolist() if isinstance(v, float)]
    assert numbers and all(np.isfinite(numbers)), (name, d)


def test_unknown_kind_and_bad_level_are_one_input_error(case):
    name, c, est, _ = case
    with pytest.raises(InputError, match="kind must be one of 'prediction', 'confidence'"):
        _interval(est, c.array, c.kw, kind="credible")
    for level in (0.0, 1.0, 1.5, "0.9"):
        with pytest.raises(InputError, match="level must be strictly between 0 and 1"):
            _interval(est, c.array, c.kw, level=level)
    sig = inspect.signature(type(est).predict_interval).parameters
    assert sig["level"].kind is inspect.Parameter.KEYWORD_ONLY and sig["level"].default == 0.9
    assert sig["kind"].kind is inspect.Parameter.KEYWORD_ONLY
    assert sig["kind"].default == "prediction" == est.interval_kinds[0]


def test_save_load_round_trips_bit_for_bit(case, tmp_path):
    name, c, est, _ = case
    d = est.to_dict()
    assert json.loads(json.dumps(d)) == d or d == type(est).from_dict(d).to_dict()
    path = est.save(tmp_path / "fit.json")
    assert str(path) == str(tmp_path / "fit.json") and path.is_file()
    back = type(est).load(path)
    assert type(back) is type(est)
    assert back.to_json() == est.to_json() == path.read_text()
    assert type(est).from_dict(est.to_dict()).to_dict() == est.to_dict()
    assert np.array_equal(_pred(back, c.array, c.kw), _pred(est, c.array, c.kw))
    a, b = _interval(back, c.array, c.kw), _interval(est, c.array, c.kw)
    assert all(np.array_equal(x, y, equal_nan=True) for x, y in zip(a, b, strict=True)), name
    assert isinstance(back.summary(), str) and back.summary()


def test_lmforecast_load_returns_the_saved_class_bit_for_bit(case, tmp_path):
    name, c, est, _ = case
    path = est.save(tmp_path / "fit.json")
    assert json.loads(path.read_text())["kind"] == type(est).__name__
    back = lmforecast.load(path)
    assert type(back) is type(est)
    # the strict JSON of to_dict() (a NaN, e.g. a preset's objective, never equals itself)
    assert back.to_json() == est.to_json() == path.read_text()
    assert np.array_equal(_pred(back, c.array, c.kw), _pred(est, c.array, c.kw))


def test_every_other_estimator_refuses_the_fit_naming_both_kinds(case, tmp_path):
    name, c, est, _ = case
    path = est.save(tmp_path / "fit.json")
    kind = type(est).__name__
    for other in ESTIMATORS:
        if other == kind:
            continue
        with pytest.raises(InputError) as e:
            estimator_class(other).load(path)
        msg = str(e.value)
        assert "\n" not in msg and f"holds a {kind} fit, not a {other}" in msg, msg
        assert "lmforecast.load" in msg


def test_the_kind_table_names_every_estimator_class():
    import lmforecast.curves  # noqa: F401  (CurveLaw, where present)

    def subclasses(cls):
        for s in cls.__subclasses__():
            yield s
            yield from subclasses(s)

    found = {c.__name__ for c in subclasses(Estimator) if c.__module__.startswith("lmforecast.")}
    assert found <= set(ESTIMATORS), f"estimators without a saved kind: {found - set(ESTIMATORS)}"
    for kind in ESTIMATORS:
        assert estimator_class(kind).__name__ == kind


def test_get_params_rebuilds_an_unfitted_copy_and_set_params_returns_self(case):
    name, c, est, _ = case
    params = est.get_params()
    assert set(params) == set(type(est)._param_names())
    copy = type(est)(**params)
    again = copy.get_params()
    assert all(again[k] is params[k] for k in params), name  # scikit-learn's clone check
    with pytest.raises(NotFittedError):
        copy.summary()
    key = next(iter(params))
    assert copy.set_params(**{key: params[key]}) is copy
    with pytest.raises(InputError, match="has no parameter 'no_such_knob'"):
        copy.set_params(no_such_knob=1)
    assert repr(copy) == repr(type(est)(**params))


def test_sklearn_clone_when_installed(case):
    base = pytest.importorskip("sklearn.base")
    _, _, est, _ = case
    twin = base.clone(est)
    assert type(twin) is type(est) and twin.get_params().keys() == est.get_params().keys()
