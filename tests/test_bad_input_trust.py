"""Bad input of the trust checks: replicates without --replicates, --fix naming an unknown
parameter or a value outside its bounds, a suite with one model size. One stderr line, exit 2,
nothing written (the --out target never appears)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest


def _table(path, sizes=(2e7, 5e7, 1e8, 2e8, 5e8), dup=False):
    N = np.repeat(np.asarray(sizes, float), 3)
    D = N * np.tile([10.0, 20.0, 40.0], len(sizes))
    L = 1.7 + 400 / N**0.34 + 410 / D**0.28
    df = pd.DataFrame({"N": N, "D": D, "loss": L})
    if dup:
        df = pd.concat([df, df.iloc[[4]].assign(loss=L[4] * 1.01)], ignore_index=True)
    df.to_csv(path, index=False)
    return path


CASES = {
    "replicates-without-flag": (
        dict(dup=True),
        ["supervised", "fit", "--no-intervals"],
        "row 16 duplicates row 5",
    ),
    "fix-unknown-parameter": (
        {},
        ["supervised", "fit", "--form", "chinchilla", "--no-intervals", "--fix", "zeta=1"],
        "no parameter 'zeta'",
    ),
    "fix-out-of-bounds": (
        {},
        ["supervised", "fit", "--form", "chinchilla", "--no-intervals", "--fix", "alpha=50"],
        "outside the bounds",
    ),
    "fix-not-a-number": (
        {},
        ["supervised", "fit", "--form", "chinchilla", "--no-intervals", "--fix", "E=abc"],
        "not a number",
    ),
    # a pinned E above every loss was fitted (forecast L = 5.0 for a
    # fitted run of 2.57), and a repeated --fix kept its last value silently
    "fix-E-above-the-losses": (
        {},
        ["supervised", "fit", "--no-intervals", "--fix", "E=5"],
        "E=5 is at or above the lowest loss of the runs (2.",
    ),
    "fix-log-E-above-the-losses": (
        {},
        ["supervised", "fit", "--no-intervals", "--fix", "log_E=1.7"],
        "log_E=1.7 (E = 5.474) is at or above the lowest loss",
    ),
    "fix-E-at-the-lowest-loss": (  # the table's lowest loss (sizes 5e8, D/N = 40), exactly
        {},
        [
            "supervised",
            "fit",
            "--no-intervals",
            "--fix",
            f"E={1.7 + 400 / 5e8**0.34 + 410 / (2e10) ** 0.28!r}",
        ],
        "is at or above the lowest loss",
    ),  # fmt: skip
    "fix-one-parameter-two-names": (
        {},
        ["supervised", "fit", "--no-intervals", "--fix", "E=1.5", "--fix", "log_E=0.4"],
        "E and log_E pin the same parameter",  # one line: no form warning before it
    ),
    "fix-given-twice": (
        {},
        ["supervised", "fit", "--no-intervals", "--fix", "gamma=1", "--fix", "gamma=0.5"],
        "gamma given twice",
    ),
    "suite-one-size": (dict(sizes=(1e8,)), ["backtest", "--suite"], "model size"),
    "fit-one-size": (dict(sizes=(1e8,)), ["supervised", "fit", "--no-intervals"], "one model size"),
    "suite-replicates": (dict(dup=True), ["backtest", "--suite"], "--replicates"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_one_line_exit_2_nothing_written(case, cli, tmp_path):
    kw, argv, msg = CASES[case]
    runs = _table(tmp_path / "runs.csv", **kw)
    out = tmp_path / "out.json"
    before = sorted(p.name for p in tmp_path.iterdir())
    code, stdout, err = cli(*argv, "--runs", runs, "--out", out)
    assert code == 2, (code, err)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and msg in lines[0], err
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_trust_table_answer_is_what_backtest_suite_prints(tmp_path, capsys):
    """`supervised.adapter.trust_table_answer` scores every method on the honest splits of the
    user's runs; `backtest --suite --json` prints its fields and --out writes its forecasts."""
    import json

    import pandas as pd

    from lmforecast import examples
    from lmforecast.cli.main import main
    from lmforecast.store.envelope import to_jsonable
    from lmforecast.supervised.adapter import trust_table_answer

    runs = pd.read_csv(examples.path("supervised/runs.csv"))
    ans, forecasts = trust_table_answer(runs, "chinchilla", level=0.8, bootstrap=4, seed=0)
    table = pd.DataFrame(ans.fields["table"])
    assert set(forecasts["method"]) == set(table["method"]) and len(table) >= 2
    assert ans.fields["level"] == 0.8 and len(ans.fields["forecasts"]) == len(forecasts)
    assert "Trust table (80% intervals" in ans.summary()
    out = tmp_path / "f.csv"
    argv = ["backtest", "--suite", "--runs", examples.path("supervised/runs.csv"), "--form",
            "chinchilla", "--level", "0.8", "--bootstrap", "4", "--out", out, "--json"]  # fmt: skip
    assert main([str(a) for a in argv]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads(json.dumps(to_jsonable(ans.contract())))
    assert len(pd.read_csv(out)) == len(forecasts)
