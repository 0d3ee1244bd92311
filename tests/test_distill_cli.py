"""`lmforecast distill ...` in-process: contract keys, values, bad input, no partial files."""

import json

import numpy as np
import pytest

from lmforecast.distill import DistillationScalingLaw, simulate_distillation_runs


@pytest.fixture(scope="module")
def preset():
    return DistillationScalingLaw.from_preset()


def test_predict_contract(cli, preset):
    args = ["--student-params", 1e9, "--student-tokens", 2e10, "--teacher-params", 7.75e9]
    code, out, _ = cli("distill", "predict", *args, "--teacher-tokens", 1.55e11, "--json")
    assert code == 0
    d = json.loads(out)
    assert set(d) == {"student_loss", "teacher_loss", "supervised_loss", "interval", "level",
                      "interval_basis", "verdict"}  # fmt: skip
    LT = float(preset.teacher_loss(7.75e9, 1.55e11))
    assert d["teacher_loss"] == pytest.approx(LT)
    assert d["student_loss"] == pytest.approx(float(preset.predict(1e9, 2e10, LT)))
    code, out, _ = cli("distill", "predict", "--student-params", 1e9, "--student-tokens", 2e10,
                       "--teacher-loss", 2.0, "--json")  # fmt: skip
    assert code == 0 and json.loads(out)["teacher_loss"] == 2.0


def test_predict_bad_input(cli):
    base = ["distill", "predict", "--student-params", 1e9, "--student-tokens", 2e10]
    code, _, err = cli(*base[:3], -1, *base[4:], "--teacher-loss", 2)
    assert code == 2 and "error" in err
    code, _, err = cli(*base, "--teacher-params", 1e9)
    assert code == 2 and "--teacher-tokens" in err
    code, _, err = cli(*base, "--teacher-loss", 2, "--coefficients", "nope")
    assert code == 2 and "unknown coefficients" in err and len(err.strip().splitlines()) == 1
    code, _, err = cli(*base, "--teacher-loss", 1.1)
    assert code == 2 and "irreducible" in err and len(err.strip().splitlines()) == 1


def test_plan_contract_and_errors(cli, tmp_path):
    code, out, _ = cli("distill", "plan", "--student-params", 3e9, "--flops", 1e22,
                       "--scenario", "teacher-pretraining-inference", "--json")  # fmt: skip
    assert code == 0
    d = json.loads(out)
    assert set(d) == {"student_tokens", "teacher_params", "teacher_tokens", "teacher_loss",
                      "student_loss", "supervised_loss", "flops", "interval", "level",
                      "intervals", "interval_basis", "verdict", "at_search_bound"}  # fmt: skip
    assert set(d["flops"]) == {"student_training", "teacher_inference", "teacher_pretraining"}
    assert sum(d["flops"].values()) == pytest.approx(1e22, rel=1e-9)
    code, _, err = cli("distill", "plan", "--student-params", 3e9, "--flops", 1e22,
                       "--scenario", "free")  # fmt: skip
    assert code == 2 and "unknown scenario" in err
    code, _, err = cli("distill", "plan", "--student-params", 3e9, "--flops", 1e12)
    assert code == 2 and "too small" in err
    code, _, err = cli("distill", "plan", "--student-params", 3e9, "--flops", 0)
    assert code == 2


def test_fit_cli_writes_atomically_and_round_trips(cli, tmp_path):
    runs = simulate_distillation_runs(n_runs=120, seed=2)
    csv = tmp_path / "runs.csv"
    runs.rename(columns={"L_S": "student_ce"}).to_csv(csv, index=False)
    out = tmp_path / "fit.json"
    code, _, err = cli(
        "distill", "fit", "--runs", csv, "--supervised", "paper", "--out", out, "--json"
    )
    assert code == 2 and "'L_S'" in err and not out.exists()
    code, _, err = cli("distill", "fit", "--runs", csv, "--ls-col", "student_ce", "--out", out)
    assert code == 2 and "--supervised paper" in err and not out.exists()
    code, _, err = cli("distill", "fit", "--runs", csv, "--out", tmp_path / "no" / "f.json")
    assert code == 2 and "does not exist" in err
    code, stdout, _ = cli("distill", "fit", "--runs", csv, "--ls-col", "student_ce", "--out", out,
                          "--json", "--fix", "c1=522.6", "--bootstrap", 4, "--jobs", 1,
                          "--supervised", "paper")  # fmt: skip
    assert code == 0 and out.exists()
    d = json.loads(stdout)
    assert d["supervised"]["source"].startswith("paper's law: busbridge2025")
    assert d["n_starts"] == 54_000 and d["params"]["c1"] == 522.6
    m = DistillationScalingLaw.load(out)
    assert m.params_ == d["params"]
    code, stdout, _ = cli("distill", "predict", "--student-params", 1e9, "--student-tokens",
                          2e10, "--teacher-loss", 2.1, "--coefficients", out, "--json")  # fmt: skip
    assert code == 0
    assert json.loads(stdout)["student_loss"] == pytest.approx(float(m.predict(1e9, 2e10, 2.1)))
    code, _, err = cli("distill", "fit", "--runs", tmp_path / "missing.csv")
    assert code == 2 and "no such file" in err


def test_choose_teacher_and_crossover(cli, tmp_path, preset):
    t = tmp_path / "teachers.csv"
    t.write_text("N_T,D_T\n546000000,1.1e10\n1821000000,3.6e10\n7747000000,1.55e11\n")
    code, out, _ = cli("distill", "choose-teacher", "--student-params", 1e9, "--student-tokens",
                       2e10, "--teachers", t, "--scenario", "best-case", "--json")  # fmt: skip
    assert code == 0
    d = json.loads(out)
    LT = preset.teacher_loss(np.array([5.46e8, 1.821e9, 7.747e9]), [1.1e10, 3.6e10, 1.55e11])
    assert d["best"]["L_S"] == pytest.approx(float(preset.predict(1e9, 2e10, LT).min()))
    code, out, _ = cli("distill", "crossover", "--student-params", 1e9, "--json")
    assert code == 0 and 1e22 < json.loads(out)["crossover_flops"] < 3e22
