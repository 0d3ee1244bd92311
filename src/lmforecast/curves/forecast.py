"""Forecasts of a fitted `CurveLaw` along schedules, with intervals and notes.

Three kinds: (a) a run of the fit continued along its planned schedule (its own offset kept);
(b) a new run of a fitted model (the model's shared parameters); (c) a run of a model size not
fitted, from parameters read as power laws in N across the fitted sizes (no interval: the
across-size reading is not calibrated, see docs/curves.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..display import SummaryDisplay
from ..errors import InputError, fmt_value
from ..store import dump_json
from ..uncertainty.normal import normal_quantile
from ..uncertainty.percentile import percentile_interval
from ..uncertainty.resample import residual_draws
from .fit import RunPoints, run_schedule
from .laws import LAWS, to_fit, to_natural, unit_jacobian, value

FAR_PAST = 1.25  # a step beyond this multiple of the model's last fitted step is noted
LR_SLACK = 0.01  # learning rates outside the fitted range by more than 1% are noted
WIDE = 1.5  # an interval whose hi/lo exceeds this ratio is reported as not identified
NULL_TOL = 1e-6


@dataclass
class CurveForecast(SummaryDisplay):
    """Forecast losses with intervals: `table` (run, step, loss, lo, hi; NaN bounds where the
    interval is not identified) and `notes` (warnings in words)."""

    table: pd.DataFrame
    notes: list[str] = field(default_factory=list)
    level: float = 0.9

    def to_dict(self) -> dict:
        recs = []
        for r in self.table.itertuples(index=False):
            iv = (
                None
                if not (np.isfinite(r.lo) and np.isfinite(r.hi))
                else [float(r.lo), float(r.hi)]
            )
            recs.append({"run": r.run, "step": _num(r.step), "loss": float(r.loss), "interval": iv})
        return {"forecasts": recs, "notes": list(self.notes)}

    def summary(self) -> str:
        t = self.table
        lines = [f"{len(t)} forecast(s), {self.level:.0%} intervals"]
        for r in t.groupby("run", sort=False).tail(1).itertuples(index=False):
            iv = "not identified" if not np.isfinite(r.lo) else f"[{r.lo:.4f}, {r.hi:.4f}]"
            lines.append(f"  {r.run} step {r.step:.0f}: {r.loss:.4f} {iv}")
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)

    def contract(self) -> dict:
        """What `curves predict --json` prints: `to_dict` and the interval level."""
        return {**self.to_dict(), "level": self.level}

    def table_text(self) -> str:
        """Every forecast row as an aligned text table: run, step, loss and its interval (or
        "not identified")."""

        def num(v, fmt):
            return "-" if v != v else format(float(v), fmt)

        lines = [f"{'run':<24} {'step':>10} {'loss':>9}  {100 * self.level:g}% interval"]
        for r in self.table.itertuples(index=False):
            iv = "not identified" if r.lo != r.lo else f"[{num(r.lo, '.4f')}, {num(r.hi, '.4f')}]"
            lines.append(f"{str(r.run):<24} {num(r.step, '.0f'):>10} {num(r.loss, '.4f'):>9}  {iv}")
        return "\n".join(lines)

    def file_text(self, suffix: str) -> str:
        """The forecasts as a file of type `suffix`: the JSON `contract` for ".json", else the
        table as CSV (run, step, loss, lo, hi)."""
        if suffix.lower() == ".json":
            return dump_json(self.contract())
        return self.table.to_csv(index=False)

    def ledger_record(self, schedule: pd.DataFrame, method: str) -> dict:
        """What the forecast ledger registers: each run's final forecast (`final_forecasts`),
        the level and the law (`method`)."""
        return {"forecasts": self.final_forecasts(schedule), "level": self.level, "method": method}

    def final_forecasts(self, schedule: pd.DataFrame) -> list[dict]:
        """Each run's forecast at its last step, as the ledger registers it: the run, the loss
        with its interval (None where not identified), and N and the tokens D at the
        schedule's last step where it gives them."""
        last = self.table.sort_values("step", kind="stable").groupby("run", sort=False).tail(1)
        ends = schedule.sort_values("step", kind="stable").groupby("run", sort=False).tail(1)
        ends = ends.set_index(ends["run"].astype(str))

        def value(run, col):
            v = ends[col].get(run, np.nan) if col in ends.columns else np.nan
            return float(v) if np.isfinite(v) else None

        return [
            {
                "model": str(r.run),
                "task": "loss",
                "loss": float(r.loss),
                "interval": [float(r.lo), float(r.hi)] if np.isfinite([r.lo, r.hi]).all() else None,
                "N": value(str(r.run), "N"),
                "D": value(str(r.run), "tokens"),
                "level": self.level,
            }
            for r in last.itertuples(index=False)
        ]


