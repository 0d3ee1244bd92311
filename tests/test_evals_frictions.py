"""What an evaluation builder meets first: a folder import with a stray non-harness JSON, model
names in another case or misspelt, chance levels from a file, backtest warnings repeated or
from baselines not asked for, the standard and deduplicated Pythia families mixed by default,
and the documented `salience token-losses` call."""

from __future__ import annotations

import json
import re
import shlex
import shutil
import warnings
from pathlib import Path

import pytest

from lmforecast.data.evals import load_pythia, read_harness
from lmforecast.errors import InputError
from lmforecast.examples import path as example

SMALL3 = "pythia-70m,pythia-160m,pythia-410m"
EVALS = example("evals/models.csv").parent


@pytest.fixture()
def folder(tmp_path):
    d = tmp_path / "evals"
    shutil.copytree(EVALS, d)
    (d / "config.json").write_text('{"model_type": "gpt_neox", "hidden_size": 512}')
    return d


def test_folder_import_skips_a_stray_json_with_one_warning(folder, cli, tmp_path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        df = read_harness(folder, models=folder / "models.csv")
    said = [str(w.message) for w in caught if "not lm-evaluation-harness" in str(w.message)]
    assert len(said) == 1 and "config.json" in said[0]
    clean = read_harness(EVALS, models=EVALS / "models.csv")
    assert df.drop(columns="source").equals(clean.drop(columns="source"))
    out = tmp_path / "t.csv"
    code, text, err = cli("evals", "import", folder, "--models", folder / "models.csv",
                          "--out", out)  # fmt: skip
    assert code == 0 and out.is_file() and err.count("config.json") == 1
    # a file named on its own is still refused, and a folder of no harness file says so
    with pytest.raises(InputError, match="config.json: not lm-evaluation-harness"):
        read_harness(folder / "config.json")
    only = tmp_path / "only"
    only.mkdir()
    shutil.copy(folder / "config.json", only)
    with pytest.raises(InputError, match="no file is lm-evaluation-harness output"):
        read_harness(only)


def test_harness_model_names_match_the_models_table_in_any_case(folder, tmp_path):
    models = tmp_path / "models.csv"
    text = (folder / "models.csv").read_text()
    name = re.search(r"^([^,\n]+),", text.splitlines()[1]).group(1)
    models.write_text(text.replace(name, name.upper()))
    (folder / "config.json").unlink()
    df = read_harness(folder, models=models)
    assert set(df["model"]) == {name.upper()} and df["params"].notna().all()
    models.write_text(text.replace(name, name[:-1]))  # a typo: the nearest name offered
    with pytest.raises(InputError, match=f"did you mean '{re.escape(name[:-1])}'"):
        read_harness(folder, models=models)


def test_chance_file_and_repeatable_chance(cli, tmp_path):
    csv = tmp_path / "chance.csv"
    csv.write_text("task,chance\nPIQA,48\narc_easy,22\nsciq,25\n")
    js = tmp_path / "chance.json"
    js.write_text(json.dumps({"piqa": 47, "arc_easy": 21}))
    base = ["downstream", "fit", "--evals", "pythia", "--task", "piqa", "--models", SMALL3,
            "--bootstrap", "0", "--json"]  # fmt: skip
    for f, want in ((csv, 48.0), (js, 47.0)):
        code, out, err = cli(*base, "--chance-file", f)
        assert code == 0, err
        assert json.loads(out)["chance"] == want
    code, out, err = cli(*base, "--chance-file", csv, "--chance", "piqa=45")
    assert json.loads(out)["chance"] == 45.0  # --chance overrides the file
    from lmforecast.cli.downstream import task_chances

    got = task_chances(["piqa=40", "ARC_EASY=20"], ["piqa", "arc_easy", "sciq"], str(csv))
    assert got == {"piqa": 40.0, "arc_easy": 20.0, "sciq": 25.0}
    bad = tmp_path / "bad.csv"
    bad.write_text("task,chance\npiqa,150\n")
    code, out, err = cli(*base, "--chance-file", bad)
    assert code == 2 and out == "" and "[0, 100)" in err


def _no_stderr(tmp_path) -> Path:
    d = load_pythia()
    d["stderr"] = float("nan")
    p = tmp_path / "ev.csv"
    d.to_csv(p, index=False)
    return p


def test_backtest_gives_each_warning_once(cli, tmp_path):
    ev = _no_stderr(tmp_path)
    code, out, err = cli("downstream", "backtest", "--evals", ev, "--task", "arc_easy",
                         "--fit-models", SMALL3, "--target", "pythia-1b", "--methods",
                         "ensemble", "--bootstrap", "10")  # fmt: skip
    assert code == 0, err
    assert err.count("no 'stderr' for the largest fitted model") == 1


def test_backtest_shows_a_baselines_warnings_only_when_asked_for(monkeypatch):
    import importlib

    bt = importlib.import_module("lmforecast.downstream.backtest")

    real = bt._fit

    def fit(method, bootstrap, **kw):
        if method == "fp":
            warnings.warn("a warning of the fp baseline's own fit", stacklevel=2)
        return real(method, bootstrap, **kw)

    monkeypatch.setattr(bt, "_fit", fit)
    kw = dict(fit_models=SMALL3.split(","), target_model="pythia-1b", tasks=["piqa"],
              bootstrap=0)  # fmt: skip
    for methods, n in ((["ensemble"], 0), (["fp"], 1)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            res = bt.backtest(load_pythia(), methods=methods, **kw)
        assert sum("fp baseline's own" in str(w.message) for w in caught) == n
        assert set(res.rows["method"]) == {*methods, "fp", "persistence"}


def test_default_models_do_not_mix_the_deduplicated_family(cli):
    base = ["downstream", "fit", "--evals", "pythia", "--task", "piqa", "--bootstrap", "0"]
    code, out, err = cli(*base)
    assert code == 0, err
    assert "models: 6 " in out and "largest: pythia-2.8b (" in out
    assert "--family deduped" in out  # says what it chose and how to choose the other
    code, out, err = cli(*base, "--family", "deduped")
    assert "models: 6 " in out and "largest: pythia-2.8b-deduped (" in out
    assert "--family standard" in out
    from lmforecast.downstream import DownstreamForecaster

    est = DownstreamForecaster(bootstrap=0).fit(load_pythia(), task="piqa")  # as the CLI
    assert est.largest_["model"] == "pythia-2.8b" and "--family deduped" in est.models_note_
    est = DownstreamForecaster(bootstrap=0).fit(load_pythia(), task="piqa", family="all")
    assert est.largest_["model"] == "mean of pythia-2.8b and pythia-2.8b-deduped"
    assert est.models_note_ is None
    with pytest.raises(InputError, match="--family"):
        DownstreamForecaster(bootstrap=0).fit(
            load_pythia(), task="piqa", models=["pythia-70m", "pythia-160m"], family="all"
        )
    code, out, err = cli(*base, "--family", "all")
    assert "models: 12 " in out and "mean of pythia-2.8b and pythia-2.8b-deduped" in out


def test_documented_token_losses_call_parses():
    from lmforecast.cli.main import build_parser

    doc = (Path(__file__).parents[1] / "docs" / "evals.md").read_text()
    calls = re.findall(r"(?:^|`)(?:lmforecast )?(salience token-losses[^`\n]*)", doc, re.M)
    assert calls
    parser = build_parser("salience")
    for c in calls:
        args = parser.parse_args(shlex.split(c))  # exits 2 on a missing required flag
        assert args.model and args.texts and args.out and args.name == "pythia-160m"
