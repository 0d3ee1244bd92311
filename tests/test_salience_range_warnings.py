"""What `salience` warns about: a capability outside the fitted
models' range (either side) is warned about with how far, `SalienceFit` saves and loads like
the other fits, and `salience predict` prints a formatted table."""

from __future__ import annotations

import json
import re
import warnings

import numpy as np
import pytest

from lmforecast import examples
from lmforecast.errors import InputError
from lmforecast.salience import SalienceFit, read_loss_records

EX = examples.path("salience/texts.jsonl").parent
FIT_ARGS = ["--texts", EX / "texts.jsonl", "--losses", EX / "losses.jsonl", "--scores",
            EX / "scores.csv", "--task", "reasoning", "--chance", "25"]  # fmt: skip


@pytest.fixture(scope="module")
def fit_path(tmp_path_factory):
    from lmforecast.cli.main import main

    out = tmp_path_factory.mktemp("sal") / "fit.json"
    assert main(["salience", "fit", *map(str, FIT_ARGS), "--lr", "3e-2", "--bootstrap", "50",
                 "--out", str(out), "--json"]) == 0  # fmt: skip
    return out


def _scaled(tmp_path, factor):
    recs = [json.loads(line) for line in (EX / "new_losses.jsonl").open()]
    out = tmp_path / f"x{factor}.jsonl"
    out.write_text("".join(json.dumps(dict(r, losses=[v * factor for v in r["losses"]])) + "\n"
                           for r in recs))  # fmt: skip
    return out


def _predict(fit, path):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        df = fit.predict_records(read_loss_records(path))
    return df, [str(x.message) for x in w]


def test_capability_below_the_fitted_range_is_warned(fit_path, tmp_path):
    fit = SalienceFit.load(fit_path)
    lo, hi = fit.fitted_range()
    df, msgs = _predict(fit, _scaled(tmp_path, 0.3))  # the example losses x 0.3
    assert (df["capability"] < lo).all()
    assert len(msgs) == 1 and "4 of 4 model(s)" in msgs[0] and "below it by" in msgs[0]
    assert f"[{lo:.4g}, {hi:.4g}]" in msgs[0] and "\n" not in msgs[0]


def test_bundled_new_models_three_of_four_below_range(fit_path):
    fit = SalienceFit.load(fit_path)
    df, msgs = _predict(fit, EX / "new_losses.jsonl")
    assert int((df["capability"] < fit.fitted_range()[0]).sum()) == 3
    assert len(msgs) == 1 and "3 of 4 model(s)" in msgs[0] and "far" not in msgs[0]


def test_inside_the_range_is_silent(fit_path, tmp_path):
    fit = SalienceFit.load(fit_path)
    lo, hi = fit.fitted_range()
    C = _predict(fit, EX / "new_losses.jsonl")[0]["capability"]
    assert lo / C.min() < hi / C.max()  # one scale factor moves all four inside the range
    factor = float(np.sqrt(lo / C.min() * hi / C.max()))  # Eq. 1 is linear in the losses
    df, msgs = _predict(fit, _scaled(tmp_path, factor))
    assert df["capability"].between(lo, hi).all() and msgs == []


def test_save_and_load_round_trip(fit_path, tmp_path):
    fit = SalienceFit.load(fit_path)
    out = tmp_path / "again.json"
    fit.save(out)
    back = SalienceFit.load(out)
    assert back.to_json() == fit.to_json()
    assert out.read_text() == fit_path.read_text()
    with pytest.raises(InputError, match="no such file"):
        SalienceFit.load(tmp_path / "missing.json")


def test_cli_predict_table_is_formatted_and_warns(cli, fit_path, tmp_path):
    code, out, err = cli("salience", "predict", "--fit", fit_path, "--losses",
                         _scaled(tmp_path, 0.3))  # fmt: skip
    assert code == 0 and "outside the range of the train models" in err
    head, *rows = out.strip().splitlines()
    assert head.split()[:3] == ["model", "capability", "predicted"] and "0.9 interval" in head
    assert len(rows) == 4
    for r in rows:
        cells = r.split()
        assert re.fullmatch(r"\d{1,3}\.\d\d", cells[2])  # points, e.g. 99.14: 2 decimals
        assert len(cells[1].replace("0.", "").lstrip("0")) <= 4  # 4 significant digits
        assert r.count("[") == 1 and r.endswith("]")
