"""Readers of training logs: each returns one long table, one row per logged step, with a
``run`` column and the log's own metric names as columns.

Formats (public specifications followed; tests write small files in each):

* ``wandb``: the CSV exports of Weights & Biases. A *history* export is either the run-history
  table of one run (``_step``, ``_runtime``, ``_timestamp`` and one column per logged key, as
  ``run.history().to_csv()`` and the UI's "Export as CSV" write it; the run is the file's stem
  unless a run column is named) or a chart-panel export (``Step`` and one ``<run> - <key>``
  column per run, with ``<run> - <key>__MIN`` / ``__MAX`` companions, which are dropped). A
  *summary* export is the project's runs table (``Name`` and one column per config or summary
  key, one row per run; a ``_step`` column there is each run's last step); it has no steps.
* ``tensorboard``: event files (``events.out.tfevents.*``) or folders holding them; the run is
  the folder the event file is in, named by its path under the given folder as TensorBoard
  names it (``r1`` for ``tb/r1/events...``, ``r1/eval`` for ``tb/r1/eval/events...``). Needs
  the optional extra ``tensorboard``.
* ``jsonl``: one JSON object per line (non-object lines are refused with their line number).
* ``csv``: a comma-separated table with a header line.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from ...errors import InputError, require

FORMATS = ("wandb", "tensorboard", "jsonl", "csv")
RUN = "run"
_WANDB_PANEL_STEP = "Step"


def read_log(path: str | Path, fmt: str, run_col: str | None = None) -> pd.DataFrame:
    """One log file (or TensorBoard folder) as a long table with a ``run`` column."""
    if fmt not in FORMATS:
        raise InputError(f"--format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    p = Path(path)
    if not p.exists():
        raise InputError(f"{p}: no such file")
    if fmt == "tensorboard":
        return _read_tensorboard(p)
    if p.is_dir():
        raise InputError(f"{p}: is a directory, expected a {fmt} log file")
    if p.stat().st_size == 0:
        raise InputError(f"{p}: the file is empty")
    df = _read_jsonl(p) if fmt == "jsonl" else _read_csv(p)
    if fmt == "wandb":
        df = _wandb(df, p)
    if run_col is not None:
        if run_col not in df.columns:
            raise InputError(
                f"{p}: no run column {run_col!r}; the log has columns: {', '.join(map(str, df))}"
            )
        df = df.rename(columns={run_col: RUN}) if run_col != RUN else df
    elif RUN not in df.columns:
        df.insert(0, RUN, p.stem)
    df[RUN] = df[RUN].astype(str)
    return df


def _read_csv(p: Path) -> pd.DataFrame:
    try:
        df = pd.read_csv(p)
    except Exception as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise InputError(f"{p}: could not read as CSV: {first}") from None
    df.columns = [str(c).strip() for c in df.columns]
    if df.empty:
        raise InputError(f"{p}: the log has no rows")
    return df


def _read_jsonl(p: Path) -> pd.DataFrame:
    rows = []
    with open(p, encoding="utf-8", errors="strict") as fh:
        try:
            for i, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:  # NaN / Infinity kept as text: a diverged loss must not read as "not logged"
                    obj = json.loads(line, parse_constant=str)
                except ValueError:
                    raise InputError(f"{p}: line {i} is not valid JSON") from None
                if not isinstance(obj, dict):
                    raise InputError(f"{p}: line {i} is not a JSON object")
                rows.append(obj)
        except UnicodeDecodeError:
            raise InputError(f"{p}: not UTF-8 text") from None
    if not rows:
        raise InputError(f"{p}: the log has no rows")
    return pd.DataFrame(rows)


def wandb_kind(df: pd.DataFrame) -> str:
    """``panel`` (chart export), ``history`` (one run's history) or ``summary`` (runs table)."""
    if _WANDB_PANEL_STEP in df.columns and any(" - " in str(c) for c in df.columns):
        return "panel"
    if "Name" in df.columns and ("_step" not in df.columns or df["Name"].nunique() > 1):
        return "summary"  # a runs table may carry each run's last `_step` as a column
    return "history"


def _wandb(df: pd.DataFrame, p: Path) -> pd.DataFrame:
    kind = wandb_kind(df)
    if kind == "summary":
        df = df.rename(columns={"Name": RUN})
        df.attrs["wandb_summary"] = True  # one row per run, no steps (`import_logs` reads it)
        return df
    if kind == "history":
        return df
    # panel export: Step, "<run> - <key>", "<run> - <key>__MIN", "<run> - <key>__MAX"
    frames = []
    cols = [c for c in df.columns if " - " in c and not c.endswith(("__MIN", "__MAX"))]
    runs = dict.fromkeys(c.split(" - ", 1)[0] for c in cols)
    for r in runs:
        mine = {c: c.split(" - ", 1)[1] for c in cols if c.split(" - ", 1)[0] == r}
        part = df[[_WANDB_PANEL_STEP, *mine]].rename(columns={_WANDB_PANEL_STEP: "_step", **mine})
        part = part.dropna(how="all", subset=list(mine.values()))
        part.insert(0, RUN, r)
        frames.append(part)
    if not frames:
        raise InputError(f"{p}: a W&B chart export without '<run> - <metric>' columns")
    return pd.concat(frames, ignore_index=True)


def _event_files(p: Path) -> list[Path]:
    if p.is_file():
        return [p]
    files = sorted(q for q in p.rglob("*tfevents*") if q.is_file())
    if not files:
        raise InputError(f"{p}: no TensorBoard event files (events.out.tfevents.*) in the folder")
    return files


def _read_tensorboard(p: Path) -> pd.DataFrame:
    require("tensorboard", "tensorboard")
    from tensorboard.backend.event_processing import event_accumulator as ea

    rows = []
    for f in _event_files(p):
        acc = ea.EventAccumulator(str(f), size_guidance={ea.SCALARS: 0, ea.TENSORS: 0})
        try:
            acc.Reload()
        except Exception as exc:
            raise InputError(f"{f}: not a readable TensorBoard event file ({exc})") from None
        if p.is_dir():
            run = f.parent.relative_to(p).as_posix() if f.parent != p else p.name
        else:
            run = f.parent.resolve().name
        tags = acc.Tags()
        for tag in tags.get("scalars", []):
            rows.extend((run, e.step, tag, float(e.value)) for e in acc.Scalars(tag))
        for tag in tags.get("tensors", []):
            for e in acc.Tensors(tag):
                v = _tensor_scalar(e.tensor_proto)
                if v is not None:
                    rows.append((run, e.step, tag, v))
    if not rows:
        raise InputError(f"{p}: the event files hold no scalar summaries")
    long = pd.DataFrame(rows, columns=[RUN, "step", "tag", "value"])
    wide = long.pivot_table(index=[RUN, "step"], columns="tag", values="value", aggfunc="last")
    wide = wide.reset_index()
    wide.columns.name = None
    return wide


def _tensor_scalar(proto) -> float | None:
    from tensorboard.util import tensor_util

    arr = np.asarray(tensor_util.make_ndarray(proto))
    if arr.size != 1 or arr.dtype.kind not in "fiu":
        return None
    return float(arr.reshape(()))


def describe_columns(df: pd.DataFrame) -> str:
    return ", ".join(str(c) for c in df.columns if c != RUN) or "(none)"
