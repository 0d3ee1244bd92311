"""Saved fits name their estimator in ``kind``: `lmforecast.load` returns the estimator a file
holds, each class's loader refuses another estimator's fit naming both kinds, and a CLI verb
handed another method's fit says which command reads it (exit 2, one line, nothing written)."""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest

import lmforecast
from lmforecast.distill import DistillationScalingLaw
from lmforecast.errors import InputError
from lmforecast.store.kinds import ESTIMATORS
from lmforecast.supervised import SupervisedScalingLaw


@pytest.fixture
def fits(tmp_path):
    sup = SupervisedScalingLaw.from_preset("hoffmann2022").save(tmp_path / "sup.json")
    dis = DistillationScalingLaw.from_preset("busbridge2025").save(tmp_path / "dist.json")
    return sup, dis


def test_the_files_name_their_estimator(fits):
    sup, dis = fits
    assert json.loads(sup.read_text())["kind"] == "SupervisedScalingLaw"
    assert json.loads(dis.read_text())["kind"] == "DistillationScalingLaw"
    assert type(lmforecast.load(sup)) is SupervisedScalingLaw
    assert type(lmforecast.load(dis)) is DistillationScalingLaw
    assert lmforecast.load(dis).to_json() == dis.read_text()


@pytest.mark.parametrize(
    "cls, name, found, hint",
    [
        (SupervisedScalingLaw, "dist.json", "DistillationScalingLaw", "`lmforecast distill`"),
        (DistillationScalingLaw, "sup.json", "SupervisedScalingLaw", "`lmforecast supervised`"),
    ],
)
def test_a_loader_refuses_the_other_method_s_fit_naming_both_kinds(fits, cls, name, found, hint):
    path = fits[0].parent / name
    with pytest.raises(InputError) as e:
        cls.load(path)
    msg = str(e.value)
    assert msg == (
        f"{path} holds a {found} fit, not a {cls.__name__}: load it with lmforecast.load "
        f"or use {hint}"
    )


def test_an_unknown_kind_lists_the_known_ones(tmp_path):
    p = tmp_path / "r.json"
    p.write_text('{"kind": "FitResult", "format_version": 1}')
    with pytest.raises(InputError) as e:
        lmforecast.load(p)
    msg = str(e.value)
    assert "\n" not in msg and "kind 'FitResult'" in msg
    assert all(k in msg for k in ESTIMATORS)
    p.write_text('{"law": "chinchilla"}')
    with pytest.raises(InputError, match="no 'kind' field"):
        lmforecast.load(p)


def test_the_cli_names_the_command_for_another_method_s_fit(cli, fits, tmp_path):
    sup, dis = fits
    pd.DataFrame({"N": [1e9], "D": [2e10]}).to_csv(tmp_path / "rows.csv", index=False)
    out = tmp_path / "forecasts.csv"
    code, stdout, err = cli("supervised", "predict", "--fit", dis, "--table",
                            tmp_path / "rows.csv", "--out", out)  # fmt: skip
    assert code == 2 and stdout == "" and not out.exists()
    assert err.strip().splitlines() == [
        f"lmforecast: error: {dis} holds a DistillationScalingLaw fit, not a "
        "SupervisedScalingLaw: load it with lmforecast.load or use `lmforecast distill`"
    ]
    code, stdout, err = cli("distill", "predict", "--coefficients", sup, "--student-params",
                            "1e9", "--student-tokens", "2e10", "--teacher-loss", "2.2")  # fmt: skip
    assert code == 2 and stdout == "" and len(err.strip().splitlines()) == 1
    assert "holds a SupervisedScalingLaw fit" in err and "`lmforecast supervised`" in err


def test_load_is_exported_lazily():
    code = (
        "import sys, lmforecast; assert 'lmforecast.store' not in sys.modules; "
        "assert 'load' in dir(lmforecast) and 'load' in lmforecast.__all__; "
        "f = lmforecast.load; assert f.__module__ == 'lmforecast.store.registry'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_result_table_names_readers_of_their_own_kind():
    from lmforecast.store.kinds import RESULTS
    from lmforecast.store.registry import estimator_class

    for kind in RESULTS:
        cls = estimator_class(kind)
        assert cls.__name__ == kind and callable(cls.from_json)
    assert not set(RESULTS) & set(ESTIMATORS)


# (file, the documented line that writes it) for results `lmforecast.load` reads back
RESULT_LINES = {
    "OSLResult": ("osl.json", "osl fit --benchmarks osl/base_models.csv --target HumanEval "
                  "--quiet --out osl.json"),
    "SalienceFit": ("csv.json", "salience fit --texts salience/texts.jsonl --losses "
                    "salience/losses.jsonl --scores salience/scores.csv --task reasoning "
                    "--chance 0 --out csv.json"),
    "IsoFlopResult": ("iso.json", "isoflop fit --runs isoflop/runs.csv --quiet --out iso.json"),
    "ShapeTest": ("shape.json", "shape test --runs shape/runs.csv --model-col model "
                  "--permutations 20 --quiet --out shape.json"),
}  # fmt: skip


@pytest.mark.parametrize("kind", list(RESULT_LINES))
def test_load_reads_the_results_the_command_line_saves(tmp_path, monkeypatch, capsys, kind):
    from cli_lines import run_in_examples

    fname, line = RESULT_LINES[kind]
    assert run_in_examples(tmp_path, monkeypatch, line) == 0, capsys.readouterr().err
    res = lmforecast.load(tmp_path / fname)
    assert type(res).__name__ == kind
    assert res.to_json() == (tmp_path / fname).read_text()  # bit for bit
    assert res.summary()
