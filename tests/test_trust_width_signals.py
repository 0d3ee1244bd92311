"""benchmarks/trust_width_signals.py (docs/trust.md, "other signals for the stack's width"):
its leave-one-suite-out scale rule on known errors, and a real run on two shared suites."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bench_scripts import load


def _script():
    return load("trust_width_signals")


def _suite(name, sigma, n, rng):
    return pd.DataFrame({
        "suite": name, "sub": "a", "split": "size-1", "r": 0.5, "noise": 0.0, "s_boot": 0.0,
        "e": rng.normal(0.0, sigma, n), "w": 1.0 / n,
        **dict.fromkeys(("s_inner", "inner_mae", "inner_median", "spread", "run_mad", "size_rms"),
                        sigma),
    })  # fmt: skip


def test_scale_rule_recovers_the_gaussian_scale_and_the_oracle_its_tails(monkeypatch):
    """Gaussian errors of a known scale, S = that scale: the 90% k is ~1 (z k S = 1.645 sigma,
    the 90th percentile of |e|), whichever suite is held out; the oracle ratio is ~2.44
    (1.645 / 0.674), and a suite whose errors are 3x its signal is under-covered."""
    ws = _script()
    rng = np.random.default_rng(0)
    f = pd.concat([_suite("a", 0.01, 4000, rng), _suite("b", 0.05, 4000, rng)], ignore_index=True)
    sig = ws.SIGNALS["s_inner (default)"]
    assert ws.choose_k(f, sig, base=False) == pytest.approx(1.0, abs=0.05)
    # `loso` scores each signal on its own and the oracle apart from them: the default signal's
    # rows are the same with the other signals left out (the real-suite run scores them all)
    monkeypatch.setattr(ws, "SIGNALS", {"s_inner (default)": sig})
    t = ws.loso(f)
    oracle = t[t["signal"].str.startswith("oracle")]
    assert np.allclose(oracle["ratio"], 1.645 / 0.674, rtol=0.05)
    row = t[(t["signal"] == "s_inner (default)") & ~t["base"] & (t["suite"] == "pooled")]
    assert row["coverage"].iloc[0] == pytest.approx(0.9, abs=0.02)
    bad = f.assign(e=f["e"] * np.where(f["suite"] == "a", 3.0, 1.0))
    t = ws.loso(bad)
    cov = t[(t["signal"] == "s_inner (default)") & ~t["base"]].set_index("suite")["coverage"]
    assert cov["a"] < 0.5 and cov["b"] > 0.95


@pytest.mark.slow
def test_runs_on_real_suites_and_its_default_row_is_the_fits_own(shared_dir, tmp_path, capsys):
    """The zoo and datablations, refitted: the script recomputes each fit's inner backtest
    (and raises if it differs from the fit's s_inner) and prints every signal's row."""
    ws = _script()
    cache = tmp_path / "f.csv"
    assert ws.main(["--shared", str(shared_dir / "data"), "--suites", "zoo,datablations",
                    "--cache", str(cache)]) == 0  # fmt: skip
    out = capsys.readouterr().out
    f = pd.read_csv(cache)
    assert set(f["suite"]) == {"zoo", "datablations"}
    stacked = np.isfinite(f["s_inner"])
    assert stacked.any() and np.all(f.loc[stacked, ["inner_mae", "spread", "run_mad"]] > 0)
    for name in ws.SIGNALS:
        assert f"| {name} | yes |" in out and f"| {name} | no |" in out
    assert "oracle" in out
