"""Write the example inputs of the toolbox methods (issue 24) into the package.

    python scripts/make_toolbox_examples.py

- dataconstrained/runs.csv: repeated-data runs simulated from the data-constrained law with
  Chinchilla's coefficients and Muennighoff et al.'s R*_D = 15.4, R*_N = 5.3 (0.5% noise).
- isoflop/runs.csv: isoFLOP profiles (4 budgets x 7 sizes) from Hoffmann et al.'s Approach 3 law.
- recipes/base.csv, recipes/new.csv: two recipes whose true multiplier is 2.5 (recipes.simulate).
- nextrun/runs.csv: 10 small runs of the same law (0.5% noise).
- shape/runs.csv: checkpoints of 12 width x depth shapes with a quadratic aspect-ratio penalty.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from lmforecast.dataconstrained.simulate import simulate_runs
from lmforecast.isoflop import simulate_isoflops
from lmforecast.isoflop.simulate import HOFFMANN
from lmforecast.laws.chinchilla import ChinchillaGamma
from lmforecast.recipes.simulate import simulate_pair
from lmforecast.shape.simulate import simulate_shapes

OUT = Path(__file__).resolve().parents[1] / "src" / "lmforecast" / "examples" / "files"


def _write(df: pd.DataFrame, name: str) -> None:
    p = OUT / name
    p.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(p, index=False, float_format="%.6g")
    print(f"wrote {p} ({len(df)} rows)")


def main() -> None:
    dc = simulate_runs(N=(1e7, 4e7, 1.5e8, 6e8), U=(1e8, 1e9), epochs=(1, 2, 4, 10, 25), seed=1)
    _write(dc[["N", "D", "U", "loss"]], "dataconstrained/runs.csv")
    _write(
        simulate_isoflops(budgets=(1e17, 1e18, 1e19, 1e20), n_sizes=7, seed=1), "isoflop/runs.csv"
    )
    base, new = simulate_pair(seed=1)
    _write(base, "recipes/base.csv")
    _write(new, "recipes/new.csv")
    rng = np.random.default_rng(1)
    N = np.array([1e7, 2e7, 4e7, 8e7, 1.6e8] * 2)
    D = np.r_[20 * N[:5], 60 * N[5:]]
    L = ChinchillaGamma.loss(HOFFMANN, N, D) * np.exp(rng.normal(0, 0.005, N.size))
    _write(pd.DataFrame({"N": N, "D": D, "loss": L}), "nextrun/runs.csv")
    _write(simulate_shapes(seed=1), "shape/runs.csv")


if __name__ == "__main__":
    main()
