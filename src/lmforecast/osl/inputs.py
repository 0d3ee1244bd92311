"""The tables `osl fit|pca|robustness` read, as a notebook reads them too: the benchmark table
(`--benchmarks`, or a tidy lm-evaluation-harness table via `--evals` with its per-task metric),
and the target columns joined from a targets table and divided by a scale (`--scale`, applied
before the estimators read each score's unit: fractions or points, `data.to_fractions`). Each
refusal is one `InputError` line naming the flag."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from ..data.evals import read_evals, to_benchmark_frame
from ..data.io import read_table
from ..errors import InputError
from .data import read_benchmarks, scale_target
from .fit import merge_targets


def parse_evals_metric(text: str):
    """The metric of each task from `--evals-metric`: one name for every task ('acc'), or
    'acc,arc_challenge=acc_norm' as {task: metric} (a bare name under '*': every other task)."""
    if "=" not in text:
        return text.strip()
    out = {}
    for item in (t.strip() for t in text.split(",")):
        if not item:
            continue
        task, sep, metric = item.partition("=")
        if not sep:  # a bare metric is the default of every task not named
            task, metric = "*", task
        if not task.strip() or not metric.strip():
            raise InputError(f"--evals-metric: {item!r} is not task=metric")
        out[task.strip()] = metric.strip()
    return out


def read_benchmark_source(
    benchmarks: str | Path | pd.DataFrame | None = None,
    evals: str | Path | None = None,
    *,
    evals_metric: str = "acc",
    step: int | None = None,
) -> pd.DataFrame:
    """The wide benchmark table from exactly one of `benchmarks` (wide or long table) and
    `evals` (a tidy harness table, or 'pythia': one row per model at its final evaluation or
    `step`, each task's score its `evals_metric`)."""
    if (benchmarks is None) == (evals is None):
        raise InputError("give exactly one of --benchmarks and --evals")
    if benchmarks is not None:
        if step is not None:
            raise InputError("--step applies to --evals only")
        return read_benchmarks(benchmarks)
    frame = to_benchmark_frame(read_evals(evals), parse_evals_metric(evals_metric), step=step)
    return read_benchmarks(frame, str(evals))


def with_targets(
    table: pd.DataFrame,
    targets: str | Path | pd.DataFrame | None,
    names: Sequence[str],
    scale: float = 1.0,
) -> pd.DataFrame:
    """`table` with the columns of a targets table joined on Model (`merge_targets`), and each
    target in `names` present divided by `scale` (`scale_target`)."""
    if isinstance(targets, str | Path):
        targets = read_table(targets)
    table = merge_targets(table, targets)
    if scale != 1.0:
        for t in names:
            if t in table.columns:
                table[t] = scale_target(table[t], scale, t)
    return table


__all__ = ["parse_evals_metric", "read_benchmark_source", "with_targets"]
