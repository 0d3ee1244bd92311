"""Training curves: the logged losses of each run and a curve law's forecast with its band
(`lmforecast.curves`; docs/curves.md), and the learning-rate schedules beside them."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .style import new_figure


def _peak_steps(schedule) -> dict:
    """Each run's first step at its peak learning rate (the end of its warmup)."""
    out = {}
    for r, g in schedule.groupby(schedule["run"].astype(str), sort=False):
        lr = g["lr"].to_numpy(float)
        ok = np.isfinite(lr)
        if ok.any():
            out[r] = float(g["step"].to_numpy(float)[ok][np.argmax(lr[ok] >= lr[ok].max())])
    return out


def plot_curves(
    table, forecast=None, *, schedule=None, runs=None, ax=None, level=None, max_points=400
):
    """Observed losses (dots) of the curves `table` (run, step, lr, loss) and, with `forecast`
    (a `CurveForecast`, or its ``table`` of run, step, loss, lo, hi), each run's forecast curve
    (line) and interval band. With the forecast's `schedule` (run, step, lr), a run's forecast
    is drawn from the end of its warmup (the laws describe the loss after it). `runs` picks
    runs (default: every run of either table)."""
    fig, ax = new_figure(ax=ax)
    ft = getattr(forecast, "table", forecast)
    start = {} if schedule is None else _peak_steps(schedule)
    names = list(dict.fromkeys(table["run"].astype(str)))
    if ft is not None:
        names += [r for r in dict.fromkeys(ft["run"].astype(str)) if r not in names]
    if runs is not None:
        names = [r for r in names if r in {str(x) for x in runs}]
    for i, r in enumerate(names):
        color = f"C{i % 10}"
        obs = table[(table["run"].astype(str) == r) & table["loss"].notna()]
        if len(obs):
            take = np.unique(np.linspace(0, len(obs) - 1, min(len(obs), max_points)).astype(int))
            ax.plot(
                obs["step"].to_numpy()[take],
                obs["loss"].to_numpy()[take],
                ".",
                ms=2.5,
                color=color,
                label=f"{r} (logged)",
            )
        if ft is None:
            continue
        f = ft[ft["run"].astype(str) == r].sort_values("step")
        f = f[f["step"] >= start.get(r, -np.inf)]
        if not len(f):
            continue
        ax.plot(
            f["step"],
            f["loss"],
            "-",
            lw=1.2,
            color=color,
            label=f"{r} (forecast)" if not len(obs) else None,
        )
        ok = np.isfinite(f["lo"].to_numpy(float)) & np.isfinite(f["hi"].to_numpy(float))
        if ok.any():
            ax.fill_between(
                f["step"].to_numpy()[ok],
                f["lo"].to_numpy()[ok],
                f["hi"].to_numpy()[ok],
                color=color,
                alpha=0.18,
                lw=0,
            )
    _focus(ax, table, ft)
    ax.set_xlabel("step")
    ax.set_ylabel("loss")
    band = f" ({100 * level:g}% bands)" if level else ""
    ax.set_title(f"logged losses and forecast curves{band}", fontsize=9)
    if names:
        ax.legend(fontsize=6, ncol=2 if len(names) > 4 else 1)
    return fig


def _focus(ax, table, ft) -> None:
    """Loss axis on the later part of the curves (the first tenth of the steps, where the loss
    falls fastest, would flatten everything after it)."""
    parts = [table[["step", "loss"]].dropna()]
    if ft is not None:
        parts.append(ft[["step", "loss"]].dropna())
    both = pd.concat(parts)
    late = both[both["step"] >= 0.1 * both["step"].max()]["loss"]
    if len(late) > 1 and ft is not None:
        lows = ft["lo"].to_numpy(float)
        lo = min(late.min(), np.nanmin(lows) if np.isfinite(lows).any() else late.min())
        pad = 0.05 * (late.max() - lo)
        ax.set_ylim(lo - pad, late.max() + pad)


def plot_schedules(table, *, runs=None, ax=None):
    """The learning rate against the step of each run of a curves or schedule table."""
    fig, ax = new_figure(ax=ax)
    for r, g in table.groupby(table["run"].astype(str), sort=False):
        if runs is not None and r not in {str(x) for x in runs}:
            continue
        g = g.sort_values("step")
        ax.plot(g["step"], g["lr"], lw=1.2, label=r)
    ax.set_xlabel("step")
    ax.set_ylabel("learning rate")
    ax.legend(fontsize=6)
    return fig
