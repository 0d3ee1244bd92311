"""Every derived answer is consistent or refused: a point inside its own interval, an interval
spanning more than three decades (or an exponent's leaving (0, 1)) shown as "not identified by
these runs" with the reason (null in JSON), `identified` agreeing with it; N*/D* from runs at
one D/N refused; isoFLOP budgets grouped from exact FLOPs; far forecasts warned both ways."""

from __future__ import annotations

import contextlib
import io
import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest

from lmforecast.compute.consistency import (
    MAX_DECADES,
    checked_rows,
    interval_problem,
    split_problem,
)
from lmforecast.examples import path
from lmforecast.isoflop import fit_isoflop, isoflop_table, simulate_isoflops
from lmforecast.laws import get_law
from lmforecast.supervised import PRESETS


def test_interval_problem_names_each_contradiction():
    assert interval_problem(97.6, 248.0, 910.0) == (
        "its interval [248, 910] excludes the estimate 97.6"
    )
    assert "spans 3.5 decades" in interval_problem(40.0, 24.7, 72753.0)
    assert "meaningful range 0 to 1" in interval_problem(0.3627, -34.1, 0.42, positive=False,
                                                          valid=(0.0, 1.0))  # fmt: skip
    assert interval_problem(1.41e8, 1.96e9, 1.46e11) is not None
    assert interval_problem(5.0, 1.0, 10**MAX_DECADES * 0.99) is None  # under three decades
    assert interval_problem(0.45, 0.44, 0.47, positive=False, valid=(0.0, 1.0)) is None
    lo, hi, notes = checked_rows([1.0, 5.0], [0.5, 6.0], [2.0, 7.0], "N*")
    assert np.isfinite([lo[0], hi[0]]).all() and np.isnan([lo[1], hi[1]]).all()
    assert notes == ["N* at budget 2: not identified by these runs: its interval [6, 7] "
                     "excludes the estimate 5"]  # fmt: skip


def _runs(tmp_path, N, D, name, noise=0.005, seed=1):
    law = get_law("chinchilla")
    rng = np.random.default_rng(seed)
    L = law.predict(dict(PRESETS["hoffmann2022"]["params"]), N=N, D=D)
    L = L * np.exp(rng.normal(0, noise, len(N)))
    f = tmp_path / name
    pd.DataFrame({"N": N, "D": D, "loss": L}).to_csv(f, index=False)
    return f


@pytest.fixture(scope="module")
def at_twenty(tmp_path_factory):
    """Six runs all at D/N = 20 (the issue's allocation example), fitted once."""
    from lmforecast.cli.main import main

    tmp = tmp_path_factory.mktemp("dn20")
    N = np.array([5e7, 1e8, 2e8, 4e8, 8e8, 1.6e9])
    runs = _runs(tmp, N, 20 * N, "runs.csv")
    out, printed = tmp / "fit.json", io.StringIO()
    with warnings.catch_warnings(), contextlib.redirect_stdout(printed):
        warnings.simplefilter("ignore")
        assert main(["supervised", "fit", "--runs", str(runs), "--out", str(out), "--quiet",
                     "--json"]) == 0  # fmt: skip
    return json.loads(printed.getvalue()), out


def test_allocate_from_runs_at_one_ratio_is_refused(cli, at_twenty):
    _, fit = at_twenty
    code, out, err = cli("supervised", "allocate", "--fit", fit, "--flops", "1e21")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "N/D split is not identified by these runs" in err and "D/N = 20" in err
    meta = json.loads(fit.read_text())["meta"]
    assert split_problem(meta) is not None
    from lmforecast.errors import InputError
    from lmforecast.supervised import SupervisedScalingLaw

    law = SupervisedScalingLaw.load(fit)  # the library refuses it too, and its summary says why
    with pytest.raises(InputError, match="N/D split is not identified"):
        law.allocate(1e21)
    # A and B trade off along a ridge at one D/N: which of them the resampled sizes refuse
    # depends on where the fit lands, so the summary is checked against the saved refusals
    refused = meta["identification"]["not_identified"]
    assert {"A", "B"} & set(refused), refused
    rows = {ln.split()[0]: ln for ln in law.summary().splitlines() if ln[:1].isalpha()}
    for name in (n for n in refused if n in ("A", "B", "E")):
        assert rows[name].endswith("not identified by these runs"), rows[name]


def test_saved_identified_agrees_with_the_parameter_intervals(at_twenty):
    d, fit = at_twenty
    refused = d["not_identified"]
    assert refused, "A and B span more than three decades on these six runs"
    assert d["identified"] is False and all(k in d["identification"] for k in refused)
    saved = json.loads(fit.read_text())["meta"]["identification"]
    assert saved["identified"] is False and saved["not_identified"] == refused
    for name, pair in d["ci"].items():
        if pair is None:
            assert name in refused and refused[name].startswith("not identified by these runs")
            continue
        assert pair[0] <= d["params"][name] <= pair[1]
        if name in ("A", "B", "E"):
            assert math.log10(pair[1] / pair[0]) <= MAX_DECADES


@pytest.fixture(scope="module")
def sound_fit(tmp_path_factory):
    """The example runs (80, D/N over 3.4 decades) fitted once with the defaults."""
    from lmforecast.supervised import SupervisedScalingLaw

    f = tmp_path_factory.mktemp("sound") / "f.json"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = SupervisedScalingLaw(progress=False).fit(pd.read_csv(path("supervised/runs.csv")))
    f.write_text(m.to_json())
    return f


