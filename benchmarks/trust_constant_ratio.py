"""Evidence: on a ladder at one tokens-per-parameter ratio, is the 1-D compute law a better form?

A ladder trained at a constant D/N (e.g. 20 tokens per parameter) cannot identify how the loss
splits between N and D, so the 1-D compute law E + A (6ND)^-a (form `compute`) is a natural
fallback for the automatic form. This script builds such ladders from the real suites of
`benchmarks/trust_suites.py`: per model size, the run whose D/N is closest to a target ratio
(within 0.15 decade), keeping ladders with at least 6 sizes; it fits the smaller sizes and
forecasts the largest one and the two largest, with `chinchilla`, the default (`auto`) and
`compute`, point fits only. Result (docs/trust_validation.md): `chinchilla` and `auto` miss by
less than `compute` on these ladders, so the automatic form falls back to `compute` only where
a law in N and D cannot be fitted at all (4 runs).

    python benchmarks/trust_constant_ratio.py [--shared ../shared/data]
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lmforecast.supervised import SupervisedScalingLaw  # noqa: E402
from trust_suites import ROOT, load_all  # noqa: E402

RATIOS = (1.3, 2.0)  # log10 D/N: 20 and 100 tokens per parameter
FORMS = {"chinchilla": "chinchilla", "auto": "auto", "compute": "compute"}


def ladder(df: pd.DataFrame, log_ratio: float, tol: float = 0.15) -> pd.DataFrame:
    """Per size, the run closest to the ratio; sizes farther than `tol` decades dropped."""
    lr = np.log10(df["D"] / df["N"])
    pick = df.loc[(lr - log_ratio).abs().groupby(df["N"]).idxmin()]
    near = (np.log10(pick["D"] / pick["N"]) - log_ratio).abs() < tol
    return pick[near].sort_values("N").reset_index(drop=True)


def mean_abs_pct(form: str, train: pd.DataFrame, test: pd.DataFrame) -> float:
    m = SupervisedScalingLaw(form, intervals=False)
    m.fit(N=train["N"].to_numpy(), D=train["D"].to_numpy(), loss=train["loss"].to_numpy())
    pred = m.predict(test["N"].to_numpy(), test["D"].to_numpy())
    return float(np.mean(np.abs(pred / test["loss"].to_numpy() - 1)) * 100)


def run(shared: Path, ratios=RATIOS, forms=tuple(FORMS), holds=(1, 2)) -> pd.DataFrame:
    rows = []
    suites = load_all(shared)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for ratio in ratios:
            for suite, subs in suites.items():
                for sub, df in subs.items():
                    lad = ladder(df, ratio)
                    if lad["N"].nunique() < 6:
                        continue
                    for hold in holds:
                        train, test = lad.iloc[:-hold], lad.iloc[-hold:]
                        if len(train) < 5:  # chinchilla's 5 parameters
                            continue
                        errs = {k: mean_abs_pct(FORMS[k], train, test) for k in forms}
                        rows.append({"tokens_per_param": round(10**ratio), "suite": suite,
                                     "sub": sub, "held_out": hold, **errs})  # fmt: skip
    return pd.DataFrame(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "data")
    args = ap.parse_args(argv)
    t = run(args.shared)
    g = t.groupby("tokens_per_param")[list(FORMS)].agg(["mean", "median"])
    print(f"{len(t)} ladder forecasts; mean absolute % error of the held-out sizes:")
    print(g.round(2).to_string())
    for f in ("chinchilla", "auto"):
        print(f"compute beats {f} on {(t['compute'] < t[f]).sum()} of {len(t)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
