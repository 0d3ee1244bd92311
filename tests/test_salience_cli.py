"""`lmforecast salience ...` in-process: the CLI contract, file formats and bad input."""

import contextlib
import io
import json
import re

import numpy as np
import pandas as pd
import pytest

from lmforecast import examples

EX = examples.path("salience/texts.jsonl").parent
TEXTS, LOSSES, SCORES = EX / "texts.jsonl", EX / "losses.jsonl", EX / "scores.csv"
FIT_ARGS = ["--texts", TEXTS, "--losses", LOSSES, "--scores", SCORES, "--task", "reasoning"]


@pytest.fixture(scope="module")
def fit_run(tmp_path_factory):
    """One `salience fit --json --out` with label losses (chance given per task): its exit
    code, stdout and fit file."""
    from lmforecast.cli.main import main

    out = tmp_path_factory.mktemp("fit") / "fit.json"
    with contextlib.redirect_stdout(io.StringIO()) as stdout:
        code = main(
            ["salience", "fit", *map(str, FIT_ARGS), "--chance", "reasoning=25,other=0"]
            + ["--label-losses", str(EX / "label_losses.csv"), "--lr", "3e-2", "--out", str(out)]
            + ["--json"]
        )
    return code, stdout.getvalue(), out


@pytest.fixture(scope="module")
def fitted(fit_run):
    assert fit_run[0] == 0
    return fit_run[2]


def test_fit_json_contract(fit_run):
    code, stdout, out = fit_run
    assert code == 0
    d = json.loads(stdout)
    assert set(d["baseline_mse"]) == {"all_token", "label_token"}
    assert set(d["params"]) == {"alpha", "beta"}
    assert d["test_mse"] * 10 <= min(d["baseline_mse"].values())
    assert d["params"]["alpha"] < 0
    assert json.loads(out.read_text())["kind"] == "SalienceFit"


def test_fit_text_output_without_label_losses(cli):
    code, stdout, _ = cli("salience", "fit", *FIT_ARGS, "--chance", "25", "--steps", 5,
                          "--bootstrap", 0)  # fmt: skip
    assert code == 0
    assert "all_token" in stdout and "label_token" not in stdout and "alpha" in stdout


def test_predict_new_models_from_losses_alone(cli, fitted, tmp_path):
    out = tmp_path / "pred.csv"
    code, stdout, err = cli(
        "salience", "predict", "--fit", fitted, "--losses", EX / "new_losses.jsonl", "--json",
        "--out", out,
    )  # fmt: skip
    assert code == 0, err
    preds = {p["model"]: p["predicted"] for p in json.loads(stdout)["predictions"]}
    scores = pd.read_csv(SCORES).set_index("model")["reasoning"]
    # the new models are the test models under another name: predictions match their scores
    # (predictions in points, the example table in fractions)
    for name, p in preds.items():
        assert abs(p - 100 * scores[name.removeprefix("new-")]) < 5
    got = pd.read_csv(out)
    assert len(got) == 4 and {"lower", "upper"} <= set(got.columns)
    assert np.all(got["lower"] < got["predicted"]) and np.all(got["predicted"] < got["upper"])


def test_map_losses_conserves_each_record(cli, tmp_path):
    out = tmp_path / "mapped.jsonl"
    code, _, err = cli(
        "salience", "map-losses", "--losses", LOSSES, "--texts", TEXTS,
        "--target-tokenizer", "chars", "--out", out,
    )  # fmt: skip
    assert code == 0, err
    src = {(r["model"], r["text_id"]): r for r in map(json.loads, LOSSES.open())}
    texts = {r["text_id"]: r["text"] for r in map(json.loads, TEXTS.open())}
    n = 0
    for rec in map(json.loads, out.open()):
        s = src[(rec["model"], rec["text_id"])]
        assert sum(rec["losses"]) == pytest.approx(sum(s["losses"]), rel=1e-12)
        assert len(rec["offsets"]) == len(texts[rec["text_id"]])
        n += 1
    assert n == len(src)


def test_features_cache_gives_the_same_fit(cli, tmp_path):
    feats = tmp_path / "f.npz"
    assert (
        cli("salience", "features", "--texts", TEXTS, "--feature-dim", 512, "--out", feats)[0] == 0
    )
    # no bootstrap: the fit's parameters and errors already differ when the features do
    args = [*FIT_ARGS, "--chance", "25", "--steps", 10, "--bootstrap", 0, "--json"]
    a = json.loads(cli("salience", "fit", *args, "--feature-dim", 512)[1])
    b = json.loads(cli("salience", "fit", *args, "--features", feats)[1])
    assert a == b


