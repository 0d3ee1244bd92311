"""Saved results are strict JSON (no NaN/Infinity tokens) and still load back bit-for-bit."""

import json
import math

import pytest

from lmforecast.errors import InputError
from lmforecast.examples import path
from lmforecast.isoflop import fit_isoflop, isoflop_table
from lmforecast.isoflop.result import IsoFlopResult
from lmforecast.store import dump_json, load_json


def _strict(text: str):
    def refuse(tok):
        raise AssertionError(f"non-standard JSON token {tok}")

    return json.loads(text, parse_constant=refuse)


def test_non_finite_floats_are_null_in_the_text_and_come_back():
    d = {"kind": "X", "a": [1.5, math.inf, -math.inf], "b": {"c": math.nan}, "s": "NaN"}
    text = dump_json(d)
    raw = _strict(text)
    assert raw["a"] == [1.5, None, None] and raw["b"]["c"] is None and raw["s"] == "NaN"
    back = load_json(text)
    assert back["a"][:2] == [1.5, math.inf] and back["a"][2] == -math.inf
    assert math.isnan(back["b"]["c"]) and back["s"] == "NaN" and "non_finite" not in back
    assert dump_json(back) == text


def test_old_files_with_bare_tokens_still_load():
    back = load_json('{"kind": "X", "a": NaN, "b": Infinity}')
    assert math.isnan(back["a"]) and back["b"] == math.inf


@pytest.mark.parametrize(
    "entries",
    ['"x"', '[["a", "NaN"]]', '[[["a"], "nan"]]', '[[["zz"], "NaN"]]', '[[["a"], "NaN"]]'],
)
def test_a_hand_edited_non_finite_list_is_refused(entries):
    # the last one points at a value that is not null
    with pytest.raises(InputError, match="non_finite"):
        load_json('{"kind": "X", "a": 1.0, "non_finite": ' + entries + "}")


def test_isoflop_fit_without_bootstrap_saves_strict_json(tmp_path):
    import pandas as pd

    res = fit_isoflop(isoflop_table(pd.read_csv(path("isoflop/runs.csv"))), n_boot=0)
    assert all(math.isnan(v) for v in res.a_interval)
    text = res.to_json(tmp_path / "iso.json")
    _strict(text)
    assert IsoFlopResult.from_json(tmp_path / "iso.json").to_json() == text


def test_a_non_finite_value_under_a_number_key_loads_back():
    text = dump_json({"kind": "X", "a": {1: math.nan}})  # JSON writes the key as "1"
    assert math.isnan(load_json(text)["a"]["1"])
