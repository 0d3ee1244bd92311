"""CLI contract of `lmforecast supervised` and `lmforecast report`, including bad input."""

import json

import numpy as np
import pandas as pd
import pytest

from lmforecast.supervised import SupervisedScalingLaw

HOFF = {"A": 406.4, "B": 410.7, "E": 1.69, "alpha": 0.34, "beta": 0.28}


@pytest.fixture
def runs_csv(tmp_path):
    rng = np.random.default_rng(0)
    N = 10 ** rng.uniform(7.5, 10.5, 60)
    D = N * 10 ** rng.uniform(0.3, 3.0, 60)
    L = (HOFF["E"] + HOFF["A"] / N ** HOFF["alpha"] + HOFF["B"] / D ** HOFF["beta"]) * np.exp(
        rng.normal(0, 0.004, 60)
    )
    p = tmp_path / "runs.csv"
    pd.DataFrame({"N": N, "D": D, "loss": L}).to_csv(p, index=False)
    return p


def test_fit_json_contract_and_saved_fit(cli, runs_csv, tmp_path):
    out = tmp_path / "fit.json"
    code, stdout, _ = cli(
        "supervised",
        "fit",
        "--runs",
        runs_csv,
        "--form",
        "chinchilla",
        "--bootstrap",
        "20",
        "--jobs",
        "1",
        "--seed",
        "1",
        "--out",
        out,
        "--json",
        "--quiet",
    )
    assert code == 0
    d = json.loads(stdout)
    assert set(d) >= {"params", "objective", "n_starts", "ci"}
    assert set(d["params"]) == {"E", "A", "B", "alpha", "beta"}
    assert d["n_starts"] == 26 * 26  # variable-projection starts: the alpha x beta grid
    assert d["params"]["alpha"] == pytest.approx(0.34, rel=0.1)
    assert set(d["ci"]) == set(d["params"])
    saved = SupervisedScalingLaw.load(out)
    assert saved.params_ == d["params"]

    code, stdout, _ = cli("supervised", "allocate", "--fit", out, "--flops", "1e22", "--json")
    a = json.loads(stdout)
    assert code == 0 and set(a) >= {"N", "D", "loss"}
    assert 6 * a["N"] * a["D"] == pytest.approx(1e22)
    # the N*/D* interval says what it is: uncalibrated, with the measured coverage
    assert a["N_interval"][0] < a["N"] < a["N_interval"][1]
    assert "not calibrated" in a["allocation_interval_note"]
    code, text, _ = cli("supervised", "allocate", "--fit", out, "--flops", "1e22")
    assert code == 0 and "not calibrated" in text and "isoflop fit" in text


def test_fit_reads_parquet_jsonl_and_flops_column(cli, runs_csv, tmp_path):
    df = pd.read_csv(runs_csv)
    df.to_parquet(tmp_path / "r.parquet")
    df.to_json(tmp_path / "r.jsonl", orient="records", lines=True)
    alt = pd.DataFrame({"params": df["N"], "flops": 6 * df["N"] * df["D"], "xent": df["loss"]})
    alt.to_csv(tmp_path / "alt.csv", index=False)
    res = []
    for args in (
        ["r.parquet"],
        ["r.jsonl"],
        ["alt.csv", "--n-col", "params", "--c-col", "flops", "--loss-col", "xent"],
    ):
        code, out, err = cli(
            "supervised",
            "fit",
            "--runs",
            tmp_path / args[0],
            *args[1:],
            "--form",
            "chinchilla",
            "--no-intervals",
            "--json",
        )
        assert code == 0, err
        res.append(json.loads(out)["params"]["alpha"])
    assert res[0] == pytest.approx(res[1]) and res[0] == pytest.approx(res[2], rel=1e-6)


def test_allocate_preset_matches_paper(cli):
    code, out, _ = cli(
        "supervised", "allocate", "--preset", "busbridge2025", "--flops", "1e21", "--json"
    )
    a = json.loads(out)
    assert a["N"] == pytest.approx(3.05e9, rel=3e-3) and a["D"] == pytest.approx(5.46e10, rel=3e-3)