def test_plots(cli, fitted, tmp_path):
    for name, kind in [("w.html", "weights"), ("w.png", "weights"), ("fit.png", "fit")]:
        out = tmp_path / name
        code, _, err = cli(
            "salience", "plot", "--fit", fitted, "--kind", kind, "--texts", TEXTS, "--out", out
        )
        assert code == 0, err
        assert out.stat().st_size > 500
    code, _, err = cli(
        "salience", "plot", "--kind", "fit", "--fit", fitted, fitted, "--out", tmp_path / "t.png"
    )
    assert code == 0, err
    from lmforecast.salience import word_offsets

    html = (tmp_path / "w.html").read_text()
    first = json.loads(TEXTS.open().readline())["text"]
    assert html.count("<span title=") == len(word_offsets(first))  # one span per target token


# ---- bad input: one line, exit 2, no output file -----------------------------------------------
def _write_jsonl(path, recs):
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return path


def _records():
    return [json.loads(line) for line in LOSSES.open()]


def _bad(cli, tmp_path, losses=None, scores=None, extra=(), ra="25"):
    out = tmp_path / "fit.json"
    code, stdout, err = cli(
        "salience", "fit", "--texts", TEXTS, "--losses", losses or LOSSES,
        "--scores", scores or SCORES, "--task", "reasoning", "--chance", ra,
        "--out", out, *extra,
    )  # fmt: skip
    assert code == 2
    assert err.startswith("lmforecast: error: ") and err.count("\n") == 1, err
    assert not out.exists()
    assert not list(tmp_path.glob(".tmp-*"))
    return err


def test_bad_overlapping_offsets(cli, tmp_path):
    recs = _records()
    recs[5]["offsets"][3] = [recs[5]["offsets"][2][0] + 1, recs[5]["offsets"][3][1]]
    err = _bad(cli, tmp_path, losses=_write_jsonl(tmp_path / "l.jsonl", recs))
    assert f"model '{recs[5]['model']}' text '{recs[5]['text_id']}': token 3" in err
    assert "overlap" in err


def test_bad_offsets_past_text(cli, tmp_path):
    recs = _records()
    recs[0]["offsets"][-1][1] += 5
    err = _bad(cli, tmp_path, losses=_write_jsonl(tmp_path / "l.jsonl", recs))
    assert "model 'fam0-m0' text 't000'" in err and "run past the text" in err


def test_bad_missing_text_for_a_model(cli, tmp_path):
    recs = [r for r in _records() if not (r["model"] == "fam2-m1" and r["text_id"] == "t003")]
    err = _bad(cli, tmp_path, losses=_write_jsonl(tmp_path / "l.jsonl", recs))
    assert "model 'fam2-m1': no losses for text 't003'" in err


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_bad_nonfinite_loss(cli, tmp_path, value):
    recs = _records()
    recs[7]["losses"][4] = value
    err = _bad(cli, tmp_path, losses=_write_jsonl(tmp_path / "l.jsonl", recs))
    assert f"text '{recs[7]['text_id']}': token 4: loss" in err


def test_bad_task_without_chance(cli, tmp_path):
    err = _bad(cli, tmp_path, ra="mmlu=25,gsm8k=0")
    assert "task 'reasoning' has no chance value" in err


def test_bad_scores_outside_unit_interval(cli, tmp_path):
    df = pd.read_csv(SCORES)
    df.loc[3, "reasoning"] = 63.2  # percent in a table of fractions
    df.to_csv(tmp_path / "s.csv", index=False)
    err = _bad(cli, tmp_path, scores=tmp_path / "s.csv", extra=["--score-unit", "fraction"])
    assert "value 63.2 is outside [0, 1] (fraction" in err
    df.loc[3, "reasoning"] = 163.2  # no unit holds it
    df.to_csv(tmp_path / "s.csv", index=False)
    err = _bad(cli, tmp_path, scores=tmp_path / "s.csv")
    assert "column 'reasoning' row 4: value 163.2 must be <= 100" in err


def test_bad_split_and_missing_task_column(cli, tmp_path):
    df = pd.read_csv(SCORES)
    df.loc[0, "split"] = "dev"
    df.to_csv(tmp_path / "s.csv", index=False)
    assert "'dev' is not one of" in _bad(cli, tmp_path, scores=tmp_path / "s.csv")
    df = pd.read_csv(SCORES).rename(columns={"reasoning": "mmlu"})
    df.to_csv(tmp_path / "s2.csv", index=False)
    assert "no score column for task 'reasoning'" in _bad(cli, tmp_path, scores=tmp_path / "s2.csv")


def test_bad_features_file(cli, tmp_path):
    (tmp_path / "f.npz").write_text("not a zip")
    err = _bad(cli, tmp_path, extra=["--features", tmp_path / "f.npz"])
    assert "not a features file" in err


