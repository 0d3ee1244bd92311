"""Issue 12 (paper fidelity), FLP-M: runs with a source share of 0 (floor or drop), the average
R^2 of the linear stage-2 fits and the Table 3 M1-M4 comparison as a public function."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from lmforecast.errors import InputError
from lmforecast.examples import path as ep
from lmforecast.flp.mixture import FLPM
from lmforecast.flp.simulate import simulate_flpm


@pytest.fixture(scope="module")
def study():
    return simulate_flpm(seed=0)


def _fit(study, task="HumanEval", **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return FLPM(task, bootstrap=0, **kw).fit(study.runs, study.checkpoints)


def test_zero_share_sensitivity_matches_refits(study):
    est = _fit(study)
    zs = est.zero_share_sensitivity_
    assert est.n_zero_share_ == 6 and zs["share"] == 0.01
    f = zs["forecast"]
    assert set(f) == {"floor 0.01", "floor 0.001", "floor 1e-06", "drop"}
    # the floor matters at a small share: > 1 point between 1e-2 and 1e-6 on HumanEval
    assert abs(f["floor 0.01"] - f["floor 1e-06"]) > 1.0
    q = np.array([[0.99, 0.01]]) * zs["flops"]
    # each entry is the forecast of an FLP-M fitted with that setting (stage 2 is unchanged)
    for name, kw in [("floor 1e-06", {"zero_floor": 1e-6}), ("drop", {"zero_share": "drop"})]:
        other = _fit(study, **kw)
        assert other.predict(q, clip=False)[0] == pytest.approx(f[name], abs=1e-9)
    assert f["floor 0.001"] == pytest.approx(est.predict(q, clip=False)[0], abs=1e-9)
    assert "zero-share runs: 6 (floored at 0.001 x total)" in est.summary()
    back = FLPM.from_json(est.to_json())
    assert back.zero_share_sensitivity_ == json.loads(json.dumps(zs))
    assert back.to_json() == est.to_json()


def test_drop_leaves_zero_share_runs_out_of_stage1(study):
    est = _fit(study, zero_share="drop")
    assert est.n_runs_ == len(study.runs) - 6 and est.n_zero_share_ == 6
    assert "dropped from stage 1" in est.summary()


def test_old_ratio_floor_name_still_works(study):
    a = _fit(study, ratio_floor=1e-6)
    assert a.zero_floor == 1e-6 and a.ratio_floor == 1e-6


@pytest.mark.parametrize(
    "kw", [{"zero_share": "clip"}, {"zero_floor": 0.0}, {"zero_floor": 1.0}, {"zero_floor": "a"}]
)
def test_zero_share_bad_values(kw):
    with pytest.raises(InputError, match="zero_"):
        FLPM("HumanEval", **kw)


@pytest.mark.parametrize(
    "flags", [["--zero-share", "clip"], ["--zero-floor", "0"], ["--zero-floor", "x"],
              ["--zero-floor", "2"]],
)  # fmt: skip
def test_cli_zero_share_bad_values(cli, tmp_path, flags):
    out = tmp_path / "fit.json"
    code, _, err = cli(
        "flpm", "fit", "--runs", ep("flp/mixture_runs.csv"), "--checkpoints",
        ep("flp/mixture_checkpoints.csv"), "--task", "HumanEval", "--out", out, *flags,
    )  # fmt: skip
    assert code == 2 and flags[0] in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_cli_zero_share_drop_json(cli):
    code, out, err = cli(
        "flpm", "fit", "--runs", ep("flp/mixture_runs.csv"), "--checkpoints",
        ep("flp/mixture_checkpoints.csv"), "--task", "HumanEval", "--bootstrap", "0",
        "--zero-share", "drop", "--json",
    )  # fmt: skip
    assert code == 0, err
    d = json.loads(out)
    assert d["zero_share"] == "drop" and d["n_zero_share_runs"] > 0
    assert set(d["zero_share_sensitivity"]["forecast"]) >= {"floor 0.01", "floor 1e-06"}


@pytest.mark.slow
def test_default_floor_on_held_out_simulated_study():
    """The default (floor 1e-3) against 1e-2, 1e-6 and drop on simulate_flpm: held-out targets
    and the whole share curve at the 3B/7B compute against the ground truth (docs/flp.md)."""
    from lmforecast.flp.zero_share import simulated_zero_share_study

    df = simulated_zero_share_study(seeds=(0,))
    g = df.groupby(["zero_share", "zero_floor"], dropna=False)[["target_mae", "curve_mae"]].mean()
    default = g.loc[("floor", 1e-3)]
    drop = g.loc[("drop", np.nan)] if ("drop", np.nan) in g.index else g.xs("drop", level=0).iloc[0]
    assert default["curve_mae"] < drop["curve_mae"] and default["target_mae"] < drop["target_mae"]
    floors = g.xs("floor", level=0)
    assert default["curve_mae"] <= 1.1 * floors["curve_mae"].min()
    assert default["target_mae"] <= 1.05 * floors["target_mae"].min()
