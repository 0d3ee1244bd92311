"""Small CLI trust fixes: `flp predict --json` states its level,
`salience plot` says what it wrote."""

from __future__ import annotations

import json

import pytest

from lmforecast.examples import path as example_path


def test_flp_predict_json_carries_the_interval_level(cli, tmp_path):
    fit = tmp_path / "arc.json"
    code, _, err = cli("flp", "fit", "--runs", example_path("flp/runs.csv"), "--checkpoints",
                       example_path("flp/checkpoints.csv"), "--task", "ARC", "--bootstrap", "20",
                       "--out", fit, "--quiet")  # fmt: skip
    assert code == 0, err
    code, out, err = cli("flp", "predict", "--fit", fit, "--flops", "5e22", "--level", "0.8",
                         "--json")  # fmt: skip
    assert code == 0, err
    res = json.loads(out)
    assert res["level"] == 0.8 and res["interval"][0] < res["performance"] < res["interval"][1]


def test_salience_plot_says_what_it_wrote(cli, tmp_path):
    s = "salience/"
    fit = tmp_path / "fit.json"
    code, _, err = cli("salience", "fit", "--texts", example_path(s + "texts.jsonl"),
                       "--losses", example_path(s + "losses.jsonl"),
                       "--scores", example_path(s + "scores.csv"),
                       "--task", "reasoning", "--chance", "25",
                       "--out", fit)  # fmt: skip
    assert code == 0, err
    png = tmp_path / "fit.png"
    code, out, err = cli("salience", "plot", "--fit", fit, "--kind", "fit", "--out", png)
    assert code == 0, err
    assert png.stat().st_size > 1000 and f"wrote {png}" in out
    html = tmp_path / "w.html"
    code, out, _ = cli("salience", "plot", "--fit", fit, "--texts",
                       example_path(s + "texts.jsonl"), "--out", html)  # fmt: skip
    assert code == 0 and html.exists() and f"wrote {html}" in out


def test_mistyped_flag_is_named_with_the_flag_it_resembles(tmp_path, capsys):
    # `--loss_col val_loss`: the unknown flag is named, never read as a table
    from lmforecast.cli.main import main

    runs = tmp_path / "runs.csv"
    runs.write_text("N,D,loss\n1e8,2e9,3.0\n2e8,4e9,2.8\n4e8,8e9,2.6\n8e8,1.6e10,2.5\n")
    with pytest.raises(SystemExit) as e:
        main(["supervised", "fit", "--runs", str(runs), "--loss_col", "loss"])
    err = capsys.readouterr().err.strip()
    assert e.value.code == 2 and err.count("\n") == 0
    assert "unknown option --loss_col; did you mean --loss-col?" in err
    assert "given twice" not in err
    # a second table given by position is refused, naming it
    with pytest.raises(SystemExit) as e:
        main(["supervised", "fit", "--runs", str(runs), str(tmp_path / "other.csv")])
    err = capsys.readouterr().err.strip()
    assert e.value.code == 2 and err.count("\n") == 0
    assert "unrecognized arguments" in err and "other.csv" in err
    # backtest takes the same compute-column flag as fit
    from lmforecast.cli.main import build_parser

    args = build_parser("backtest").parse_args(["backtest", "--runs", "r.csv", "--c-col", "F"])
    assert args.compute_col == "F"


def test_a_negative_number_in_exponent_notation_is_a_value_not_a_flag(capsys):
    from lmforecast.cli.main import main

    with pytest.raises(SystemExit) as e:
        main(["supervised", "predict", "--preset", "hoffmann2022", "--params", "-1e9",
              "--tokens", "2e10"])  # fmt: skip
    err = capsys.readouterr().err
    assert e.value.code == 2 and "'-1e9' must be a positive number" in err  # not "expected one"
