"""Learning-rate schedules as tables of ``step, lr`` (the schedule half of the curves format).

The schedules the MPL paper (Luo et al. 2025, Sec. 4 and App. A) and the WSD studies (Hägele et
al. 2024, Sec. 3) compare: constant, cosine to a floor, warmup-stable-decay with a cooldown over
the last fraction ``f`` of the steps (linear or exponential), and linear decay; each with an
optional linear warmup from 0 to the peak. Step ``t`` (1-based) carries the learning rate used
by update ``t``; with ``every > 1`` the table keeps every ``every``-th step (and the last) and a
reader interpolates linearly between rows, which is exact for the linear pieces.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..errors import InputError, fmt_value

NAMES = ("constant", "cosine", "wsd", "linear_decay")
DECAYS = ("linear", "exp")


def _check(steps, peak_lr, floor_lr, warmup_steps, every) -> tuple[int, int, int]:
    try:
        ok = float(steps) == int(steps) and int(steps) >= 1
    except (TypeError, ValueError, OverflowError):
        ok = False
    if not ok:
        raise InputError(f"steps must be a whole number >= 1, got {fmt_value(steps)}")
    if not (math.isfinite(float(peak_lr)) and peak_lr > 0):
        raise InputError(f"peak_lr must be a positive finite number, got {fmt_value(peak_lr)}")
    if not (math.isfinite(float(floor_lr)) and 0 <= floor_lr <= peak_lr):
        raise InputError(
            f"floor_lr must lie in [0, peak_lr = {fmt_value(peak_lr)}], got {fmt_value(floor_lr)}"
        )
    w = float(warmup_steps)
    if not (math.isfinite(w) and w == int(w) and 0 <= w < int(steps)):
        raise InputError(
            f"warmup_steps must be a whole number in [0, steps = {int(steps)}), "
            f"got {fmt_value(warmup_steps)}"
        )
    if not (float(every) == int(every) and int(every) >= 1):
        raise InputError(f"every must be a whole number >= 1, got {fmt_value(every)}")
    return int(steps), int(w), int(every)


def _steps(steps: int, every: int, *corners: int) -> np.ndarray:
    """Steps 1, 1 + every, ..., the last step and the `corners` (where the schedule bends)."""
    t = np.arange(1, steps + 1, every, dtype=np.int64)
    extra = [c for c in (steps, *corners) if 1 <= c <= steps]
    return np.unique(np.append(t, extra).astype(np.int64))


def _table(t: np.ndarray, lr: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame({"step": t, "lr": lr.astype(float)})


def _warm(t: np.ndarray, peak: float, warmup: int) -> np.ndarray:
    """Linear warmup to the peak over the first `warmup` steps, then the peak."""
    return peak * np.minimum(t / warmup, 1.0) if warmup > 0 else np.full(t.shape, float(peak))


def _decay_progress(t: np.ndarray, start: int, end: int) -> np.ndarray:
    """0 at step `start`, 1 at step `end` (clipped), for the decaying part of a schedule."""
    return np.clip((t - start) / max(end - start, 1), 0.0, 1.0)


def constant(steps, peak_lr, warmup_steps=0, *, every=1) -> pd.DataFrame:
    """Constant learning rate after an optional linear warmup (MPL paper Sec. 4.1)."""
    n, w, e = _check(steps, peak_lr, 0.0, warmup_steps, every)
    t = _steps(n, e, w)
    return _table(t, _warm(t, peak_lr, w))


def cosine(steps, peak_lr, floor_lr, warmup_steps=0, *, every=1) -> pd.DataFrame:
    """Cosine from the peak (after warmup) to `floor_lr` at the last step:
    lr = floor + (peak - floor) (1 + cos(pi p)) / 2, p the post-warmup progress (MPL Sec. 4.1)."""
    n, w, e = _check(steps, peak_lr, floor_lr, warmup_steps, every)
    t = _steps(n, e, w)
    p = _decay_progress(t, w, n)
    lr = floor_lr + (peak_lr - floor_lr) * 0.5 * (1.0 + np.cos(np.pi * p))
    return _table(t, np.where(t <= w, _warm(t, peak_lr, w), lr))


def linear_decay(steps, peak_lr, floor_lr, warmup_steps=0, *, every=1) -> pd.DataFrame:
    """Linear decay from the peak (after warmup) to `floor_lr` at the last step."""
    n, w, e = _check(steps, peak_lr, floor_lr, warmup_steps, every)
    t = _steps(n, e, w)
    lr = peak_lr + (floor_lr - peak_lr) * _decay_progress(t, w, n)
    return _table(t, np.where(t <= w, _warm(t, peak_lr, w), lr))


def cooldown_start(steps: int, cooldown_fraction: float, warmup_steps: int = 0) -> int:
    """The last step at the peak of a WSD schedule: the cooldown spans the last
    ``round(f * steps)`` steps (Hägele et al. 2024 Sec. 3), never reaching into the warmup."""
    k = int(round(float(cooldown_fraction) * steps))
    return max(steps - k, warmup_steps)


def wsd(
    steps, peak_lr, floor_lr, cooldown_fraction, warmup_steps=0, decay="linear", *, every=1
) -> pd.DataFrame:
    """Warmup-stable-decay (Hägele et al. 2024 Sec. 3; MPL paper Sec. 4.1): the peak until the
    cooldown, then to `floor_lr` over the last fraction `cooldown_fraction` of the steps,
    linearly or exponentially (lr = peak (floor/peak)^p; needs floor_lr > 0)."""
    n, w, e = _check(steps, peak_lr, floor_lr, warmup_steps, every)
    f = float(cooldown_fraction)
    if not (math.isfinite(f) and 0.0 <= f <= 1.0):
        raise InputError(f"cooldown_fraction must lie in [0, 1], got {fmt_value(f)}")
    if decay not in DECAYS:
        raise InputError(f"decay must be one of {', '.join(DECAYS)}, got {decay!r}")
    if decay == "exp" and floor_lr <= 0:
        raise InputError("an exponential cooldown needs floor_lr > 0 (it decays by a ratio)")
    s = cooldown_start(n, f, w)
    t = _steps(n, e, w, s)  # the corners of the schedule kept exact
    p = _decay_progress(t, s, n) if s < n else np.zeros(t.shape)
    if decay == "linear":
        lr = peak_lr + (floor_lr - peak_lr) * p
    else:
        lr = peak_lr * (floor_lr / peak_lr) ** p
    return _table(t, np.where(t <= w, _warm(t, peak_lr, w), lr))


def make(
    name: str,
    steps,
    peak_lr,
    floor_lr=0.0,
    warmup_steps=0,
    *,
    cooldown_fraction=0.2,
    decay="linear",
    every=1,
) -> pd.DataFrame:
    """The schedule called `name` (one of `NAMES`), with the knots it does not use ignored."""
    if name == "constant":
        return constant(steps, peak_lr, warmup_steps, every=every)
    if name == "cosine":
        return cosine(steps, peak_lr, floor_lr, warmup_steps, every=every)
    if name == "linear_decay":
        return linear_decay(steps, peak_lr, floor_lr, warmup_steps, every=every)
    if name == "wsd":
        return wsd(steps, peak_lr, floor_lr, cooldown_fraction, warmup_steps, decay, every=every)
    raise InputError(f"unknown schedule {name!r}; use one of {', '.join(NAMES)}")
