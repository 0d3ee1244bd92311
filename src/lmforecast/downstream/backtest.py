"""Backtests: fit on the smaller models of a suite, forecast the final score of a larger one.

Every table carries the two naive baselines beside the methods: `fp` (Chen et al. Eq. 3,
FLOPs -> score; on the retained emerged checkpoints as the paper reads, on all checkpoints
when fewer than two survive, marked `fp*`) and `persistence` (the largest fitted model's own
final score). A method whose mean absolute error is not below persistence's is not a forecast,
and `summary()` says so.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import partial

import numpy as np
import pandas as pd

from ..data.evals.registry import match_model_name, match_model_names
from ..display import SummaryDisplay
from ..errors import InputError, did_you_mean
from .chance import chance_level
from .forecaster import DownstreamForecaster
from .reach import ForecastReachWarning
from .tables import DEFAULT_LOSS_TASK, task_data

TASKS7 = ("piqa", "arc_easy", "arc_challenge", "sciq", "winogrande", "logiqa", "wsc")
BACKTEST_METHODS = (
    "ensemble",
    "auto",
    "sigmoid",
    "sigmoid-chance",
    "local-linear",
    "trend",
    "flp",
    "fp",
    "persistence",
)
PYTHIA_SIZES = ("70m", "160m", "410m", "1b", "1.4b", "2.8b")
PYTHIA_SCENARIOS = (  # (fitted sizes, target size)
    (PYTHIA_SIZES[:5], "2.8b"),
    (PYTHIA_SIZES[:4], "2.8b"),
    (PYTHIA_SIZES[:4], "1.4b"),
    (PYTHIA_SIZES[:3], "1b"),
    (PYTHIA_SIZES[:3], "1.4b"),
)


@dataclass
class Backtest(SummaryDisplay):
    """Long table: one row per (scenario, task, method) with forecast, interval and error."""

    rows: pd.DataFrame
    level: float = 0.9
    notes: list = field(default_factory=list)
    models: dict = field(default_factory=dict)  # (scenario, task, method) -> fitted forecaster
    data: dict = field(default_factory=dict)  # (scenario, task) -> (fitted TaskData, target row)

    def errors(self, scenario: str | None = None) -> pd.DataFrame:
        """Absolute errors (points), tasks x methods; NaN = refused."""
        r = self.rows if scenario is None else self.rows[self.rows["scenario"] == scenario]
        return r.pivot_table(
            index="task", columns="method", values="abs_error", aggfunc="mean", dropna=False
        )[self._methods(r)]

    @staticmethod
    def _methods(r):
        return [m for m in BACKTEST_METHODS if m in set(r["method"])] + sorted(
            set(r["method"]) - set(BACKTEST_METHODS)
        )

    def mae(self) -> pd.DataFrame:
        """MAE over tasks per scenario (rows) and method (columns); refusals excluded, counted
        in `refused()`."""
        g = self.rows.groupby(["scenario", "method"], sort=False)["abs_error"].mean().unstack()
        return g[self._methods(self.rows)]

    def refused(self) -> pd.DataFrame:
        g = self.rows.assign(r=self.rows["refused"]).groupby(["scenario", "method"], sort=False)
        return g["r"].sum().unstack()[self._methods(self.rows)].astype(int)

    def coverage(self) -> pd.Series:
        r = self.rows.dropna(subset=["covered"])
        return r.groupby("method", sort=False)["covered"].mean()[
            [m for m in self._methods(r) if m in set(r["method"])]
        ]

    def not_beating_persistence(self) -> dict[str, list[str]]:
        """Per scenario, the methods whose MAE is not below persistence's (or that refused)."""
        out = {}
        mae, ref = self.mae(), self.refused()
        for s in mae.index:
            p = mae.loc[s, "persistence"]
            out[s] = [
                m
                for m in mae.columns
                if m != "persistence" and (ref.loc[s, m] > 0 or not mae.loc[s, m] < p)
            ]
        return out

    def contract(self) -> dict:
        """What `downstream backtest --json` prints: the first scenario's MAE, refusals and the
        methods not beating persistence, the coverage per method, and every row."""
        return {
            "mae": self.mae().iloc[0].to_dict(),
            "refused": self.refused().iloc[0].to_dict(),
            "not_beating_persistence": next(iter(self.not_beating_persistence().values())),
            "coverage": self.coverage().to_dict(),
            "rows": self.rows.to_dict(orient="records"),
        }

    def markdown(self, scenario: str) -> str:
        e = self.errors(scenario)
        ref = self.rows[(self.rows["scenario"] == scenario)]
        fb = set(ref.loc[ref["fallback"] == True, "task"])  # noqa: E712
        cols = list(e.columns)
        lines = ["| task | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
        for t in e.index:
            cells = []
            for m in cols:
                v = e.loc[t, m]
                s = "refused" if not np.isfinite(v) else f"{v:.2f}"
                if m == "fp" and t in fb:
                    s += "*"
                cells.append(s)
            lines.append(f"| {t} | " + " | ".join(cells) + " |")
        mae = self.mae().loc[scenario]
        nref = self.refused().loc[scenario]
        lines.append(
            "| **MAE** | "
            + " | ".join(
                f"**{mae[m]:.2f}**" + (f" ({nref[m]} refused)" if nref[m] else "") for m in cols
            )
            + " |"
        )
        return "\n".join(lines)

    def summary(self) -> str:
        out = []
        for s in self.mae().index:
            out.append(f"== {s} (absolute error, points; * = fp fallback on all checkpoints)")
            e = self.errors(s)
            rows = self.rows[self.rows["scenario"] == s]
            fb = set(rows.loc[rows["fallback"] == True, "task"])  # noqa: E712
            text = e.map(lambda v: "refused" if not np.isfinite(v) else f"{v:.2f}")
            if "fp" in text.columns:
                text["fp"] = [v + ("*" if t in fb else "") for t, v in zip(text.index, text["fp"])]
            out.append(text.to_string())
            m, nref = self.mae().loc[s], self.refused().loc[s]
            out.append(
                "MAE: "
                + ", ".join(
                    f"{k} {v:.2f}"
                    + (
                        f" (over {len(e) - nref[k]} of {len(e)} tasks: {nref[k]} refused)"
                        if nref[k]
                        else ""
                    )
                    for k, v in m.items()
                )
            )
            bad = self.not_beating_persistence()[s]
            out.append(
                "do NOT beat persistence (not a forecast here): " + (", ".join(bad) or "none")
            )
        cov = self.coverage()
        if len(cov):
            out.append(
                f"coverage of the {self.level:g} intervals: "
                + ", ".join(f"{k} {v:.2f}" for k, v in cov.items())
            )
        return "\n".join(out)


def _view(est: DownstreamForecaster, name: str) -> DownstreamForecaster:
    v = copy.copy(est)
    v.selected_ = name
    return v


def _largest(evals: pd.DataFrame, models: list[str]) -> str:
    """The fitted model with the most training compute (the last one listed when the table
    has no numeric flops column)."""
    if not {"model", "flops"} <= set(evals.columns):
        return models[-1]
    c = pd.to_numeric(evals["flops"], errors="coerce").groupby(evals["model"]).max()
    c = c.reindex(models)
    return str(c.idxmax()) if c.notna().any() else models[-1]


def _check_target_is_larger(evals: pd.DataFrame, fit_models: list, target: str) -> None:
    """A backtest forecasts a LARGER model: a target with less final compute than a fitted
    model is refused naming both (the numbers would read as a forecast and are not one)."""
    if not {"model", "flops"} <= set(evals.columns):
        return
    c = pd.to_numeric(evals["flops"], errors="coerce").groupby(evals["model"].astype(str)).max()
    if target not in c.index or not np.isfinite(c[target]):
        return
    fitted = c.reindex([str(m) for m in fit_models]).dropna()
    if len(fitted) and c[target] <= fitted.max():
        big = str(fitted.idxmax())
        raise InputError(
            f"--target {target!r} (target_model=; {c[target]:.3g} FLOPs) is not larger than "
            f"fitted model "
            f"{big!r} ({fitted.max():.3g} FLOPs): a backtest forecasts a larger model"
        )


def backtest(
    evals: pd.DataFrame,
    *,
    fit_models,
    target_model: str,
    tasks=TASKS7,
    loss_task: str = "auto",
    metric: str = "acc",
    methods=BACKTEST_METHODS,
    scenario: str | None = None,
    level: float = 0.9,
    bootstrap: int = 100,
    seed: int = 0,
    stage1: str = "saturating",
    interval_methods=None,
    chance: float | None = None,
    loss_metric: str | None = None,
) -> Backtest:
    """Fit each method on `fit_models`, forecast `target_model`'s final score per task.
    `interval_methods`: methods whose prediction intervals are computed (default all; the
    others are fitted without bootstrap, which is faster). `chance`: the chance level in points
    of every task, or {task: points} (the others keep the bundled table); a task with neither
    is refused up front, naming `--chance`."""
    fit_models, tasks, methods = (
        [v] if isinstance(v, str) else list(v) for v in (fit_models, tasks, methods)
    )  # one name given as a string is that name, not its characters
    fit_models = list(dict.fromkeys(str(m) for m in fit_models))
    if "model" in evals.columns:  # names as typed: matched ignoring case, typos named
        known = evals["model"].astype(str).unique()
        fit_models = match_model_names(
            fit_models, known, "--fit-models (fit_models=): model", "in column 'model'"
        )
        target_model = match_model_name(
            target_model, known, "--target (target_model=): model", "in column 'model'"
        )
    asked = {str(m) for m in methods}  # the baselines' own warnings are shown when asked for
    # the two naive baselines always sit beside the methods (persistence is what "a forecast"
    # must beat: `not_beating_persistence`, `summary`)
    methods = list(dict.fromkeys([str(m) for m in methods] + ["fp", "persistence"]))
    if len(fit_models) < 2:
        raise InputError(
            f"--fit-models (fit_models=): a backtest fits >= 2 models, got {len(fit_models)}"
        )
    tasks = [str(t) for t in tasks]
    per_task = dict(chance) if isinstance(chance, Mapping) else None

    def chance_of(task: str) -> float | None:  # None: the bundled level
        return per_task.get(task) if per_task is not None else chance

    if "task" in evals.columns:  # a misspelt task is named as such, not as lacking a chance
        present = set(evals["task"].astype(str))
        unknown = [t for t in tasks if t not in present]
        if unknown:
            raise InputError(
                f"--task (tasks=): {unknown[0]!r} is not in column 'task' ({len(present)} "
                f"tasks{did_you_mean(unknown[0], present)})"
            )
    missing = [t for t in tasks if chance_of(t) is None and chance_level(t) is None]
    if missing:
        raise InputError(
            f"task {missing[0]!r} has no bundled chance level; give it with --chance "
            f"{missing[0]}=P (points; Python: chance={{task: P}})"
        )
    if target_model in fit_models:
        raise InputError(f"target model {target_model!r} is also among the fitted models")
    _check_target_is_larger(evals, fit_models, target_model)
    if {"model", "task"} <= set(evals.columns):
        keep = evals["task"].isin(
            list(tasks) + [loss_task, DEFAULT_LOSS_TASK] + [f"{t}_bpb" for t in tasks]
        )
        evals = evals[keep & evals["model"].isin(fit_models + [target_model])]
    with_iv = set(methods if interval_methods is None else interval_methods)
    scenario = scenario or f"{target_model} from {_largest(evals, fit_models)} and smaller"
    rows, models, data = [], {}, {}
    said: dict[tuple, warnings.WarningMessage] = {}  # each warning once, in order
    for task in tasks:
        td_all = task_data(
            evals,
            task=task,
            loss_task=loss_task,
            metric=metric,
            loss_metric=loss_metric,
            models=fit_models + [target_model],
        )
        ck = td_all.checkpoints
        tgt = td_all.runs[td_all.runs["model"] == target_model]
        if tgt.empty:
            raise InputError(f"target model {target_model!r} has no checkpoint for {task!r}")
        C, actual = float(tgt["C"].iloc[0]), float(tgt["score"].iloc[0])
        td = copy.copy(td_all)
        td.checkpoints = ck[ck["model"] != target_model].reset_index(drop=True)
        base: dict = {}
        data[(scenario, task)] = (td, tgt.iloc[0])
        for m in methods:
            rec = dict(
                scenario=scenario,
                task=task,
                method=m,
                actual=actual,
                predicted=np.nan,
                lo=np.nan,
                hi=np.nan,
                abs_error=np.nan,
                covered=np.nan,
                refused=False,
                fallback=False,
                reason="",
            )
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                fit = partial(_fit, td=td, stage1=stage1, seed=seed, chance=chance_of(task))
                est = _score_method(m, rec, C, level, bootstrap, m in with_iv, base, fit)
            if est is not None:
                models[(scenario, task, m)] = est
            if m in asked:  # a baseline's warnings only when it was asked for
                for w in caught:
                    said.setdefault((w.category, str(w.message)), w)
            rows.append(rec)
    for w in said.values():  # each distinct warning once (fits of one task repeat them)
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return Backtest(pd.DataFrame(rows), level, models=models, data=data)


ENSEMBLE_VIEWS = ("ensemble", "sigmoid", "local-linear", "trend")


def _fit(method, bootstrap, *, td, stage1, seed, chance):
    return DownstreamForecaster(
        method, stage1=stage1, bootstrap=bootstrap, seed=seed, chance=chance
    ).fit_task_data(td)


def _score_method(m, rec, C, level, bootstrap, with_iv, base, fit):
    """Fit method `m` (the ensemble's members are views of one fitted ensemble, kept in
    `base`), forecast the target at C and fill `rec` (an interval when `with_iv`); the fitted
    estimator (None if refused)."""
    actual = rec["actual"]
    try:
        if m in ENSEMBLE_VIEWS:
            if "ensemble" not in base:  # kept only once fitted: a failed fit is retried
                base["ensemble"] = fit("ensemble", bootstrap)
            est = _view(base["ensemble"], m)
        else:
            est = fit(m, bootstrap if with_iv else 0)
        with warnings.catch_warnings():  # a backtest extrapolates on purpose
            warnings.simplefilter("ignore", ForecastReachWarning)
            p = float(np.ravel(est.predict(C))[0])
        rec.update(predicted=p, abs_error=abs(p - actual))
        if m == "fp":
            rec["fallback"] = bool(est.members_["fp"]["fallback"])
        if m != "persistence" and bootstrap > 1 and with_iv:
            lo, hi = est.predict_interval(C, level=level)
            rec.update(lo=float(lo[0]), hi=float(hi[0]), covered=float(lo[0] <= actual <= hi[0]))
        return est
    except InputError as exc:
        rec.update(refused=True, reason=str(exc))
        return None


def pythia_name(size: str, suite: str) -> str:
    return f"pythia-{size}" + ("-deduped" if suite == "deduped" else "")


def pythia_backtests(
    evals: pd.DataFrame, *, suites=("standard", "deduped"), scenarios=PYTHIA_SCENARIOS, **kw
) -> Backtest:
    """The documented Pythia backtests (docs/downstream.md): per suite, forecast 2.8B from
    <= 1.4B and from <= 1B, 1.4B from <= 1B, and 1B / 1.4B from <= 410M."""
    parts = []
    for suite in suites:
        for sizes, target in scenarios:
            fm = [pythia_name(s, suite) for s in sizes]
            name = f"{suite}: {target} from <= {sizes[-1]}"
            parts.append(
                backtest(
                    evals,
                    fit_models=fm,
                    target_model=pythia_name(target, suite),
                    scenario=name,
                    **kw,
                ).rows
            )
    return Backtest(pd.concat(parts, ignore_index=True), kw.get("level", 0.9))
