"""Schedule planning under a fitted curve law: which learning-rate schedule, for a step budget,
ends at the lowest loss (the use the MPL paper makes of its law, Luo et al. 2025 Sec. 5, and
the WSD practitioner's question, Hägele et al. 2024 Sec. 3-4).

`plan_schedules` forecasts the final loss of the named schedules (`schedules.NAMES`), scans the
WSD cooldown fraction for the best one (a grid of 0.05, then a grid of 0.0025 around its best
point), and searches the best monotone schedule: after warmup the learning rate is piecewise
linear through `KNOTS` (denser towards the end), each knot keeping a fraction of the previous
one's height above the floor, so every candidate is non-increasing and within [floor, peak];
L-BFGS-B optimises those fractions on the law's final loss, started from the best WSD (the MPL
paper's optimised schedules, Sec. 5 and Fig. 7, look like WSD with a cooldown of roughly 10-20%
of the steps). Every choice comes with its forecast final loss and interval
(`CurveLaw.forecast(..., final=True)`).

Two choices are "indistinguishable" when the interval of the difference of their final log
losses over the fit's own resampling draws (the same draws for both, so their shared uncertainty
cancels) contains 0, or when that difference leans on a parameter direction the fitted curves do
not identify. A fit without draws (``n_boot=0``) falls back to overlapping intervals, which is
conservative (overlapping intervals can hide a resolved difference); `SchedulePlan.comparison`
says which was used.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import InputError, did_you_mean, fmt_value
from ..uncertainty.percentile import percentile_interval
from . import schedules
from .fit import RunPoints, run_schedule
from .laws import value
from .model import model_key

#: Knot positions of the monotone search, as fractions of the post-warmup steps.
KNOTS = (0.0, 0.5, 0.7, 0.8, 0.87, 0.93, 0.97, 1.0)
COARSE = np.round(np.linspace(0.0, 1.0, 21), 4)  # cooldown fractions of the first scan
FINE_STEP = 0.0025  # spacing of the second scan, around the first one's best fraction
MAX_ROWS = 4000  # rows of a planned schedule (sparser rows interpolate linearly)
PREFIX = "plan/"  # planned runs are named apart from the fitted runs (never continued)
NULL_TOL = 1e-6


@dataclass
class SchedulePlan:
    """What `plan_schedules` found: one row per schedule in `table` (schedule,
    cooldown_fraction, loss, lo, hi, indistinguishable_from_best), the best WSD cooldown, the
    best monotone schedule, the settings, notes, and each schedule's ``step, lr`` table
    (`lr_tables`)."""

    table: pd.DataFrame
    best_cooldown: dict
    best_monotone: dict
    steps: int
    peak_lr: float
    floor_lr: float
    warmup_steps: int
    level: float
    model: dict = field(default_factory=dict)
    comparison: str = "draws"
    notes: list = field(default_factory=list)
    lr_tables: dict = field(default_factory=dict, repr=False)  # schedule -> its step, lr table

    def to_dict(self) -> dict:
        rows = [
            {
                "schedule": r["schedule"],
                "cooldown_fraction": _num(r["cooldown_fraction"]),
                "loss": float(r["loss"]),
                "interval": _iv(r["lo"], r["hi"]),
                "indistinguishable_from_best": bool(r["indistinguishable_from_best"]),
            }
            for r in self.table.to_dict("records")
        ]
        return {
            "steps": self.steps,
            "peak_lr": self.peak_lr,
            "floor_lr": self.floor_lr,
            "warmup_steps": self.warmup_steps,
            "level": self.level,
            "model": self.model,
            "schedules": rows,
            "best_cooldown": self.best_cooldown,
            "best_monotone": self.best_monotone,
            "comparison": self.comparison,
            "notes": list(self.notes),
        }

    def summary(self) -> str:
        lines = [
            f"schedules for {self.steps:,} steps (peak lr {self.peak_lr:.4g}, floor "
            f"{self.floor_lr:.4g}, warmup {self.warmup_steps:,}): forecast final loss and "
            f"{100 * self.level:g}% interval"
        ]
        best = int(np.argmin(self.table["loss"].to_numpy()))
        for i, r in enumerate(self.table.itertuples(index=False)):
            iv = _iv(r.lo, r.hi)
            shown = "not identified" if iv is None else f"[{iv[0]:.4f}, {iv[1]:.4f}]"
            tag = (
                "lowest"
                if i == best
                else ("indistinguishable from the lowest" if r.indistinguishable_from_best else "")
            )
            lines.append(f"  {r.schedule:<26} {r.loss:.4f}  {shown:<20} {tag}".rstrip())
        b, m = self.best_cooldown, self.best_monotone
        lines.append(
            f"best WSD cooldown: the last {b['fraction']:.1%} of the steps "
            f"({b['steps']:,} steps), final loss {b['loss']:.4f}"
        )
        lines.append(f"best monotone schedule: {m['source']}, final loss {m['loss']:.4f}")
        return "\n".join(lines)


def _num(v):
    return None if v is None or not np.isfinite(v) else float(v)


def _iv(lo, hi):
    return [float(lo), float(hi)] if np.isfinite([lo, hi]).all() else None


def _knots(df: pd.DataFrame, most: int = 60) -> dict:
    """A schedule's rows as JSON lists, thinned to at most about `most` rows (the last kept)."""
    take = np.unique(np.append(np.arange(0, len(df), max(1, len(df) // most)), len(df) - 1))
    return {
        "step": df["step"].to_numpy()[take].astype(int).tolist(),
        "lr": df["lr"].to_numpy(float)[take].tolist(),
    }


# ---- the model to plan for -------------------------------------------------------------------
def _fitted_runs(est) -> pd.DataFrame:
    """The fitted runs' schedules (run, step, lr, N) from the knots the fit keeps."""
    parts = []
    for name, r in est.runs_.items():
        steps, lr = r["knots"]
        n = est.models_.get(r["model"], {}).get("N")
        parts.append(
            pd.DataFrame(
                {
                    "run": str(name),
                    "step": np.asarray(steps, float),
                    "lr": np.asarray(lr, float),
                    "N": np.nan if n is None else float(n),
                }
            )
        )
    return pd.concat(parts, ignore_index=True)


def _model_runs(est, run) -> tuple[float | None, pd.DataFrame]:
    """(N of the model or None, its runs' schedules): `run`'s model, or the fit's only one."""
    t = _fitted_runs(est)
    names = list(dict.fromkeys(t["run"]))
    if run is not None:
        if str(run) not in names:
            raise InputError(
                f"run {str(run)!r} is not a run of the fit (runs: "
                f"{', '.join(names[:8])}){did_you_mean(run, names)}"
            )
        n_run = float(t.loc[t["run"] == str(run), "N"].iloc[0])
        t = t[t["N"].isna()] if np.isnan(n_run) else t[t["N"] == n_run]
    ns = np.unique(t["N"].dropna().to_numpy(float))
    if len(ns) > 1:
        raise InputError(
            f"the fit holds {len(ns)} model sizes (N = "
            f"{', '.join(fmt_value(v) for v in ns[:6])}); name a run of the model "
            "to plan for (run=, --run)"
        )
    return (float(ns[0]) if len(ns) else None), t


def _after_peak(g: pd.DataFrame) -> pd.DataFrame:
    """A run's knots from the first one at its peak learning rate on."""
    g = g.sort_values("step", kind="stable")
    at = np.flatnonzero(g["lr"].to_numpy(float) >= g["lr"].max() * (1 - 1e-9))
    return g.iloc[int(at[0]) :]


def _settings(
    mine: pd.DataFrame, peak, floor, warmup, notes, prior: dict | None = None
) -> tuple[float, float, int]:
    """Peak lr, floor lr and warmup: given, else the model's fitted runs' (the highest peak,
    the lowest lr after the warmups, the median warmup). `prior` is the model's saved prior,
    if its decay response was held at one (then that response comes from the prior)."""
    runs = [g for _, g in mine.groupby("run", sort=False)]
    peak = float(mine["lr"].max()) if peak is None else float(peak)
    if floor is None:
        floor = float(min(_after_peak(g)["lr"].min() for g in runs))
        if floor >= peak * (1 - 1e-9):
            floor = 0.1 * peak
            said = (
                f"the fitted runs never lower their learning rate: the floor is set to 10% "
                f"of the peak ({floor:.4g})"
            )
            if prior:
                said += (
                    f"; they identify L0, A and alpha, and how the loss answers a decay "
                    f"(B, C, beta, gamma) comes from the prior ({prior.get('source')}), "
                    "not from these runs"
                )
            else:
                said += ", and how the loss answers a decay is not identified from them"
            notes.append(said)
    if warmup is None:
        warmup = int(round(float(np.median([_after_peak(g)["step"].iloc[0] for g in runs]))))
    return peak, float(floor), int(warmup)


# ---- the law's final loss of many schedules at once ------------------------------------------
class _Law:
    """Final losses (and log-loss gradients in fit space) of planned schedules under one fitted
    model: one design and one evaluation for a batch of schedules (O(T) each)."""

    def __init__(self, est, n):
        keys = list(est.models_)
        key = model_key(n) if n is not None else (keys[0] if len(keys) == 1 else None)
        if key not in est.models_:
            raise InputError(
                "the model to plan for has no fitted parameters (no logged loss after its warmup)"
            )
        self.est, self.m = est, est.models_[key]
        self.z = np.asarray(self.m["z"], float)

    def _design(self, tables: list[pd.DataFrame]):
        parts = [
            RunPoints(f"s{i}", run_schedule(df, f"s{i}"), np.array([float(df["step"].iloc[-1])]))
            for i, df in enumerate(tables)
        ]
        return self.est._design(parts)

    def final(self, tables: list[pd.DataFrame]) -> np.ndarray:
        return np.asarray(value(self.est.law, self.z, self._design(tables)), float)

    def log_draws(self, tables: list[pd.DataFrame]):
        """(S, R) final log losses over the fit's resampling draws, and (S, P) gradients."""
        pred, J = value(self.est.law, self.z, self._design(tables), jac=True)
        Jl = J / pred[:, None]
        reps = np.asarray(self.m["replicates"], float)
        if reps.size == 0:
            return None, Jl
        return np.log(pred)[:, None] + Jl @ reps.T, Jl


def _best_cooldown(law: _Law, wsd) -> float:
    """The WSD cooldown fraction with the lowest final loss (`wsd(f)` builds the schedule): a
    coarse grid, then a fine one around its best point (every fraction of both grids is
    evaluated: no local search)."""
    losses = law.final([wsd(f) for f in COARSE])
    c = float(COARSE[int(np.argmin(losses))])
    fine = np.round(np.arange(max(c - 0.05, 0.0), min(c + 0.05, 1.0) + 1e-12, FINE_STEP), 6)
    losses = law.final([wsd(f) for f in fine])
    return float(fine[int(np.argmin(losses))])


def _heights(x: np.ndarray, peak: float, floor: float) -> np.ndarray:
    """Knot learning rates from the peak: knot k keeps 1 - x_k of knot k-1's height above the
    floor (x in [0, 1]: non-increasing, within [floor, peak])."""
    return floor + (peak - floor) * np.concatenate([[1.0], np.cumprod(1.0 - x)])


def _best_monotone(law: _Law, steps, peak, floor, warmup, start: pd.DataFrame):
    """(schedule, final loss) of the best piecewise-linear non-increasing schedule."""
    knots = np.unique(np.round(warmup + np.asarray(KNOTS) * (steps - warmup)).astype(np.int64))
    knots = knots[knots >= 1]
    if len(knots) < 3 or not peak > floor:
        return None
    s_lr = np.interp(knots, start["step"].to_numpy(float), start["lr"].to_numpy(float))
    h = np.clip((s_lr - floor) / (peak - floor), 1e-6, 1.0)
    x0 = np.clip(1.0 - h[1:] / h[:-1], 0.0, 1.0)

    def table(x):
        return pd.DataFrame({"step": knots, "lr": _heights(np.clip(x, 0, 1), peak, floor)})

    def f_and_grad(x, eps=1e-4):  # forward differences, every perturbation in one evaluation
        xs = [x] + [
            x + eps * np.eye(len(x))[i] * (1 if x[i] + eps <= 1 else -1) for i in range(len(x))
        ]
        v = law.final([table(xi) for xi in xs])
        sign = np.where(x + eps <= 1, 1.0, -1.0)
        return float(v[0]), (v[1:] - v[0]) / (eps * sign)

    from scipy import optimize  # only the monotone search needs it

    res = optimize.minimize(
        f_and_grad,
        x0,
        jac=True,
        method="L-BFGS-B",
        bounds=[(0.0, 1.0)] * len(x0),
        options={"maxiter": 30},
    )
    return table(res.x), float(res.fun)


def _same_as_best(law: _Law, tables, lo, hi, best, level):
    """Whether each schedule is indistinguishable from the best one (see the module doc)."""
    draws, Jl = law.log_draws(tables)
    if draws is None:
        ok = np.isfinite(lo) & np.isfinite(hi)
        same = ~ok | ~ok[best] | ((lo <= hi[best]) & (hi >= lo[best]))
        same[best] = True
        return same, "overlap"
    diff = draws - draws[best]
    q_lo, q_hi = percentile_interval(diff, level, axis=1)
    point = np.log(law.final(tables)) - np.log(law.final([tables[best]]))[0]
    same = (np.minimum(q_lo, point) <= 0) & (np.maximum(q_hi, point) >= 0)
    null = np.asarray(law.m["null"], float)
    if null.size:  # a difference along a direction the curves do not identify
        dj = Jl - Jl[best]
        same |= np.abs(dj @ null.T).max(axis=1) > NULL_TOL * np.maximum(
            np.linalg.norm(dj, axis=1), 1e-300
        )
    same[best] = True
    return same, "draws"


def _plan_notes(raw: list[str], notes: list[str]) -> None:
    """The forecast's notes about the planned runs, once each (not once per schedule); notes
    about the warmup rows (which plan the schedule, not a forecast) are left out."""
    seen = set()
    for n in raw:
        text = n.split(": ", 1)[1] if n.startswith(f"run '{PREFIX}") else n
        if "inside the warmup" in text or text in seen:
            continue
        seen.add(text)
        notes.append(f"planned schedules: {text}" if text != n else n)


def plan_schedules(
    est,
    steps,
    *,
    run=None,
    peak_lr=None,
    floor_lr=None,
    warmup_steps=None,
    level=0.9,
    decay="linear",
) -> SchedulePlan:
    """Compare schedules of `steps` steps for one model under the fitted `CurveLaw` `est`
    (see the module doc). `peak_lr`, `floor_lr` and `warmup_steps` default to the fitted
    runs' (those of `run`'s model when given); `decay` is the WSD cooldown's shape, linear
    or exponential ("exp", which needs a floor above 0)."""
    if "models_" not in getattr(est, "__dict__", {}):
        raise InputError("plan_schedules needs a fitted CurveLaw")
    try:
        steps = int(steps)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"steps must be a whole number, got {fmt_value(steps)}") from None
    if not 2 <= steps <= 100_000_000:
        raise InputError(f"steps must be a whole number in [2, 100,000,000], got {steps}")
    if not 0 < level < 1:
        raise InputError(f"level must lie strictly between 0 and 1, got {fmt_value(level)}")
    if warmup_steps is not None and warmup_steps != int(warmup_steps):
        raise InputError(
            f"--warmup (warmup_steps=) must be a whole number of steps, got {warmup_steps:g}"
        )
    notes: list[str] = []
    n, mine = _model_runs(est, run)
    law = _Law(est, n)
    peak, floor, warmup = _settings(
        mine, peak_lr, floor_lr, warmup_steps, notes, law.m.get("prior")
    )
    if not (np.isfinite(peak) and peak > 0 and 0 <= floor <= peak):
        raise InputError(
            f"the floor lr ({fmt_value(floor)}) must lie in [0, the peak lr "
            f"({fmt_value(peak)})] and the peak be above 0"
        )
    if not 0 <= warmup < steps:
        raise InputError(
            f"the warmup ({fmt_value(warmup)} steps) must be shorter than the "
            f"{steps:,} planned steps"
        )
    if decay not in schedules.DECAYS:
        raise InputError(f"decay must be one of {', '.join(schedules.DECAYS)}, got {decay!r}")
    if decay == "exp" and not floor > 0:
        raise InputError("an exponential cooldown needs a floor lr above 0 (it decays by a ratio)")
    every = max(1, -(-steps // MAX_ROWS))

    def wsd(f):
        return schedules.wsd(steps, peak, floor, f, warmup, decay, every=every)

    best_f = _best_cooldown(law, wsd)
    tag = "wsd" if decay == "linear" else "wsd-exp"
    # the scan's best fraction, unless it is the 20% shown anyway (one row, not two alike)
    best_name = f"{tag} f=0.2" if best_f == 0.2 else f"{tag} f={best_f:.4g} (best)"
    named = {
        "constant": schedules.constant(steps, peak, warmup, every=every),
        "cosine": schedules.cosine(steps, peak, floor, warmup, every=every),
        "linear_decay": schedules.linear_decay(steps, peak, floor, warmup, every=every),
        f"{tag} f=0.2": wsd(0.2),
        best_name: wsd(best_f),
    }
    fracs = {"constant": 0.0, f"{tag} f=0.2": 0.2, best_name: best_f}
    mono = _best_monotone(law, steps, peak, floor, warmup, named[best_name])
    if mono is not None:
        named["monotone (optimised)"] = mono[0]
    names, tables = list(named), list(named.values())
    sched = pd.concat(
        [df.assign(run=PREFIX + k)[["run", "step", "lr"]] for k, df in named.items()],
        ignore_index=True,
    )
    if n is not None:
        sched["N"] = n
    fc = est.forecast(sched, level=level, final=True)
    _plan_notes(fc.notes, notes)
    ft = fc.table.assign(run=fc.table["run"].astype(str)).set_index("run")
    ft = ft.reindex([PREFIX + k for k in names])
    loss, lo, hi = (ft[c].to_numpy(float) for c in ("loss", "lo", "hi"))
    best = int(np.argmin(loss))
    same, how = _same_as_best(law, tables, lo, hi, best, level)
    table = pd.DataFrame(
        {
            "schedule": names,
            "cooldown_fraction": [fracs.get(k, np.nan) for k in names],
            "loss": loss,
            "lo": lo,
            "hi": hi,
            "indistinguishable_from_best": same,
        }
    )
    ib = names.index(best_name)
    best_cd = {
        "fraction": best_f,
        "steps": steps - schedules.cooldown_start(steps, best_f, warmup),
        "loss": float(loss[ib]),
        "interval": _iv(lo[ib], hi[ib]),
    }
    # every schedule compared is monotone (non-increasing after warmup): the best of them
    best_mono = {
        "source": names[best],
        "loss": float(loss[best]),
        "interval": _iv(lo[best], hi[best]),
        "schedule": _knots(named[names[best]]),
    }
    tied = [k for k, s in zip(names, same, strict=True) if s and k != names[best]]
    if tied:
        why = "the difference over the same draws" if how == "draws" else "overlapping intervals"
        notes.append(
            f"{names[best]} ends lowest, but {', '.join(tied)} "
            f"{'is' if len(tied) == 1 else 'are'} indistinguishable from it at the "
            f"{100 * level:g}% level ({why})"
        )
    best_cd["decay"] = decay
    return SchedulePlan(
        table,
        best_cd,
        best_mono,
        steps,
        peak,
        floor,
        warmup,
        float(level),
        {"N": n, "run": None if run is None else str(run)},
        how,
        notes,
        named,
    )


__all__ = ["KNOTS", "SchedulePlan", "plan_schedules"]
