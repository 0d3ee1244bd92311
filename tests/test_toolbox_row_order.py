"""The next-run advice and the data-constrained fit do not depend on the row order
of the runs table (both bootstraps resample rows by position, so the rows are put in one
canonical order first)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import lmforecast.examples
from lmforecast.dataconstrained import DataConstrainedLaw
from lmforecast.errors import InputError
from lmforecast.nextrun import advise

FILES = Path(lmforecast.examples.__file__).parent / "files"


def _orders(df: pd.DataFrame) -> list[pd.DataFrame]:
    """The table reversed and shuffled (two permutations), with a fresh index."""
    rng = np.random.default_rng(7)
    out = [df.iloc[::-1]]
    out += [df.iloc[rng.permutation(len(df))] for _ in range(2)]
    return [d.reset_index(drop=True) for d in out]


def _advice(df: pd.DataFrame) -> str:
    # 8 refits: every resample draws rows by position, so a row-order dependence shows in any
    # of them (and in the p_best shares); more refits only cost time
    a = advise(df, 7e9, 1.4e11, budget=1e18, n_boot=8, seed=0)
    return a.to_json()


def test_next_run_advice_is_row_order_free():
    df = pd.read_csv(FILES / "nextrun" / "runs.csv")
    want = _advice(df)
    for d in _orders(df):
        assert _advice(d) == want  # bit-identical JSON, widths and ranking included


def test_next_run_cli_is_row_order_free(tmp_path, capsys):
    from lmforecast.cli.main import main

    df = pd.read_csv(FILES / "nextrun" / "runs.csv")
    outs = []
    for i, d in enumerate([df, df.iloc[::-1]]):
        p = tmp_path / f"runs{i}.csv"
        d.to_csv(p, index=False)
        # 8 refits, as in the library check above: any refit shows a row-order dependence
        args = ["next-run", "--runs", str(p), "--target-params", "7e9", "--target-tokens",
                "1.4e11", "--budget", "1e18", "--bootstrap", "8", "--json"]  # fmt: skip
        assert main(args) == 0
        outs.append(json.loads(capsys.readouterr().out))
    assert outs[0] == outs[1]


def test_next_run_text_output_carries_the_seed_caveat(tmp_path, capsys):
    from lmforecast.cli.main import main

    args = ["next-run", "--runs", str(FILES / "nextrun" / "runs.csv"), "--target-params",
            "7e9", "--target-tokens", "1.4e11", "--bootstrap", "8"]  # fmt: skip
    assert main(args) == 0
    text = capsys.readouterr().out
    assert text.count("vary with the seed") == 1 and "come from 8 bootstrap refits" in text
    with pytest.raises(InputError, match=r"^--bootstrap \(n_boot=\) must be >= 2"):
        advise(pd.read_csv(FILES / "nextrun" / "runs.csv"), 7e9, 1.4e11, n_boot=1)


def _dc(df: pd.DataFrame) -> tuple[str, dict]:
    # 4 resamples: each draws rows by position, so a row-order dependence shows in any of
    # them and in the interval; the point fit is most of the cost
    m = DataConstrainedLaw(bootstrap=4, seed=0).fit(df)
    return m.result_.to_json(), m.epochs_advice(6e8, 1e9, level=0.5)


@pytest.mark.filterwarnings("ignore::lmforecast.errors.DomainWarning")
def test_data_constrained_fit_and_bootstrap_are_row_order_free():
    df = pd.read_csv(FILES / "dataconstrained" / "runs.csv")
    fit, adv = _dc(df)
    for d in _orders(df)[1:]:
        d = d.assign(junk=np.arange(len(d)))  # an extra column changes nothing either
        fit2, adv2 = _dc(d)
        assert fit2 == fit
        assert adv2 == adv
        assert adv2["half_value_epochs_interval"] == adv["half_value_epochs_interval"]
