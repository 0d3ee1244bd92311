"""`lmforecast examples`: the shipped example inputs, listed and copied."""

from __future__ import annotations

import pandas as pd

from lmforecast import examples
from lmforecast.supervised import SupervisedScalingLaw
from lmforecast.supervised.presets import PRESETS


def test_every_method_has_examples_and_they_load():
    names = examples.names()
    for method in ("supervised", "distill", "flp", "osl", "salience"):
        assert any(n.startswith(method + "/") for n in names), method
    for n in names:
        assert examples.path(n).is_file(), n


def test_supervised_example_is_the_documented_simulation():
    # simulated from the Busbridge et al. Table 6 law with 0.5% noise: a fit recovers it
    runs = pd.read_csv(examples.path("supervised/runs.csv"))
    law = SupervisedScalingLaw("chinchilla-gamma").fit(runs)
    truth = PRESETS["busbridge2025"]["params"]
    pred = law.predict(N=runs.N.to_numpy(), D=runs.D.to_numpy())
    clean = SupervisedScalingLaw.from_preset("busbridge2025").predict(
        N=runs.N.to_numpy(), D=runs.D.to_numpy()
    )
    assert abs(pred / clean - 1).max() < 0.01
    assert abs(law.params_["E"] - truth["E"]) < 0.1


def test_cli_copy_lists_and_refuses_a_clash(cli, tmp_path):
    code, out, _ = cli("examples", "list")
    assert code == 0 and "supervised/runs.csv" in out.split()
    code, out, _ = cli("examples", "copy", tmp_path / "ex")
    assert code == 0 and (tmp_path / "ex" / "osl" / "base_models.csv").is_file()
    code, out, _ = cli("examples", "copy", tmp_path / "ex")  # identical files: a no-op
    assert code == 0 and "copied 0" in out
    clash = tmp_path / "ex" / "flp" / "runs.csv"
    clash.write_text("mine\n")
    before = {p: p.stat().st_mtime_ns for p in (tmp_path / "ex").rglob("*")}
    code, _, err = cli("examples", "copy", tmp_path / "ex")
    assert code == 2 and err.count("\n") == 1 and "flp/runs.csv" in err
    assert {p: p.stat().st_mtime_ns for p in (tmp_path / "ex").rglob("*")} == before
    assert clash.read_text() == "mine\n"
