"""The bad-input promise, verb by verb: exit status 2, exactly one stderr line naming the problem,
and no new or changed file in the working folder.

This corpus grows with every bug found: add a case (an id, the argv, optionally a setup that
writes a malformed file) to CASES. Every case must fail at the door, before any long
computation. Valid inputs (tables, saved fits of every type) are built once per session.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lmforecast import examples

REPO = Path(__file__).resolve().parents[1]
EX = examples.path("flp/runs.csv").parents[1]  # the packaged example files
B1 = REPO / "src" / "lmforecast" / "data" / "bundled" / "osl" / "table_b1_base_models.csv"
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x02\x00\x00\x00"
LATIN1 = "model,N,D,loss\ncaf\xe9,1e9,2e10,2.5\n".encode("latin-1")


# ---- valid inputs, built once ---------------------------------------------------------------
@pytest.fixture(scope="session")
def base(tmp_path_factory):
    """A folder with one valid input of every kind (tables and saved fits)."""
    from lmforecast.cli.main import main
    from lmforecast.distill.simulate import simulate_distillation_runs

    d = tmp_path_factory.mktemp("base")
    rng = np.random.default_rng(0)
    N = 10 ** rng.uniform(7.5, 10.5, 30)
    D = N * 10 ** rng.uniform(0.3, 3.0, 30)
    L = (1.69 + 406.4 / N**0.34 + 410.7 / D**0.28) * np.exp(rng.normal(0, 0.004, 30))
    pd.DataFrame({"N": N, "D": D, "loss": L}).to_csv(d / "runs.csv", index=False)
    # 12 runs: a valid distillation table (and saved fit, below) at half the fitting time of 40
    simulate_distillation_runs(n_runs=12, seed=0)[["N_S", "D_S", "L_T", "L_S"]].to_csv(
        d / "distill_runs.csv", index=False
    )
    pd.DataFrame({"N_T": [1e9, 3e9], "D_T": [2e10, 6e10]}).to_csv(d / "teachers.csv", index=False)
    for name in ("runs", "checkpoints", "targets", "mixture_runs", "mixture_checkpoints",
                 "mixture_targets"):  # fmt: skip
        shutil.copy(EX / "flp" / f"{name}.csv", d / f"flp_{name}.csv")
    for name in ("texts.jsonl", "losses.jsonl", "scores.csv", "new_losses.jsonl"):
        shutil.copy(EX / "salience" / name, d / f"sal_{name}")
    shutil.copy(B1, d / "bench.csv")
    cwd = os.getcwd()
    os.chdir(d)
    try:
        for argv in (
            "supervised fit --runs runs.csv --bootstrap 4 --jobs 1 --quiet --out sup.json",
            # no resamples (~3 s each here): a --bootstrap 0 fit is a valid saved fit of this
            # type, and the cases that use it are refused when the file or flag is read
            "distill fit --runs distill_runs.csv --supervised paper --bootstrap 0 --jobs 1 --quiet "
            "--out dist.json",
            "flp fit --runs flp_runs.csv --checkpoints flp_checkpoints.csv --task ARC "
            "--bootstrap 5 --quiet --out flp.json",
            "flpm fit --runs flp_mixture_runs.csv --checkpoints flp_mixture_checkpoints.csv "
            "--task HumanEval --steps 50 --quiet --out flpm.json",
            "salience fit --texts sal_texts.jsonl --losses sal_losses.jsonl --scores "
            "sal_scores.csv --task reasoning --chance 0 --steps 20 --bootstrap 5 "
            "--quiet --out sal.json",
        ):
            assert main(argv.split()) == 0, argv
    finally:
        os.chdir(cwd)
    return d


@pytest.fixture
def work(base, tmp_path, monkeypatch):
    """A fresh copy of the valid inputs as the working folder."""
    w = tmp_path / "w"
    shutil.copytree(base, w)
    monkeypatch.chdir(w)
    return w


def snapshot(folder: Path) -> dict:
    return {
        str(p.relative_to(folder)): (p.stat().st_mtime_ns, p.stat().st_size)
        for p in sorted(folder.rglob("*"))
    }


# ---- helpers that write malformed inputs ----------------------------------------------------
def write(name, content):
    def setup(w):
        p = w / name
        p.parent.mkdir(parents=True, exist_ok=True)
        (p.write_bytes if isinstance(content, bytes) else p.write_text)(content)

    return setup


def edit_csv(src, dst, fn):
    def setup(w):
        df = pd.read_csv(w / src, dtype=str, keep_default_na=False)
        fn(df).to_csv(w / dst, index=False)

    return setup


def edit_json(src, dst, fn):
    def setup(w):
        d = json.loads((w / src).read_text())
        out = fn(d)
        (w / dst).write_text(json.dumps(d if out is None else out))

    return setup


def setcell(col, row, value):
    def fn(df):
        df.loc[row, col] = value
        return df

    return fn


def dup_row(i, **changes):
    def fn(df):
        extra = df.iloc[[i]].copy()
        for k, v in changes.items():
            extra[k] = v
        return pd.concat([df, extra], ignore_index=True)

    return fn


def drop_col(col):
    return lambda df: df.drop(columns=[col])


def setpath(path, value):
    """Set a dotted path (``params.alpha``, ``stage2.theta.0``) in a JSON dict."""

    def fn(d):
        keys = path.split(".")
        cur = d
        for k in keys[:-1]:
            cur = cur[int(k)] if isinstance(cur, list) else cur[k]
        last = keys[-1]
        if value is DELETE:
            del cur[last]
        elif isinstance(cur, list):
            cur[int(last)] = value
        else:
            cur[last] = value

    return fn


DELETE = object()


# ---- the cases --------------------------------------------------------------------------------
CASES: list[tuple[str, str, object]] = []


def case(cid, argv, setup=None):
    CASES.append((cid, argv, setup))


SUP_P = "supervised predict --params 1e9 --tokens 2e10 --fit"
SUP_A = "supervised allocate --flops 1e22 --fit"
DIS_P = "distill predict --student-params 1e9 --student-tokens 2e10 --teacher-loss 2.2 "
DIS_P += "--coefficients"
FLP_P = "flp predict --flops 8e22 --fit"
FLPM_O = "flpm optimize-mixture --flops 1e21 --fit"
SAL_P = "salience predict --losses sal_new_losses.jsonl --fit"
FLP_FIT = "flp fit --checkpoints flp_checkpoints.csv --task ARC --runs"
FLP_FIT_CK = "flp fit --runs flp_runs.csv --task ARC --checkpoints"
FLPM_FIT = "flpm fit --checkpoints flp_mixture_checkpoints.csv --task HumanEval --runs"
FLPM_FIT_CK = "flpm fit --runs flp_mixture_runs.csv --task HumanEval --checkpoints"
FLPM_CMP = (
    "flpm compare --checkpoints flp_mixture_checkpoints.csv --targets flp_mixture_targets.csv "
    "--task HumanEval --runs"
)
SAL_FIT = (
    "salience fit --texts sal_texts.jsonl --scores sal_scores.csv --task reasoning "
    "--chance 0 --losses"
)
SAL_FIT_T = (
    "salience fit --losses sal_losses.jsonl --scores sal_scores.csv --task reasoning "
    "--chance 0 --texts"
)
SAL_FIT_S = (
    "salience fit --texts sal_texts.jsonl --losses sal_losses.jsonl --task reasoning "
    "--chance 0 --scores"
)
OSL = "osl pca --benchmarks"
OSL_FIT = "osl fit --target GSM8K --x flops --benchmarks"

# -- global
case("unknown-command", "nosuch", None)
case("group-without-verb", "supervised", None)
case("unknown-verb", "supervised nosuch", None)
case("unknown-flag", "supervised predict --preset hoffmann2022 --params 1 --tokens 1 --nope", None)

# -- flags: numbers, ranges, caps
for cid, argv in [
    # a pinned E above the runs' losses gave L = 5.0 for a fitted run of 2.57
    ("fix-E-above-losses", "supervised fit --runs runs.csv --fix E=50 --out f.json"),
    ("fix-twice", "supervised fit --runs runs.csv --fix gamma=1 --fix gamma=0.5 --out f.json"),
    ("fix-log-E-above-losses", "supervised fit --runs runs.csv --fix log_E=4 --out f.json"),
    ("fix-two-names", "supervised fit --runs runs.csv --fix E=1.5 --fix log_E=0.4 --out f.json"),
    ("seed-negative", "supervised fit --runs runs.csv --seed -1"),
    ("seed-text", "supervised fit --runs runs.csv --seed x"),
    ("jobs-zero", "supervised fit --runs runs.csv --jobs 0"),
    ("jobs-huge", "distill fit --runs distill_runs.csv --supervised paper --jobs 100000"),
    ("bootstrap-negative", "supervised fit --runs runs.csv --bootstrap -1"),
    (
        "bootstrap-huge",
        "distill fit --runs distill_runs.csv --supervised paper --bootstrap 10000000000",
    ),
    ("ci-level-1", "supervised fit --runs runs.csv --ci-level 1"),
    ("ci-level-nan", "distill fit --runs distill_runs.csv --supervised paper --ci-level nan"),
    ("huber-zero", "supervised fit --runs runs.csv --huber-delta 0"),
    ("huber-nan", "distill fit --runs distill_runs.csv --supervised paper --huber-delta nan"),
    ("form-unknown", "supervised fit --runs runs.csv --form cubic"),
    ("level-0", "supervised predict --preset hoffmann2022 --params 1e9 --tokens 1e10 --level 0"),
    ("level-1", "supervised predict --preset hoffmann2022 --params 1e9 --tokens 1e10 --level 1"),
    ("level-2", "flp predict --fit flp.json --flops 1e22 --level 2"),
    ("level-nan", "salience predict --fit sal.json --losses sal_new_losses.jsonl --level nan"),
    ("level-neg", "flpm predict --fit flpm.json --flops-per-source 1e20,1e20 --level -0.5"),
    ("level-text", "supervised predict --preset hoffmann2022 --params 1e9 --tokens 1e9 --level x"),
    ("params-zero", "supervised predict --preset hoffmann2022 --params 0 --tokens 1e10"),
    ("params-neg", "supervised predict --preset hoffmann2022 --params -1e9 --tokens 1e10"),
    ("tokens-inf", "supervised predict --preset hoffmann2022 --params 1e9 --tokens inf"),
    ("tokens-nan", "supervised predict --preset hoffmann2022 --params 1e9 --tokens nan"),
    ("flops-zero", "supervised allocate --preset hoffmann2022 --flops 0"),
    ("flops-text", "supervised allocate --preset hoffmann2022 --flops lots"),
    ("preset-unknown", "supervised allocate --preset nosuch --flops 1e22"),
    ("accounting-unknown", "supervised allocate --preset hoffmann2022 --flops 1e22 --accounting x"),
    ("fit-and-preset", "supervised allocate --preset hoffmann2022 --fit sup.json --flops 1e22"),
    (
        "distill-student-nan",
        "distill predict --student-params nan --student-tokens 1e10 --teacher-loss 2",
    ),  # fmt: skip
    (
        "distill-teacher-loss-neg",
        "distill predict --student-params 1e9 --student-tokens 1e10 --teacher-loss -2",
    ),  # fmt: skip
    (
        "distill-teacher-params-alone",
        "distill predict --student-params 1e9 --student-tokens 1e10 --teacher-params 1e9",
    ),  # fmt: skip
    (
        "distill-coef-unknown",
        "distill predict --student-params 1e9 --student-tokens 1e10 "
        "--teacher-loss 2 --coefficients nosuch",
    ),  # fmt: skip
    ("distill-plan-1e300", "distill plan --student-params 1e9 --flops 1e300"),
    ("distill-plan-tiny", "distill plan --student-params 1e9 --flops 1e10"),
    ("distill-plan-scenario", "distill plan --student-params 1e9 --flops 1e22 --scenario x"),
    ("distill-crossover-scenario", "distill crossover --student-params 1e9 --scenario nope"),
    ("distill-crossover-draws-1", "distill crossover --student-params 1e9 --draws 1"),
    ("distill-crossover-draws-neg", "distill crossover --student-params 1e9 --draws -3"),
    ("distill-crossover-level", "distill crossover --student-params 1e9 --level 1.5"),
    ("distill-choose-both", "distill choose-teacher --student-params 1e9 --teachers teachers.csv"),
    ("distill-fix-syntax", "distill fit --runs distill_runs.csv --supervised paper --fix gamma"),
    ("distill-supervised-missing", "distill fit --runs distill_runs.csv --supervised sub.json"),
    ("distill-supervised-is-distill", "distill fit --runs distill_runs.csv --supervised dist.json"),
    (
        "distill-coef-is-supervised",
        "distill plan --student-params 1e9 --flops 1e22 --coefficients sup.json",
    ),  # fmt: skip
    ("distill-fix-nan-text", "distill fit --runs distill_runs.csv --supervised paper --fix c0=x"),
    (
        "distill-fix-unknown",
        "distill fit --runs distill_runs.csv --supervised paper --fix nosuch=1",
    ),
    ("flp-threshold-neg", "flp fit --runs flp_runs.csv --task ARC --threshold -5"),
    ("flp-threshold-nan", "flp fit --runs flp_runs.csv --task ARC --threshold nan"),
    ("flp-chance-inf", "flp fit --runs flp_runs.csv --task ARC --chance inf"),
    ("flp-method-unknown", "flp fit --runs flp_runs.csv --task ARC --method magic"),
    ("flp-bootstrap-neg", "flp fit --runs flp_runs.csv --task ARC --bootstrap -3"),
    ("flp-seed-neg", "flp fit --runs flp_runs.csv --task ARC --seed -1"),
    (
        "flp-task-unknown",
        "flp fit --runs flp_runs.csv --checkpoints flp_checkpoints.csv --task Nope",
    ),  # fmt: skip
    ("flp-predict-flops-neg", "flp predict --fit flp.json --flops -1"),
    ("flp-predict-actual-nan", "flp predict --fit flp.json --flops 1e22 --actual nan"),
    (
        "flpm-steps-huge",
        "flpm fit --runs flp_mixture_runs.csv --task HumanEval --steps 1000000000000",
    ),  # fmt: skip
    ("flpm-steps-zero", "flpm fit --runs flp_mixture_runs.csv --task HumanEval --steps 0"),
    ("flpm-form-unknown", "flpm fit --runs flp_mixture_runs.csv --task HumanEval --form M9"),
    ("flpm-mapper-unknown", "flpm fit --runs flp_mixture_runs.csv --task HumanEval --mapper x"),
    ("flpm-compare-steps", f"{FLPM_CMP} flp_mixture_runs.csv --steps 0"),
    ("flpm-predict-flops-count", "flpm predict --fit flpm.json --flops-per-source 1e20"),
    ("flpm-predict-flops-text", "flpm predict --fit flpm.json --flops-per-source a,b"),
    ("flpm-optimize-ratios", "flpm optimize-mixture --fit flpm.json --flops 1e21 --ratios x"),
    ("flpm-optimize-level", "flpm optimize-mixture --fit flpm.json --flops 1e21 --level 0"),
    (
        "flpm-single-ratio-tol",
        "flpm single-distribution --runs flp_mixture_runs.csv "
        "--targets flp_mixture_targets.csv --task HumanEval "
        "--ratio-tol -1",
    ),  # fmt: skip
    ("osl-pcs-zero", "osl pca --benchmarks bench.csv --pcs 0"),
    ("osl-budget-zero", "osl select --benchmarks bench.csv --budget 0"),
    ("osl-seed-neg", "osl select --benchmarks bench.csv --budget 5 --seed -2"),
    ("osl-holdout-2", "osl fit --benchmarks bench.csv --target GSM8K --holdout-top 2"),
    ("osl-cutoff-neg", "osl fit --benchmarks bench.csv --target GSM8K --cutoff-flops -1"),
    ("osl-x-unknown", "osl fit --benchmarks bench.csv --target GSM8K --x nope"),
    ("osl-target-unknown", "osl fit --benchmarks bench.csv --target Nope"),
    ("osl-metric-unknown", "osl pca --benchmarks bench.csv --metrics MMLU,Nope"),
    ("osl-metrics-empty", "osl pca --benchmarks bench.csv --metrics ,"),
    (
        "osl-robust-nfrac-zero",
        "osl robustness --benchmarks bench.csv --target GSM8K --n-fractions 0",
    ),  # fmt: skip
    (
        "osl-robust-minfrac-zero",
        "osl robustness --benchmarks bench.csv --target GSM8K --min-fraction 0",
    ),  # fmt: skip
    (
        "osl-robust-maxfrac-1.5",
        "osl robustness --benchmarks bench.csv --target GSM8K --max-fraction 1.5",
    ),  # fmt: skip
    ("osl-missing-refuse", "osl pca --benchmarks bench.csv --missing refuse"),
    ("osl-missing-unknown", "osl pca --benchmarks bench.csv --missing guess"),
    ("osl-gap-unknown", "osl gap --benchmarks bench.csv --without Nope --with GSM8K"),
    ("sal-steps-neg", f"{SAL_FIT} sal_losses.jsonl --steps -1"),
    ("sal-steps-huge", f"{SAL_FIT} sal_losses.jsonl --steps 10000000000"),
    ("sal-lr-zero", f"{SAL_FIT} sal_losses.jsonl --lr 0"),
    ("sal-feature-dim-zero", f"{SAL_FIT} sal_losses.jsonl --feature-dim 0"),
    ("sal-bootstrap-neg", f"{SAL_FIT} sal_losses.jsonl --bootstrap -1"),
    ("sal-seed-neg", f"{SAL_FIT} sal_losses.jsonl --seed -1"),
    (
        "sal-chance-text",
        "salience fit --texts sal_texts.jsonl --losses sal_losses.jsonl "
        "--scores sal_scores.csv --task reasoning --chance x",
    ),  # fmt: skip
    (
        "sal-chance-100",  # points, in [0, 100)
        "salience fit --texts sal_texts.jsonl --losses sal_losses.jsonl "
        "--scores sal_scores.csv --task reasoning --chance 100",
    ),  # fmt: skip
    (
        "sal-chance-fraction",  # 0.25 beside a fraction table: most likely meant 25 points
        "salience fit --texts sal_texts.jsonl --losses sal_losses.jsonl "
        "--scores sal_scores.csv --task reasoning --chance 0.25",
    ),  # fmt: skip
    (
        "sal-score-unit",
        "salience fit --texts sal_texts.jsonl --losses sal_losses.jsonl "
        "--scores sal_scores.csv --task reasoning --chance 0 --score-unit percent",
    ),  # fmt: skip
    (
        "sal-task-unknown",
        "salience fit --texts sal_texts.jsonl --losses sal_losses.jsonl "
        "--scores sal_scores.csv --task nope --chance 0",
    ),  # fmt: skip
    (
        "sal-map-tokenizer",
        "salience map-losses --losses sal_losses.jsonl --target-tokenizer "
        "nosuchdir --texts sal_texts.jsonl",
    ),  # fmt: skip
    ("sal-plot-kind", "salience plot --fit sal.json --kind nope --out p.png"),
    ("sal-plot-format", "salience plot --fit sal.json --kind fit --out p.5"),
    ("sal-plot-html-fit", "salience plot --fit sal.json --kind fit --out p.html"),
    ("flp-checkpoints-empty-path", "flp fit --runs flp_runs.csv --checkpoints '' --task ARC"),
    (
        "distill-choose-tiny-ds",
        "distill choose-teacher --student-params 1e300 --flops 1e21 --teachers teachers.csv",
    ),  # fmt: skip
    (
        "sal-plot-text-id",
        "salience plot --fit sal.json --kind weights --texts sal_texts.jsonl "
        "--text-id nope --out p.html",
    ),  # fmt: skip
    (
        "sal-token-losses-batch-zero",
        "salience token-losses --model nosuch --texts sal_texts.jsonl --batch-size 0 --out t.jsonl",
    ),  # fmt: skip
    (
        "sal-token-losses-out-input",
        "salience token-losses --model nosuch --texts sal_texts.jsonl --out sal_texts.jsonl",
    ),  # fmt: skip
    (
        "sal-features-batch-zero",
        "salience features --texts sal_texts.jsonl --batch-size 0 --out f.npz",
    ),  # fmt: skip
    ("zoo-build-preset", "zoo build --preset nosuch --out zb"),
    ("zoo-build-jobs-zero", "zoo build --preset mini --jobs 0 --out zb"),
    ("report-sections-empty", "report --sections '' --out rep"),
    ("report-sections-comma", "report --sections , --out rep"),
    ("report-sections-unknown", "report --sections nope --out rep"),
    ("report-seed-neg", "report --seed -1 --out rep"),
]:
    case(cid, argv)

# -- outputs
for cid, argv, setup in [
    ("out-is-input-sup", "supervised fit --runs runs.csv --out runs.csv", None),
    (
        "out-is-input-distill",
        "distill fit --runs distill_runs.csv --supervised paper --out distill_runs.csv",
        None,
    ),
    ("out-is-input-flp", "flp fit --runs flp_runs.csv --task ARC --out flp_runs.csv", None),
    ("out-is-input-flpm", f"{FLPM_FIT} flp_mixture_runs.csv --out flp_mixture_runs.csv", None),
    ("out-is-input-sal", f"{SAL_FIT} sal_losses.jsonl --out sal_scores.csv", None),
    ("out-is-input-salpred", f"{SAL_P} sal.json --out sal.json", None),
    ("out-is-input-osl", "osl fit --benchmarks bench.csv --target GSM8K --out bench.csv", None),
    ("out-proc", "supervised fit --runs runs.csv --out /proc/lmforecast-test.json", None),
    ("out-proc-osl", "osl robustness --benchmarks bench.csv --target GSM8K --out /proc/x", None),
    ("out-no-folder", "supervised fit --runs runs.csv --out nosuch/fit.json", None),
    (
        "out-parent-is-file",
        "distill fit --runs distill_runs.csv --supervised paper --out runs.csv/fit.json",
        None,
    ),
    ("out-is-folder", "flp fit --runs flp_runs.csv --task ARC --out sub", write("sub/x", "x")),
    ("out-empty", "supervised fit --runs runs.csv --out ''", None),
    ("report-out-is-file", "report --out runs.csv --sections supervised", None),
    ("report-out-proc", "report --out /proc/rep --sections supervised", None),
    ("zoo-out-is-file", "zoo build --preset mini --out runs.csv", None),
    ("sal-features-out-proc", "salience features --texts sal_texts.jsonl --out /proc/f.npz", None),
    (
        "sal-map-out-input",
        "salience map-losses --losses sal_losses.jsonl --target-tokenizer words "
        "--texts sal_texts.jsonl --out sal_losses.jsonl",
        None,
    ),  # fmt: skip
]:
    case(cid, argv, setup)


# -- tables: the same corruptions for every table-reading verb
TABLE_VERBS = [
    ("sup", "supervised fit", "runs.csv", ""),
    ("dis", "distill fit", "distill_runs.csv", "--supervised paper"),
    ("flp", "flp fit --task ARC --runs", "flp_runs.csv", ""),
    ("flpck", FLP_FIT_CK, "flp_checkpoints.csv", ""),
    ("flpm", "flpm fit --task HumanEval --runs", "flp_mixture_runs.csv", ""),
    ("osl", OSL, "bench.csv", ""),
    (
        "choose",
        "distill choose-teacher --student-params 1e9 --student-tokens 1e10 --teachers",
        "teachers.csv",
        "",
    ),  # fmt: skip
]
for tag, verb, _good, tail in TABLE_VERBS:
    case(f"{tag}-missing-file", f"{verb} nosuch.csv {tail}")
    case(f"{tag}-empty-file", f"{verb} bad.csv {tail}", write("bad.csv", ""))
    case(f"{tag}-folder", f"{verb} sub {tail}", write("sub/x.csv", "a\n1\n"))
    case(f"{tag}-png-as-csv", f"{verb} bad.csv {tail}", write("bad.csv", PNG))
    case(f"{tag}-png-as-jsonl", f"{verb} bad.jsonl {tail}", write("bad.jsonl", PNG))
    case(f"{tag}-latin1", f"{verb} bad.csv {tail}", write("bad.csv", LATIN1))
    case(f"{tag}-header-only", f"{verb} bad.csv {tail}", write("bad.csv", "a,b,c\n"))
    case(f"{tag}-wrong-ext", f"{verb} bad.xlsx {tail}", write("bad.xlsx", "a,b\n1,2\n"))
    case(f"{tag}-bad-jsonl", f"{verb} bad.jsonl {tail}", write("bad.jsonl", '{"N": 1\n'))
    case(f"{tag}-bad-parquet", f"{verb} bad.parquet {tail}", write("bad.parquet", b"PAR1xx"))

for cid, verb, src, fn in [
    ("sup-nan", "supervised fit", "runs.csv", setcell("N", 3, "nan")),
    ("sup-inf", "supervised fit", "runs.csv", setcell("loss", 3, "inf")),
    ("sup-neg", "supervised fit", "runs.csv", setcell("D", 3, "-5e9")),
    ("sup-zero-loss", "supervised fit", "runs.csv", setcell("loss", 0, "0")),
    ("sup-text", "supervised fit", "runs.csv", setcell("N", 2, "big")),
    ("sup-blank", "supervised fit", "runs.csv", setcell("D", 2, "")),
    ("sup-no-loss", "supervised fit", "runs.csv", drop_col("loss")),
    ("sup-no-d", "supervised fit", "runs.csv", drop_col("D")),
    ("sup-dup", "supervised fit", "runs.csv", dup_row(4)),
    ("sup-contradict", "supervised fit", "runs.csv", dup_row(4, loss="9.9")),
    ("sup-too-few", "supervised fit", "runs.csv", lambda df: df.iloc[:3]),
    ("dis-nan", "distill fit --supervised paper", "distill_runs.csv", setcell("L_S", 1, "nan")),
    ("dis-neg", "distill fit --supervised paper", "distill_runs.csv", setcell("N_S", 1, "-1")),
    ("dis-text", "distill fit --supervised paper", "distill_runs.csv", setcell("L_T", 1, "x")),
    ("dis-no-col", "distill fit --supervised paper", "distill_runs.csv", drop_col("L_T")),
    ("dis-dup", "distill fit --supervised paper", "distill_runs.csv", dup_row(2)),
    ("dis-contradict", "distill fit --supervised paper", "distill_runs.csv", dup_row(2, L_S="3.3")),
    ("dis-too-few", "distill fit --supervised paper", "distill_runs.csv", lambda df: df.iloc[:4]),
    (
        "choose-neg",
        "distill choose-teacher --student-params 1e9 --student-tokens 1e10 --teachers",
        "teachers.csv",
        setcell("N_T", 0, "-1"),
    ),  # fmt: skip
    (
        "choose-nan",
        "distill choose-teacher --student-params 1e9 --student-tokens 1e10 --teachers",
        "teachers.csv",
        setcell("D_T", 0, "nan"),
    ),  # fmt: skip
    (
        "choose-dup",
        "distill choose-teacher --student-params 1e9 --student-tokens 1e10 --teachers",
        "teachers.csv",
        dup_row(0),
    ),  # fmt: skip
    (
        "choose-no-cols",
        "distill choose-teacher --student-params 1e9 --student-tokens 1e10 --teachers",
        "teachers.csv",
        drop_col("D_T"),
    ),  # fmt: skip
    ("flp-no-loss", FLP_FIT, "flp_runs.csv", drop_col("loss")),
    ("flp-ck-no-loss", FLP_FIT_CK, "flp_checkpoints.csv", drop_col("loss")),
    ("flp-dup-run", FLP_FIT, "flp_runs.csv", dup_row(1)),
    ("flp-blank-model", FLP_FIT_CK, "flp_checkpoints.csv", setcell("model", 4, "")),
    ("flp-contradict-run", FLP_FIT, "flp_runs.csv", dup_row(1, loss="2.0")),
    ("flp-neg-c", FLP_FIT, "flp_runs.csv", setcell("C", 2, "-1e18")),
    ("flp-nan-loss", FLP_FIT, "flp_runs.csv", setcell("loss", 2, "nan")),
    ("flp-score-text", FLP_FIT_CK, "flp_checkpoints.csv", setcell("ARC", 2, "high")),
    ("flp-score-101", FLP_FIT_CK, "flp_checkpoints.csv", setcell("ARC", 2, "101")),
    ("flp-no-flops", FLP_FIT, "flp_runs.csv", lambda df: df.drop(columns=["C", "N"])),
    ("flp-dup-ckpt", FLP_FIT_CK, "flp_checkpoints.csv", dup_row(3)),
    ("flp-contradict-ckpt", FLP_FIT_CK, "flp_checkpoints.csv", dup_row(3, ARC="99")),
    ("flp-ckpt-unknown-model", FLP_FIT_CK, "flp_checkpoints.csv", setcell("model", 0, "ghost")),
    ("flpm-dup-run", FLPM_FIT, "flp_mixture_runs.csv", dup_row(0)),
    ("flpm-contradict-run", FLPM_FIT, "flp_mixture_runs.csv", dup_row(0, loss_code="9")),
    ("flpm-neg-c", FLPM_FIT, "flp_mixture_runs.csv", setcell("C_code", 1, "-5")),
    ("flpm-no-domain", FLPM_FIT_CK, "flp_mixture_checkpoints.csv", drop_col("loss_code")),
    (
        "flpm-runs-no-domain",
        FLPM_FIT,
        "flp_mixture_runs.csv",
        lambda df: df.drop(columns=[c for c in df.columns if c.startswith("loss_")]),
    ),  # fmt: skip
    ("flpm-dup-ckpt", FLPM_FIT_CK, "flp_mixture_checkpoints.csv", dup_row(5)),
    ("flpm-cmp-dup", FLPM_CMP, "flp_mixture_runs.csv", dup_row(0)),
    ("flpm-cmp-contradict", FLPM_CMP, "flp_mixture_runs.csv", dup_row(0, HumanEval="50")),
    ("osl-neg-flops", OSL, "bench.csv", setcell("FLOPs (1E21)", 3, "-1")),
    ("osl-inf-flops", OSL_FIT, "bench.csv", setcell("FLOPs (1E21)", 3, "inf")),
    ("osl-neg-size", OSL_FIT, "bench.csv", setcell("Model Size (B)", 3, "-7")),
    (
        "osl-zero-size",
        "osl robustness --target GSM8K --benchmarks",
        "bench.csv",
        setcell("Model Size (B)", 3, "0"),
    ),  # fmt: skip
    ("osl-score-2", OSL, "bench.csv", setcell("MMLU", 3, "2")),
    ("osl-score-text", OSL, "bench.csv", setcell("MMLU", 3, "good")),
    ("osl-dup-model", OSL, "bench.csv", dup_row(3)),
    ("osl-blank-model", "osl select --budget 4 --benchmarks", "bench.csv", setcell("Model", 2, "")),
    ("osl-no-model", OSL, "bench.csv", drop_col("Model")),
]:
    case(cid, f"{verb} bad.csv", edit_csv(src, "bad.csv", fn))

# -- salience inputs
SAL_REC = '{"model":"fam0-m0","text_id":"t000","offsets":[[0,6]],"losses":[1.0]}\n'
for cid, argv, setup in [
    ("sal-losses-missing", f"{SAL_FIT} nosuch.jsonl", None),
    ("sal-losses-folder", f"{SAL_FIT} sub", write("sub/a.jsonl", "{}")),
    ("sal-losses-png", f"{SAL_FIT} bad.jsonl", write("bad.jsonl", PNG)),
    (
        "sal-losses-latin1",
        f"{SAL_FIT} bad.jsonl",
        write("bad.jsonl", '{"m":"\xe9"}'.encode("latin-1")),
    ),
    ("sal-losses-not-json", f"{SAL_FIT} bad.jsonl", write("bad.jsonl", "hello\n")),
    ("sal-losses-array", f"{SAL_FIT} bad.jsonl", write("bad.jsonl", "[1, 2]\n")),
    ("sal-losses-empty", f"{SAL_FIT} bad.jsonl", write("bad.jsonl", "\n\n")),
    ("sal-losses-missing-field", f"{SAL_FIT} bad.jsonl", write("bad.jsonl", '{"model": "a"}\n')),
    ("sal-texts-png", f"{SAL_FIT_T} bad.jsonl", write("bad.jsonl", PNG)),
    (
        "sal-texts-dup",
        f"{SAL_FIT_T} bad.jsonl",
        write("bad.jsonl", '{"text_id":"a","text":"x"}\n{"text_id":"a","text":"y"}\n'),
    ),  # fmt: skip
    (
        "sal-texts-empty-text",
        f"{SAL_FIT_T} bad.jsonl",
        write("bad.jsonl", '{"text_id":"a","text":""}\n'),
    ),
    ("sal-scores-png", f"{SAL_FIT_S} bad.csv", write("bad.csv", PNG)),
    (
        "sal-scores-200",  # neither a fraction nor points
        f"{SAL_FIT_S} bad.csv",
        edit_csv("sal_scores.csv", "bad.csv", setcell("reasoning", 0, "200")),
    ),
    (
        "sal-scores-2-fraction",  # declared fractions
        f"{SAL_FIT_S} bad.csv --score-unit fraction",
        edit_csv("sal_scores.csv", "bad.csv", setcell("reasoning", 0, "2")),
    ),
    ("sal-scores-dup", f"{SAL_FIT_S} bad.csv", edit_csv("sal_scores.csv", "bad.csv", dup_row(0))),
    (
        "sal-scores-split",
        f"{SAL_FIT_S} bad.csv",
        edit_csv("sal_scores.csv", "bad.csv", setcell("split", 0, "dev")),
    ),
    (
        "sal-scores-2-train",
        f"{SAL_FIT_S} bad.csv",
        edit_csv(
            "sal_scores.csv",
            "bad.csv",
            lambda df: df.assign(split=["train", "train"] + ["test"] * (len(df) - 2)),
        ),
    ),  # fmt: skip
    (
        "sal-predict-losses-folder",
        "salience predict --fit sal.json --losses sub",
        write("sub/a.jsonl", "{}"),
    ),  # fmt: skip
    (
        "sal-map-texts-conflict",
        "salience map-losses --target-tokenizer words --losses bad.jsonl",
        write(
            "bad.jsonl",
            '{"model":"m","text_id":"a","text":"hello world","offsets":[[0,5],[6,11]],'
            '"losses":[1,2]}\n{"model":"n","text_id":"a","text":"other text!","offsets":'
            '[[0,5],[6,11]],"losses":[1,2]}\n',
        ),
    ),  # fmt: skip
]:
    case(cid, argv, setup)


def _neg_loss(w):
    lines = (w / "sal_losses.jsonl").read_text().splitlines()
    rec = json.loads(lines[0])
    rec["losses"][0] = -1.5
    lines[0] = json.dumps(rec)
    (w / "bad.jsonl").write_text("\n".join(lines) + "\n")


def _nan_loss(w):
    lines = (w / "sal_losses.jsonl").read_text().splitlines()
    lines[0] = lines[0].replace('"losses":[', '"losses":[NaN,', 1).replace("[[0,", "[[0,0],[0,", 1)
    (w / "bad.jsonl").write_text("\n".join(lines) + "\n")


def _dup_loss(w):
    lines = (w / "sal_losses.jsonl").read_text().splitlines()
    (w / "bad.jsonl").write_text("\n".join(lines + lines[:1]) + "\n")


def _offsets_out(w):
    lines = (w / "sal_losses.jsonl").read_text().splitlines()
    rec = json.loads(lines[0])
    rec["offsets"][-1] = [rec["offsets"][-1][0], 100000]
    lines[0] = json.dumps(rec)
    (w / "bad.jsonl").write_text("\n".join(lines) + "\n")


case("sal-negative-loss", f"{SAL_FIT} bad.jsonl", _neg_loss)
case("sal-nan-loss", f"{SAL_FIT} bad.jsonl", _nan_loss)
case("sal-dup-loss-record", f"{SAL_FIT} bad.jsonl", _dup_loss)
case("sal-offsets-outside", f"{SAL_FIT} bad.jsonl", _offsets_out)
case("sal-predict-negative-loss", f"{SAL_P} sal.json".replace("sal_new_losses", "bad"), _neg_loss)

# -- saved fits: files that are not fits
FIT_VERBS = [
    ("sup", SUP_P, "sup.json"),
    ("supalloc", SUP_A, "sup.json"),
    ("dis", DIS_P, "dist.json"),
    ("flp", FLP_P, "flp.json"),
    ("flpm", FLPM_O, "flpm.json"),
    ("sal", SAL_P, "sal.json"),
]
for tag, verb, good in FIT_VERBS:
    case(f"fit-{tag}-missing", f"{verb} nosuch.json")
    case(f"fit-{tag}-folder", f"{verb} sub.json", write("sub.json/x", "x"))
    case(f"fit-{tag}-png", f"{verb} bad.json", write("bad.json", PNG))
    case(
        f"fit-{tag}-latin1",
        f"{verb} bad.json",
        write("bad.json", '{"law": "caf\xe9"}'.encode("latin-1")),
    )
    case(f"fit-{tag}-empty", f"{verb} bad.json", write("bad.json", ""))
    case(f"fit-{tag}-truncated", f"{verb} bad.json",
         lambda w, g=good: (w / "bad.json").write_text((w / g).read_text()[:200]))  # fmt: skip
    case(f"fit-{tag}-array", f"{verb} bad.json", write("bad.json", "[1, 2, 3]"))
    case(f"fit-{tag}-deep", f"{verb} bad.json", write("bad.json", "[" * 100000))
    case(
        f"fit-{tag}-version",
        f"{verb} bad.json",
        edit_json(good, "bad.json", setpath("format_version", 99)),
    )
    case(
        f"fit-{tag}-version-object",
        f"{verb} bad.json",
        edit_json(good, "bad.json", setpath("format_version", {})),
    )
    case(
        f"fit-{tag}-kind", f"{verb} bad.json", edit_json(good, "bad.json", setpath("kind", "Other"))
    )
    extra = "config.parms" if tag in ("flp", "flpm") else "parms"
    case(f"fit-{tag}-extra", f"{verb} bad.json", edit_json(good, "bad.json", setpath(extra, 1)))
    other = "flp.json" if tag.startswith("sup") else "sup.json"
    case(f"fit-{tag}-wrong-type", f"{verb} bad.json", edit_json(other, "bad.json", lambda d: None))

# -- saved law fits (FitResult) edited by hand: every loader of one
LAW_FITS = [("sup", SUP_P, "sup.json", ""), ("supalloc", SUP_A, "sup.json", ""),
            ("dis", DIS_P, "dist.json", ""), ("flp2", FLP_P, "flp.json", "stage2."),
            ("flp1", FLP_P, "flp.json", "stage1."), ("sal", SAL_P, "sal.json", "law.")]  # fmt: skip
for tag, verb, good, pre in LAW_FITS:
    pname = {"sup": "alpha", "supalloc": "alpha", "dis": "c0", "flp2": "w1", "flp1": "alpha",
             "sal": "alpha"}[tag]  # fmt: skip
    for cid, path, value in [
        ("param-text", f"params.{pname}", "x"),
        ("param-nan", f"params.{pname}", float("nan")),
        ("param-null", f"params.{pname}", None),
        ("param-edited", f"params.{pname}", 0.123456),
        ("param-missing", f"params.{pname}", DELETE),
        ("theta-short", "theta", [1.0]),
        ("theta-text", "theta.0", "x"),
        ("theta-nan", "theta.0", float("nan")),
        ("theta-huge", "theta.0", 1e300),
        ("loss-null", "loss", None),
        ("loss-name", "loss.name", "cubic"),
        ("bootstrap-short", "bootstrap", [[1]]),
        ("bootstrap-text", "bootstrap", [["a", "b"]]),
        ("ci-short", "ci", {pname: [1.0]}),
        ("ci-level-2", "ci_level", 2),
        ("n-obs-neg", "n_obs", -1),
        ("converged-text", "converged", "yes"),
        ("law-unknown", "law", "nosuch"),
        ("law-missing", "law", DELETE),
    ]:
        case(
            f"law-{tag}-{cid}",
            f"{verb} bad.json",
            edit_json(good, "bad.json", setpath(pre + path, value)),
        )

# -- per-type fields
for cid, verb, good, path, value in [
    ("dis-supervised-missing", DIS_P, "dist.json", "meta.supervised", DELETE),
    ("dis-supervised-neg", DIS_P, "dist.json", "meta.supervised.E", -1.0),
    ("dis-supervised-text", DIS_P, "dist.json", "meta.supervised.alpha", "x"),
    ("flp-method", FLP_P, "flp.json", "config.method", "magic"),
    ("flp-stage2-missing", FLP_P, "flp.json", "stage2", DELETE),
    ("flp-stage1-null", FLP_P, "flp.json", "stage1", None),
    ("flp-settings-chance", FLP_P, "flp.json", "settings.chance", "x"),
    ("flp-filter", FLP_P, "flp.json", "filter.kept", [1, 2]),
    ("flp-n-runs", FLP_P, "flp.json", "n_runs", -3),
    ("flpm-network-shape", FLPM_O, "flpm.json", "network.params.0", [[1.0]]),
    ("flpm-network-null", FLPM_O, "flpm.json", "network", None),
    ("flpm-x-std-zero", FLPM_O, "flpm.json", "network.x_std.0", 0.0),
    ("flpm-stage1-missing-domain", FLPM_O, "flpm.json", "stage1.code", DELETE),
    ("flpm-sources-dup", FLPM_O, "flpm.json", "sources", ["general", "general"]),
    ("flpm-mapper", FLPM_O, "flpm.json", "config.mapper", "magic"),
    ("flpm-stage1-theta", FLPM_O, "flpm.json", "stage1.code.theta", [1.0]),
    ("sal-gamma-2", SAL_P, "sal.json", "gamma", 2.0),
    ("sal-gamma-text", SAL_P, "sal.json", "gamma", "x"),
    ("sal-alpha-edited", SAL_P, "sal.json", "alpha", 1.0),
    ("sal-law-gamma-edited", SAL_P, "sal.json", "law.meta.law_options.gamma", 0.5),
    ("sal-weights-short", SAL_P, "sal.json", "weights", [[1.0]]),
    ("sal-text-lengths", SAL_P, "sal.json", "text_lengths.0", -1),
    ("sal-bootstrap", SAL_P, "sal.json", "bootstrap", [[1]]),
    ("sal-scores", SAL_P, "sal.json", "scores.0", 500.0),  # points
]:
    case(f"field-{cid}", f"{verb} bad.json", edit_json(good, "bad.json", setpath(path, value)))

# -- zoo tables folders
for cid, files in [
    ("zoo-missing-folder", None),
    ("zoo-empty-folder", {}),
    ("zoo-empty-runs", {"runs.csv": ""}),
    ("zoo-png-runs", {"runs.csv": PNG}),
    ("zoo-bad-metadata", {"metadata.json": "{not json"}),
    ("zoo-metadata-array", {"metadata.json": "[]"}),
    ("zoo-runs-no-cols", {"runs.csv": "a,b\n1,2\n"}),
    ("zoo-runs-neg-n", None),
]:

    def setup(w, files=files, cid=cid):
        from lmforecast.zoo.tables import bundled_folder

        if cid == "zoo-missing-folder":
            return
        z = w / "zoo"
        if files == {}:
            z.mkdir()
            return
        shutil.copytree(bundled_folder(), z)
        if cid == "zoo-runs-neg-n":
            df = pd.read_csv(z / "runs.csv")
            df.loc[0, "N"] = -5
            df.to_csv(z / "runs.csv", index=False)
            return
        for name, content in files.items():
            (z / name).write_bytes(content if isinstance(content, bytes) else content.encode())

    case(cid, "zoo show zoo", setup)


# -- downstream, evals, examples
DS_FIT = "downstream fit --evals pythia --loss-task lambada_openai --out ds.json"
case("ds-fit-unknown-task", f"{DS_FIT} --task nosuch")
case("ds-fit-unknown-loss-task", "downstream fit --evals pythia --task piqa --loss-task nosuch")
case("ds-fit-unknown-metric", f"{DS_FIT} --task piqa --metric nosuch")
case("ds-fit-unknown-model", f"{DS_FIT} --task piqa --models pythia-70m,pythia-999m")
case("ds-fit-missing-evals", "downstream fit --evals nosuch.csv --task piqa --out ds.json")
case("ds-fit-not-evals", "downstream fit --evals runs.csv --task piqa --out ds.json")
case("ds-fit-bootstrap-neg", f"{DS_FIT} --task piqa --bootstrap -1")
case("ds-fit-seed-neg", f"{DS_FIT} --task piqa --seed -1")
case("ds-predict-missing-fit", "downstream predict --fit nosuch.json --flops 1e21")
case("ds-predict-wrong-fit", "downstream predict --fit sup.json --flops 1e21")
case("ds-predict-level", "downstream predict --fit sup.json --flops 1e21 --level 2")
case("ds-predict-flops-neg", "downstream predict --fit sup.json --flops -1")
case(
    "ds-backtest-unknown-target",
    "downstream backtest --evals pythia --task piqa --fit-models pythia-70m,pythia-160m "
    "--target pythia-999m",
)
case(
    "ds-backtest-unknown-method",
    "downstream backtest --evals pythia --task piqa --fit-models pythia-70m,pythia-160m "
    "--target pythia-410m --methods nosuch",
)
case("evals-import-missing", "evals import nosuch --out ev.csv")
case("evals-import-not-harness", "evals import notharness.json --out ev.csv",
     write("notharness.json", '{"a": 1}'))  # fmt: skip
case("evals-import-binary", "evals import bin.json --out ev.csv", write("bin.json", b"\x89PNG"))
case(
    "evals-import-bad-step",
    "evals import bad/ --out ev.csv",
    write(
        "bad/r.json",
        json.dumps(
            {
                "results": {"piqa": {"acc": 0.6, "acc_stderr": 0.01}},
                "config": {"model_args": "pretrained=EleutherAI/pythia-v1.1-160m,revision=stepX"},
            }
        ),
    ),
)
case("evals-import-out-is-dir", "evals import runs.csv --out .")
case("evals-show-missing", "evals show nosuch.csv")
case("evals-show-not-evals", "evals show runs.csv")
case("osl-predict-unknown-preset", "osl predict --preset nosuch --benchmarks bench.csv")
case("osl-predict-missing-table", "osl predict --preset word-unscramble --benchmarks nosuch.csv")
case("osl-predict-missing-column", "osl predict --preset word-unscramble --benchmarks runs.csv")
case("backtest-missing-table", "backtest --runs nosuch.csv --form chinchilla")
case("backtest-unknown-form", "backtest --runs runs.csv --form nosuch")
case("backtest-level", "backtest --runs runs.csv --form chinchilla --level 1.5")
case("backtest-cutoff-leaves-none", "backtest --runs runs.csv --form chinchilla --cutoffs 1e40")
case("backtest-cutoff-nan", "backtest --runs runs.csv --form chinchilla --cutoffs x")
case("backtest-one-level", "backtest --runs one.csv --form chinchilla",
     write("one.csv", "N,D,loss\n1e8,2e9,3.1\n1e8,2e9,3.0\n"))  # fmt: skip
case("distill-ratios-neg-loss", "distill ratios --student-params 1e9 --target-loss -2")
case("distill-ratios-bad-scenario",
     "distill ratios --student-params 1e9 --target-loss 2.4 --scenario nosuch")  # fmt: skip
case("distill-ratios-level", "distill ratios --student-params 1e9 --target-loss 2.4 --level 0")
case(
    "distill-ratios-missing-coefficients",
    "distill ratios --student-params 1e9 --target-loss 2.4 --coefficients nosuch.json",
)
for cid, path, value in [
    ("sup-intervals-k-text", "meta.intervals.k", "x"),
    ("sup-intervals-k-negative", "meta.intervals.k", -1.0),
    ("sup-intervals-noise-negative", "meta.intervals.noise", -1.0),
    ("sup-intervals-method-number", "meta.intervals.method", 3),
    ("sup-intervals-max-compute", "meta.intervals.max_compute", "x"),
    ("sup-intervals-list", "meta.intervals", [1]),
    # the runs' isoFLOP optima about the law's N* (supervised/allocation.py)
    ("sup-allocation-rms-negative", "meta.allocation", {"rms": -1.0, "n": 5}),
    ("sup-allocation-two-budgets", "meta.allocation", {"rms": 0.1, "n": 2}),
    ("sup-allocation-extra-key", "meta.allocation", {"rms": 0.1, "n": 5, "bias": 1}),
]:
    case(cid, "supervised predict --params 1e9 --tokens 2e10 --fit bad.json",
         edit_json("sup.json", "bad.json", setpath(path, value)))  # fmt: skip
case("examples-list-bad-flag", "examples list --nosuch")
case("examples-copy-clash", "examples copy ex", write("ex/flp/runs.csv", "mine\n"))

# the toolbox verbs (their fuller cases live in test_bad_input_toolbox.py and
# test_bad_input_ledger.py); one each here so the coverage check below sees every verb
NOT_LEDGER = write("notaledger.db", "just text, not SQLite\n")
case(
    "dc-epochs-no-fit", "data-constrained epochs --fit nosuch.json --params 6e8 --unique-tokens 1e9"
)
case("isoflop-fit-no-loss", "isoflop fit --runs iso.csv", write("iso.csv", "N,D\n1e8,1e9\n"))
case("isoflop-plot-no-loss", "isoflop plot --runs iso.csv --out iso.png",
     write("iso.csv", "N,D\n1e8,1e9\n"))  # fmt: skip
case("recipes-no-file", "compare-recipes --base nosuch.csv --new nosuch2.csv --flops 1e18")
case("next-run-budget", "next-run --runs nosuch.csv --target-params 7e9 --target-tokens 1.4e11 "
     "--budget -1")  # fmt: skip
case("shape-no-file", "shape test --runs nosuch.csv")
# these ran (or crashed with exit 1) and gave nonsense
case("isoflop-plot-txt", "isoflop plot --runs runs.csv --out iso.txt")
case("ledger-add-point-outside-interval", "ledger add --ledger l.db --method supervised "
     "--point 3 --lo 2.25 --hi 2.38 --level 0.9")  # fmt: skip
case("report-ledger-section-without-ledger", "report --out rep --sections ledger")
case("examples-copy-unwritable", "examples copy /proc/lmforecast-examples")
case("allocate-budget-too-small", "supervised allocate --preset hoffmann2022 --flops 1e3")
case("shape-too-few-permutations", "shape test --runs runs.csv --permutations 5")
case("next-run-bootstrap-1", "next-run --runs runs.csv --target-params 7e9 --target-tokens 1.4e11 "
     "--bootstrap 1")  # fmt: skip
case("runs-import-no-file", "runs import nosuch.jsonl --format jsonl --out r.csv")
case("ledger-add-not-ledger", "ledger add --ledger notaledger.db --method supervised --point 2.3",
     NOT_LEDGER)  # fmt: skip
case("ledger-resolve-not-ledger", "ledger resolve 1 --ledger notaledger.db --observed 2.0",
     NOT_LEDGER)  # fmt: skip
case("ledger-score-not-ledger", "ledger score --ledger notaledger.db", NOT_LEDGER)
case("ledger-show-not-ledger", "ledger show --ledger notaledger.db", NOT_LEDGER)
case("ledger-export-not-ledger", "ledger export --ledger notaledger.db --out x.csv", NOT_LEDGER)


# -- a user's first steps
def _pythia_table(name, fn=None):
    def setup(w):
        from lmforecast.data.evals import load_pythia

        e = load_pythia()
        e = e[e["model"].isin(["pythia-70m", "pythia-160m", "pythia-410m", "pythia-1b"])
              & e["task"].isin(["piqa", "lambada_openai"])].reset_index(drop=True)  # fmt: skip
        (fn(e) if fn else e).to_csv(w / name, index=False)

    return setup


def _harness(w):
    args = "pretrained=EleutherAI/pythia-160m,revision=step1000"
    doc = {"results": {"piqa": {"acc,none": 0.6, "acc_stderr,none": 0.01}},
           "config": {"model_args": args}}  # fmt: skip
    (w / "h.json").write_text(json.dumps(doc))


def _osl_fit_and_holes(w):
    from lmforecast.osl import ObservationalScalingLaw, read_benchmarks

    law = ObservationalScalingLaw().fit(read_benchmarks(w / "bench.csv"), "HumanEval")
    (w / "osl.json").write_text(law.result_.to_json())
    t = pd.read_csv(w / "bench.csv").tail(2)
    t.loc[t.index[0], [c for c in t.columns if c not in ("Model", "Model Family")]] = np.nan
    t.to_csv(w / "holes.csv", index=False)


case("backtest-suite-plot", "backtest --runs runs.csv --suite --plot s.png")
case("backtest-suite-cutoffs", "backtest --runs runs.csv --suite --cutoffs 1e20")
case("backtest-compute-col-missing", "backtest --runs runs.csv --compute-col flops")
case("backtest-min-train-0", "backtest --runs runs.csv --min-train 0")
case("backtest-plot-format", "backtest --runs runs.csv --form chinchilla --plot bt.xyz")
case("supervised-fit-dc-replicates",
     "supervised fit --runs runs.csv --form data-constrained --replicates mean")  # fmt: skip
case("downstream-fit-bootstrap-1", "downstream fit --evals pythia --task piqa --bootstrap 1 "
     "--out d.json")  # fmt: skip
case("downstream-backtest-bare-chance-two-tasks",
     "downstream backtest --evals pythia --task piqa,arc_easy --fit-models "
     "pythia-70m,pythia-160m,pythia-410m --target pythia-1b --chance 50")  # fmt: skip
case(
    "downstream-fit-missing-value",
    "downstream fit --evals ev_na.csv --task piqa",
    _pythia_table("ev_na.csv", lambda e: e.assign(value=e["value"].where(e.index != 5))),
)
case(
    "downstream-fit-negative-stderr",
    "downstream fit --evals ev_se.csv --task piqa",
    _pythia_table("ev_se.csv", lambda e: e.assign(stderr=e["stderr"].where(e.index != 3, -0.3))),
)
case(
    "downstream-fit-model-without-rows",
    "downstream fit --evals ev_lost.csv --task piqa --models pythia-70m,pythia-160m,pythia-1b",
    _pythia_table("ev_lost.csv", lambda e: e[~((e.model == "pythia-1b") & (e.task == "piqa"))]),
)
case("flp-fit-evals-threshold", "flp fit --evals pythia --task piqa --threshold 30")
case("flp-fit-runs-models", FLP_FIT + " flp_runs.csv --models foo")
case("evals-import-misspelt-task", "evals import h.json --task piqa,piqaa --out ev.csv", _harness)
case("osl-fit-out-png", "osl fit --benchmarks bench.csv --target HumanEval --out o.png")
case("osl-fit-pcs-with-flops", "osl fit --benchmarks bench.csv --target HumanEval --x flops "
     "--pcs 5")  # fmt: skip
case("osl-predict-preset-level", "osl predict --preset word-unscramble --benchmarks bench.csv "
     "--level 0.5")  # fmt: skip
case("osl-predict-model-without-scores", "osl predict --fit osl.json --benchmarks holes.csv",
     _osl_fit_and_holes)  # fmt: skip
case("osl-fit-targets-clash", "osl fit --benchmarks bench.csv --targets clash.csv --target MMLU",
     edit_csv("bench.csv", "clash.csv", lambda df: df[["Model", "MMLU"]]))  # fmt: skip
case("salience-predict-out-json", SAL_P + " sal.json --out p.json")
# a mistyped flag's value was taken for a second runs table
case("mistyped-flag-with-value", "supervised fit --runs runs.csv --loss_col loss")
case("mistyped-flag-backtest", "backtest --runs runs.csv --bootstraps 3")
case(
    "teacher-loss-below-E",
    "distill predict --student-params 1e9 --student-tokens 2e10 --teacher-loss 1.0",
)
case("replicates-differ-in-U", "supervised fit --runs rep_u.csv --replicates mean --out f.json",
     edit_csv("runs.csv", "rep_u.csv",
              lambda df: pd.concat([df.assign(U=df["D"]), df.assign(U="1e6")])))  # fmt: skip

# -- more mistyped and misread inputs
case("flp-fit-one-final-run", FLP_FIT + " one.csv",
     edit_csv("flp_runs.csv", "one.csv", lambda df: df.tail(1)))  # fmt: skip
case("runs-import-params-total-below-params", "runs import log.jsonl --format jsonl --params 1e8 "
     "--params-total 5e7 --out r.csv",
     write("log.jsonl", '{"step": 1, "tokens": 10, "loss": 3.0}\n'))  # fmt: skip
case("next-run-min-gain-over-1", "next-run --runs runs.csv --target-params 7e9 "
     "--target-tokens 1.4e11 --min-gain 2")  # fmt: skip
case("flp-fit-run-listed-twice", FLP_FIT + " dup.csv",
     edit_csv("flp_runs.csv", "dup.csv", lambda df: pd.concat([df, df.iloc[:1]])))  # fmt: skip
case("flpm-fit-run-listed-twice", FLPM_FIT + " dupm.csv",
     edit_csv("flp_mixture_runs.csv", "dupm.csv", lambda d: pd.concat([d, d[:2]])))  # fmt: skip
case("isoflop-fit-concave-budget", "isoflop fit --runs iso.csv",
     write("iso.csv", "N,C,loss\n1e7,1e18,3.0\n3e7,1e18,2.9\n1e8,1e18,3.0\n"
                      "1e7,1e19,2.5\n3e7,1e19,2.9\n1e8,1e19,2.5\n"))  # fmt: skip
case("next-run-repeated-data", "next-run --runs rep.csv --target-params 7e9 --target-tokens 7e11",
     edit_csv("runs.csv", "rep.csv", lambda df: df.assign(U=df["D"].astype(float) / 4)),
     )  # fmt: skip
case("dc-fit-max-rows", "supervised fit --form data-constrained --runs runs.csv --max-rows 5")
case("dc-fit-flag-on-plain-form", "supervised fit --runs runs.csv --dc-fit two-stage")
case("flp-fit-bootstrap-1", FLP_FIT + " flp_runs.csv --bootstrap 1")
case("isoflop-fit-bootstrap-1", "isoflop fit --runs iso.csv --bootstrap 1")
case("flp-fit-stage1-with-runs", FLP_FIT + " flp_runs.csv --stage1 saturating")
case("flp-fit-checkpoints-without-order", FLP_FIT_CK + " ck_noorder.csv",
     edit_csv("flp_checkpoints.csv", "ck_noorder.csv",
              lambda df: df.drop(columns=["step", "C"]).assign(D=1e9)))  # fmt: skip
case("ledger-resolve-fractional-id", "ledger resolve --ledger l.db --table rt.csv",
     write("rt.csv", "id,observed\n4.5,2.35\n"))  # fmt: skip

# -- distillation
case("distill-fit-ls-col-is-lt-col",
     "distill fit --runs distill_runs.csv --supervised paper --ls-col L_T")  # fmt: skip
case("distill-choose-teacher-loss-below-E", "distill choose-teacher --student-params 1e9 "
     "--student-tokens 2e10 --teachers tl.csv", write("tl.csv", "L_T\n2.2\n1.0\n"))  # fmt: skip
case("distill-fit-supervised-typo", "distill fit --runs distill_runs.csv --supervised pape")


# -- downstream and OSL
def _ds_fits(w):
    """Two saved downstream fits of one task (piqa acc and acc_norm), without output."""
    from lmforecast.data.evals import load_pythia
    from lmforecast.downstream import DownstreamForecaster

    ev = load_pythia()
    for name, metric in (("ds.json", "acc"), ("dsn.json", "acc_norm")):
        DownstreamForecaster(bootstrap=0).fit(ev, task="piqa", metric=metric).save(w / name)


_HARNESS = json.dumps({"results": {"piqa": {"acc": 0.6, "acc_norm": 0.61}},
                       "config": {"model_args": "pretrained=EleutherAI/pythia-160m"}})  # fmt: skip
case("downstream-predict-same-fit-twice",
     "downstream predict --fit ds.json,ds.json --flops 5e21", _ds_fits)  # fmt: skip
case("downstream-predict-task-under-two-metrics",
     "downstream predict --fit ds.json,dsn.json --flops 5e21", _ds_fits)  # fmt: skip
case("downstream-fit-task-typo", "downstream fit --evals pythia --task piqaa")
case("evals-import-metric-in-no-task", "evals import h.json --metric acc_nrom --out ev.csv",
     write("h.json", _HARNESS))  # fmt: skip
case("osl-gap-same-column", "osl gap --benchmarks bench.csv --without MMLU --with MMLU")

# -- supervised: flags that did nothing were ignored, hand-edited stack
# weights and compute laws were read
case("sup-fit-no-intervals-bootstrap",
     "supervised fit --runs runs.csv --no-intervals --bootstrap 7 --out f.json")  # fmt: skip
case("sup-fit-no-intervals-calibration", "supervised fit --runs runs.csv --no-intervals "
     "--calibration prior+backtest --out f.json")  # fmt: skip
case(
    "sup-fit-n-cutoffs-without-average", "supervised fit --runs runs.csv --n-cutoffs 3 --out f.json"
)
case("sup-fit-no-stack-with-a-form",
     "supervised fit --runs runs.csv --form chinchilla --no-stack --out f.json")  # fmt: skip
case("sup-fit-u-col-not-in-runs", "supervised fit --runs runs.csv --u-col unique --out f.json")
case("sup-fit-bootstrap-1", "supervised fit --runs runs.csv --bootstrap 1 --out f.json")
case("dc-fit-no-intervals-bootstrap", "supervised fit --runs runs.csv --form data-constrained "
     "--no-intervals --bootstrap 5 --out f.json")  # fmt: skip
case(
    "sup-predict-stack-weights-not-summing-to-1",
    SUP_P + " w5.json",
    edit_json("sup.json", "w5.json", lambda d: d["meta"]["stack"]["weights"].update(form=5.0)),
)
case("sup-predict-stack-weights-all-0", SUP_P + " w0.json",
     edit_json("sup.json", "w0.json", lambda d: d["meta"]["stack"]["weights"].update(
         {"form": 0.0, "overtrain-ls": 0.0, "compute-law": 0.0})))  # fmt: skip
case(
    "sup-predict-compute-law-disagrees-with-theta",
    SUP_P + " cl.json",
    edit_json("sup.json", "cl.json", lambda d: d["meta"]["compute_law"].update(A=2.0)),
)

# -- FLP and downstream CLI
case("flp-fit-out-csv", FLP_FIT + " flp_runs.csv --out fit.csv")
case("flp-fit-evals-out-csv", "flp fit --evals pythia --task piqa --out fit.csv")
case("flpm-fit-out-xlsx", FLPM_FIT + " flp_mixture_runs.csv --out fit.xlsx")
case("downstream-fit-out-csv", "downstream fit --evals pythia --task piqa --out fit.csv")
case("downstream-backtest-out-xlsx", "downstream backtest --evals pythia --task piqa --fit-models "
     "pythia-70m,pythia-160m,pythia-410m --target pythia-1b --out bt.xlsx")  # fmt: skip
case("flp-predict-actual-above-100", FLP_P + " flp.json --actual 150")
case("downstream-predict-actual-negative",
     "downstream predict --fit ds.json --flops 5e21 --actual -5", _ds_fits)  # fmt: skip
case("flp-predict-params-on-runs-fit", FLP_P.replace("--flops 8e22 ", "")
     + " flp.json --params 1e9 --tokens 2e10")  # fmt: skip


# -- training logs: runs merged at a shared step, a bad --models table, negative
# tokens, an evaluation step without tokens, a --cooldown-ends step that was never evaluated
MULTI = ("name,iteration,validation/loss,consumed_tokens\nsmall,100,4.0,1000000\n"
         "big,100,3.8,1000000\nsmall,200,3.5,2000000\nbig,200,3.2,2000000\n")  # fmt: skip
case("runs-import-two-runs-one-step", "runs import multi.csv --format csv --params 1e6 "
     "--out a.csv", write("multi.csv", MULTI))  # fmt: skip
case("runs-import-models-duplicate", "runs import r1.csv --format csv --models dup.csv "
     "--out x.csv", lambda w: (write("r1.csv", "step,loss,tokens\n1,3,10\n")(w),
                               write("dup.csv", "model,N\nr1,1e6\nr1,2e6\n")(w)))  # fmt: skip
case("runs-import-models-text", "runs import r1.csv --format csv --models bad.csv --out x.csv",
     lambda w: (write("r1.csv", "step,loss,tokens\n1,3,10\n")(w),
                write("bad.csv", "model,N\nr1,1M\n")(w)))  # fmt: skip
case("runs-import-negative-tokens", "runs import tkn.csv --format csv --params 1e6 --out e.csv",
     write("tkn.csv", "step,loss,tokens\n1,3,-10\n2,2.9,-5\n"))  # fmt: skip
case("runs-import-eval-without-tokens", "runs import hf.jsonl --format jsonl --params 1e6 "
     "--loss eval_loss --out h.csv",
     write("hf.jsonl", '{"step": 10, "tokens": 100, "loss": 4.9}\n'
                       '{"step": 15, "eval_loss": 4.5}\n'))  # fmt: skip
case("runs-import-cooldown-step-never-evaluated", "runs import multi.csv --format csv --run name "
     "--params 1e6 --schedule wsd --cooldown-ends 150,250 --out k.csv",
     write("multi.csv", MULTI))  # fmt: skip


# -- evals and ledger: an impossible observed value, a second correction
def _loss_ledger(work):
    from lmforecast.ledger import Ledger

    with Ledger(work / "lr.db", create=True) as L:
        L.add(method="supervised", task="loss", point=1.94)
        L.add(method="downstream", task="piqa", point=72.6)
        L.add(method="supervised", point=1.9, corrects=1)


case("ledger-resolve-negative-loss", "ledger resolve 1 --ledger lr.db --observed -2.0",
     _loss_ledger)  # fmt: skip
case("ledger-resolve-score-above-100", "ledger resolve 2 --ledger lr.db --observed 150",
     _loss_ledger)  # fmt: skip
case("ledger-add-second-correction", "ledger add --ledger lr.db --method supervised "
     "--point 2 --corrects 1", _loss_ledger)  # fmt: skip
case("ledger-correct-second-correction", "ledger correct 1 --ledger lr.db --observed 2.0",
     _loss_ledger)  # fmt: skip
case("ledger-correct-negative-loss", "ledger correct 2 --ledger lr.db --observed -1",
     _loss_ledger)  # fmt: skip
case("ledger-correct-nothing", "ledger correct 2 --ledger lr.db", _loss_ledger)
case("ledger-correct-no-record", "ledger correct 9 --ledger lr.db --observed 2.0", _loss_ledger)


# curves (more in tests/test_bad_input_curves.py)
case("curves-fit-steps-backwards", "curves fit --runs back.csv --out cf.json",
     write("back.csv", "run,step,lr,loss\na,10,1e-3,3\na,20,1e-3,2.9\na,15,1e-3,2\n"))  # fmt: skip
case("curves-predict-no-fit", "curves predict --fit nofit.json --schedule s.csv --json",
     write("s.csv", "run,step,lr\nx,100,1e-3\n"))  # fmt: skip
case("curves-plan-no-fit", "curves plan --fit nofit.json --steps 1000")


@pytest.mark.parametrize("cid, argv, setup", CASES, ids=[c[0] for c in CASES])
def test_bad_input(cli, work, cid, argv, setup):
    import shlex

    if setup is not None:
        setup(work)
    before = snapshot(work)
    code, out, err = cli(*shlex.split(argv))
    lines = err.splitlines()
    errors = [ln for ln in lines if not ln.startswith("lmforecast: warning:")]
    assert code == 2, (code, err, out[:300])
    assert len(errors) == 1, err
    assert "error" in errors[0] and "Traceback" not in err, err
    assert "np.float64" not in err and "np.int64" not in err, err
    assert snapshot(work) == before, "the command wrote or changed a file"
    assert names_the_problem(errors[0], shlex.split(argv)), errors[0]


def names_the_problem(line: str, argv: list[str]) -> bool:
    """The error names what is wrong: a flag, file or value of the command line, or a column,
    row, field, line or argument of the input."""
    words = ("column", "row", "field", "line ", "argument", "token", "model ", "text ", "record",
             "observations")  # fmt: skip
    tokens = [a for a in argv if len(a) > 1 and not a.replace(".", "").isdigit()] + [
        a for a in argv if a.startswith("-") or "." in a
    ]
    return any(w in line for w in words) or any(t in line for t in tokens)


def test_corpus_is_large_and_covers_every_verb():
    """At least 200 cases, and every verb of `lmforecast --help` appears in some case."""
    import argparse

    from lmforecast.cli.main import build_parser

    assert len(CASES) >= 200, len(CASES)
    ids = [c[0] for c in CASES]
    assert len(set(ids)) == len(ids), "duplicate case ids"
    verbs = []
    for a in build_parser()._actions:
        if isinstance(a, argparse._SubParsersAction):
            for name, sp in a.choices.items():
                sub = [x for x in sp._actions if isinstance(x, argparse._SubParsersAction)]
                verbs += [f"{name} {v}" for v in sub[0].choices] if sub else [name]
    covered = {" ".join(argv.split()[:2]) for _, argv, _ in CASES} | {
        argv.split()[0] for _, argv, _ in CASES
    }
    missing = [v for v in verbs if v not in covered]
    assert not missing, f"verbs without a bad-input case: {missing}"
