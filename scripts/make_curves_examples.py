"""Write the example inputs of `lmforecast curves` into the package.

    python scripts/make_curves_examples.py

Simulated from the multi-power law (Luo et al. 2025 Eq. 7) with the parameters `TRUTH` (the
multi-power law fitted to the MPL authors' 25M-parameter curves, rounded), 0.2% AR(1) noise
on the loss (lag-one correlation 0.5; the real 25M curves leave an rms log residual of about
0.1%), random seed 1, a peak learning rate of 3e-4 and a 400-step linear warmup, logged every
100 steps:

- curves/curves.csv: one model (N = 2.5e7), four runs: ``constant_8k``, ``cosine_8k`` and
  ``wsd_8k`` (8,000 steps, complete; the WSD run cools down linearly over its last 20%) and
  ``wsd_16k``, a WSD run of 16,000 steps with a 20% linear cooldown logged to step 6,000, its
  whole planned schedule beside the logged losses (rows with a learning rate and no loss). The
  complete decaying runs identify how the loss answers a decay, so `curves plan` on this fit
  finds the best WSD cooldown where the simulated law has it (15-20% of 16,000 steps).
- curves/schedule.csv: the rest of ``wsd_16k`` (continued from its logged losses) and
  ``cosine_16k``, a 16,000-step cosine run never trained (forecast from the model's shared
  parameters).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from lmforecast.curves import schedules, simulate_curves
from lmforecast.report.sections.curves import EXAMPLE_TRUTH as TRUTH

OUT = Path(__file__).resolve().parents[1] / "src" / "lmforecast" / "examples" / "files"
PEAK, FLOOR, WARMUP, EVERY, N = 3e-4, 3e-5, 400, 100, 2.5e7
NOISE, SEED = 0.002, 1
LOGGED_TO = 6000  # the running WSD run has logged losses up to this step


def _rows(name: str, sched: pd.DataFrame) -> pd.DataFrame:
    keep = (sched["step"] % EVERY == 0) | (sched["step"] == WARMUP)
    return sched[keep].assign(run=name, N=N)[["run", "step", "lr", "N"]]


def tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    """(curves table, schedule table) of the examples."""
    plan = pd.concat([
        _rows("constant_8k", schedules.constant(8000, PEAK, WARMUP)),
        _rows("cosine_8k", schedules.cosine(8000, PEAK, FLOOR, WARMUP)),
        _rows("wsd_8k", schedules.wsd(8000, PEAK, FLOOR, 0.2, WARMUP)),
        _rows("wsd_16k", schedules.wsd(16000, PEAK, FLOOR, 0.2, WARMUP)),
    ], ignore_index=True)  # fmt: skip
    curves = simulate_curves(plan, TRUTH, noise=NOISE, rho=0.5, seed=SEED)
    curves.loc[(curves["run"] == "wsd_16k") & (curves["step"] > LOGGED_TO), "loss"] = np.nan
    curves["loss"] = curves["loss"].round(5)
    rest = curves[(curves["run"] == "wsd_16k") & (curves["step"] > LOGGED_TO)]
    new = _rows("cosine_16k", schedules.cosine(16000, PEAK, FLOOR, WARMUP))
    sched = pd.concat([rest[["run", "step", "lr", "N"]], new], ignore_index=True)
    return curves, sched


def _write(df: pd.DataFrame, name: str) -> None:
    p = OUT / name
    p.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(p, index=False, float_format="%.6g")
    print(f"wrote {p} ({len(df)} rows)")


def main() -> None:
    curves, sched = tables()
    _write(curves, "curves/curves.csv")
    _write(sched, "curves/schedule.csv")


if __name__ == "__main__":
    main()