BAD = {
    "missing column": ("N,D\n1e8,2e9\n", "missing column(s) 'loss'"),
    "non-numeric": ("N,D,loss\n1e8,2e9,abc\n2e8,4e9,3.0\n", "column 'loss' row 1: 'abc' is not"),
    "non-positive": ("N,D,loss\n1e8,2e9,3.1\n-2e8,4e9,3.0\n", "column 'N' row 2: value -2e+08"),
    "nan": ("N,D,loss\n1e8,2e9,3.1\n2e8,,3.0\n", "column 'D' row 2"),
    "too few runs": ("N,D,loss\n1e8,2e9,3.1\n2e8,4e9,3.0\n", "need at least as many runs"),
    "duplicated": (
        "N,D,loss\n1e8,2e9,3.1\n1e8,2e9,3.0\n" + "".join(f"{i}e8,{i}e9,3.0\n" for i in range(2, 9)),
        "row 2 duplicates row 1",
    ),
    "empty": ("", "the file is empty"),
    "header only": ("N,D,loss\n", "no rows"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_exit_2_one_line_no_output(cli, tmp_path, case):
    text, msg = BAD[case]
    p = tmp_path / "bad.csv"
    p.write_text(text)
    out = tmp_path / "fit.json"
    code, stdout, err = cli("supervised", "fit", "--runs", p, "--form", "chinchilla", "--out", out)
    assert code == 2
    assert err.startswith("lmforecast: error:") and err.count("\n") == 1, err
    assert msg in err
    assert not out.exists()
    assert not list(tmp_path.glob(".tmp-*"))


def test_wrong_format_and_bad_flags(cli, tmp_path):
    p = tmp_path / "runs.xlsx"
    p.write_text("x")
    code, _, err = cli("supervised", "fit", "--runs", p)
    assert code == 2 and "unknown table format" in err
    code, _, err = cli("supervised", "allocate", "--preset", "busbridge2025", "--flops", "-1")
    assert code == 2 and "--flops" in err
    code, _, err = cli("supervised", "allocate", "--preset", "nope", "--flops", "1e20")
    assert code == 2 and "unknown preset" in err
    code, _, err = cli("supervised", "allocate", "--fit", tmp_path / "missing.json", "--flops", "1")
    assert code == 2 and "no such file" in err
    code, _, err = cli(
        "supervised", "fit", "--runs", tmp_path / "missing.csv", "--out", tmp_path / "no/x"
    )
    assert code == 2 and "does not exist" in err


def test_report_quick_writes_html_and_json(cli, tmp_path):
    code, _, err = cli(
        "report", "--out", tmp_path / "rep", "--sections", "supervised", "--quick", "--quiet"
    )
    assert code == 0, err
    html = (tmp_path / "rep" / "report.html").read_text()
    assert "data:image/png;base64," in html and "Supervised compute laws" in html
    d = json.loads((tmp_path / "rep" / "report.json").read_text())
    s = d["sections"]["supervised"]
    # simulated from Table 6 with 0.5% noise: the fitted law must track the generating law
    assert s["max_rel_error_vs_noiseless_law"] < 0.01
    assert s["extrapolation"]["mean_rel_error"] < 0.01
    assert s["fit"]["converged"]


def test_default_fit_stacks_and_no_stack_keeps_the_form(cli, runs_csv, tmp_path):
    saved = {}
    for flag in ([], ["--no-stack"]):
        out = tmp_path / f"fit{len(flag)}.json"
        code, stdout, err = cli("supervised", "fit", "--runs", runs_csv, "--no-intervals",
                                "--jobs", "1", "--out", out, "--quiet", *flag)  # fmt: skip
        assert code == 0, err
        saved[bool(flag)] = json.loads(out.read_text())["meta"]
    w = saved[False]["stack"]["weights"]
    assert set(w) == {"form", "overtrain-ls", "compute-law"} and abs(sum(w.values()) - 1) < 1e-12
    assert "stack" not in saved[True]
    a = SupervisedScalingLaw.load(tmp_path / "fit0.json").predict(7e9, 1.4e11)
    b = SupervisedScalingLaw.load(tmp_path / "fit1.json").predict(7e9, 1.4e11)
    assert a != b
