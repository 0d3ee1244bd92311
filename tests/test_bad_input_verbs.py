"""Bad input the verbs used to accept or crash on: each is refused in one line (exit 2) with
nothing written, or (a resumable zoo build) warned about and redone, never trusted."""

from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd
import pytest

from lmforecast.errors import DomainWarning, InputError


@pytest.fixture(scope="module")
def ex(tmp_path_factory):
    from lmforecast.examples import copy

    root = tmp_path_factory.mktemp("ex")
    copy(root)
    return root


def _one_line_error(code, err, *needles):
    assert code == 2, err
    lines = [x for x in err.splitlines() if x.startswith("lmforecast: error:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    for n in needles:
        assert n in lines[0], lines[0]


def test_examples_copy_into_an_empty_name_is_refused(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = cli("examples", "copy", "")
    _one_line_error(code, err, "empty folder name")
    assert os.listdir(tmp_path) == []


def test_isoflop_c_col_naming_no_column_is_refused(cli, ex):
    code, _, err = cli("isoflop", "fit", "--runs", ex / "isoflop" / "runs.csv", "--c-col", "FLOPS")
    _one_line_error(code, err, "--c-col 'FLOPS'", "no such column")


def test_next_run_refuses_a_repeated_row_and_a_table_over_max_rows(cli, ex, tmp_path):
    t = pd.read_csv(ex / "nextrun" / "runs.csv")
    dup = tmp_path / "dup.csv"
    pd.concat([t, t.iloc[[0]]]).to_csv(dup, index=False)
    args = ("--target-params", "1e9", "--target-tokens", "2e10", "--quiet")
    code, _, err = cli("next-run", "--runs", dup, *args)
    _one_line_error(code, err, f"row {len(t) + 1} repeats row 1 exactly")
    code, _, err = cli("next-run", "--runs", ex / "nextrun" / "runs.csv", "--max-rows", "5", *args)
    _one_line_error(code, err, "more than the limit of 5")


def test_shape_test_with_one_aspect_ratio_is_refused_not_p_equal_1(cli, ex, tmp_path):
    t = pd.read_csv(ex / "shape" / "runs.csv")
    t["depth"] = t["width"] / 32
    p = tmp_path / "one.csv"
    t.to_csv(p, index=False)
    code, out, err = cli("shape", "test", "--runs", p, "--permutations", "19")
    _one_line_error(code, err, "1 distinct width/depth ratio")
    assert "p =" not in out


@pytest.mark.parametrize("pin", ["alpha=0", "beta=0"])
def test_supervised_fix_of_an_exponent_at_zero_is_refused(cli, ex, tmp_path, pin):
    out = tmp_path / "f.json"
    runs = ex / "supervised" / "runs.csv"
    code, _, err = cli("supervised", "fit", "--runs", runs, "--form", "chinchilla", "--fix", pin,
                       "--no-intervals", "--out", out)  # fmt: skip
    _one_line_error(code, err, "not identified")
    assert not out.exists()


# --- evals -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def harness(ex):
    return json.loads((ex / "evals" / "my-model-100m_step1000.json").read_text())


@pytest.mark.parametrize("shots", [2.5, -3])
def test_evals_import_refuses_a_fractional_or_negative_n_shot(cli, ex, harness, tmp_path, shots):
    doc = json.loads(json.dumps(harness))
    doc["n-shot"]["piqa"] = shots
    f = tmp_path / "m_step1000.json"
    f.write_text(json.dumps(doc))
    out = tmp_path / "o.csv"
    code, _, err = cli("evals", "import", f, "--models", ex / "evals" / "models.csv", "--out", out)
    _one_line_error(code, err, f"n-shot {shots!r}")
    assert not out.exists()


def test_evals_import_refuses_a_boolean_parameter_count(cli, ex, tmp_path):
    m = pd.read_csv(ex / "evals" / "models.csv")
    m["params"] = True
    mp = tmp_path / "m.csv"
    m.to_csv(mp, index=False)
    out = tmp_path / "o.csv"
    code, _, err = cli("evals", "import", ex / "evals" / "my-model-100m_step1000.json",
                       "--models", mp, "--out", out)  # fmt: skip
    _one_line_error(code, err, "'params' row 1: True is not a number")
    assert not out.exists()


@pytest.fixture(scope="module")
def tidy(ex, tmp_path_factory):
    from lmforecast.data.evals import read_harness

    return read_harness(sorted((ex / "evals").glob("*.json")), models=ex / "evals" / "models.csv")


SHOW_CASES = [("repeat", "row 13 repeats row 1"), ("contradict", "row 13 contradicts"),
              ("short", "line 14 has 4 of the header's 13 fields")]  # fmt: skip


@pytest.mark.parametrize("kind, needle", SHOW_CASES)
def test_evals_show_refuses_repeated_contradicting_and_short_rows(cli, tidy, tmp_path, kind,
                                                                  needle):  # fmt: skip
    p = tmp_path / "t.csv"
    text = tidy.to_csv(index=False)
    first = text.splitlines()[1]
    extra = {"repeat": first,
             "contradict": ",".join([*first.split(",")[:5], "0.99", *first.split(",")[6:]]),
             "short": ",".join(first.split(",")[:4])}[kind]  # fmt: skip
    p.write_text(text + extra + "\n")
    code, _, err = cli("evals", "show", p)
    _one_line_error(code, err, needle)


CELLS = [("flops", np.nan, "'flops' is empty"), ("model", "", "'model'"),
         ("tokens", "abc", "'abc' is not a number")]  # fmt: skip


@pytest.mark.parametrize("col, val, needle", CELLS)
def test_downstream_fit_refuses_bad_cells(cli, tmp_path, col, val, needle):
    from lmforecast.data.evals import load_pythia

    t = load_pythia()
    t[col] = t[col].astype(object)
    t.loc[t.index[100], col] = val
    p = tmp_path / "e.csv"
    t.to_csv(p, index=False)
    out = tmp_path / "fit.json"
    code, _, err = cli("downstream", "fit", "--evals", p, "--task", "arc_easy", "--bootstrap",
                       "0", "--quiet", "--out", out)  # fmt: skip
    _one_line_error(code, err, "row 101", needle)
    assert not out.exists()


# --- saved fits --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def fit_dict():
    from lmforecast.fitting import fit_law
    from lmforecast.laws import get_law

    rng = np.random.default_rng(0)
    N, D = 10 ** rng.uniform(7, 9, 40), 10 ** rng.uniform(9, 11, 40)
    y = 1.7 + 400 / N**0.34 + 410 / D**0.28
    law = get_law("chinchilla")
    res = fit_law(law, {"N": N, "D": D}, y)
    d = json.loads(res.to_json())
    d["bootstrap"] = [list(res.theta)] * 4
    return d


@pytest.mark.parametrize("edit, needle", [
    (lambda b: b[0].__setitem__(1, float("nan")), "mixes NaN and numbers"),
    (lambda b: b[1].__setitem__(3, 1e6), "outside its bounds"),
])  # fmt: skip
def test_saved_fit_with_a_bad_bootstrap_row_is_refused(fit_dict, edit, needle):
    from lmforecast.fitting.schema import check_fit_result

    d = json.loads(json.dumps(fit_dict))
    d["bootstrap"] = [list(r) for r in d["bootstrap"]]
    edit(d["bootstrap"])
    with pytest.raises(InputError, match=needle):
        check_fit_result(d, "fit.json")
    ok = json.loads(json.dumps(fit_dict))
    ok["bootstrap"][0] = [float("nan")] * len(ok["theta"])  # a failed resample: kept
    check_fit_result(ok, "fit.json")


# --- zoo resume --------------------------------------------------------------------------


def _zoo_good():
    from lmforecast.zoo.build import _RESULT_NUMBERS

    good = {"model": "r1", **{k: 1.0 for k in _RESULT_NUMBERS}}
    return good | {"checkpoints": [{"step": 1, "loss": 3.0}],
                   "token_losses": [{"id": "t", "losses": [0.5, 2.0]}]}  # fmt: skip


@pytest.mark.parametrize("edit, why", [
    (lambda r: r.__setitem__("loss", -5.0), "'loss' holds -5.0"),
    (lambda r: r["checkpoints"][0].__setitem__("loss", -5.0), "checkpoint 0"),
    (lambda r: r["token_losses"][0].__setitem__("losses", [-5.0]), "token losses 0"),
])  # fmt: skip
def test_zoo_resume_redoes_a_result_with_impossible_losses(tmp_path, edit, why):
    from lmforecast.zoo.build import _RESULT_NUMBERS
    from lmforecast.zoo.resume import load_result

    rec = _zoo_good()
    edit(rec)
    p = tmp_path / "result.json"
    p.write_text(json.dumps(rec))
    with pytest.warns(DomainWarning, match=why):
        assert load_result(p, "r1", _RESULT_NUMBERS) is None
    p.write_text(json.dumps(_zoo_good()))
    assert load_result(p, "r1", _RESULT_NUMBERS) == _zoo_good()


def test_zoo_final_weights_of_another_shape_are_redone(tmp_path):
    torch = pytest.importorskip("torch")
    from lmforecast.zoo.presets import get_preset
    from lmforecast.zoo.train import load_final, save_verified

    preset = get_preset("mini")
    save_verified({"wrong": torch.zeros(3)}, tmp_path / "final.pt")
    with pytest.warns(DomainWarning, match="do not fit this run"):
        assert load_final(preset.runs[0], preset, 64, tmp_path) is None


def test_salience_features_file_with_a_pickled_array_is_one_line(cli, ex, tmp_path):
    bad = tmp_path / "f.npz"
    np.savez(bad, text_ids=np.array(["t000"], dtype=object), text_lengths=np.array([1]),
             offsets=np.zeros((1, 2), int), ptr=np.array([0, 1]), extractor=np.array("{}"),
             H=np.zeros((1, 4)))  # fmt: skip
    s = ex / "salience"
    code, _, err = cli("salience", "fit", "--texts", s / "texts.jsonl", "--losses",
                       s / "losses.jsonl", "--scores", s / "scores.csv", "--task", "reasoning",
                       "--chance", "0", "--features", bad)  # fmt: skip
    _one_line_error(code, err, "pickled (object) array", "without unpickling")


_FAKE_DASK = """
import socket, struct, sys, threading
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(8)

def serve():  # greets like a Dask scheduler, then sends garbage
    while True:
        c, _ = srv.accept()
        body = b"\\x81\\xafpickle-protocol\\x05garbage"
        try:
            c.sendall(struct.pack("<Q", len(body)) + body + b"\\xff" * 64)
            c.close()
        except OSError:
            pass

threading.Thread(target=serve, daemon=True).start()
from lmforecast.cli.main import main
sys.exit(main(["--scheduler", f"tcp://127.0.0.1:{srv.getsockname()[1]}", "supervised", "fit",
               "--runs", sys.argv[1], "--bootstrap", "4", "--quiet"]))
"""


@pytest.mark.slow
def test_fake_dask_handshake_is_one_line_with_no_traceback_at_exit(ex):
    pytest.importorskip("distributed")
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-c", _FAKE_DASK, str(ex / "supervised" / "runs.csv")],
                       capture_output=True, text=True, timeout=120)  # fmt: skip
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("lmforecast: error:") == 1 and "handshake" in r.stderr
    assert "Traceback" not in r.stderr and "Exception ignored" not in r.stderr, r.stderr
