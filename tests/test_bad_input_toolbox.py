"""Bad input for the toolbox verbs: one stderr line, exit 2, nothing written."""

from __future__ import annotations

import pandas as pd
import pytest

from lmforecast.errors import InputError
from lmforecast.isoflop import isoflop_table, simulate_isoflops
from lmforecast.recipes.simulate import simulate_pair
from lmforecast.shape.simulate import simulate_shapes

NEXT_RUN = ["next-run", "--target-params", "7e9", "--target-tokens", "1.4e11", "--bootstrap", "5"]


@pytest.fixture
def tables(tmp_path):
    dc = pd.DataFrame({"N": [1e7, 2e7], "D": [1e9, 2e9], "U": [1e9, 3e9], "loss": [3.0, 2.9]})
    dc.to_csv(tmp_path / "dc.csv", index=False)
    iso = simulate_isoflops(budgets=(1e17, 1e18), n_sizes=5)
    iso = iso[~((iso["C"] == 1e18) & (iso.index % 5 > 1))]  # 2 sizes left at C = 1e18
    iso.to_csv(tmp_path / "iso.csv", index=False)
    base, new = simulate_pair(
        budgets_base=(1e17, 2e17, 4e17, 8e17), budgets_new=(1e19, 2e19, 4e19, 8e19)
    )
    base.to_csv(tmp_path / "base.csv", index=False)
    new.to_csv(tmp_path / "new.csv", index=False)
    N = [1e7, 2e7, 4e7, 8e7, 1.6e8]
    few = pd.DataFrame({"N": N, "D": [20 * n for n in N], "loss": [5.3, 4.6, 4.1, 3.6, 3.2]})
    few.to_csv(tmp_path / "nr.csv", index=False)
    shape = simulate_shapes(seed=0, steps=2)
    shape.loc[shape["model"] == "768x3", "width"] = [768, 1024]  # one model, two widths
    shape.to_csv(tmp_path / "shape.csv", index=False)
    return tmp_path


CASES = {
    "U > D": (
        ["supervised", "fit", "--form", "data-constrained", "--runs", "dc.csv"],
        "epochs = D/U must be >= 1",
    ),
    "no U column": (
        [
            "supervised",
            "fit",
            "--form",
            "data-constrained",
            "--runs",
            "dc.csv",
            "--u-col",
            "unique",
        ],
        "missing unique-tokens column 'unique'",
    ),
    "isoflop budget with 2 sizes": (
        ["isoflop", "fit", "--runs", "iso.csv"],
        "needs at least 3 sizes per budget",
    ),
    "recipes without overlap": (
        ["compare-recipes", "--base", "base.csv", "--new", "new.csv", "--flops", "1e18"],
        "no overlapping budgets",
    ),
    "next-run with 5 runs": ([*NEXT_RUN, "--runs", "nr.csv"], "needs at least 6"),
    "next-run negative goal width": (
        [*NEXT_RUN, "--runs", "shape.csv", "--goal-width", "-0.1"],
        "goal width must be > 0",
    ),
    "shape test, a model with two widths": (
        ["shape", "test", "--runs", "shape.csv", "--model-col", "model", "--permutations", "19"],
        "has more than one width or depth",
    ),
}


OUT_CASES = {
    "next-run": [*NEXT_RUN, "--runs", "shape.csv"],
    "shape test": ["shape", "test", "--runs", "shape.csv", "--permutations", "19"],
}


@pytest.mark.parametrize("verb", sorted(OUT_CASES))
@pytest.mark.parametrize(
    "out, needle",
    [("missing/x.json", "folder missing does not exist"), ("shape.csv", "is also an input")],
)
def test_out_refused_before_any_work(verb, out, needle, tables, cli, monkeypatch):
    monkeypatch.chdir(tables)
    before = {p.name: p.read_bytes() for p in tables.iterdir()}
    code, _, err = cli(*OUT_CASES[verb], "--out", out)
    assert code == 2 and err.count("\n") == 1 and needle in err, err
    assert {p.name: p.read_bytes() for p in tables.iterdir()} == before


@pytest.mark.parametrize("case", sorted(CASES))
def test_one_line_exit_2_nothing_written(case, tables, cli, monkeypatch):
    argv, needle = CASES[case]
    monkeypatch.chdir(tables)
    before = sorted(p.name for p in tables.iterdir())
    code, out, err = cli(*argv, "--out", "result.json")
    assert code == 2, (case, err)
    assert err.count("\n") == 1 and needle in err, err
    assert sorted(p.name for p in tables.iterdir()) == before


def test_isoflop_single_budget_refused():
    t = simulate_isoflops(budgets=(1e18,), n_sizes=5)
    with pytest.raises(InputError, match="at least 2 budgets"):
        isoflop_table(t)