def test_a_sound_fit_gives_points_inside_their_allocation_intervals(cli, sound_fit):
    for C in ("1e20", "1e22", "1e24"):
        code, out, _ = cli("supervised", "allocate", "--fit", sound_fit, "--flops", C,
                           "--json")  # fmt: skip
        d = json.loads(out)
        assert code == 0 and d["not_identified"] == []
        assert d["N_interval"][0] <= d["N"] <= d["N_interval"][1]
        assert d["D_interval"][0] <= d["D"] <= d["D_interval"][1]
        assert d["interval"][0] <= d["loss"] <= d["interval"][1]


def test_far_forecasts_warn_with_the_distance_below_and_above(cli, sound_fit):
    code, out, err = cli("supervised", "predict", "--fit", sound_fit, "--params", "1000",
                         "--tokens", "20B")  # fmt: skip
    assert code == 0 and "1.03e+05x outside the fitted runs (below their smallest N=" in err
    lo, hi = (float(v) for v in out.split("[")[1].split("]")[0].split(","))
    point = float(out.split("=")[-1].split()[0])
    assert lo <= point <= hi
    code, _, err = cli("supervised", "predict", "--fit", sound_fit, "--params", "1e13",
                       "--tokens", "1e14")  # fmt: skip
    assert code == 0 and "(beyond their largest N=" in err
    # a preset warns below its paper's smallest model too (Hoffmann et al.: 70M parameters)
    code, _, err = cli("supervised", "predict", "--preset", "hoffmann2022", "--params", "1000",
                       "--tokens", "20B")  # fmt: skip
    assert code == 0 and "7e+04x outside the fitted runs (below their smallest N=7e+07" in err


def _exact_flops(seed=0, spread=0.03):
    """A simulated ladder whose C column holds each run's exact FLOPs: within +-3% of its
    nominal budget, as with attention FLOPs or rounded step counts."""
    runs = simulate_isoflops(seed=seed)
    nominal = runs["C"].to_numpy(float)
    rng = np.random.default_rng(seed)
    exact = nominal * np.exp(rng.uniform(-spread, spread, len(runs)))
    return runs.assign(C=exact), nominal


def test_isoflop_groups_runs_whose_flops_differ_by_a_few_percent(cli, tmp_path):
    runs, nominal = _exact_flops()
    t = isoflop_table(runs)
    assert t["budget"].nunique() == np.unique(nominal).size
    assert "grouped into budgets" in t.attrs["grouping"]
    ref = fit_isoflop(isoflop_table(runs.assign(C=nominal)), 2, n_boot=50)
    got = fit_isoflop(t, 2, n_boot=50)
    assert got.a == pytest.approx(ref.a, abs=0.01)  # true a: simulate's Hoffmann exponents
    f = tmp_path / "exact.csv"
    runs.to_csv(f, index=False)
    code, out, err = cli("isoflop", "fit", "--runs", f, "--bootstrap", "20")
    assert code == 0, err
    assert "model size(s)" not in err and "grouped into budgets (runs within 5%" in out
    # a nominal `budget` column is used as the budgets when present, and said so
    f2 = tmp_path / "nominal.csv"
    runs.assign(budget=nominal).to_csv(f2, index=False)
    code, out, _ = cli("isoflop", "fit", "--runs", f2, "--bootstrap", "20", "--json")
    d = json.loads(out)
    assert code == 0 and "column 'budget'" in d["grouping"]
    assert sorted(c for c, *_ in d["budgets"]) == sorted(np.unique(nominal).tolist())
    # a run far from every budget is its own budget of one size: the refusal says how to fix it
    odd = runs.copy()
    odd.loc[0, "C"] *= 1.5
    odd.to_csv(f, index=False)
    code, _, err = cli("isoflop", "fit", "--runs", f, "--bootstrap", "20")
    assert code == 2 and "has 1 model size(s)" in err and "add a 'budget' column" in err


def test_isoflop_exponent_interval_outside_zero_one_is_not_identified(cli, tmp_path):
    runs = simulate_isoflops(seed=3, budgets=(1e18, 1.6e18, 2.5e18), n_sizes=4, noise=0.02)
    res = fit_isoflop(isoflop_table(runs), 2, n_boot=100, seed=0)
    assert set(res.meta["not_identified"]) == {"a", "b"}
    c = res.contract()
    assert c["a_interval"] is None and "meaningful range 0 to 1" in c["not_identified"]["a"]
    assert "not identified by these runs" in res.summary().splitlines()[2]
    again = type(res).from_json(res.to_json())  # the refusal survives a save
    assert again.contract()["not_identified"] == c["not_identified"]
    # a sound ladder keeps its intervals, each around its point
    ok = fit_isoflop(isoflop_table(simulate_isoflops(seed=3)), 2, n_boot=50, seed=0,
                     at_flops=[1e22])  # fmt: skip
    assert "not_identified" not in ok.meta
    assert ok.a_interval[0] <= ok.a <= ok.a_interval[1]
    row = ok.meta["at_flops"][0]
    assert row["N_interval"][0] <= row["N_star"] <= row["N_interval"][1]
