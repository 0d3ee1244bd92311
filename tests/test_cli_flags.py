"""Flag mistakes are named on every verb (one parser class in `cli/main.py`): a mistyped flag
with the flag it resembles, even where argparse would first complain about what the typo left
missing; a verb's flag given before the verb with where it goes; global flags anywhere."""

from __future__ import annotations

import json

import pytest

from lmforecast.cli.main import build_parser

PREDICT = ["supervised", "predict", "--preset", "hoffmann2022", "--params", "7e9"]


def _error(cli, *argv):
    code, out, err = cli(*argv)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    return err


def test_a_typo_is_named_instead_of_the_required_flag_it_left_missing(cli):
    err = _error(cli, *PREDICT, "--tokns", "20B")
    assert "unknown option --tokns; did you mean --tokens?" in err
    assert "required" not in err


@pytest.mark.parametrize("line, typo, meant", [
    (["isoflop", "fit", "--runs", "r.csv", "--approch", "2"], "--approch", "--approach"),
    (["downstream", "predict", "--fit", "f.json", "--tokes", "1e9"], "--tokes", "--tokens"),
    (["osl", "fit", "--benchmark", "b.csv", "--heldot", "x"], "--heldot", "--heldout"),
    (["ledger", "show", "--ledgr", "x.db"], "--ledgr", "--ledger"),
    (["supervised", "allocate", "--fit", "f.json", "--flopz", "1e21"], "--flopz", "--flops"),
])  # fmt: skip
def test_every_verb_names_its_typos(cli, line, typo, meant):
    parser = build_parser(line[0])
    verb = parser._subparsers._group_actions[0].choices[line[0]]
    sub = [a for a in verb._actions if a.__class__.__name__ == "_SubParsersAction"]
    owner = sub[0].choices[line[1]] if sub else verb
    assert meant in owner._option_string_actions  # the test names a real flag of the verb
    err = _error(cli, *line)
    assert f"unknown option {typo}; did you mean {meant}?" in err


def test_several_typos_are_each_named(cli):
    line = ["supervised", "fit", "--runs", "r.csv", "--loss_col", "l", "--bootstraps", "3"]
    err = _error(cli, *line)
    assert "--loss_col (did you mean --loss-col?)" in err
    assert "--bootstraps (did you mean --bootstrap?)" in err


def test_a_flag_with_no_near_name_is_still_named(cli):
    err = _error(cli, *PREDICT, "--tokens", "2e10", "--zzz", "3")
    assert "unknown option --zzz" in err and "did you mean" not in err


def test_a_verb_flag_before_the_command_says_where_it_goes(cli):
    err = _error(cli, "--json", *PREDICT, "--tokens", "2e10")
    assert "--json is an option of `supervised predict`: put it after the verb" in err


def test_an_unambiguous_prefix_is_not_called_unknown(cli):
    code, out, _ = cli(*PREDICT, "--tok", "2e10", "--json")
    assert code == 0 and "loss" in json.loads(out)
    err = _error(cli, *PREDICT, "--tok", "2e10", "--level", "7")
    assert "--level" in err and "unknown" not in err


def test_global_flags_anywhere_on_the_line(cli, tmp_path):
    code, ref, _ = cli(*PREDICT, "--tokens", "2e10", "--json")
    assert code == 0
    lines = [
        ["--debug", *PREDICT, "--tokens", "2e10", "--json"],
        [*PREDICT, "--debug", "--tokens", "2e10", "--json"],
        ["--scheduler", "joblib", *PREDICT, "--tokens", "2e10", "--json"],
        [*PREDICT[:2], "--scheduler=joblib", *PREDICT[2:], "--tokens", "2e10", "--json"],
    ]
    for line in lines:
        code, out, err = cli(*line)
        assert code == 0, (line, err)
        assert json.loads(out) == json.loads(ref)
    db = tmp_path / "f.db"
    for line in (
        ["--ledger", db, "--label", "a", *PREDICT, "--tokens", "2e10"],
        [*PREDICT, "--tokens", "2e10", "--ledger", db, "--label", "b"],
    ):
        code, _, err = cli(*line)
        assert code == 0, err
    code, out, err = cli("ledger", "show", "--ledger", db, "--json")
    assert code == 0, err
    assert {"a", "b"} <= {r["label"] for r in json.loads(out)}


def test_a_mistyped_command_or_verb_keeps_argparse_naming_it(cli):
    err = _error(cli, "supervisd", "predict", "--params", "1e9")
    assert "invalid choice: 'supervisd'" in err and "unknown option" not in err
    err = _error(cli, "supervised", "predct", "--params", "1e9")
    assert "invalid choice: 'predct'" in err and "unknown option" not in err
    err = _error(cli, "--scheduler", "joblib", *PREDICT, "--tokns", "1e10")  # a value skipped
    assert "unknown option --tokns; did you mean --tokens?" in err