def _num(v):
    f = float(v)
    return int(f) if f.is_integer() else f


def _model_for(est, run: str, rows: pd.DataFrame):
    """(model key or None, theta fit-space, continued?) for one schedule run."""
    info = est.runs_.get(run)
    if info is not None:
        return info["model"], np.asarray(est.models_[info["model"]]["z"]), True
    keys = list(est.models_)
    n = rows["N"].to_numpy(float) if "N" in rows.columns else np.array([np.nan])
    nval = n[np.isfinite(n)][0] if np.isfinite(n).any() else None
    if nval is None:
        if len(keys) == 1:
            return keys[0], np.asarray(est.models_[keys[0]]["z"]), False
        raise InputError(
            f"schedule: run {run!r}: column 'N': the fit has {len(keys)} models "
            f"({', '.join(keys)}); give the run's N"
        )
    key = repr(float(nval))
    if key in est.models_:
        return key, np.asarray(est.models_[key]["z"]), False
    return None, across_sizes(est, float(nval), run), False


def across_sizes(est, n: float, run: str) -> np.ndarray:
    """Fit-space parameters at model size `n`: each natural parameter a power law in N (a
    straight line in log-log) through the fitted sizes; L0 and the exponents as lines in
    log N."""
    ms = [m for m in est.models_.values() if m["N"] is not None]
    if len(ms) < 2:
        raise InputError(
            f"schedule: run {run!r}: column 'N': N={fmt_value(n)} is not a fitted model and "
            f"the fit has {len(ms)} model size(s) with N; at least 2 are needed to read "
            "parameters across sizes"
        )
    x = np.log([m["N"] for m in ms])
    th = np.array([m["theta"] for m in ms])
    out = np.empty(th.shape[1])
    for j in range(th.shape[1]):
        col = th[:, j]
        logged = np.all(col > 0)
        yv = np.log(col) if logged else col
        a, b = np.polyfit(x, yv, 1)
        v = a * np.log(n) + b
        out[j] = np.exp(v) if logged else v
    return to_fit(est.law, out)


def _schedule_for(est, run: str, rows: pd.DataFrame, continued: bool):
    """The run's whole schedule: a fitted run's own knots before the schedule's first step,
    then the schedule's rows."""
    if continued:
        ks, kl = (np.asarray(v, float) for v in est.runs_[run]["knots"])
        first = rows["step"].iloc[0]
        keep = ks < first
        if keep.any():
            past = pd.DataFrame({"step": ks[keep], "lr": kl[keep]})
            rows = pd.concat([past, rows[["step", "lr"]]], ignore_index=True)
    return run_schedule(rows, run)


def forecast_rows(
    est,
    sched: pd.DataFrame,
    level: float | None,
    kind: str = "prediction",
    notes: list | None = None,
) -> pd.DataFrame:
    """run, step, loss, lo, hi for every schedule row (lo/hi NaN when `level` is None)."""
    notes = [] if notes is None else notes
    out = []
    names = LAWS[est.law]
    for run, rows in sched.groupby("run", sort=False):
        key, z, continued = _model_for(est, run, rows)
        sch = _schedule_for(est, run, rows, continued)
        steps = rows["step"].to_numpy(float)
        d = est._design([RunPoints(run, sch, steps)])
        pred, J = value(est.law, z, d, jac=True)
        info = est.runs_.get(run, {})
        offset = float(info.get("offset", 0.0)) if continued else 0.0
        loss = pred * np.exp(offset)
        lo = np.full(steps.size, np.nan)
        hi = np.full(steps.size, np.nan)
        if key is None:
            notes.append(
                f"run {run!r}: N={fmt_value(float(rows['N'].dropna().iloc[0]))} is not "
                "a fitted size; parameters read as power laws in N across the "
                "fitted sizes, interval not identified"
            )
        else:
            m = est.models_[key]
            _notes_for(est, run, rows, sch, steps, m, notes)
            if m.get("prior") and est.law == "mpl" and np.any(J[:, 3] != 0):  # a decay ahead
                notes.append(
                    f"run {run!r}: the decay response (B, C, beta, gamma) comes from "
                    f"the prior ({m['prior']['source']}), not from the fitted points"
                )
            if level is not None:
                Ju = unit_jacobian(est.law, z, J) / pred[:, None]
                ref = (
                    float(info["last_step"])
                    if continued and "last_step" in info
                    else float(m["max_step"])
                )
                far = np.log(np.maximum(steps / ref, 1.0))
                lo, hi = _interval(
                    est,
                    m,
                    J / pred[:, None],
                    Ju,
                    loss,
                    far,
                    info if continued else {},
                    level,
                    kind,
                    run,
                    notes,
                )
        if np.any(np.rint(steps) <= sch.peak_step):
            notes.append(
                f"run {run!r}: {int(np.sum(np.rint(steps) <= sch.peak_step))} step(s) "
                f"inside the warmup (up to step {sch.peak_step}) are outside the law"
            )
        th = to_natural(est.law, z)
        if not np.all(np.isfinite(loss)) or not np.all(loss > 0):
            bad = dict(zip(names, np.round(th, 4), strict=True))
            raise InputError(
                f"schedule: run {run!r}: the law gives no finite positive loss "
                f"here (parameters {bad})"
            )
        out.append(pd.DataFrame({"run": run, "step": steps, "loss": loss, "lo": lo, "hi": hi}))
    return pd.concat(out, ignore_index=True)


