"""Bad input for the toolbox verbs (issue 24): one stderr line, exit 2, nothing written."""

from __future__ import annotations

import pandas as pd
import pytest

from lmforecast.errors import InputError
from lmforecast.isoflop import isoflop_table, simulate_isoflops
from lmforecast.recipes.simulate import simulate_pair


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
}


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
