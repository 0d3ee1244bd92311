"""Regenerate the simulated example inputs shipped in ``lmforecast/examples/files``.

Deterministic (fixed seeds). Run from the repository root: ``python scripts/make_examples.py``.
The FLP and salience examples were simulated earlier (see docs/flp.md and docs/salience.md).
"""

from pathlib import Path

from lmforecast.distill.simulate import simulate_distillation_runs
from lmforecast.supervised.presets import PRESETS
from lmforecast.supervised.simulate import simulate_supervised_runs

OUT = Path(__file__).resolve().parents[1] / "src" / "lmforecast" / "examples" / "files"

runs = simulate_supervised_runs(PRESETS["busbridge2025"]["params"], noise=0.005, seed=0)
runs.to_csv(OUT / "supervised" / "runs.csv", index=False, float_format="%.8g")

distill = simulate_distillation_runs(n_runs=200, seed=0)  # a quick-to-fit subset of the design
distill[["N_S", "D_S", "N_T", "D_T", "L_T", "L_S", "protocol"]].to_csv(
    OUT / "distill" / "distill_runs.csv", index=False, float_format="%.8g"
)
print("wrote", OUT, len(runs), len(distill))

# candidate teachers for `distill choose-teacher` (Chinchilla-optimal, 20 tokens per parameter)
teachers = [(n, 20 * n) for n in (1e9, 3e9, 7e9, 1.4e10, 3e10)]
with open(OUT / "distill" / "teachers.csv", "w") as fh:
    fh.write("N_T,D_T\n" + "".join(f"{n:.6g},{d:.6g}\n" for n, d in teachers))
