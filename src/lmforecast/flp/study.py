"""Shared plumbing of the FLP-M analyses of Sec. 6.2 and 6.3 (Chen et al.): one table layout for
sampling runs, their checkpoints and held-out targets, and one result type (held-out Eq. 4
errors per task, method and target) with a text summary and exact JSON persistence.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import numpy as np
import pandas as pd

from ..data.io import read_table
from ..data.validate import check_columns, check_run_tables, numeric_column
from ..errors import InputError
from ..store import Checker, dump_json, load_json
from .model import relative_error
from .tables import (
    Columns,
    check_models_have_runs,
    domain_columns,
    points_column,
    score_column,
    source_flops,
)

PREDICTION_COLUMNS = ("task", "method", "target", "actual", "predicted", "relative_error")


@dataclass
class StudyTables:
    """Runs (final sampling models), checkpoints and targets, all with a total-FLOPs column
    `columns.C` and an average-loss column `columns.loss`, plus what the analyses read."""

    runs: pd.DataFrame
    checkpoints: pd.DataFrame
    targets: pd.DataFrame
    sources: tuple[str, ...]
    domain_cols: list[str]
    run_flops: np.ndarray  # (n_runs, K) FLOPs per source
    target_flops: np.ndarray  # (n_targets, K)
    average_loss: str  # where the average loss comes from (column or mean of domain losses)
    columns: Columns


def prepare_tables(
    runs: pd.DataFrame,
    checkpoints: pd.DataFrame | None,
    targets: pd.DataFrame,
    columns: Columns | None = None,
) -> StudyTables:
    """Validate and complete the three tables. FLOPs per source come from `C_<source>` columns
    (or `ratio` plus `C`); the total `C` is their sum where absent. The average validation loss
    (FLP's input, reading 7 of docs/flp.md) is the `loss` column when all three tables have it,
    else the mean of the `loss_<domain>` columns in all three (with a warning when only some
    tables have `loss`, since mixing the two definitions would bias the comparison)."""
    columns = columns or Columns()
    runs = pd.DataFrame(runs).reset_index(drop=True)
    ck = runs if checkpoints is None else pd.DataFrame(checkpoints).reset_index(drop=True)
    targets = pd.DataFrame(targets).reset_index(drop=True)
    if checkpoints is not None:
        check_models_have_runs(ck, runs, columns.model)
    if targets.empty:
        raise InputError("targets: no rows; the comparison needs held-out target runs")
    if columns.model in runs.columns and columns.model in targets.columns:
        both = targets[columns.model].astype(str).isin(set(runs[columns.model].astype(str)))
        if both.any():
            i = int(np.argmax(both.to_numpy()))
            raise InputError(
                f"targets: row {i + 1}: model {targets[columns.model].iloc[i]!r} is also a "
                "sampling run; held-out targets must not be in RUNS"
            )
    sources, F = source_flops(runs, columns, what="runs")
    if len(sources) < 2:
        raise InputError(f"runs: FLP-M needs at least two sources, found {sources}")
    _, Ft = source_flops(targets, columns, sources=sources, what="targets")
    dcols = domain_columns(runs, "runs")
    check_columns(ck, dcols, "checkpoints")
    check_columns(targets, dcols, "targets")
    user_cols = list(targets.columns)  # what an error names (C and loss may be added below)
    if columns.C not in runs.columns:
        runs = runs.assign(**{columns.C: F.sum(1)})
    if columns.C not in targets.columns:
        targets = targets.assign(**{columns.C: Ft.sum(1)})
    tables = {"runs": runs, "checkpoints": ck, "targets": targets}
    have = [name for name, df in tables.items() if columns.loss in df.columns]
    if len(have) == 3:
        average = f"column {columns.loss!r}"
    else:
        average = f"mean of {', '.join(dcols)}"
        if have:
            warnings.warn(
                f"{', '.join(sorted(set(tables) - set(have)))} lack(s) the average-loss column "
                f"{columns.loss!r}: using the mean of the domain losses in every table instead",
                UserWarning,
                stacklevel=3,
            )
        for name, df in tables.items():
            L = np.column_stack([numeric_column(df, c, positive=True, what=name) for c in dcols])
            tables[name] = df.assign(**{columns.loss: L.mean(1)})
    tables["targets"].attrs["user_columns"] = user_cols
    return StudyTables(
        tables["runs"],
        tables["checkpoints"],
        tables["targets"],
        sources,
        dcols,
        F,
        Ft,
        average,
        columns,
    )


def task_list(tasks) -> list[str]:
    """One task name or a sequence of them (non-empty, no duplicates)."""
    out = [tasks] if isinstance(tasks, str) else [str(t) for t in tasks]
    if not out:
        raise InputError("no task given")
    dup = [t for t in out if out.count(t) > 1]
    if dup:
        raise InputError(f"task {dup[0]!r} given twice")
    return out


def tasks_from_text(text: str) -> list[str]:
    """The task names of a comma-separated `--task` value (at least one)."""
    tasks = [t.strip() for t in text.split(",") if t.strip()]
    if not tasks:
        raise InputError(f"--task: no task name in {text!r}")
    return tasks


def read_targets(path: str | Path, model_col: str = "model", step_col: str = "step"):
    """The held-out target runs (actual scores) of the Sec. 6.2 / 6.3 comparisons, read and
    checked as a runs table."""
    targets = read_table(path)
    check_run_tables(targets, None, model_col, step_col, what="targets")
    return targets


def task_chance(chance, task: str) -> float | None:
    """The chance level of `task` in points: None (Table 2 default), one number for every task,
    or a mapping task -> number."""
    if isinstance(chance, dict):
        return chance.get(task)
    return chance


def target_scores(targets: pd.DataFrame, task: str, score_unit: str = "auto") -> np.ndarray:
    """The targets' actual scores in points (> 0: Eq. 4 divides by them); a column in fractions
    is converted at the door (`tables.points_column`: "auto" reads the whole column)."""
    cols = targets.attrs.get("user_columns")
    col = score_column(targets[cols] if cols else targets, task, "targets")
    return points_column(targets, col, score_unit, "targets", positive=True)


def prediction_rows(task: str, method: str, names, actual, predicted) -> list[dict]:
    err = relative_error(predicted, actual)
    return [
        {
            "task": task,
            "method": method,
            "target": str(n),
            "actual": float(a),
            "predicted": float(p),
            "relative_error": float(e),
        }
        for n, a, p, e in zip(names, actual, predicted, err)
    ]


@dataclass
class HeldOutErrors:
    """Held-out forecasts of several methods: a tidy table (one row per task, method and
    target: actual and predicted score, relative error Eq. 4) plus settings and diagnostics.
    `errors()` is the method x task table of mean relative errors in percent."""

    predictions: pd.DataFrame
    settings: dict = field(default_factory=dict)
    diagnostics: dict = field(default_factory=dict)
    fits: dict = field(default_factory=dict, repr=False, compare=False)  # not persisted
    kind: ClassVar[str] = "HeldOutErrors"
    methods: ClassVar[tuple[str, ...]] = ()

    @property
    def tasks(self) -> list[str]:
        return list(dict.fromkeys(self.predictions["task"]))

    def errors(self, statistic: str = "mean") -> pd.DataFrame:
        """Relative error in percent, methods (rows, in the paper's order) x tasks, plus the
        mean over tasks; `statistic` is "mean" or "max" over each task's targets."""
        if statistic not in ("mean", "max"):
            raise InputError(f"statistic must be 'mean' or 'max', got {statistic!r}")
        df = self.predictions.assign(relative_error=100 * self.predictions["relative_error"])
        tab = df.pivot_table(
            index="method",
            columns="task",
            values="relative_error",
            aggfunc=lambda v: getattr(np, statistic)(v.to_numpy()),
            sort=False,
            dropna=False,
        )
        order = [m for m in self.methods if m in tab.index] + [
            m for m in tab.index if m not in self.methods
        ]
        tab = tab.loc[order, self.tasks]
        tab["mean"] = tab.mean(axis=1, skipna=False)
        tab.columns.name = None
        return tab

    def errors_contract(self) -> dict:
        """`errors()` as JSON: method -> {task: mean relative error in percent, "mean"}."""
        return {m: row.to_dict() for m, row in self.errors().iterrows()}

    def file_text(self, suffix: str) -> str:
        """The result as a file: the predictions table (one row per task, method and target)
        for ".csv", else the saved JSON (`to_json`)."""
        if suffix.lower() == ".csv":
            return self.predictions.to_csv(index=False)
        return self.to_json()

    def to_dict(self) -> dict:
        p = self.predictions
        return {
            "kind": self.kind,
            "format_version": 1,
            "settings": self.settings,
            "diagnostics": self.diagnostics,
            "predictions": {c: p[c].tolist() for c in PREDICTION_COLUMNS},
        }

    def to_json(self, path: str | Path | None = None) -> str:
        return dump_json(self.to_dict(), path, indent=1)

    @classmethod
    def from_dict(cls, d: dict):
        Checker(f"saved {cls.kind} result").kind(d, cls.kind)
        p = pd.DataFrame({c: d["predictions"][c] for c in PREDICTION_COLUMNS})
        return cls(p, d["settings"], d["diagnostics"])

    @classmethod
    def from_json(cls, text_or_path: str | Path):
        d = load_json(text_or_path, f"saved {cls.kind} result")
        try:
            return cls.from_dict(d)
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"{str(text_or_path)[:80]}: not a saved {cls.kind} ({exc})") from exc

    def _table_text(self, title: list[str], footer: list[str]) -> str:
        tab = self.errors()
        w = max(14, *(len(m) + 2 for m in tab.index))
        head = f"{'method':<{w}}" + "".join(f"{c:>{max(10, len(c) + 2)}}" for c in tab.columns)
        lines = [*title, head]
        for m, row in tab.iterrows():
            lines.append(
                f"{m:<{w}}"
                + "".join(f"{_pct(v):>{max(10, len(c) + 2)}}" for c, v in zip(tab.columns, row))
            )
        return "\n".join(lines + footer)


def _pct(v: float) -> str:
    return "n/a" if not np.isfinite(v) else f"{v:.2f}"