def test_bad_missing_chance_flag(cli, tmp_path):
    code, _, err = cli("salience", "fit", *FIT_ARGS, "--out", tmp_path / "f.json")
    assert code == 2 and "--chance" in err and err.count("\n") == 1
    assert not (tmp_path / "f.json").exists()


def test_bad_predict_and_map_inputs(cli, tmp_path):
    code, _, err = cli("salience", "predict", "--fit", tmp_path / "nope.json", "--losses", LOSSES)
    assert code == 2 and "no such file" in err
    code, _, err = cli(
        "salience", "map-losses", "--losses", LOSSES, "--target-tokenizer", "words",
        "--out", tmp_path / "m.jsonl",
    )  # fmt: skip
    assert code == 2 and "pass --texts" in err and not (tmp_path / "m.jsonl").exists()
    code, _, err = cli(
        "salience", "map-losses", "--losses", LOSSES, "--texts", TEXTS,
        "--target-tokenizer", "/no/such/tokenizer",
    )  # fmt: skip
    assert code == 2 and "neither 'words'" in err


def test_hf_features_without_extra(cli, tmp_path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "transformers", None)  # as if the extra were missing
    out = tmp_path / "f.npz"
    code, _, err = cli("salience", "features", "--texts", TEXTS, "--model", tmp_path, "--out", out)
    assert code == 2 and "lmforecast[hf]" in err and not out.exists()


def test_example_files_are_consistent():
    texts = [json.loads(line) for line in TEXTS.open()]
    recs = _records()
    models = {r["model"] for r in recs}
    assert len(recs) == len(models) * len(texts)
    assert set(pd.read_csv(SCORES)["model"]) == models
    assert np.all(pd.read_csv(SCORES)["reasoning"].between(0, 1))


def test_auto_split_by_family_size(cli, tmp_path):
    from lmforecast.salience.records import size_split

    np.testing.assert_array_equal(
        size_split(["a", "a", "a", "b", "b", "b", "b", "c"], [7, 70, 13, 1, 4, 2, 3, 9]),
        ["train", "test", "validation", "train", "test", "train", "validation", "train"],
    )
    df = pd.read_csv(SCORES)
    df["family"] = df["model"].str.split("-").str[0]
    df["size"] = df["model"].str.extract(r"m(\d)$")[0].astype(float) + 1
    df.drop(columns="split").to_csv(tmp_path / "s.csv", index=False)
    # no bootstrap: another split already gives other parameters and errors
    args = ["--texts", TEXTS, "--losses", LOSSES, "--task", "reasoning", "--chance", 25,
            "--steps", 3, "--bootstrap", 0, "--json"]  # fmt: skip
    code, out, err = cli("salience", "fit", *args, "--scores", tmp_path / "s.csv", "--auto-split")
    assert code == 0, err
    ref = json.loads(cli("salience", "fit", *args, "--scores", SCORES)[1])
    assert json.loads(out) == ref  # the example files use exactly this split


def test_warnings_for_a_floor_above_the_scores_far_capabilities_and_no_bootstrap(
    cli, fitted, tmp_path
):
    # a floor above most scores fitted alpha ~ 1e-13, beta ~ 1e17 without a word
    # the chance check reads the training scores before any bootstrap refit
    code, _, err = cli("salience", "fit", *FIT_ARGS, "--chance", "90", "--bootstrap", "0",
                       "--out", tmp_path / "f9.json")  # fmt: skip
    assert code == 0 and "at or below chance 90 points" in err
    b0 = tmp_path / "b0.json"  # a fit without bootstrap, for the last check
    code, _, err = cli("salience", "fit", *FIT_ARGS, "--chance", "25", "--bootstrap", "0",
                       "--out", b0)  # fmt: skip
    assert code == 0 and "at or below chance" not in err
    # losses on another scale: capability 1000x the fitted range, with a narrow interval
    new = EX / "new_losses.jsonl"
    huge = [dict(r, losses=[v * 1000 for v in r["losses"]]) for r in map(json.loads, new.open())]
    code, _, err = cli("salience", "predict", "--fit", fitted, "--losses",
                       _write_jsonl(tmp_path / "huge.jsonl", huge))  # fmt: skip
    assert code == 0 and "far above it" in err and "outside the range" in err
    code, _, err = cli("salience", "predict", "--fit", fitted, "--losses", new)
    assert code == 0 and "far outside" not in err
    # a fit without bootstrap: predict says why there is no interval
    code, out, err = cli("salience", "predict", "--fit", b0, "--losses", new, "--json")
    assert code == 0 and "no interval" in err and "bootstrap" in json.loads(out)["interval_note"]


