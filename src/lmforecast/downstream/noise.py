"""The downstream interval's error terms and their weights (docs/downstream_validation.md).

A forecast's replicates are the bootstrap replicates of its fitted stages, centred on the point
forecast (`centred`), plus one Gaussian draw per replicate whose variance adds the evaluation
noise of one score, the ensemble members' disagreement, a term proportional to the forecast's
gain over the largest fitted model and, for a checkpoint trained on fewer tokens than the
largest fitted model's final, a term proportional to how many fewer (`undertraining`; stage 1
in compute reads such a checkpoint as a final of the same compute), all clipped to the
metric's range (`noisy_replicates`).
Every weight below is chosen by the pre-registered nested protocol on its selection splits.
"""

from __future__ import annotations

import zlib

import numpy as np

from ..uncertainty.normal import normal_nodes

SPREAD_WEIGHT = 0.0  # weight of the members' variance in the interval (the ensemble's only)
# sd of the error per point of forecast gain, per method: the ensemble's chosen with the other
# knobs; each member's by the same rule with the ensemble's other knobs fixed (a single member
# has no spread term, so it leans on this one)
GAIN_SD = {"ensemble": 0.5, "sigmoid": 1.0, "local-linear": 1.3, "trend": 0.4}
# methods the nested protocol does not score (flp, fp, sigmoid-chance, persistence): the value
# the protocol started from
OTHER_GAIN_SD = 1.0
# weight of the harness stderr's variance: the target is scored on the same items as the fitted
# models, so part of the item-sampling noise is shared with the fit
EVAL_WEIGHT = 1.0
# where the bootstrap replicates are centred: "median" moves their median onto the point forecast
# (a chained nonlinear fit's percentile range sat below its own point: on the nested selection
# rows the point lay at 42% of its interval on average); "none" keeps them as drawn
CENTRE = "median"
CENTRES = ("none", "median", "mean")
# sd (points) per ln unit of D below the largest fitted model's final tokens (mid-training):
# chosen on the selection splits' trajectories (an amendment of the protocol)
CHECKPOINT_SD = 3.0
NO_STDERR_SD = 1.0  # points: the evaluation noise assumed where the table has no stderr


def constants_line() -> str:
    """The interval constants in one line (generated docs carry it; a test compares)."""
    gains = " / ".join(f"{m} {g:g}" for m, g in GAIN_SD.items())
    return (
        f"SPREAD_WEIGHT {SPREAD_WEIGHT:g}, GAIN_SD {gains} (others {OTHER_GAIN_SD:g}), "
        f"EVAL_WEIGHT {EVAL_WEIGHT:g}, CENTRE {CENTRE}, CHECKPOINT_SD {CHECKPOINT_SD:g}"
    )


def gain_sd_for(method: str) -> float:
    """The interval's gain term for `method` (the selected one, for `auto`)."""
    return GAIN_SD.get(method, OTHER_GAIN_SD)


def noise_draws(B: int, seed: int) -> np.ndarray:
    """(B, 1) standard normal scores at the mid-quantiles (b + 1/2) / B, b = 0..B-1
    (`uncertainty.normal.normal_nodes`), in an order
    set by `seed`: one draw per replicate, shared by every point, with the exact quantiles of a
    normal (B random draws put the 5% and 95% points of 200 at -1.55 and +1.34 for seed 0)."""
    z = normal_nodes(B)
    return np.random.default_rng(int(seed) + 7).permutation(z)[:, None]


def centred(R, point, how: str = CENTRE) -> np.ndarray:
    """Bootstrap replicates R (B, n), clipped to the metric's range [0, 100] like the point
    forecast (n,), moved so that their mean ("mean") or median ("median") at each point equals
    the point; "none" returns them unchanged (a member fitted far below its range gives
    replicates of -500 points: centred unclipped on a point clipped at 0 they would land at 100)."""
    R = np.asarray(R, float)
    if how == "none":
        return R
    if how not in CENTRES:
        raise ValueError(f"centre must be one of {', '.join(CENTRES)}, got {how!r}")
    R = np.clip(R, 0.0, 100.0)
    with np.errstate(invalid="ignore"):
        mid = np.nanmean(R, axis=0) if how == "mean" else np.nanmedian(R, axis=0)
    return R - mid[None, :] + np.asarray(point, float)[None, :]


def undertraining(D, final_tokens) -> np.ndarray:
    """ln(final_tokens / D) where a forecast's token count D lies below the largest fitted
    model's final tokens, else 0; zeros when either is unknown (a forecast asked by FLOPs, or a
    table without token counts)."""
    if D is None or final_tokens is None:
        return np.zeros(np.size(D) if D is not None else 0)
    D = np.atleast_1d(np.asarray(D, float))
    return np.maximum(0.0, np.log(float(final_tokens) / D))


def noisy_replicates(R, var, gain, gain_sd: float, z, floor=0.0) -> np.ndarray:
    """R + z sqrt(var + (gain_sd gain)^2), clipped to [floor, 100] points: the metric's range,
    its lower end raised to the score floor (`reach.score_floor`; per point, (n,)) where known."""
    sd = np.sqrt(var + (gain_sd * gain) ** 2)
    return np.clip(R + z * sd[None, :], np.maximum(floor, 0.0), 100.0)


def floor_at(floor, point) -> np.ndarray:
    """The lower clip per point: `floor` where the point lies at or above it, else 0. A point
    below the score floor is already outside anything measured (`reach` warns); clipping its
    replicates there would collapse the interval onto the point from below (piqa at 1e18 FLOPs
    from Pythia 70M-1.4B: 43.67 [43.67, 67.32]), so its interval keeps its whole spread."""
    point = np.asarray(point, float)
    return np.where(point >= floor, floor, 0.0)


def task_noise_draws(B: int, seed: int, task: str) -> np.ndarray:
    """(B, 1) normal scores as `noise_draws`, in an order set by `seed` and the task's name: the
    evaluation noise of one task, independent of another task's and of the shared draw."""
    return noise_draws(B, int(seed) + 1 + zlib.crc32(str(task).encode()) % 100_003)


def knob_replicates(
    R,
    var,
    spread,
    point,
    gain,
    *,
    seed: int,
    eval_weight: float,
    spread_weight: float,
    gain_sd: float,
    centre: str,
    extra_var=0.0,
    eval_task=None,
    floor: float = 0.0,
) -> np.ndarray:
    """The interval's replicates from `DownstreamForecaster.interval_parts`' pieces under the
    given knobs (`extra_var`: the checkpoint term): centred, one noise draw per replicate.
    `eval_task` (a task name) given: the evaluation noise takes that task's own draws
    (`task_noise_draws`; a task average: harness noise is independent across tasks' items),
    the other terms the shared one; `floor`: the lower clip (`reach.score_floor`), dropped
    (0) where the point itself lies below it (`floor_at`)."""
    z = np.broadcast_to(noise_draws(R.shape[0], seed), np.shape(R))
    floor = floor_at(floor, point)
    Rc = centred(R, point, centre)
    if eval_task is None:
        v = eval_weight * var + spread_weight * spread + extra_var
        return noisy_replicates(Rc, v, gain, gain_sd, z, floor)
    ez = task_noise_draws(R.shape[0], seed, eval_task)
    Rc = Rc + np.broadcast_to(ez, np.shape(R)) * np.sqrt(eval_weight * var)[None, :]
    return noisy_replicates(Rc, spread_weight * spread + extra_var, gain, gain_sd, z, floor)
