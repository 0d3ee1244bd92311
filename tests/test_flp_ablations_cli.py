"""`lmforecast flpm compare` (Sec. 6.2) and `lmforecast flpm single-distribution` (Sec. 6.3):
output contract, saved results, and bad input (exit 2, one line, no output file)."""

import json

import pandas as pd
import pytest

from lmforecast.flp import LossToPerformanceComparison, SingleDistributionCheck
from lmforecast.flp.simulate import simulate_flpm, simulate_single_distribution

TASKS = "ARC,HumanEval"


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    d = tmp_path_factory.mktemp("flp_ablation_tables")
    for prefix, study in (
        ("mix", simulate_flpm(tasks=("ARC", "HumanEval"), seed=0)),
        ("one", simulate_single_distribution(tasks=("ARC", "HumanEval"), seed=0)),
    ):
        study.runs.to_csv(d / f"{prefix}_runs.csv", index=False)
        study.checkpoints.to_csv(d / f"{prefix}_ck.csv", index=False)
        study.targets.to_csv(d / f"{prefix}_targets.csv", index=False)
    return d


def _args(d, prefix):
    return [
        "--runs", d / f"{prefix}_runs.csv",
        "--checkpoints", d / f"{prefix}_ck.csv",
        "--targets", d / f"{prefix}_targets.csv",
        "--task", TASKS,
        "--steps", "300",
    ]  # fmt: skip


def test_compare_text_json_and_saved_results(cli, tables, tmp_path):
    code, out, err = cli("flpm", "compare", *_args(tables, "mix"))
    assert code == 0, err
    assert "Domain-Neural" in out and "Sec. 6.2" in out and "HumanEval" in out
    res_file = tmp_path / "cmp.json"
    code, out, err = cli("flpm", "compare", *_args(tables, "mix"), "--json", "--out", res_file)
    assert code == 0, err
    j = json.loads(out)
    e = j["relative_error_pct"]
    assert set(e) == {"FLOPs", "Average", "Domain-Linear", "Domain-Neural", "Constant"}
    assert set(e["FLOPs"]) == {"ARC", "HumanEval", "mean"}
    assert e["FLOPs"]["mean"] > e["Average"]["mean"] > e["Domain-Neural"]["mean"]
    assert j["findings"]["flops_worst"]["mean"] is True
    assert j["retained_checkpoints"]["ARC"] > 200 and j["losses"] == "actual"
    saved = LossToPerformanceComparison.from_json(res_file)
    assert saved.errors().loc["FLOPs", "mean"] == pytest.approx(e["FLOPs"]["mean"], rel=1e-12)
    csv = tmp_path / "cmp.csv"
    code, _, err = cli("flpm", "compare", *_args(tables, "mix"), "--losses", "predicted",
                       "--out", csv)  # fmt: skip
    assert code == 0, err
    df = pd.read_csv(csv)
    assert len(df) == 5 * 2 * 6  # methods x tasks x targets
    assert list(df.columns) == ["task", "method", "target", "actual", "predicted",
                                "relative_error"]  # fmt: skip


def test_single_distribution_json_and_saved_result(cli, tables, tmp_path):
    res_file = tmp_path / "one.json"
    code, out, err = cli(
        "flpm", "single-distribution", *_args(tables, "one"), "--json", "--out", res_file
    )
    assert code == 0, err
    j = json.loads(out)
    assert j["design_rank"] == 1 and j["form_vs_m1_max_rel_diff"] < 1e-9
    assert j["shares"] == pytest.approx({"general": 0.95, "code": 0.05})
    assert set(j["relative_error_pct"]) == {"FLP", "FLP-M"}
    assert set(j["flpm_worse"]) == {"ARC", "HumanEval", "mean"}
    back = SingleDistributionCheck.from_json(res_file)
    assert back.to_json() == res_file.read_text()
    code, out, _ = cli("flpm", "single-distribution", *_args(tables, "one"))
    assert code == 0 and "collinear" in out and "FLP-M" in out


@pytest.mark.parametrize(
    "verb, prefix, extra, message",
    [
        ("single-distribution", "mix", [], "mixing shares"),
        ("single-distribution", "one", ["--ratio-tol", "-1"], "--ratio-tol must be >= 0"),
        ("compare", "mix", ["--steps", "0"], "--steps must be >= 1"),
        ("compare", "mix", ["--task", " , "], "--task: no task name"),
        ("compare", "mix", ["--task", "MMLU"], "no score column for task 'MMLU'"),
        ("compare", "mix", ["--losses", "true"], "invalid choice"),
    ],
)
def test_bad_input_exit_2_and_no_output(cli, tables, tmp_path, verb, prefix, extra, message):
    out = tmp_path / "res.json"
    code, stdout, err = cli("flpm", verb, *_args(tables, prefix), *extra, "--out", out)
    assert code == 2 and message in err, err
    assert "Traceback" not in err and not stdout
    assert not out.exists() and not list(tmp_path.iterdir())


def test_missing_files_and_unwritable_out(cli, tables, tmp_path):
    code, _, err = cli("flpm", "compare", "--runs", tables / "mix_runs.csv", "--targets",
                       tmp_path / "nope.csv", "--task", "ARC")  # fmt: skip
    assert code == 2 and err.startswith("lmforecast: error:") and "nope.csv" in err
    code, _, err = cli(
        "flpm", "compare", *_args(tables, "mix"), "--out", tmp_path / "missing" / "r.json"
    )
    assert code == 2 and "does not exist" in err
