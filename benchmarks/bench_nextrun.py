"""Benchmark: following `next-run` advice vs a fixed ladder, on simulated campaigns.

Truth: Hoffmann et al.'s Approach 3 law with 0.5% run-to-run scatter. Both campaigns start
from the same 10 small runs (1e7-1.6e8 params, 20 and 60 tokens/param) and add one run at a
time (each run at most `--run-budget` FLOPs) until the bootstrap 90% interval of the target's
log loss (N = 7e9, D = 1.4e11) is narrower than `--width`. Baseline: a fixed ladder at 20
tokens per parameter, sizes doubling from 1e8 (the usual hand-made ladder). Advisor: train the
top-ranked candidate of `nextrun.advise(..., goal_width=--width)` each step, told the seed
scatter `--noise`. Prints the compute each campaign spent and the ratio.

    python benchmarks/bench_nextrun.py [--seeds 3] [--width 0.05]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd

from lmforecast.isoflop.simulate import HOFFMANN
from lmforecast.laws.chinchilla import ChinchillaGamma
from lmforecast.nextrun import advise, fit_with_bootstrap, target_width

TARGET = (7e9, 1.4e11)


def observe(N, D, rng, noise):
    return float(ChinchillaGamma.loss(HOFFMANN, N, D) * np.exp(rng.normal(0, noise)))


def campaign(policy, seed, args):
    rng = np.random.default_rng(seed)
    N0 = np.array([1e7, 2e7, 4e7, 8e7, 1.6e8] * 2)
    D0 = np.r_[20 * N0[:5], 60 * N0[5:]]
    runs = pd.DataFrame(
        {"N": N0, "D": D0, "loss": [observe(n, d, rng, args.noise) for n, d in zip(N0, D0)]}
    )
    spent, k = 0.0, 0
    for step in range(args.max_steps + 1):
        fitted = fit_with_bootstrap(runs, args.boot, seed)
        w = target_width(*fitted, *TARGET)
        if w <= args.width:
            return spent, step, w, True
        if step == args.max_steps:
            break
        if policy == "advisor":
            a = advise(
                runs,
                *TARGET,
                budget=args.run_budget,
                fitted=fitted,
                seed=seed,
                goal_width=args.width,
                noise=args.noise,
            )
            N, D = a.candidates[0]["N"], a.candidates[0]["D"]
        else:  # ladder: doubling sizes at 20 tokens/param, capped by the run budget
            N = 1e8 * 2.0**k
            k += 1
            D = 20 * N
            if 6 * N * D > args.run_budget:
                N = np.sqrt(args.run_budget / 120)
                D = 20 * N
        spent += 6 * N * D
        runs.loc[len(runs)] = [N, D, observe(N, D, rng, args.noise)]
    return spent, args.max_steps, w, False


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--width", type=float, default=0.05)
    ap.add_argument("--run-budget", type=float, default=1e19)
    ap.add_argument("--boot", type=int, default=30)
    ap.add_argument("--noise", type=float, default=0.005)
    ap.add_argument("--max-steps", type=int, default=10)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    res = {"advisor": [], "ladder": []}
    for seed in range(args.seeds):
        for policy in ("advisor", "ladder"):
            t = time.perf_counter()
            spent, steps, w, ok = campaign(policy, seed, args)
            res[policy].append((spent, w, ok))
            print(
                f"seed {seed} {policy:8s}: {steps:2d} runs, {spent:.3g} FLOPs, final width "
                f"{w:.4f}, goal {'reached' if ok else 'NOT reached'} "
                f"({time.perf_counter() - t:.1f} s)",
                flush=True,
            )
    for policy, r in res.items():
        n_ok = sum(ok for _, _, ok in r)
        print(
            f"{policy}: goal width {args.width} reached in {n_ok}/{len(r)} campaigns; compute "
            f"spent {sum(c for c, _, _ in r):.3g} FLOPs; mean final width "
            f"{np.mean([w for _, w, _ in r]):.4f}"
        )
    adv = [a for a in res["advisor"]]
    lad = [b for b in res["ladder"]]
    if all(a[2] for a in adv) and sum(a[0] for a in adv) == 0:
        print(f"the starting runs already give width {args.width}: no new run needed")
    elif all(a[2] for a in adv):
        ratio = sum(b[0] for b in lad) / sum(a[0] for a in adv)
        bound = "" if all(b[2] for b in lad) else " (lower bound: the ladder had not reached it)"
        print(f"compute to reach width {args.width}: ladder / advisor = {ratio:.2f}x{bound}")
    else:
        print("the advisor did not reach the goal in every campaign: no compute ratio")


if __name__ == "__main__":
    main()
