"""The next-run advice and the width/depth test save as JSON (bit-for-bit,
validated field by field on load) and have report sections built on the bundled examples."""

from __future__ import annotations

import json
import re
import warnings

import numpy as np
import pytest

from lmforecast.data.io import read_table
from lmforecast.errors import InputError
from lmforecast.examples import path
from lmforecast.nextrun import NextRunAdvice, advise, fit_with_bootstrap
from lmforecast.report.builder import ReportContext
from lmforecast.report.sections import nextrun as nextrun_section
from lmforecast.report.sections import shape as shape_section
from lmforecast.report.summary import summary_rows
from lmforecast.shape import ShapeTest, shape_test
from lmforecast.shape.simulate import CURVATURE
from lmforecast.store import to_jsonable

TARGET = ["--target-params", "7e9", "--target-tokens", "1.4e11"]


@pytest.fixture(scope="module")
def quick_sections():
    ctx = ReportContext(quick=True, progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return nextrun_section.build_section(ctx), shape_section.build_section(ctx)


# ---- saved results ------------------------------------------------------------------------------
def test_next_run_out_round_trips_bit_for_bit(cli, tmp_path):
    runs = path("nextrun/runs.csv")
    argv = ["next-run", "--runs", runs, *TARGET, "--budget", "1e18", "--bootstrap", "12"]
    code, out, err = cli(*argv, "--goal-width", "0.05", "--noise", "0.005", "--json",
                         "--out", tmp_path / "a.json")  # fmt: skip
    assert code == 0, err
    text = (tmp_path / "a.json").read_text()
    a = NextRunAdvice.from_json(tmp_path / "a.json")
    assert a.to_json() == text  # bit for bit, infinities (goal out of reach) included
    # --json prints the same candidates (an infinite FLOPs-to-goal as null, as JSON output does)
    assert json.loads(out)["candidates"] == to_jsonable(a.candidates)
    assert all(c["flops"] <= 1e18 for c in a.candidates)
    # the same advice computed in-process equals the loaded one field by field
    direct = advise(read_table(runs), 7e9, 1.4e11, budget=1e18, n_boot=12, goal_width=0.05,
                    noise=0.005)  # fmt: skip
    assert NextRunAdvice.from_json(direct.to_json()) == direct
    assert [c["N"] for c in direct.candidates] == [c["N"] for c in a.candidates]


def test_shape_out_round_trips_bit_for_bit(cli, tmp_path):
    code, _, err = cli("shape", "test", "--runs", path("shape/runs.csv"), "--model-col",
                       "model", "--permutations", "50", "--out", tmp_path / "s.json")  # fmt: skip
    assert code == 0, err
    text = (tmp_path / "s.json").read_text()
    s = ShapeTest.from_json(tmp_path / "s.json")
    assert s.to_json() == text
    assert s == shape_test(read_table(path("shape/runs.csv")), model_col="model", n_perm=50)
    assert s.coef[2] == pytest.approx(CURVATURE, rel=0.15)


def _bad(obj, tmp_path, edit):
    d = json.loads(obj.to_json())
    edit(d)
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(d))
    return p


@pytest.mark.parametrize(
    "edit, field",
    [
        (lambda d: d["candidates"][0].update(N=-1.0), "candidates[0].N"),
        (lambda d: d["candidates"][1].pop("flops"), "candidates[1].flops"),
        (lambda d: d.update(stop="no"), "stop"),
        (lambda d: d.update(level=1.5), "level"),
        (lambda d: d["target"].update(D=None), "target.D"),
        (lambda d: d.update(extra=1), "extra"),
        (lambda d: d.update(kind="ShapeTest"), "kind"),
    ],
)
def test_saved_advice_validated_field_by_field(edit, field, tmp_path, quick_sections):
    adv = NextRunAdvice(**quick_sections[0].numbers["to_goal"])
    with pytest.raises(InputError, match=re.escape(f"'{field}'")) as e:
        NextRunAdvice.from_json(_bad(adv, tmp_path, edit))
    assert "\n" not in str(e.value)


@pytest.mark.parametrize(
    "edit, field",
    [
        (lambda d: d.update(coef=[0.0, 0.1]), "coef"),
        (lambda d: d.update(p_value=1.2), "p_value"),
        (lambda d: d["models"].pop(), "models"),
        (lambda d: d["worst"].update(width="wide"), "worst.width"),
        (lambda d: d["law_params"].pop("alpha"), "law_params.alpha"),
        (lambda d: d.update(best_aspect=-3.0), "best_aspect"),
    ],
)
def test_saved_shape_test_validated_field_by_field(edit, field, tmp_path, quick_sections):
    st = ShapeTest(**{k: v for k, v in quick_sections[1].numbers.items() if k != "truth"})
    with pytest.raises(InputError, match=re.escape(f"field '{field}'")) as e:
        ShapeTest.from_json(_bad(st, tmp_path, edit))
    assert "\n" not in str(e.value)


# ---- report sections ----------------------------------------------------------------------------
def test_shape_section_recovers_the_planted_shape_coefficient(quick_sections):
    sec = quick_sections[1]
    n = sec.numbers
    assert n["shape_matters"] and n["p_value"] < 0.02
    assert n["worst"]["model"] == "768x3"  # the most extreme aspect ratio of the example
    assert n["cv_rms_with"] < 0.5 * n["cv_rms_without"]
    rows = summary_rows("shape", n, sec.verdicts)
    assert len(rows) == 1 and rows[0]["error"] == abs(n["coef"][2] - CURVATURE) / CURVATURE
    assert rows[0]["error"] < 0.15
    table = sec.tables[0]["rows"]
    resid = [r[-1] for r in table]
    assert resid == sorted(resid, reverse=True) and table[0][0] == "768x3"


def test_next_run_section_applies_the_ensemble_kalman_update(quick_sections):
    sec = quick_sections[0]
    n = sec.numbers
    runs = read_table(path("nextrun/runs.csv"))
    law, res = fit_with_bootstrap(runs, 20, 0)  # the section's quick fit (same seed)
    th = np.asarray(res.bootstrap)
    tt = law.predict_target(th, {"N": np.array([7e9]), "D": np.array([1.4e11])})[:, 0]
    pf = n["per_flop"]
    for c in pf["candidates"][:5]:  # v_t' = v_t - s^2 / (v_c + sigma^2), by hand
        tc = law.predict_target(th, {"N": np.array([c["N"]]), "D": np.array([c["D"]])})[:, 0]
        vt, vc = np.var(tt), np.var(tc)
        s = np.mean((tt - tt.mean()) * (tc - tc.mean()))
        sigma2 = max(res.residual_scale, 1e-4) ** 2
        ratio = np.sqrt(max(vt - s**2 / (vc + sigma2), 0.0) / vt)
        assert c["expected_width"] == pytest.approx(pf["current_width"] * ratio, rel=1e-9)
    gains = [c["shrink_per_flop"] for c in pf["candidates"]]
    assert gains == sorted(gains, reverse=True)
    shares = [c["p_best"] for c in pf["candidates"]]  # how firmly the refits pick each run
    assert all(0 <= p <= 1 for p in shares) and sum(shares) == pytest.approx(1.0)
    goal = n["to_goal"]["candidates"]
    to_goal = [c["flops_to_goal"] for c in goal]
    assert to_goal == sorted(to_goal)  # ranked by FLOPs to reach the goal width
    assert all(c["flops"] <= n["budget"] for c in goal)
    assert n["to_goal"]["stop"] == (not np.isfinite(to_goal[0]))
    assert summary_rows("nextrun", n, sec.verdicts) == []  # advice, no verdict (see summary)
