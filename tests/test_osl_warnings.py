"""What `osl` warns about and refuses: new models outside the fit's capability
range and fits whose intervals cover far fewer models than nominal are warned about; `osl gap`
refuses one column on both sides, does not call --targets columns "benchmarks left out", and
prints its MSEs formatted."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

from lmforecast import examples
from lmforecast.errors import InputError
from lmforecast.osl import ObservationalScalingLaw, post_training_gap, read_benchmarks
from lmforecast.osl.checks import CapabilityRangeWarning, IntervalCoverageWarning, range_warning

BASE = examples.path("osl/base_models.csv")
BENCH = ["MMLU", "ARC-C", "HellaSwag", "Winograd", "TruthfulQA", "XWinograd", "HumanEval"]


def _caught(fn, category):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        value = fn()
    return value, [str(x.message) for x in w if issubclass(x.category, category)]


@pytest.fixture(scope="module")
def table():
    return read_benchmarks(BASE)


@pytest.fixture(scope="module")
def saved(table, tmp_path_factory):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = ObservationalScalingLaw(holdout="list", heldout=[]).fit(table, "HumanEval")
    out = tmp_path_factory.mktemp("osl") / "he.json"
    est.result_.to_json(out)
    return est, out


def _new_models(table, tmp_path):
    rows = table.head(2).copy()
    rows["Model"] = ["strong", "ordinary"]
    rows.loc[rows.index[0], BENCH] = 0.99  # a model at 0.99 on every benchmark
    path = tmp_path / "new.csv"
    rows.drop(columns="HumanEval").to_csv(path, index=False)
    return rows, path


def test_new_model_beyond_the_capability_range_is_warned(saved, table, tmp_path):
    est, fit = saved
    rows, path = _new_models(table, tmp_path)
    _, msgs = _caught(lambda: est.predict_interval(rows.drop(columns="HumanEval")),
                      CapabilityRangeWarning)  # fmt: skip
    assert len(msgs) == 1 and "1 of 2 model(s)" in msgs[0] and "'strong'" in msgs[0]
    assert "linear predictor alpha + beta.x" in msgs[0] and "PC-1" in msgs[0]
    assert "\n" not in msgs[0] and "np." not in msgs[0]


def test_cli_predict_warns_and_a_model_of_the_fit_does_not(cli, saved, table, tmp_path):
    _, fit = saved
    _, path = _new_models(table, tmp_path)
    code, out, err = cli("osl", "predict", "--fit", fit, "--benchmarks", path)
    assert code == 0 and "strong: HumanEval" in out
    assert "outside the capability range of the fit's" in err and "'strong'" in err
    inside = tmp_path / "inside.csv"
    table.head(3).drop(columns="HumanEval").to_csv(inside, index=False)
    code, _, err = cli("osl", "predict", "--fit", fit, "--benchmarks", inside)
    assert code == 0 and "capability range" not in err


def test_heldout_model_without_target_is_checked_too(cli, table, tmp_path):
    rows, _ = _new_models(table, tmp_path)
    rows = rows.head(1).assign(HumanEval=np.nan)
    full = pd.concat([table, rows], ignore_index=True)
    path = tmp_path / "full.csv"
    full.to_csv(path, index=False)
    code, out, err = cli("osl", "fit", "--benchmarks", path, "--target", "HumanEval",
                         "--heldout", "strong")  # fmt: skip
    assert code == 0 and "strong:" in out and "'strong' has linear predictor" in err


def test_poor_interval_coverage_is_warned(table):
    res, msgs = _caught(lambda: ObservationalScalingLaw().fit(table, "TruthfulQA").result_,
                        IntervalCoverageWarning)  # fmt: skip
    fc = res.forecasts()
    inside = sum(f["interval"][0] <= f["y"] <= f["interval"][1] for f in fc)
    assert len(fc) >= 20 and inside / len(fc) < 0.75
    assert len(msgs) == 1
    assert f"only {inside} of {len(fc)} held-out models" in msgs[0] and "too narrow" in msgs[0]
    _, msgs = _caught(lambda: ObservationalScalingLaw().fit(table, "MMLU"),
                      IntervalCoverageWarning)  # fmt: skip
    assert msgs == []  # 27 of 30 inside: nominal


def test_real_truthfulqa_coverage(shared_dir):
    path = shared_dir / "data/obsscaling/base_llm_benchmark_eval.csv"
    if not path.exists():
        pytest.skip(f"{path} not present")
    _, msgs = _caught(lambda: ObservationalScalingLaw().fit(read_benchmarks(path), "TruthfulQA"),
                      IntervalCoverageWarning)  # fmt: skip
    assert msgs and "only 38 of 71 held-out models (54%)" in msgs[0]


@pytest.fixture
def gap_files(table, tmp_path):
    he = table["HumanEval"].astype(float)
    t = pd.DataFrame({"Model": table["Model"], "naive": 0.8 * he, "cot": np.clip(1.3 * he, 0, 1)})
    path = tmp_path / "targets.csv"
    t.to_csv(path, index=False)
    return path


def test_gap_refuses_one_column_on_both_sides(cli, table, gap_files):
    code, out, err = cli("osl", "gap", "--benchmarks", BASE, "--targets", gap_files,
                         "--without", "naive", "--with", "naive")  # fmt: skip
    assert code == 2 and out == "" and "same column 'naive'" in err
    with pytest.raises(InputError, match="same column 'HumanEval'"):
        post_training_gap(table, "HumanEval", "HumanEval")


def test_gap_does_not_call_targets_benchmarks_and_formats_mses(cli, gap_files):
    code, out, err = cli("osl", "gap", "--benchmarks", BASE, "--targets", gap_files,
                         "--without", "naive", "--with", "cot")  # fmt: skip
    assert code == 0, err
    assert "left out" not in err
    line = next(s for s in out.splitlines() if s.startswith("test MSE"))
    nums = re.findall(r"[0-9][0-9.e+-]*", line)
    assert len(nums) == 2 and all(len(n) <= 10 for n in nums), line


def test_gap_fits_leave_the_other_target_out_of_their_predictors(table):
    gap, _ = _caught(lambda: post_training_gap(table, "HumanEval", "TruthfulQA"), Warning)
    assert "TruthfulQA" not in gap.without.metrics and "HumanEval" not in gap.with_.metrics


# ---- a hair past the range is no extrapolation ------------------------------------------------
def test_readme_predict_on_the_fits_own_table_is_quiet(cli, tmp_path):
    """README: `osl fit --target HumanEval --out osl.json` then `osl predict --fit osl.json
    --benchmarks osl/base_models.csv` warned about falcon-180B, PC-1 0.631 vs [-0.362, 0.624]."""
    fit = tmp_path / "osl.json"
    code, _, err = cli("osl", "fit", "--benchmarks", BASE, "--target", "HumanEval", "--out", fit)
    assert code == 0, err
    code, out, err = cli("osl", "predict", "--fit", fit, "--benchmarks", BASE)
    assert code == 0 and "falcon-180B" in out
    assert "capability range" not in err


def _past_pc1(res, frac):
    """Every fitted model at the middle of its range, PC-1 `frac` of its width past the top."""
    pf = res.predictions_frame()
    F = pf[[f"x{i + 1}" for i in range(res.n_components)]].to_numpy(float)
    F = F[np.isfinite(F).all(axis=1)]
    lo, hi = F.min(axis=0), F.max(axis=0)
    x = (lo + hi) / 2
    x[0] = hi[0] + frac * (hi[0] - lo[0])
    return x[None, :]


@pytest.mark.parametrize("frac, warned", [(0.01, False), (0.04, False), (0.2, True)])
def test_range_warning_has_a_five_percent_tolerance(saved, frac, warned):
    res = saved[0].result_
    theta = np.asarray(res.fit.theta, float)
    assert abs(theta[2]) > 0  # PC-1 moves the linear predictor too
    X = _past_pc1(res, frac)
    _, msgs = _caught(lambda: range_warning(res, ["new"], X), CapabilityRangeWarning)
    assert bool(msgs) == warned, msgs
    if warned:
        assert "PC-1" in msgs[0] and "more than 5% of its width" in msgs[0]
    below = X.copy()  # the same on the low side
    pf = res.predictions_frame()["x1"].to_numpy(float)
    below[0, 0] = pf.min() - frac * (pf.max() - pf.min())
    _, msgs = _caught(lambda: range_warning(res, ["new"], below), CapabilityRangeWarning)
    assert bool(msgs) == warned, msgs