# ---- units: scores and --chance in points, --score-unit ----------------------------------------
def _points_table(tmp_path):
    """The example scores in points, and the same table in fractions (points / 100, so the two
    reach Eq. 2 as the same floats: Adam's normalised steps turn a one-ulp difference in a
    score into ~1e-7 relative differences of the fit)."""
    df = pd.read_csv(SCORES)
    df["reasoning"] = (100 * df["reasoning"]).round(6)
    df.to_csv(tmp_path / "points.csv", index=False)
    df.assign(reasoning=df["reasoning"] / 100).to_csv(tmp_path / "fractions.csv", index=False)
    return tmp_path / "points.csv"


def test_score_unit_flag_is_honoured(cli, tmp_path):
    base = ["--texts", TEXTS, "--losses", LOSSES, "--task", "reasoning", "--chance", 25]
    run = [*base, "--steps", 5, "--bootstrap", 0, "--json"]
    pts = _points_table(tmp_path)
    code, out, err = cli("salience", "fit", *run, "--scores", tmp_path / "fractions.csv")
    assert code == 0, err
    auto = json.loads(out)
    for unit in ("auto", "points"):  # the same table in points: the same fit, in points
        code, out, err = cli("salience", "fit", *run, "--scores", pts, "--score-unit", unit)
        assert code == 0, err
        got = json.loads(out)
        assert got["params"] == pytest.approx(auto["params"], rel=1e-9)
        assert got["test_mse"] == pytest.approx(auto["test_mse"], rel=1e-9)
    code, out, err = cli(
        "salience", "fit", *run, "--scores", tmp_path / "fractions.csv", "--score-unit", "fraction"
    )
    assert code == 0 and json.loads(out) == auto, err
    # declared points, the fraction table reads as scores under 1 point: another fit (and the
    # chance of 25 points lies above every score), not the auto one
    zero = [*base[:-2], "--chance", 0, *run[len(base) :]]
    code, out, err = cli("salience", "fit", *zero, "--scores", SCORES, "--score-unit", "points")
    assert code == 0, err
    assert json.loads(out)["test_mse"] < auto["test_mse"] / 100  # errors of sub-point scores
    # a points table declared as fractions is refused, naming the value and the unit
    err = _bad(cli, tmp_path, scores=pts, extra=["--score-unit", "fraction"])
    assert "is outside [0, 1] (fraction" in err
    code, _, err = cli("salience", "fit", *FIT_ARGS, "--chance", 25, "--score-unit", "percent")
    assert code == 2 and err.count("\n") == 1 and "--score-unit: invalid choice" in err


@pytest.mark.parametrize(
    "chance, words",
    [
        ("0.25", "--chance 0.25 is in points (0-100) but the scores are fractions: for a chance "
         "of 25% give --chance 25"),
        ("reasoning=0.5", "give --chance 50"),
        ("100", "--chance: 100 must be in [0, 100) points"),
        ("-1", "--chance: -1 must be in [0, 100) points"),
        ("nan", "--chance: nan must be in [0, 100) points"),
        ("abc", "--chance: 'abc' is not a number"),
    ],
)  # fmt: skip
def test_bad_chance_is_one_line_exit_2(cli, tmp_path, chance, words):
    err = _bad(cli, tmp_path, ra=chance)
    assert words in err, err


def test_chance_under_one_point_is_read_as_points_with_a_points_table(cli, tmp_path):
    """--chance is in points: 0.25 with scores in points is a quarter of a point, accepted (it
    is refused only beside a fraction table, where it most likely meant 25)."""
    code, out, err = cli(
        "salience", "fit", "--texts", TEXTS, "--losses", LOSSES, "--task", "reasoning",
        "--scores", _points_table(tmp_path), "--chance", "0.25", "--steps", 2, "--bootstrap", 0,
        "--json",
    )  # fmt: skip
    assert code == 0, err
    d = json.loads(out)
    assert d["chance"] == 0.25 and d["gamma"] == 0.0025


def test_predict_is_in_points(cli, fitted):
    code, out, err = cli(
        "salience", "predict", "--fit", fitted, "--losses", EX / "new_losses.jsonl", "--json"
    )
    assert code == 0, err
    for p in json.loads(out)["predictions"]:
        lo, hi = p["interval"]
        assert 25 <= lo <= p["predicted"] <= hi <= 100 and p["predicted"] > 50
    code, text, _ = cli("salience", "predict", "--fit", fitted, "--losses", EX / "new_losses.jsonl")
    row = r"new-fam0-m4 +0\.\d+ +\d\d\.\d\d +\[\d\d\.\d\d, +\d{2,3}\.\d\d\]"
    assert code == 0 and re.search(row, text), text
