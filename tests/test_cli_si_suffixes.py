"""Numeric flags read SI suffixes: ``--params 3B``."""

from __future__ import annotations

import json

import pytest

from lmforecast.cli.flags import expand_si


@pytest.mark.parametrize(
    "text,value",
    [("3B", 3e9), ("1.4T", 1.4e12), ("70M", 7e7), ("2k", 2e3), ("1.5K", 1500), ("1e3", 1e3)],
)
def test_expand_si(text, value):
    assert float(expand_si(text)) == pytest.approx(value, rel=1e-15)


def test_suffixes_give_the_same_forecast_as_plain_numbers(cli):
    base = ["supervised", "predict", "--preset", "hoffmann2022", "--json"]
    code, plain, _ = cli(*base, "--params", "7e10", "--tokens", "1.4e12")
    assert code == 0
    code, si, err = cli(*base, "--params", "70B", "--tokens", "1.4T")
    assert code == 0, err
    assert json.loads(si) == json.loads(plain)


def test_integer_flags_take_suffixes_and_bad_text_is_still_refused(cli):
    code, _, err = cli("supervised", "predict", "--preset", "hoffmann2022", "--params", "3X",
                       "--tokens", "1T")  # fmt: skip
    assert code == 2 and "--params" in err and "'3X'" in err
    from lmforecast.cli.main import build_parser

    p = build_parser("supervised")
    args = p.parse_args(["supervised", "fit", "--runs", "r.csv", "--bootstrap", "1K"])
    assert args.bootstrap == 1000
    with pytest.raises(SystemExit):
        p.parse_args(["supervised", "fit", "--runs", "r.csv", "--bootstrap", "1.5555K"])


def test_salience_features_help_example_names_an_npz_archive():
    from lmforecast.cli.help import EXAMPLES

    (line,) = EXAMPLES["salience features"]
    assert "--out features.npz" in line
