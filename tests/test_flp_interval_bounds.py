"""FLP / FLP-M intervals never claim certainty (zero width) below emergence or at a score
bound; `flpm predict` warns below the sampled compute and reports its level; the library's
one-point forecasts carry the notes and fields the commands print."""

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from lmforecast import examples
from lmforecast.errors import DomainWarning
from lmforecast.flp.intervals import (
    AT_BOUND_NOTE,
    NOT_EMERGED_NOTE,
    not_emerged_interval,
    null_at_bounds,
)
from lmforecast.flp.mixture import FLPM
from lmforecast.flp.model import FLP

EX = examples.path("flp/runs.csv").parent


def _read(runs, ck):
    return pd.read_csv(EX / runs), pd.read_csv(EX / ck)


@pytest.fixture(scope="module")
def arc():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return FLP("ARC").fit(*_read("runs.csv", "checkpoints.csv"))


@pytest.fixture(scope="module")
def fit_files(tmp_path_factory):
    from lmforecast.cli.main import main

    d = tmp_path_factory.mktemp("flp-fits")
    for verb, runs, ck, task in (("flp", "runs.csv", "checkpoints.csv", "ARC"),
                                 ("flpm", "mixture_runs.csv", "mixture_checkpoints.csv",
                                  "HumanEval")):  # fmt: skip
        argv = [verb, "fit", "--runs", str(EX / runs), "--checkpoints", str(EX / ck)]
        assert main([*argv, "--task", task, "--out", str(d / f"{verb}.json"), "--json"]) == 0
    return d


def test_helpers_never_return_zero_width():
    lo, hi = null_at_bounds([100.0, 0.0, 90.0, 10.0], [100.0, 0.0, 100.0, 20.0])
    assert np.isnan(lo[:2]).all() and np.isnan(hi[:2]).all()  # undefined, not certain
    assert (lo[2], hi[2]) == (90.0, 100.0) and (lo[3], hi[3]) == (10.0, 20.0)  # untouched
    lo, hi = not_emerged_interval([-8.0, 50.0], [0.0, 45.0], [0.0, 55.0], 30.0)
    assert lo.tolist() == [0.0, 45.0] and hi.tolist() == [30.0, 55.0]


def test_not_emerged_flp_interval_covers_chance_and_the_threshold(arc):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lo, hi = arc.predict_interval([3.70504e17], level=0.99)
        df = arc.forecast([3.70504e17], actual=[24.9])
    floor = arc.settings_.chance + arc.threshold
    assert lo[0] == 0.0 and hi[0] >= floor  # was [0, 0]
    assert df["lower"][0] <= 24.9 <= df["upper"][0]


def test_flp_predict_json_not_emerged(cli, fit_files):
    code, out, err = cli("flp", "predict", "--fit", fit_files / "flp.json", "--flops",
                         "3.70504e17", "--level", "0.99", "--json")  # fmt: skip
    assert code == 0, err
    d = json.loads(out)
    assert d["level"] == 0.99 and d["interval"][0] == 0.0 and d["interval"][1] >= 30.0
    assert "not emerged" in d["interval_note"] and "not have emerged" in err


def test_flpm_interval_at_the_top_bound_is_null_or_one_sided(cli, fit_files):
    f = fit_files / "flpm.json"
    for level in ("0.9", "0.99"):
        code, out, err = cli("flpm", "predict", "--fit", f, "--flops-per-source", "1e25,1e24",
                             "--level", level, "--json")  # fmt: skip
        assert code == 0, err
        d = json.loads(out)
        assert d["level"] == float(level) and "interval_note" in d
        assert d["interval"] is None or d["interval"][0] < d["interval"][1] == 100.0


def test_flpm_python_interval_never_zero_width():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = FLPM("HumanEval").fit(*_read("mixture_runs.csv", "mixture_checkpoints.csv"))
        lo, hi = est.predict_interval([[1e25, 1e24], [1e21, 1e20]], level=0.9)
    assert not (lo == hi).any()
    assert lo[1] < est.predict([[1e21, 1e20]])[0] < hi[1]


def test_flpm_predict_warns_below_the_smallest_run_and_has_level(cli, fit_files):
    f = fit_files / "flpm.json"
    code, out, err = cli("flpm", "predict", "--fit", f, "--flops-per-source", "1e18,1e17",
                         "--json")  # fmt: skip
    assert code == 0, err
    assert "below the smallest sampling model" in err and json.loads(out)["level"] == 0.9
    code, out, err = cli("flpm", "predict", "--fit", f, "--flops-per-source", "1e21,1e20")
    assert code == 0 and "below the smallest" not in err
    with pytest.warns(DomainWarning, match="below the smallest"):
        FLPM.from_json(f).warn_if_extrapolating([[1e18, 1e17]])


def test_one_point_forecasts_carry_what_the_commands_print(cli, fit_files):
    flp, flpm = FLP.from_json(fit_files / "flp.json"), FLPM.from_json(fit_files / "flpm.json")
    with pytest.warns(DomainWarning, match="not have emerged"):
        fc = flp.forecast_one(3.70504e17, level=0.99)
    assert fc.notes == (NOT_EMERGED_NOTE,) and fc.interval[0] == 0.0 <= fc.value <= fc.interval[1]
    assert fc.value == flp.predict(3.70504e17)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        top = flpm.forecast_one([1e25, 1e24], level=0.9)
        mix = flpm.best_mixture(1e21, 0.0, 0.5, 0.05, level=0.9)
    assert top.notes == (AT_BOUND_NOTE,) and top.fields["interval_note"] == AT_BOUND_NOTE
    assert mix.fields["best_ratio"] is not None and 0.0 <= mix.fields["best_ratio"] <= 0.5
    assert mix.value == max(p for _, p in mix.fields["curve"])  # the scan's best score
    assert mix.fields["at_scan_edge"] and mix.fields["best_ratio"] == 0.5  # the scan's end
    assert any("end of the scanned range" in line for line in mix.summary().splitlines())
    lines = [
        (fc, ["flp", "predict", "--fit", fit_files / "flp.json", "--flops", "3.70504e17",
             "--level", "0.99"]),
        (top, ["flpm", "predict", "--fit", fit_files / "flpm.json", "--flops-per-source",
              "1e25,1e24"]),
        (mix, ["flpm", "optimize-mixture", "--fit", fit_files / "flpm.json", "--flops", "1e21",
              "--ratios", "0:0.5:0.05"]),
    ]  # fmt: skip
    for forecast, argv in lines:
        code, out, err = cli(*argv, "--json")
        assert code == 0, err
        assert json.loads(out) == json.loads(json.dumps(forecast.contract()))
        code, out, err = cli(*argv)
        assert out.strip() == forecast.summary()
