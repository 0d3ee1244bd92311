"""Training logs to table files: which outputs a request may name, the schedule it implies, the
import and the writing of the runs, checkpoints and curves tables (what `runs import` does, so a
notebook gets the same checks and files)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ...errors import InputError
from ...store.safe_write import write_many
from ..io import read_table
from .build import ImportedRuns, import_logs, warn_if_misused
from .curves import LR_CANDIDATES


def check_import_outputs(out, checkpoints_out, curves_out) -> bool:
    """Refuse a request that writes nothing, or the checkpoints table without the runs table
    (both need tokens and parameter counts); returns whether the curves table is written
    alone (no runs table: tokens and parameter counts are then optional)."""
    if out is None and curves_out is None:
        raise InputError("give --out (the runs table) or --curves-out (the curves table)")
    if out is None and checkpoints_out is not None:
        raise InputError("--checkpoints-out goes with --out (both need tokens and --params)")
    return out is None


def import_schedule(schedule: str, constant_lr: bool = False, cooldown_ends=None):
    """``(schedule, cooldown ends)``: `constant_lr` is the constant schedule (refused beside
    another explicit one), and the cooldown ends, a comma-separated text of steps or a list,
    go only with a WSD schedule."""
    sched = "constant" if constant_lr else schedule
    if constant_lr and schedule not in ("cosine", "constant"):
        raise InputError(f"--constant-lr contradicts --schedule {schedule}")
    if not cooldown_ends:
        return sched, []
    if sched != "wsd":
        raise InputError("--cooldown-ends goes with --schedule wsd")
    if not isinstance(cooldown_ends, str):
        return sched, [float(s) for s in cooldown_ends]
    try:
        return sched, [float(s) for s in cooldown_ends.split(",") if s.strip()]
    except ValueError:
        raise InputError(f"--cooldown-ends: not a list of steps: {cooldown_ends!r}") from None


def _csv(df: pd.DataFrame) -> bytes:
    return df.to_csv(index=False).encode()


def import_log_files(
    files,
    fmt: str,
    *,
    out=None,
    checkpoints_out=None,
    curves_out=None,
    models=None,
    keep=None,
    tokens_per_step: float | None = None,
    **options,
) -> ImportedRuns:
    """Import training logs (`import_logs`; `options` are its keywords) and write the tables
    asked for as CSV: the runs table to `out`, the checkpoints table to `checkpoints_out`, the
    curves table to `curves_out` (alone when `out` is None). Every table lands, or (a log
    without steps or learning rate for a table that needs them, a full disk) none changes.
    `models` is a models table or its path; `keep` a list of columns or a comma-separated
    text. A checkpoints table holding mid-schedule rows warns once."""
    curves_only = check_import_outputs(out, checkpoints_out, curves_out)
    if tokens_per_step is not None and tokens_per_step <= 0:
        raise InputError(f"--tokens-per-step must be positive, got {tokens_per_step:g}")
    if isinstance(keep, str) or keep is None:
        keep = [c.strip() for c in (keep or "").split(",") if c.strip()]
    if isinstance(models, str | Path):
        options["models_label"] = f"--models {models}"
        models = read_table(models)
    res = import_logs(
        files,
        fmt,
        tokens_per_step=tokens_per_step,
        models=models,
        keep=keep,
        curves_only=curves_only,
        **options,
    )
    if curves_only:
        write_many([(curves_out, _csv(res.curves), "--curves-out")])
        return res
    if checkpoints_out is not None and res.checkpoints is None:
        raise InputError("--checkpoints-out: a W&B summary export has no steps, only final runs")
    if curves_out is not None and res.curves is None:
        why = (
            "a W&B summary export has no steps"
            if res.checkpoints is None
            else f"the logs have no learning-rate column (looked for {', '.join(LR_CANDIDATES)}); "
            "name it with --lr COL"
        )
        raise InputError(f"--curves-out: {why}")
    if checkpoints_out is not None:
        warn_if_misused(res)
    outs = [(out, _csv(res.runs), "--out")]
    if checkpoints_out is not None:
        outs.append((checkpoints_out, _csv(res.checkpoints), "--checkpoints-out"))
    if curves_out is not None:
        outs.append((curves_out, _csv(res.curves), "--curves-out"))
    write_many(outs)
    return res


def import_counts(res: ImportedRuns) -> dict:
    """Rows of each table an import built (None for one not built), the columns it used and
    the schedule: what `runs import --json` prints."""
    runs_built = res.runs is not None
    return {
        "runs": len(res.runs) if runs_built else None,
        "checkpoints": None if res.checkpoints is None else len(res.checkpoints),
        "invalid_checkpoints": res.n_invalid_checkpoints if runs_built else 0,
        "curves": None if res.curves is None else len(res.curves),
        "columns": res.columns,
        "schedule": res.schedule,
    }


def curves_summary(res: ImportedRuns) -> str:
    """One line on the curves table an import built: rows, runs and columns."""
    n_runs = res.curves["run"].nunique()
    return f"{len(res.curves)} rows of {n_runs} run(s); columns: {', '.join(res.curves.columns)}"
