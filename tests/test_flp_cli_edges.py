"""Edges of the FLP / FLP-M / downstream CLI: a mixture scan's best ratio never outside its
own interval and none when the scan is flat (saturated), `flp predict` for every accepted
`flp fit` (stage 1 'nd' by --params/--tokens), --out named for another format refused, --actual
outside the score range refused, optimize-mixture's below-range warning, alias flags given two
values refused, and the OSL coverage warning naming the predictor actually used."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

from lmforecast import examples
from lmforecast.cli.common import check_out_format
from lmforecast.errors import InputError
from lmforecast.flp.mixture_scan import MixtureCurve, mixture_intervals, ratio_grid

EX = examples.path("flp/runs.csv").parent
B1 = Path(__file__).resolve().parents[1] / "src/lmforecast/data/bundled/osl"
B1 = B1 / "table_b1_base_models.csv"
SMALL = "pythia-70m,pythia-160m,pythia-410m,pythia-1b,pythia-1.4b"


def _one_error(err: str) -> str:
    lines = [ln for ln in err.splitlines() if not ln.startswith("lmforecast: warning:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.fixture(scope="module")
def flpm_file(tmp_path_factory):
    from lmforecast.cli.main import main

    out = tmp_path_factory.mktemp("flpm13") / "flpm.json"
    argv = ["flpm", "fit", "--runs", EX / "mixture_runs.csv", "--checkpoints",
            EX / "mixture_checkpoints.csv", "--task", "HumanEval", "--bootstrap", "8",
            "--quiet", "--out", out]  # fmt: skip
    assert main([str(a) for a in argv]) == 0
    return out


@pytest.fixture(scope="module")
def piqa_file(tmp_path_factory):
    from lmforecast.cli.main import main

    out = tmp_path_factory.mktemp("piqa13") / "piqa.json"
    argv = ["downstream", "fit", "--evals", "pythia", "--task", "piqa", "--models", SMALL,
            "--bootstrap", "0", "--quiet", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    return out


# ---- 1. the mixture scan's best ratio -----------------------------------------------------------
def test_saturated_scan_has_no_best_ratio_and_null_intervals(cli, flpm_file):
    code, out, err = cli("flpm", "optimize-mixture", "--fit", flpm_file, "--flops", "1e26",
                         "--json")  # fmt: skip
    assert code == 0, err
    d = json.loads(out)
    assert all(p == 100.0 for _, p in d["curve"])  # every mixture clipped to 100 points
    assert d["best_ratio"] is None and d["flat"] is True and d["saturated"] is True
    assert "saturated" in d["note"] and "cannot rank" in d["note"]
    assert d["interval"] is None and d["best_ratio_interval"] is None  # was [null, null], [.5,.5]
    code, out, err = cli("flpm", "optimize-mixture", "--fit", flpm_file, "--flops", "1e26")
    assert code == 0, err
    assert "no best ratio" in out and "best ratio 0.0" not in out and "nan" not in out


def test_best_ratio_always_inside_its_interval(cli, flpm_file):
    for C in ("1e21", "1e22", "1e23"):
        code, out, err = cli("flpm", "optimize-mixture", "--fit", flpm_file, "--flops", C,
                             "--json")  # fmt: skip
        assert code == 0, err
        d = json.loads(out)
        lo, hi = d["best_ratio_interval"]
        assert lo <= d["best_ratio"] <= hi, (C, d["best_ratio"], lo, hi)


def _intervals(curve, draws):
    """The intervals of a two-source scan whose 20 bootstrap draws are all `draws`, with the
    score interval [90, 100] at the best ratio."""
    best = (np.array([90.0]), np.array([100.0]))
    return mixture_intervals(curve, np.tile(np.asarray(draws, float), (20, 1)), best, 2, 0.9)


def test_draws_break_ties_as_the_point_does():
    """The point ties at the clipped 100 and picks the first ratio; a draw unclipped would
    pick another (old: best ratio 0.0 with interval [0.01, 0.01])."""
    curve = MixtureCurve(("a", "b"), ratio_grid(2, 0, 0.02, 0.01), np.array([100, 100, 90.0]), 1e21)
    assert curve.best_ratio == 0.0 and curve.n_tied == 2 and not curve.flat
    iv = _intervals(curve, [110.0, 140.0, 80.0])
    assert iv["best_ratio"] == [0.0, 0.0]
    # a draw picking elsewhere: the interval is widened to hold the point's pick
    iv = _intervals(curve, [80.0, 85.0, 95.0])
    assert iv["best_ratio"][0] <= 0.0 <= iv["best_ratio"][1]


def test_flat_curve_has_no_best_ratio_in_the_api():
    curve = MixtureCurve(("a", "b"), ratio_grid(2, 0, 0.02, 0.01), np.full(3, 100.0), 1e26)
    assert curve.flat and curve.saturated and curve.best_ratio is None
    iv = _intervals(curve, [120.0, 130.0, 140.0])
    assert iv["best_ratio"] is None


# ---- 5. below the sampling models ------------------------------------------------------------
def test_optimize_mixture_warns_below_the_smallest_sampling_model(cli, flpm_file):
    code, _, err = cli("flpm", "optimize-mixture", "--fit", flpm_file, "--flops", "1e16")
    assert code == 0, err
    assert "below the smallest sampling model" in err


# ---- 2. every accepted `flp fit` is usable by `flp predict` ---------------------------------
@pytest.mark.parametrize("stage1", ["power", "saturating", "nd"])
def test_flp_fit_evals_every_stage1_predicts(cli, tmp_path, stage1):
    fit = tmp_path / "f.json"
    code, _, err = cli("flp", "fit", "--evals", "pythia", "--task", "piqa", "--stage1", stage1,
                       "--models", SMALL, "--bootstrap", "0", "--quiet", "--out", fit)  # fmt: skip
    assert code == 0, err
    where = ["--params", "1e10", "--tokens", "3e11"] if stage1 == "nd" else ["--flops", "5e21"]
    code, out, err = cli("flp", "predict", "--fit", fit, *where, "--json")
    assert code == 0, err
    assert 0 <= json.loads(out)["performance"] <= 100
    if stage1 == "nd":  # FLOPs: refused naming the flags that work
        code, _, err = cli("flp", "predict", "--fit", fit, "--flops", "5e21")
        assert code == 2 and "--params" in _one_error(err) and "--tokens" in err


@pytest.mark.parametrize("method", ["flp", "fp", "gpt4"])
def test_flp_fit_runs_every_method_predicts(cli, tmp_path, method):
    fit = tmp_path / "f.json"
    code, _, err = cli("flp", "fit", "--runs", EX / "runs.csv", "--checkpoints",
                       EX / "checkpoints.csv", "--task", "ARC", "--method", method,
                       "--bootstrap", "0", "--quiet", "--out", fit)  # fmt: skip
    assert code == 0, err
    code, out, err = cli("flp", "predict", "--fit", fit, "--flops", "5e21", "--json")
    assert code == 0, err
    code, _, err = cli("flp", "predict", "--fit", fit, "--params", "1e9", "--tokens", "2e10")
    assert code == 2 and "--params" in _one_error(err)


# ---- 3. --out named for another format ---------------------------------------------------------
OUT_CASES = {
    "downstream-fit-csv": "downstream fit --evals pythia --task piqa --bootstrap 0 "
    "--out {}/fit.csv",
    "flp-fit-evals-csv": "flp fit --evals pythia --task piqa --bootstrap 0 --out {}/fit.csv",
    "flp-fit-runs-xlsx": f"flp fit --runs {EX}/runs.csv --task ARC --out {{}}/fit.xlsx",
    "flpm-fit-csv": f"flpm fit --runs {EX}/mixture_runs.csv --task HumanEval --out {{}}/f.csv",
    "flpm-compare-xlsx": f"flpm compare --runs {EX}/mixture_runs.csv --targets "
    f"{EX}/mixture_targets.csv --task HumanEval --out {{}}/r.xlsx",
    "downstream-backtest-xlsx": "downstream backtest --evals pythia --task piqa --fit-models "
    "pythia-70m,pythia-160m,pythia-410m --target pythia-1b --out {}/bt.xlsx",
    "backtest-json": f"backtest --runs {EX}/runs.csv --out {{}}/bt.json",
}


@pytest.mark.parametrize("cid", list(OUT_CASES))
def test_out_named_for_another_format_is_refused(cli, tmp_path, cid):
    argv = OUT_CASES[cid].format(tmp_path).split()
    code, out, err = cli(*argv)
    assert code == 2, (code, err)
    line = _one_error(err)
    assert "--out" in line and Path(argv[-1]).name in line
    assert list(tmp_path.iterdir()) == []


def test_check_out_format_knows_more_formats():
    for name in ("f.xlsx", "f.xls", "f.pkl", "f.pickle", "f.npy", "f.npz", "f.parquet"):
        with pytest.raises(InputError, match="--out"):
            check_out_format(Path(name), (".json",))
    check_out_format(Path("fit"), (".json",))  # no extension: written as given
    check_out_format(Path("fig.png"), (".png", ".svg"))


# ---- 4. --actual outside the score range ----------------------------------------------------
@pytest.mark.parametrize("value", ["-5", "150"])
def test_actual_outside_score_range_is_refused(cli, piqa_file, value):
    for verb in ("downstream", "flp"):
        code, out, err = cli(verb, "predict", "--fit", piqa_file, "--flops", "5e21", "--actual",
                             value)  # fmt: skip
        assert code == 2 and out == "", (verb, out)
        line = _one_error(err)
        assert "--actual" in line and value in line


def test_flp_predict_runs_fit_actual_above_100_is_refused(cli, tmp_path):
    fit = tmp_path / "f.json"
    code, _, err = cli("flp", "fit", "--runs", EX / "runs.csv", "--checkpoints",
                       EX / "checkpoints.csv", "--task", "ARC", "--bootstrap", "0", "--quiet",
                       "--out", fit)  # fmt: skip
    assert code == 0, err
    code, _, err = cli("flp", "predict", "--fit", fit, "--flops", "5e21", "--actual", "150")
    assert code == 2 and "--actual" in _one_error(err) and "150" in err
    code, _, err = cli("flp", "predict", "--fit", fit, "--flops", "5e21", "--actual", "45")
    assert code == 0, err


# ---- 6. alias flags given two values ----------------------------------------------------------
@pytest.mark.parametrize(
    "argv",
    [
        f"backtest --runs {EX}/runs.csv --compute-col C --c-col F",
    ],
)
def test_alias_flags_with_two_values_are_refused(cli, argv):
    code, _, err = cli(*argv.split())
    assert code == 2
    line = _one_error(err)
    flags = [a for a in argv.split() if a in ("--compute-col", "--c-col")]
    assert all(f in line for f in flags), line


def test_alias_flags_with_one_value_are_fine():
    from lmforecast.cli.main import build_parser

    a = build_parser("flp").parse_args("flp fit --evals pythia --task piqa --chance 40".split())
    assert a.chance == 40.0
    a = build_parser("backtest").parse_args("backtest --runs r.csv --c-col F".split())
    assert a.compute_col == "F"


# ---- 7. the OSL coverage warning names the predictor -------------------------------------------
def test_osl_coverage_warning_names_the_predictor():
    import pandas as pd

    from lmforecast.osl import ObservationalScalingLaw
    from lmforecast.osl.checks import IntervalCoverageWarning

    table = pd.read_csv(B1)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        ObservationalScalingLaw(x="size").fit(table, "MMLU")
    msgs = [str(x.message) for x in w if issubclass(x.category, IntervalCoverageWarning)]
    assert msgs, [str(x.message) for x in w]
    assert "model size explains it poorly" in msgs[0] and "PCs" not in msgs[0]


def test_osl_coverage_warning_text_per_predictor():
    import pandas as pd

    from lmforecast.osl.checks import coverage_warning

    class Res:
        has_intervals, level, target = True, 0.9, "T"

        def __init__(self, x):
            self.x = x

        def forecasts(self, level):
            return []

        def predictions_frame(self):
            y = np.arange(25.0)
            return pd.DataFrame({"split": "train", "y": y, "lower": y + 1, "upper": y + 2})

    for x, want in (("pcs", "the PCs explain it"), ("flops", "FLOPs explains it"),
                    ("size", "model size explains it")):  # fmt: skip
        with pytest.warns(Warning, match=want):
            coverage_warning(Res(x))


def test_mixture_plot_draws_a_flat_scan_without_a_best_ratio():
    """`plots.flp.mixture_curves` formatted best_ratio as a number: a flat scan (None) crashed."""
    import matplotlib

    matplotlib.use("Agg")
    from lmforecast.plots.flp import mixture_curves

    flat = MixtureCurve(("a", "b"), ratio_grid(2, 0, 0.02, 0.01), np.full(3, 100.0), 1e26)
    peak = MixtureCurve(("a", "b"), ratio_grid(2, 0, 0.02, 0.01), np.array([1.0, 3.0, 2.0]), 1e20)
    fig = mixture_curves({"flat": flat, "peak": peak})
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert labels == ["flat (flat: no best ratio)", "peak (best 0.01)"]
