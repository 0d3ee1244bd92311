"""Every benchmark script runs at HEAD (reduced sizes): a performance claim in `benchmarks/` is
only worth something if its script still runs. Scripts with their own test elsewhere (trust_*,
the other downstream_*, bench_varpro, bench_cluster_bootstrap) are not repeated here. The ones
that take 10 s or more at any size, or need the shared suites' cached forecasts (bench_report,
bench_scale_out, bench_zoo_parallel, bench_osl_*, bench_distill*, bench_choose_teacher_memory,
trust_disagreement), are run by hand. The scripts that read the shared suites get the shared
folder from the `shared_dir` fixture (which honours LMFORECAST_SHARED) and skip with its reason
when it is absent, as on a fresh clone."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"

CASES = {
    # script: (tiny arguments, a line the script prints once it has compared both sides)
    "bench_supervised_intervals": (["--runs", "60", "--naive-samples", "1"], "plain / ours"),
    "bench_supervised_fit": (["--runs", "60", "--sample", "20"], "speed ratio"),
    "bench_bootstrap": (["--boot", "8", "--runs", "60", "--jobs", "1", "--naive-samples", "1"],
                        "interval widths"),
    "bench_flp": ([], "target"),
    "bench_flp_bootstrap": (["--boot", "20", "--repeat", "1"], "ratio"),
    "bench_nextrun": (["--seeds", "1", "--boot", "5", "--max-steps", "3"], "ladder"),
    "bench_salience": (["--texts", "30", "--models", "8", "--tokens-per-text", "20", "--dim",
                        "16", "--steps", "10"], "ratio"),
    "bench_cli_startup": (["--repeat", "1"], "--version within 0.5 s"),
    "bench_predict_cli": (["--repeat", "1", "--loop-sample", "1", "--runs", "40", "--rows", "5",
                           "--baseline-src", str(BENCH.parent / "src")], "fit + predict"),
    "bench_zoo": (["--sequences", "128"], "speed-up"),
    "downstream_trajectory_stage1": (["--tasks", "1", "--bootstrap", "10"], "intermediate"),
    # its baseline is another checkout; this one stands in for it (the script runs, both sides)
    "bench_trust_default": (["--runs", "60", "--baseline-src", str(BENCH.parent / "src")],
                            "ratio previous / this"),
}  # fmt: skip

PORIAN = "data/suites/porian/isoflops.csv"
SHARED_CASES = {
    # real fits on the shared suites: (arguments given the shared folder and a scratch folder,
    # expected line). The Porian scripts get the suite's first configurations only (`_porian`):
    # their numbers on the whole suite are checked in test_isoflop_prediction.py and
    # test_supervised_allocation_interval.py; here only that the script runs to its table.
    "trust_new_splits": (lambda s, t: ["--shared", s / "data", "--only", "datab", "--jobs", "1",
                                       "--max-fits", "1"], "pooled per-forecast coverage"),
    "trust_isoflop": (lambda s, t: ["--data", _porian(s, t), "--bootstrap", "20",
                                    "--sampling-only"], "sampling spread only"),
    "trust_allocation": (lambda s, t: ["--data", _porian(s, t), "--form", "chinchilla",
                                       "--holds", "1"], "pooled"),
    "curves_mpl_protocol": (lambda s, t: ["--shared", s, "--sizes", "25M", "--adam-iters", "50"],
                            "speed ratio"),
}  # fmt: skip


def _porian(shared: Path, tmp: Path, n_configs: int = 3) -> Path:
    """The Porian isoFLOP table cut to its first `n_configs` configurations (sorted by name, as
    the scripts walk them)."""
    import pandas as pd

    d = pd.read_csv(shared / PORIAN)
    keep = sorted(d["config"].unique())[:n_configs]
    out = tmp / "porian_subset.csv"
    d[d["config"].isin(keep)].to_csv(out, index=False)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("script", sorted({**CASES, **SHARED_CASES}))
def test_benchmark_script_runs(script, request, tmp_path):
    if script in SHARED_CASES:
        make_args, expect = SHARED_CASES[script]
        args = [str(a) for a in make_args(request.getfixturevalue("shared_dir"), tmp_path)]
    else:
        args, expect = CASES[script]
    r = subprocess.run(
        [sys.executable, str(BENCH / f"{script}.py"), *args],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    assert expect in r.stdout, r.stdout[-2000:]
