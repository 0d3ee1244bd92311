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
  names it (``r1`` for ``tb/r1/events...``, ``r1/eval`` for ``tb/r1/eval/events...``). The
  subfolders of one run folder that log disjoint tags (the learning rate in ``r1/train``, the
  evaluation loss in ``r1/eval``) are one run, named by that folder (``r1``); subfolders that
  log a tag in common (``loss`` in both) stay runs of their own. Needs the optional extra
  ``tensorboard``.
* ``jsonl``: one JSON object per line (non-object lines are refused with their line number).
* ``csv``: a comma-separated table with a header line.
"""

from __future__ import annotations

import csv
import errno
import io
import json
import math
import os
import struct
import warnings
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
    p = check_log_path(path)
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
    check_labels(df[RUN], p)
    return df


def shown_path(path) -> str:
    """A path as it can be printed: bytes that are not UTF-8 as ``\\xff`` escapes."""
    return os.fsencode(str(path)).decode("utf-8", errors="backslashreplace")


def check_log_path(path) -> Path:
    """A log path that can be named in the outputs: its name is UTF-8 (it may become a run's
    name) and it is no symbolic-link loop."""
    p = Path(path)
    try:
        str(p).encode("utf-8")
    except UnicodeEncodeError:
        raise InputError(
            f"{shown_path(p)}: the file or folder name is not UTF-8 text; rename it (run names "
            "come from it)"
        ) from None
    try:
        os.stat(p)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise InputError(f"{p}: symbolic link loop") from None
    return p


def check_labels(runs: pd.Series, p) -> None:
    """Run names are UTF-8 text (a JSON escape such as ``\\udcff`` is not)."""
    for r in dict.fromkeys(runs):
        try:
            r.encode("utf-8")
        except UnicodeEncodeError:
            raise InputError(
                f"{shown_path(p)}: run name {r.encode('utf-8', 'backslashreplace').decode()!r} "
                "is not UTF-8 text"
            ) from None


def _short_rows(p: Path) -> tuple[int, list[int], bool]:
    """Header width, the data rows (0-based) with fewer fields than the header, and whether the
    file ends without a newline (its last row cut short by an interrupted write)."""
    raw = p.read_bytes()
    text = raw.decode("utf-8", errors="replace")
    rows = list(csv.reader(io.StringIO(text)))
    rows = [r for r in rows if r]
    if not rows:
        return 0, [], False
    width = len(rows[0])
    short = [i for i, r in enumerate(rows[1:]) if len(r) < width]
    return width, short, not raw.endswith((b"\n", b"\r"))


def _read_csv(p: Path) -> pd.DataFrame:
    try:
        width, short, cut = _short_rows(p)
    except csv.Error:
        width, short, cut = 0, [], False
    if short:
        i = short[0]
        last = cut and short == [i] and i == _n_data_rows(p) - 1
        if not last:
            raise InputError(
                f"{p}: line {i + 2} has fewer fields than the header's {width}; a row cut "
                "short? (empty values are written as consecutive commas)"
            )
        warnings.warn(
            f"{p}: line {i + 2} (the last) is cut short: fewer fields than the header's {width} "
            "and no line end (a log still being written?); that record was skipped",
            stacklevel=3,
        )
    try:
        df = pd.read_csv(p, skipfooter=1, engine="python") if short else pd.read_csv(p)
    except Exception as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise InputError(f"{p}: could not read as CSV: {first}") from None
    df.columns = [str(c).strip() for c in df.columns]
    if df.empty:
        raise InputError(f"{p}: the log has no rows")
    return df


class _HugeNumber(ValueError):
    pass


def _parse_int(text: str):
    """JSON integers: more than 300 digits is no step, token or loss count (Python would build
    the integer, and float() of it overflows later, far from the line)."""
    if len(text.lstrip("-")) > 300:
        raise _HugeNumber(len(text.lstrip("-")))
    return int(text)


def _read_jsonl(p: Path) -> pd.DataFrame:
    rows = []
    try:
        lines = p.read_bytes().decode("utf-8", errors="strict").splitlines(keepends=True)
    except UnicodeDecodeError as exc:
        raise InputError(f"{p}: not UTF-8 text (byte {exc.start} is not)") from None
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:  # NaN / Infinity kept as text: a diverged loss must not read as "not logged"
            obj = json.loads(line, parse_constant=str, parse_int=_parse_int)
        except _HugeNumber as exc:
            raise InputError(f"{p}: line {i}: a number written with {exc.args[0]} digits") from None
        except RecursionError:
            raise InputError(f"{p}: line {i}: JSON nested too deeply") from None
        except ValueError:
            if i == len(lines) and not line.endswith("\n"):  # a write cut short
                warnings.warn(
                    f"{p}: line {i} (the last) is cut short, not valid JSON (a log still being "
                    "written?); that record was skipped",
                    stacklevel=3,
                )
                continue
            raise InputError(f"{p}: line {i} is not valid JSON") from None
        if not isinstance(obj, dict):
            raise InputError(f"{p}: line {i} is not a JSON object")
        rows.append(obj)
    if not rows:
        raise InputError(f"{p}: the log has no rows")
    try:
        return pd.DataFrame(rows)
    except UnicodeEncodeError:  # a lone surrogate written as a JSON escape (\udcff)
        i = next(k for k, r in enumerate(rows) if not _utf8(json.dumps(r, ensure_ascii=False)))
        raise InputError(
            f"{p}: record {i + 1}: a text value is not UTF-8 (a lone \\udcxx escape)"
        ) from None


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _n_data_rows(p: Path) -> int:
    text = p.read_bytes().decode("utf-8", errors="replace")
    return max(0, len([r for r in csv.reader(io.StringIO(text)) if r]) - 1)


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
        names = df["Name"].astype(str)
        dup = names.duplicated(keep=False).to_numpy()
        if dup.any():
            rows = [int(i) + 2 for i in np.flatnonzero(names == names[dup].iloc[0])]
            raise InputError(
                f"{p}: runs table: two runs are named {names[dup].iloc[0]!r} (lines "
                f"{', '.join(map(str, rows))}); rename one in W&B or in the export, they would "
                "be merged"
            )
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
    rows = []
    for f in _event_files(p):
        check_log_path(f)
        if p.is_dir():
            run = f.parent.relative_to(p).as_posix() if f.parent != p else p.name
        else:
            run = f.parent.resolve().name
        rows.extend((run, step, tag, v) for step, tag, v in _event_scalars(f))
    if not rows:
        raise InputError(f"{p}: the event files hold no scalar summaries")
    long = pd.DataFrame(rows, columns=[RUN, "step", "tag", "value"])
    long[RUN] = _merge_split_runs(long)
    long = long.drop_duplicates([RUN, "step", "tag"], keep="last")
    wide = long.pivot(index=[RUN, "step"], columns="tag", values="value").reset_index()
    wide.columns.name = None
    return wide


def _merge_split_runs(long: pd.DataFrame) -> pd.Series:
    """Run names with the subfolders of one run folder (``r1/train``, ``r1/eval``, and ``r1``
    itself if it holds event files) merged into that folder's name when no tag is logged in
    two of them (one run's scalars split by kind, not several runs)."""
    names = long[RUN].astype(str)
    tags = long.groupby(names, sort=False)["tag"].agg(lambda t: set(t))
    parent = {r: r.rsplit("/", 1)[0] for r in tags.index if "/" in r}
    rename = {}
    for folder in set(parent.values()):
        group = [r for r, f in parent.items() if f == folder]
        group += [folder] if folder in tags.index else []
        seen = [t for r in group for t in tags[r]]
        if len(group) > 1 and len(seen) == len(set(seen)):
            rename.update(dict.fromkeys(group, folder))
    return names.map(lambda r: rename.get(r, r)) if rename else long[RUN]


def _event_records(f: Path):
    """The payloads of a TFRecord file (``uint64 length, uint32 masked CRC-32C of the length,
    data, uint32 masked CRC-32C of the data``), checking both checksums. A record failing its
    data checksum is skipped and the next one read; a damaged length or a file ending inside a
    record ends the file. Skipped records are reported in one warning per file, by number; a
    file whose first record cannot be read is refused."""
    from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c

    try:
        data = f.read_bytes()
    except OSError as exc:
        raise InputError(f"{f}: cannot read ({exc.strerror})") from None
    pos, i, skipped, end_note = 0, 0, [], ""
    while pos < len(data):
        head = data[pos : pos + 12]
        if len(head) < 12 or masked_crc32c(head[:8]) != struct.unpack("<I", head[8:])[0]:
            if i == 0:
                raise InputError(
                    f"{f}: not a TensorBoard event file (its first record's length fails its "
                    "checksum)"
                )
            end_note = f"record {i} at byte {pos}: " + (
                "the file ends inside its header" if len(head) < 12 else "its length is damaged"
            )
            break
        (n,) = struct.unpack("<Q", head[:8])
        stop = pos + 12 + n + 4
        if stop > len(data):
            end_note = f"record {i} at byte {pos}: the file ends inside it (a write cut short?)"
            break
        payload = data[pos + 12 : pos + 12 + n]
        if masked_crc32c(payload) == struct.unpack("<I", data[stop - 4 : stop])[0]:
            yield i, payload
        else:
            skipped.append(i)
        pos, i = stop, i + 1
    if skipped or end_note:
        parts = []
        if skipped:
            shown = ", ".join(map(str, skipped[:10])) + (" ..." if len(skipped) > 10 else "")
            parts.append(f"{len(skipped)} record(s) failing their checksum skipped ({shown})")
        if end_note:
            parts.append(f"the rest of the file was not read ({end_note})")
        warnings.warn(f"{f}: " + "; ".join(parts), stacklevel=4)


def _event_scalars(f: Path):
    """``(step, tag, value)`` of every scalar summary in one event file; a non-finite value
    is kept as the text ``NaN`` / ``Infinity`` / ``-Infinity``, as a JSONL log writes it, so a
    run whose last loss is NaN reads as diverged (dropping it read the run as healthy)."""
    from tensorboard.compat.proto import event_pb2

    bad = []
    for i, payload in _event_records(f):
        ev = event_pb2.Event()
        try:
            ev.ParseFromString(payload)
        except Exception:
            bad.append(i)
            continue
        if not ev.HasField("summary"):
            continue
        for v in ev.summary.value:
            kind = v.WhichOneof("value")
            if kind == "simple_value":
                x = float(v.simple_value)
            elif kind == "tensor":
                x = _tensor_scalar(v.tensor)
                if x is None:
                    continue
            else:
                continue
            yield int(ev.step), v.tag, x if math.isfinite(x) else _non_finite_text(x)
    if bad:
        warnings.warn(
            f"{f}: {len(bad)} record(s) with a valid checksum but not an event skipped "
            f"({', '.join(map(str, bad[:10]))})",
            stacklevel=3,
        )


def _non_finite_text(x: float) -> str:
    return "NaN" if math.isnan(x) else ("Infinity" if x > 0 else "-Infinity")


def _tensor_scalar(proto) -> float | None:
    from tensorboard.util import tensor_util

    arr = np.asarray(tensor_util.make_ndarray(proto))
    if arr.size != 1 or arr.dtype.kind not in "fiu":
        return None
    return float(arr.reshape(()))


def describe_columns(df: pd.DataFrame) -> str:
    return ", ".join(str(c) for c in df.columns if c != RUN) or "(none)"
