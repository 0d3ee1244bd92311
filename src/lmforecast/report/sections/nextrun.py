"""Report section: the next run to train, on the bundled example campaign (10 small runs
simulated from Hoffmann et al.'s law with 0.5% scatter; target N = 7e9, D = 1.4e11)."""

from __future__ import annotations

import pandas as pd

from ...data.io import read_table
from ...examples import path
from ...nextrun import advise, fit_with_bootstrap
from ..builder import ReportContext, Section

TARGET = (7e9, 1.4e11)
GOAL_WIDTH, NOISE, BUDGET = 0.05, 0.005, 1e19  # the example's true scatter is 0.5%


def build_section(ctx: ReportContext) -> Section:
    sec = Section("nextrun", "The next run to train")
    runs = read_table(path("nextrun/runs.csv"))
    fitted = fit_with_bootstrap(runs, 20 if ctx.quick else 60, ctx.seed)
    kw = {"budget": BUDGET, "fitted": fitted, "seed": ctx.seed}
    per_flop = advise(runs, *TARGET, **kw)
    to_goal = advise(runs, *TARGET, goal_width=GOAL_WIDTH, noise=NOISE, **kw)
    sec.text(
        "The runs so far are fitted with the Chinchilla law and bootstrapped; observing a "
        "candidate run updates the variance of the target's log-loss forecast as an ensemble "
        "Kalman step, v_t' = v_t - s^2 / (v_c + sigma^2). Candidates (8 sizes from the smallest "
        f"run to the target, 5-80 tokens per parameter, at most {BUDGET:.0e} FLOPs) are ranked "
        "by width shrinkage per FLOP, or, with a goal width, by the FLOPs needed to reach it. "
        f"Example: 10 runs of 1e7-1.6e8 parameters, target N = {TARGET[0]:.3g}, "
        f"D = {TARGET[1]:.3g}. Ranked per FLOP: {per_flop.message}. With goal width "
        f"{GOAL_WIDTH:g} and run scatter {NOISE:g}: {to_goal.message}."
    )
    top = pd.DataFrame(to_goal.candidates[:8])
    sec.table(
        top[["N", "D", "flops", "expected_width", "saturation_width", "flops_to_goal", "p_best"]],
        f"Best candidates for goal width {GOAL_WIDTH:g} (current 90% width "
        f"{to_goal.current_width:.4f}); inf: the goal is out of reach with runs of that size; "
        "p_best: the share of resamples of the bootstrap refits in which the run is the advised "
        "one (how firmly the refits pick it)",
    )
    sec.numbers = {
        "target": to_goal.target,
        "goal_width": GOAL_WIDTH,
        "noise": NOISE,
        "budget": BUDGET,
        "per_flop": per_flop.contract(),
        "to_goal": to_goal.contract(),
    }
    return sec
