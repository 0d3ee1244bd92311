"""The library side of `curves fit|predict|plan`: reading the files and the prior
(`curves.inputs`), and what a `CurveForecast` prints and writes (its contract, text table, file
text and ledger record)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from lmforecast.curves import CurveLaw, plan_schedules, simulate_curves
from lmforecast.curves.inputs import (
    MAX_PLAN_STEPS,
    input_file,
    load_fit,
    plan_steps,
    read_prior,
    read_runs,
    read_schedule_file,
)
from lmforecast.curves.prior import BUNDLED, CurvePrior
from lmforecast.errors import InputError

TRUE = {"L0": 3.0, "A": 0.5, "alpha": 0.5, "B": 400.0, "C": 2.0, "beta": 0.6, "gamma": 0.6}


def _schedule(run: str, steps: int, decay: bool) -> pd.DataFrame:
    s = np.arange(0, steps + 1, 200, dtype=float)
    lr = np.where(s < 400, 3e-4 * s / 400, 3e-4)
    if decay:
        lr = np.where(s < 0.8 * steps, lr, 3e-4 - 2.7e-4 * (s - 0.8 * steps) / (0.2 * steps))
    return pd.DataFrame({"run": run, "step": s, "lr": lr})


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    d = tmp_path_factory.mktemp("curves")
    sched = pd.concat([_schedule("wsd", 8000, True), _schedule("const", 8000, False)])
    simulate_curves(sched, TRUE, noise=0.001, seed=3).to_csv(d / "runs.csv", index=False)
    est = CurveLaw(n_boot=0).fit(read_runs(d / "runs.csv"))
    est.save(d / "fit.json")
    return d, est


def test_input_file_refuses_folders_and_missing_paths(tmp_path):
    (tmp_path / "f.csv").write_text("x\n")
    assert input_file(tmp_path / "f.csv", "--runs") == str(tmp_path / "f.csv")
    with pytest.raises(InputError, match=r"^--runs .*: is a folder, expected a file$"):
        input_file(tmp_path, "--runs")
    with pytest.raises(InputError, match=r"^--schedule .*nope.csv: no such file$"):
        read_schedule_file(tmp_path / "nope.csv")


def test_load_fit_and_read_prior(fitted):
    d, est = fitted
    assert load_fit(d / "fit.json").to_json() == est.to_json()
    assert read_prior("auto") == "auto" and read_prior("mpl-25m") == "mpl-25m"
    assert read_prior("none") is None
    prior = read_prior(str(d / "fit.json"))  # a fit of other runs: its decay parameters
    assert isinstance(prior, CurvePrior) and prior.source == f"the fit {d / 'fit.json'}"
    assert prior.values["B"] == pytest.approx(est.params_["all"]["B"])
    assert prior.spread == BUNDLED["mpl-25m"].spread and prior.widen == BUNDLED["mpl-25m"].widen
    with pytest.raises(InputError, match=r"^--prior mpl-1b: not one of auto, none, mpl-25m"):
        read_prior("mpl-1b")


def test_plan_steps():
    assert plan_steps("50000") == 50000 and plan_steps(1e3) == 1000
    assert plan_steps(str(MAX_PLAN_STEPS)) == MAX_PLAN_STEPS
    for bad, words in [("0", "got 0"), ("10.5", "got 10.5"), ("1e12", "got 1e12"),
                       ("x", "a whole number, got 'x'")]:  # fmt: skip
        with pytest.raises(InputError, match=f"^--steps must be .*{words}"):
            plan_steps(bad)


def test_forecast_contract_text_file_and_ledger_record(fitted):
    d, est = fitted
    sched = read_schedule_file(d / "runs.csv")
    new = _schedule("new", 8000, True)
    new["tokens"] = new["step"] * 4096
    fc = est.forecast(new, level=0.8, final=True)
    c = fc.contract()
    assert list(c) == ["forecasts", "notes", "level"] and c["level"] == 0.8
    assert json.loads(fc.file_text(".JSON")) == json.loads(json.dumps(c))
    csv = fc.file_text(".csv").splitlines()
    assert csv[0] == "run,step,loss,lo,hi" and csv[1].startswith("new,8000")
    text = fc.table_text().splitlines()
    assert text[0].split() == ["run", "step", "loss", "80%", "interval"]
    assert text[1].split()[:3] == ["new", "8000", f"{fc.table['loss'].iloc[0]:.4f}"]
    assert "not identified" in text[1]  # a fit without draws gives no interval
    rec = fc.ledger_record(new, "mpl")
    assert rec["method"] == "mpl" and rec["level"] == 0.8
    first = rec["forecasts"][0]
    assert (first["model"], first["D"], first["N"]) == ("new", 8000 * 4096, None)
    assert len(sched) == 82


def test_plan_refuses_a_warmup_that_is_not_whole(fitted):
    _, est = fitted
    with pytest.raises(InputError, match=r"^--warmup \(warmup_steps=\) must be a whole number"):
        plan_schedules(est, 1000, warmup_steps=10.5)
