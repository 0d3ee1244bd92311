"""Small CLI trust fixes of issue 26 (item 8): `flp predict --json` states its level,
`salience plot` says what it wrote."""

from __future__ import annotations

import json

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
                       "--task", "reasoning", "--random-accuracy", "0.25",
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
