"""Bad input for `downstream fit|predict|backtest` and `evals import|show`: each case
exits 2 with one stderr line naming the problem and writes nothing."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from lmforecast.data.evals import load_pythia, read_evals_table
from lmforecast.downstream import DownstreamForecaster
from lmforecast.errors import InputError

MODELS = ["pythia-70m", "pythia-160m", "pythia-410m", "pythia-1b"]


def _one_line_error(cli, *argv, out=None, must=()):
    code, stdout, err = cli(*argv)
    assert code == 2, (code, stdout, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("lmforecast: error:"), err
    for word in must:
        assert word in lines[0], (word, lines[0])
    if out is not None:
        assert not out.exists()
    return lines[0]


@pytest.fixture(scope="module")
def table():
    e = load_pythia()
    return e[e["model"].isin(MODELS) & e["task"].isin(["piqa", "lambada_openai"])].reset_index(
        drop=True
    )


@pytest.fixture(scope="module")
def saved(tmp_path_factory, table):
    est = DownstreamForecaster(bootstrap=8).fit(table, task="piqa")
    d = est.to_dict()
    assert DownstreamForecaster.from_dict(json.loads(json.dumps(d))).to_dict() == d
    return d


def _write_fit(tmp_path, d):
    p = tmp_path / "fit.json"
    p.write_text(json.dumps(d))
    return p


@pytest.mark.parametrize(
    "edit, word",
    [
        (lambda d: d.update(format_version=99), "format_version"),
        (lambda d: d.update(format_version="1"), "format_version"),
        (lambda d: d.update(format_version=None), "format_version"),
        (lambda d: d.pop("format_version"), "format_version"),
        (lambda d: d.update(extra=1), "extra"),
        (lambda d: d["config"].update(colour="red"), "config.colour"),
        (lambda d: d["fitted"].update(eval_sd=-1), "fitted.eval_sd"),
        (lambda d: d["fitted"].update(chance=200), "fitted.chance"),
        (lambda d: d["fitted"]["largest"].update(score=140.0), "fitted.largest.score"),
        (lambda d: d["fitted"]["members"]["trend"].update(params=[1.0]), "members.trend.params"),
        (lambda d: d["fitted"].update(n_models=10**400), "fitted.n_models"),
        (lambda d: d["config"].update(gain_sd=-0.5), "config.gain_sd"),
        (lambda d: d["fitted"].update(final_tokens=-1.0), "fitted.final_tokens"),
        (lambda d: d["fitted"].update(final_tokens="many"), "fitted.final_tokens"),
    ],
)
def test_predict_refuses_edited_fit(cli, tmp_path, saved, edit, word):
    d = json.loads(json.dumps(saved))
    edit(d)
    p = _write_fit(tmp_path, d)
    msg = _one_line_error(cli, "downstream", "predict", "--fit", p, "--flops", "1e21", must=[word])
    assert len(msg) < 400


def test_predict_refuses_inline_json_in_one_short_line(cli, saved):
    msg = _one_line_error(cli, "downstream", "predict", "--fit", json.dumps(saved, indent=1),
                          "--flops", "1e21", must=["--fit", "inline text"])  # fmt: skip
    assert len(msg) < 200


def test_saved_fit_round_trips_and_predicts(cli, tmp_path, saved):
    p = _write_fit(tmp_path, saved)
    est = DownstreamForecaster.from_json(p)
    assert est.to_dict() == saved
    code, out, _ = cli("downstream", "predict", "--fit", p, "--flops", "5e21", "--json")
    assert code == 0
    res = json.loads(out)
    lo, hi = res["interval"]
    assert 0 <= lo <= res["performance"] <= hi <= 100


def _fit(cli, tmp_path, df, *extra, must=()):
    src = tmp_path / "evals.csv"
    df.to_csv(src, index=False)
    out = tmp_path / "fit.json"
    argv = ["downstream", "fit", "--evals", src, "--task", "piqa", "--bootstrap", "4",
            "--out", out, *extra]  # fmt: skip
    return _one_line_error(cli, *argv, out=out, must=must)


def _set(df, mask, col, value):
    d = df.copy()
    d[col] = d[col].astype(object)
    d.loc[mask, col] = value
    return d


def test_fit_refuses_bad_values(cli, tmp_path, table):
    piqa = (table["task"] == "piqa") & (table["metric"] == "acc")
    one = piqa & (table.index == table.index[piqa][5])
    _fit(cli, tmp_path, _set(table, one, "value", 1.5), must=["1.5", "[0, 1]"])
    _fit(cli, tmp_path, _set(table, one, "value", -0.2), must=["-0.2"])
    _fit(cli, tmp_path, _set(table, one, "step", -5), must=["step", "-5"])
    _fit(cli, tmp_path, _set(table, one, "flops", -1.0), must=["flops"])
    dup = pd.concat([table, table[one]], ignore_index=True)
    _fit(cli, tmp_path, dup, must=["duplicate", "pythia"])
    bad = table[one].assign(value=0.9)
    _fit(cli, tmp_path, pd.concat([table, bad], ignore_index=True), must=["contradictory"])


def test_fit_points_scale_is_stated(table):
    """Scores already in points (0-100) are read as points; a mix beyond 100 is refused."""
    from lmforecast.downstream.tables import score_scale

    assert score_scale(np.array([0.3, 0.7]), "acc") == 100.0
    assert score_scale(np.array([30.0, 70.0]), "score") == 1.0
    with pytest.raises(InputError, match=r"outside \[0, 100\]"):
        score_scale(np.array([30.0, 170.0]), "score")


def test_chance_flag_is_named_when_a_task_has_none(cli, tmp_path, table):
    t = table.assign(task=table["task"].replace({"piqa": "my_task"}))
    src = tmp_path / "evals.csv"
    t.to_csv(src, index=False)
    out = tmp_path / "bt.csv"
    _one_line_error(cli, "downstream", "backtest", "--evals", src, "--task", "my_task",
                    "--fit-models", ",".join(MODELS[:3]), "--target", MODELS[3],
                    "--bootstrap", "0", "--out", out, out=out, must=["--chance"])  # fmt: skip
    _one_line_error(cli, "downstream", "fit", "--evals", src, "--task", "my_task",
                    "--bootstrap", "0", "--out", out, out=out, must=["--chance"])  # fmt: skip
    argv = ["downstream", "backtest", "--evals", src, "--task", "my_task", "--fit-models",
            ",".join(MODELS[:3]), "--target", MODELS[3], "--bootstrap", "0", "--chance", "50",
            "--methods", "trend", "--json"]  # fmt: skip
    code, stdout, _ = cli(*argv)
    assert code == 0
    rows = json.loads(stdout)["rows"]
    assert {r["method"] for r in rows} >= {"trend", "persistence"}


# ---- evals import ----------------------------------------------------------------------------
def _harness(tmp_path, results, revision="step1000", name="r.json"):
    args = f"pretrained=EleutherAI/pythia-160m,revision={revision}"
    doc = {"results": results, "config": {"model_args": args}}
    p = tmp_path / name
    p.write_text(json.dumps(doc, allow_nan=True))
    return p


@pytest.mark.parametrize(
    "results, word",
    [
        ({"piqa": {"acc": 7, "acc_stderr": 0.01}}, "[0, 1]"),
        ({"piqa": {"acc": float("nan"), "acc_stderr": 0.01}}, "finite"),
        ({"piqa": {"acc": -0.5}}, "-0.5"),
        ({"piqa": {"acc": 0.6, "acc_stderr": -1}}, "acc_stderr"),
        ({"lambada_openai": {"ppl": 0, "acc": 0.3}}, "perplexity"),
        ({"wikitext": {"bits_per_byte,none": -1.0}}, "loss"),
        ({"piqa": {"acc": 10**400}}, "finite"),
    ],
)
def test_import_refuses_bad_values(cli, tmp_path, results, word):
    src = _harness(tmp_path, results)
    out = tmp_path / "t.csv"
    _one_line_error(cli, "evals", "import", src, "--out", out, out=out, must=[word])


def test_import_refuses_huge_step_and_deep_json(cli, tmp_path):
    out = tmp_path / "t.csv"
    src = _harness(tmp_path, {"piqa": {"acc": 0.6}}, revision="step" + "9" * 30)
    _one_line_error(cli, "evals", "import", src, "--out", out, out=out, must=["too large"])
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100000 + "]" * 100000)
    _one_line_error(cli, "evals", "import", deep, "--out", out, out=out, must=["deep"])


def test_import_reads_task_losses(tmp_path):
    """bits-per-byte and perplexities are imported as metrics of their task."""
    from lmforecast.data.evals import read_harness

    res = {"bits_per_byte,none": 0.9, "word_perplexity,none": 30.0,
           "byte_perplexity,none": 1.9, "alias": "wikitext"}  # fmt: skip
    src = _harness(tmp_path, {"wikitext": res})
    df = read_harness(src)
    got = dict(zip(df["metric"], df["value"]))
    assert got == {"bits_per_byte": 0.9, "byte_perplexity": 1.9, "word_perplexity": 30.0}


# ---- evals show ------------------------------------------------------------------------------
@pytest.mark.parametrize("token", ["NA", "None", "null", "-", ""])
def test_show_refuses_missing_value_tokens(cli, tmp_path, token):
    e = load_pythia().head(20)
    text = e.to_csv(index=False).splitlines()
    cells = text[3].split(",")
    cells[5] = token  # the value column
    text[3] = ",".join(cells)
    p = tmp_path / "t.csv"
    p.write_text("\n".join(text) + "\n")
    _one_line_error(cli, "evals", "show", p, must=["row 3", "value"])


def test_show_refuses_comment_lines_and_skips_blank_lines(cli, tmp_path):
    e = load_pythia().head(20)
    text = e.to_csv(index=False).splitlines()
    p = tmp_path / "t.csv"
    p.write_text("\n".join(text[:4] + ["# a comment"] + text[4:]) + "\n")
    _one_line_error(cli, "evals", "show", p, must=["comment"])
    p.write_text("\n".join(text[:4] + ["", ""] + text[4:] + [""]) + "\n")
    pd.testing.assert_frame_equal(read_evals_table(p), read_evals_table(_plain(tmp_path, text)))
    code, _, _ = cli("evals", "show", p)
    assert code == 0


def _plain(tmp_path, text):
    q = tmp_path / "plain.csv"
    q.write_text("\n".join(text) + "\n")
    return q


def test_backtest_refuses_a_single_fit_model(cli, tmp_path):
    out = tmp_path / "bt.csv"
    _one_line_error(cli, "downstream", "backtest", "--evals", "pythia", "--task", "piqa",
                    "--fit-models", "pythia-70m", "--target", "pythia-1b", "--out", out,
                    out=out, must=["--fit-models", ">= 2"])  # fmt: skip


def test_vectorised_value_check_agrees_with_the_rule():
    from lmforecast.data.evals.values import bad_values, value_problem

    metrics = ["acc", "acc_norm,none", "exact_match,strict-match", "ppl", "word_perplexity",
               "bits_per_byte", "arc_bpb", "mmlu_ppl", "f1", "bleu"]  # fmt: skip
    values = [-1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 7.0, 150.0, float("nan"), float("inf")]
    m = [a for a in metrics for _ in values]
    v = values * len(metrics)
    want = np.array([value_problem(a, b) is not None for a, b in zip(m, v)])
    np.testing.assert_array_equal(bad_values(m, v), want)
    assert want.sum() > 20 and (~want).sum() > 20
