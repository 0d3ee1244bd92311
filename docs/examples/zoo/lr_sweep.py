"""Learning-rate evidence behind the full zoo's rule (docs/zoo.md, "Learning rate").

Trains chosen shapes with the `full` preset's settings (batch cap raised to 128, so that every
run takes about 2,000 steps) under other learning-rate rules, each into its own build folder,
and prints the final losses. Example (about 4 minutes on one core):

    python docs/examples/zoo/lr_sweep.py 2:24:20 2:48:20 --out /tmp/lr_sweep

Each shape is LAYERS:D_MODEL:TOKENS_PER_PARAM. The rules compared: the width rule alone
(0.04, 0.08 and 0.16 / d_model) and the shipped rule, 0.08 / d_model x sqrt(batch / 2).
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import pandas as pd

from lmforecast.zoo.build import build_zoo
from lmforecast.zoo.presets import RunSpec, _n, get_preset

RULES = {
    "width 0.04": dict(lr_width=0.04, lr_batch_sqrt=False),
    "width 0.08": dict(lr_width=0.08, lr_batch_sqrt=False),
    "width 0.16": dict(lr_width=0.16, lr_batch_sqrt=False),
    "width 0.08 x sqrt(batch/2)": dict(lr_width=0.08, lr_batch_sqrt=True),
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("shapes", nargs="+", help="LAYERS:D_MODEL:TOKENS_PER_PARAM")
    ap.add_argument("--out", required=True, help="a new folder for the builds")
    args = ap.parse_args()
    full = dataclasses.replace(get_preset("full"), max_batch=128)  # ~2,000 steps for every run
    specs = []
    for s in args.shapes:
        L, d, r = (float(v) for v in s.split(":"))
        L, d = int(L), int(d)
        specs.append(RunSpec(f"sup-L{L}d{d}-r{r:g}", "supervised", "bpe", L, d, int(r * _n(L, d))))
    rows = []
    for i, (rule, settings) in enumerate(RULES.items()):
        preset = dataclasses.replace(full, name=f"lr-sweep-{i}", runs=tuple(specs), **settings)
        build_zoo(preset, Path(args.out) / f"rule{i}", progress=False)
        runs = pd.read_csv(Path(args.out) / f"rule{i}" / "tables" / "runs.csv")
        rows.append(runs.assign(rule=rule)[["model", "rule", "batch", "lr", "loss", "arith"]])
    print(pd.concat(rows).sort_values(["model", "rule"]).to_string(index=False))


if __name__ == "__main__":
    main()