def _notes_for(est, run, rows, sch, steps, m, notes) -> None:
    far = steps.max() / m["max_step"]
    if far > FAR_PAST:
        notes.append(
            f"run {run!r}: step {steps.max():.0f} is {far:.1f}x the model's last "
            f"fitted step {m['max_step']:.0f}"
        )
    lo_fit, hi_fit = m["lr_range"]
    eta = sch.eta
    if eta.min() < lo_fit * (1 - LR_SLACK):
        below = lo_fit / max(eta.min(), 1e-300)
        notes.append(
            f"run {run!r}: learning rate {eta.min():.3g} is {below:.2g}x "
            f"below the lowest fitted learning rate {lo_fit:.3g}"
        )
    if eta.max() > hi_fit * (1 + LR_SLACK):
        notes.append(
            f"run {run!r}: learning rate {eta.max():.3g} is {eta.max() / hi_fit:.2g}x "
            f"above the highest fitted learning rate {hi_fit:.3g}"
        )


def _interval(est, m, Jl, Ju, loss, far, info, level, kind, run, notes):
    """The resampled quantiles times `calibration`, widened by `horizon` per unit of `far`
    (ln of the step over the last fitted step), on the log scale."""
    reps = np.asarray(m["replicates"], float)
    n = loss.size
    if reps.size == 0:
        notes.append(f"run {run!r}: no resampling replicates (n_boot=0): interval not identified")
        return np.full(n, np.nan), np.full(n, np.nan)
    g = Jl @ reps.T  # (n, R) log-loss replicates about the point
    if info.get("offset_reps"):
        g = g + np.asarray(info["offset_reps"], float)[None, :]
    if kind == "prediction":
        rng = np.random.default_rng(int(est.seed) + 2)
        noise = np.asarray(m["noise"], float)
        g = g + residual_draws(rng, noise - noise.mean(), g.shape)
    a = (1.0 - level) / 2.0
    z = normal_quantile
    extra = est.horizon * far * z(1.0 - a) / z(0.95)
    k = est.calibration * float((m.get("prior") or {}).get("widen", 1.0))
    g_lo, g_hi = percentile_interval(g, level, axis=1)
    q_lo = np.minimum(g_lo, 0.0) * k - extra
    q_hi = np.maximum(g_hi, 0.0) * k + extra
    with np.errstate(over="ignore"):  # an overflowing bound is reported as not identified
        lo, hi = loss * np.exp(q_lo), loss * np.exp(q_hi)
    bad = ~np.isfinite(lo) | ~np.isfinite(hi) | (hi > WIDE * lo)
    null = np.asarray(m["null"], float)
    if null.size:
        proj = np.abs(Ju @ null.T).max(axis=1)
        bad |= proj > NULL_TOL * np.maximum(np.linalg.norm(Ju, axis=1), 1e-300)
    if bad.any():
        notes.append(
            f"run {run!r}: {int(bad.sum())} forecast(s) depend on parameters the "
            "fitted curves do not identify: interval not identified"
        )
        lo[bad] = np.nan
        hi[bad] = np.nan
    return lo, hi


def make_forecast(est, sched, level, final, kind) -> CurveForecast:
    notes: list[str] = []
    table = forecast_rows(est, sched, level, kind, notes)
    if final:
        table = table.groupby("run", sort=False).tail(1).reset_index(drop=True)
    return CurveForecast(table, notes, level)


__all__ = ["CurveForecast", "across_sizes", "forecast_rows", "make_forecast"]
