"""What the command line prints comes from the library: a notebook user calling the estimator
gets the same warning as a CLI user, and the `cli/` package holds no numerical code."""

from __future__ import annotations

import warnings

import pytest

from lmforecast.cli.main import main
from lmforecast.data.evals import load_pythia
from lmforecast.downstream import DownstreamForecaster

MODELS = ["pythia-70m", "pythia-160m", "pythia-410m", "pythia-1b"]


@pytest.fixture(scope="module")
def piqa():
    e = load_pythia()
    return e[e["model"].isin(MODELS) & e["task"].isin(["piqa", "lambada_openai"])]


def _fit_messages(table, bootstrap):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        est = DownstreamForecaster(bootstrap=bootstrap).fit(table, task="piqa")
    return est, [str(x.message) for x in w]


def test_few_replicates_warn_from_the_library(piqa):
    est, msgs = _fit_messages(piqa, 5)
    rough = [m for m in msgs if "are rough" in m]
    assert len(rough) == 1 and "5 replicates" in rough[0] and "--bootstrap" in rough[0]
    lo, hi = est.predict_interval(1e21)  # the rough interval still exists and holds the point
    assert lo <= est.predict(1e21) <= hi
    _, msgs = _fit_messages(piqa, 20)
    assert not [m for m in msgs if "are rough" in m]


def test_the_cli_prints_the_library_warning(piqa, tmp_path, capsys):
    path = tmp_path / "evals.csv"
    piqa.to_csv(path, index=False)
    code = main(["downstream", "fit", "--evals", str(path), "--task", "piqa",
                 "--bootstrap", "5", "--json"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 0
    assert "warning: bootstrap=5 (CLI: --bootstrap): the interval's ends come from 5" in err


def test_a_saved_fit_says_its_kind(piqa, tmp_path):
    from lmforecast.downstream.persist import saved_kind

    path = DownstreamForecaster(bootstrap=0).fit(piqa, task="piqa").save(tmp_path / "d.json")
    assert saved_kind(path) == "DownstreamForecaster"
    # the kind is read from the parsed JSON, wherever the writer put the field
    (tmp_path / "moved.json").write_text('{"x": "' + "y" * 300 + '", "kind": "FLPM"}')
    assert saved_kind(tmp_path / "moved.json") == "FLPM"
    assert saved_kind(tmp_path / "missing.json") is None
    (tmp_path / "bad.json").write_text("not json")
    assert saved_kind(tmp_path / "bad.json") is None
