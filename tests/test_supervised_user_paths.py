"""Paths a new user takes through `supervised`/`backtest`: no flag accepted only to do
nothing, an update of k that stays finite, JSON and `allocate` that describe the model that
forecasts, and Python inputs refused with plain messages rather than raw errors."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from lmforecast.errors import InputError
from lmforecast.supervised import SupervisedScalingLaw


@pytest.fixture(scope="module")
def runs_csv(tmp_path_factory):
    from lmforecast import examples

    d = tmp_path_factory.mktemp("ex")
    examples.copy(d)
    return d / "supervised" / "runs.csv"


def _err(cli, *argv, must=()):
    code, _, err = cli(*argv)
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1, err
    for w in must:
        assert w in err, (w, err)
    return err


def test_backtest_suite_refuses_the_rolling_origin_flags(cli, runs_csv, tmp_path):
    for flags, name in ((["--plot", tmp_path / "s.png"], "--plot"),
                        (["--cutoffs", "1e20"], "--cutoffs"),
                        (["--no-baselines"], "--no-baselines")):  # fmt: skip
        _err(cli, "backtest", "--suite", "--runs", runs_csv, *flags, must=[name, "--suite"])
    assert not (tmp_path / "s.png").exists()


def test_backtest_names_a_missing_compute_column_and_a_bad_min_train(cli, runs_csv):
    _err(cli, "backtest", "--runs", runs_csv, "--compute-col", "flops", must=["'flops'"])
    _err(cli, "backtest", "--runs", runs_csv, "--min-train", "0", must=["--min-train"])


def test_backtest_plot_format_follows_the_extension(cli, runs_csv, tmp_path):
    # the format is the writer's, whatever the fit: one early cutoff (3e19) fits few runs
    code, _, err = cli("backtest", "--runs", runs_csv, "--form", "chinchilla", "--cutoffs", "3e19",
                       "--bootstrap", "0", "--quiet", "--plot", tmp_path / "bt.pdf")  # fmt: skip
    assert code == 0, err
    assert (tmp_path / "bt.pdf").read_bytes()[:5] == b"%PDF-"
    _err(cli, "backtest", "--runs", runs_csv, "--plot", tmp_path / "bt.xyz", must=["'xyz'"])


def test_prior_plus_backtest_gives_a_finite_k_and_says_when_the_stack_ignores_it(runs_csv):
    df = pd.read_csv(runs_csv)
    m = SupervisedScalingLaw(calibration="prior+backtest", stack=False, n_jobs=1).fit(df)
    cal = m.result_.meta["intervals"]
    # a forecast at r ~ 1e-6 beyond the fitted runs once asked for k ~ 9,000: [0, inf]
    assert 0 < cal["k"] < 10 * cal["k_prior"]
    lo, hi = m.predict_interval(7e10, 1.4e12)
    assert np.isfinite(hi) and 0 < lo < float(m.predict(7e10, 1.4e12)) < hi
    with pytest.warns(UserWarning, match="not to this stacked one"):
        s = SupervisedScalingLaw(calibration="prior+backtest", n_jobs=1).fit(df)
    assert "not to this stacked one" in s.result_.meta["intervals"]["method"]


def test_fit_json_describes_the_stack_that_forecasts(cli, runs_csv, tmp_path):
    # what the JSON names (weights, scales, the compute law) is there whatever the resamples
    code, stdout, err = cli("supervised", "fit", "--runs", runs_csv, "--json", "--quiet",
                            "--bootstrap", "6", "--out", tmp_path / "f.json")  # fmt: skip
    assert code == 0, err
    d = json.loads(stdout)
    w = d["stack"]["weights"]
    assert set(w) == {"form", "overtrain-ls", "compute-law"}
    assert sum(w.values()) == pytest.approx(1.0)
    assert d["intervals"]["k_stack"] > 0 and d["stack"]["s_inner"] > 0
    assert set(d["compute_law"]) == {"E", "A", "a"}


def test_python_inputs_get_messages_not_raw_errors(runs_csv):
    df = pd.read_csv(runs_csv)
    m = SupervisedScalingLaw(intervals=False, stack=False)
    with pytest.raises(InputError, match="pd.DataFrame"):
        m.fit(df[["N", "D", "loss"]].to_numpy())
    with pytest.raises(InputError, match="not both"):
        m.fit(df, N=df["N"].to_numpy())
    with pytest.raises(InputError, match="los_col"):
        m.fit(df, los_col="loss")
    a = SupervisedScalingLaw(intervals=False, stack=False).fit(
        N=df["N"], C=6 * df["N"] * df["D"], loss=df["loss"]
    )
    b = SupervisedScalingLaw(intervals=False, stack=False).fit(df[["N", "D", "loss"]])
    assert a.params_ == pytest.approx(b.params_, rel=1e-9)


@pytest.mark.parametrize("kw", [{}, {"loss": "squared", "bootstrap": 0},
                                {"stack": False, "intervals": False}])  # fmt: skip
def test_a_loaded_fit_is_the_estimator_that_was_fitted(runs_csv, tmp_path, kw):
    df = pd.read_csv(runs_csv)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = SupervisedScalingLaw(**kw).fit(df)  # n_jobs (how, not what) is not saved
    m.save(tmp_path / "f.json")
    back = SupervisedScalingLaw.load(tmp_path / "f.json")
    assert repr(back) == repr(m)  # was SupervisedScalingLaw(form='chinchilla-gamma') for all
    assert back.predict(7e10, 1.4e12) == m.predict(7e10, 1.4e12)


def test_data_constrained_refuses_the_flags_it_does_not_take(cli, tmp_path):
    from lmforecast import examples

    examples.copy(tmp_path)
    runs = next((tmp_path / "dataconstrained").glob("*.csv"))
    _err(cli, "supervised", "fit", "--runs", runs, "--form", "data-constrained",
         "--replicates", "mean", must=["--replicates", "data-constrained"])  # fmt: skip


def test_a_size_or_token_count_that_is_not_positive_is_named():
    m = SupervisedScalingLaw.from_preset("hoffmann2022")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy warning on the way to the message
        with pytest.raises(InputError, match="N must be > 0, got 0"):
            m.predict(0, 1e10)
        with pytest.raises(InputError, match="D must be > 0, got -1"):
            m.predict_interval(1e9, -1)


def test_rows_differing_only_in_unique_tokens_are_not_replicates(tmp_path, capsys):
    # datablations-style table: same N and D, different U (epochs over fewer unique tokens);
    # "--replicates mean" used to average them silently into one run
    import pandas as pd

    from lmforecast.cli.main import main
    from lmforecast.errors import InputError
    from lmforecast.supervised import SupervisedScalingLaw

    rows = [(n, 20 * n, u, 2 + 300 / n**0.3 + (0.2 if u < 20 * n else 0))
            for n in (1e8, 2e8, 4e8, 8e8, 1.6e9) for u in (20 * n, 5 * n)]  # fmt: skip
    df = pd.DataFrame(rows, columns=["N", "D", "U", "loss"])
    with pytest.raises(
        InputError, match=r"rows 1 and 2 share N=1e\+08.*not column 'U'.*data-constrained"
    ):
        SupervisedScalingLaw(replicates="mean", intervals=False).fit(df)
    path = tmp_path / "runs.csv"
    df.rename(columns={"U": "unique"}).to_csv(path, index=False)
    out = tmp_path / "fit.json"
    code = main(["supervised", "fit", "--runs", str(path), "--u-col", "unique",
                 "--replicates", "mean", "--out", str(out)])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "'unique'" in err and "repeated-data" in err and not out.exists()
    # true seed replicates (same U) are still averaged on request
    seeds = df[df["U"] == df["D"]]
    seeds = pd.concat([seeds, seeds.assign(loss=seeds["loss"] * 1.01)])
    m = SupervisedScalingLaw(replicates="mean", intervals=False).fit(seeds)
    assert m.result_.n_obs == 5


def test_values_in_likely_wrong_units_are_warned_about_by_column():
    from lmforecast.examples import path as example_path

    df = pd.read_csv(example_path("supervised/runs.csv"))[["N", "D", "loss"]]
    # the units are checked as the table is read, before any fit: one form (no stack) suffices
    one = {"intervals": False, "stack": False}
    bad = df.assign(N=df["N"] / 1e9, D=df["D"] / 1e9, loss=df["loss"] * 100)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        SupervisedScalingLaw(**one).fit(bad.rename(columns={"N": "params_m"}), n_col="params_m")
    text = " | ".join(str(x.message) for x in w)
    assert "column 'params_m': every value is below 1e3" in text
    assert "column 'D': every value is below 1e5" in text and "perplexity" in text
    # sizes in millions: only the small models fall below 1e3, and that is warned about too
    millions = df.assign(N=df["N"] / 1e6)
    assert millions["N"].max() > 1e3 and millions["N"].min() < 1e3
    with pytest.warns(UserWarning, match=r"column 'N': \d+ of \d+ values are below 1e3"):
        SupervisedScalingLaw(**one).fit(millions)
    # the bundled toy zoo's tiny models (N 3e3-1.5e5) are not taken for a unit slip
    from lmforecast.zoo import load_zoo

    z = load_zoo().runs
    z = z[z["kind"] == "supervised"][["N", "D", "loss"]]
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        SupervisedScalingLaw(**one).fit(z)
    assert not [x for x in w if "counted one by one" in str(x.message)]
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # the example's own units: no unit warning
        try:
            SupervisedScalingLaw(**one).fit(df)
        except UserWarning as exc:
            assert "column" not in str(exc), exc


def test_predict_far_beyond_the_fitted_runs_says_the_interval_is_a_guess(capsys):
    from lmforecast.cli.main import main

    assert main(["supervised", "predict", "--preset", "busbridge2025", "--params", "1e9",
                 "--tokens", "2e10"]) == 0  # fmt: skip
    assert "outside the fitted runs" not in capsys.readouterr().err  # inside the paper's runs
    assert main(["supervised", "predict", "--preset", "busbridge2025", "--params", "1e13",
                 "--tokens", "2e14"]) == 0  # fmt: skip
    err = capsys.readouterr().err
    assert "outside the fitted runs (beyond their largest N=" in err and "rough guess" in err


def test_predict_takes_flops_and_fit_json_names_its_runs(tmp_path, capsys):
    from lmforecast.cli.main import main
    from lmforecast.examples import path as example_path

    runs = str(example_path("supervised/runs.csv"))
    fit = tmp_path / "f.json"
    assert main(["supervised", "fit", "--runs", runs, "--no-intervals", "--quiet", "--json",
                 "--out", str(fit)]) == 0  # fmt: skip
    d = json.loads(capsys.readouterr().out)
    assert d["n_runs"] == 80 and d["source"] == f"fitted to {runs}"
    got = []
    for amount in (["--tokens", "2e10"], ["--flops", "1.2e20"]):  # 1.2e20 = 6 x 1e9 x 2e10
        assert main(["supervised", "predict", "--fit", str(fit), "--params", "1e9", *amount,
                     "--json"]) == 0  # fmt: skip
        got.append(json.loads(capsys.readouterr().out)["loss"])
    assert got[0] == pytest.approx(got[1], rel=1e-12)
    with pytest.raises(SystemExit) as e:
        main(["supervised", "predict", "--fit", str(fit), "--params", "1e9", "--tokens", "2e10",
              "--flops", "1e20"])  # fmt: skip
    assert e.value.code == 2 and "not allowed with" in capsys.readouterr().err


def test_a_csv_saved_with_semicolons_is_read_with_a_warning(tmp_path):
    from lmforecast.data.io import read_table
    from lmforecast.examples import path as example_path

    df = pd.read_csv(example_path("supervised/runs.csv"))
    path = tmp_path / "runs.csv"
    df.to_csv(path, sep=";", index=False)
    with pytest.warns(UserWarning, match="read with ';' as the delimiter"):
        got = read_table(path)
    pd.testing.assert_frame_equal(got, df)


def test_python_messages_name_the_keyword_beside_the_flag(runs_csv):
    """A Python user reads `fixed=` / `n_cutoffs=` / `x=`, not only the CLI's `--fix` (the
    library's messages were written for the CLI)."""
    from lmforecast.backtest import rolling_origin
    from lmforecast.osl import ObservationalScalingLaw
    from lmforecast.supervised.adapter import PointAdapter

    df = pd.read_csv(runs_csv)
    with pytest.raises(InputError, match=r"--fix \(fixed=\): .* no parameter 'zz'"):
        SupervisedScalingLaw(fixed={"zz": 1.0}, intervals=False, stack=False).fit(df)
    with pytest.raises(InputError, match=r"--huber-delta \(huber_delta=\)"):
        SupervisedScalingLaw(huber_delta=0)
    with pytest.raises(InputError, match=r"--n-cutoffs \(n_cutoffs=\) must be >= 1, got 0"):
        rolling_origin(df, PointAdapter("chinchilla"), n_cutoffs=0)
    with pytest.raises(InputError, match=r"--level \(level=\)"):
        rolling_origin(df, PointAdapter("chinchilla"), level=1.5)
    with pytest.raises(InputError, match=r"--x \(x=\) must be one of"):
        ObservationalScalingLaw(x="pca").fit(pd.DataFrame({"model": ["a"], "t": [0.5]}), "t")
