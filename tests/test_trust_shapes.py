"""benchmarks/trust_shapes.py (docs/trust.md, "Thin suites"): the ladders it builds, and a real
run on the Gemstones suite with the default's intervals scored."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from bench_scripts import load


def _script():
    return load("trust_shapes")


def _grid():
    N = np.repeat([1e7, 2e7, 4e7, 8e7], 6)
    D = N * np.tile([2.0, 5, 20, 50, 100, 300], 4)
    return pd.DataFrame({"N": N, "D": D, "loss": 2 + 100 / N**0.3})


def test_shapes_keep_one_run_per_size_or_three_spread_in_d():
    ts = _script()
    df = _grid()
    for name in ("ratio-20", "ratio-100", "final"):
        lad = ts.SHAPES[name](df)
        assert lad["N"].is_unique and len(lad) == 4, name
    assert np.allclose(ts.SHAPES["ratio-20"](df)["D"] / ts.SHAPES["ratio-20"](df)["N"], 20)
    assert np.allclose(ts.SHAPES["final"](df)["D"] / ts.SHAPES["final"](df)["N"], 300)
    three = ts.SHAPES["three-per-size"](df)
    assert three.groupby("N").size().eq(3).all()
    assert set(three["D"] / three["N"]) == {2.0, 20.0, 300.0}  # both ends and the middle


@pytest.mark.slow
def test_on_gemstones_the_default_covers_thin_ladders_and_records_its_terms(shared_dir):
    ts = _script()
    f = ts.run(shared_dir / "data", suites=("gemstones",))
    assert set(f["shape"]) >= {"final", "three-per-size"}
    assert {"noise", "s_boot", "r", "lower", "upper"} <= set(f.columns)
    # the held-out sizes lie beyond every fitted one, and each fit saw at least 5 runs
    assert (f["r"] > 0).all() and (f["n_train"] >= 5).all()
    s = ts.summarise(f)
    assert ((s["coverage"] >= 0) & (s["coverage"] <= 1)).all()
    # errors of about 1% on this suite (docs/trust.md): the intervals are finite and not absurd
    assert s["median_abs_pct_error"].between(0.1, 5).all()
    assert s["median_half_width_pct"].between(0.3, 10).all()
    assert ts.markdown(s).count("\n") == len(s) + 1
