"""From training logs to the runs table and the checkpoints table the methods read.

The runs table has one row per run: ``model``, ``N`` (non-embedding parameters), ``N_total``
(with embeddings, when given), ``D`` (tokens at the end of the run), ``C = 6 N D``, ``loss``
(the last evaluation, or the mean of the last k with ``final="mean:k"``), ``steps`` and
``n_final`` (evaluations averaged). The checkpoints table has one row per evaluation: ``model``,
``step``, ``tokens``, ``N``, ``N_total``, ``C``, ``loss``, ``train_loss``, kept columns,
``final`` and ``valid``.

Schedules (docs/logs.md): under a cosine or linear-decay schedule the loss at an intermediate
checkpoint is not the loss of a run trained to that many tokens (the learning rate has not
decayed; Hoffmann et al. 2022 App. A, Fig. A1), so only the end of each run is ``valid``. Under a
constant learning rate every checkpoint is valid; under warmup-stable-decay (WSD) the ends of
the cooldowns are (``cooldown_ends``). Writing a checkpoints table that holds invalid rows warns
once, in one line.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ...errors import DomainWarning, InputError, fmt_value
from ...store.safe_write import file_identity
from .checks import (
    check_conflicts,
    check_cooldown_ends,
    check_magnitudes,
    check_models,
    check_params,
    check_tokens,
    keep_column,
)
from .curves import LR_CANDIDATES, check_lr, curves_table, pick_lr, with_lr
from .readers import RUN, check_log_path, describe_columns, read_log

SCHEDULES = ("cosine", "linear", "constant", "wsd")
CANDIDATES = {
    "step": ("step", "_step", "Step", "global_step", "trainer/global_step", "iteration", "iter"),
    "loss": (
        "loss",
        "eval_loss",
        "val_loss",
        "eval/loss",
        "val/loss",
        "valid/loss",
        "validation/loss",
        "train/loss",
        "train_loss",
    ),
    "tokens": (
        "tokens",
        "tokens_seen",
        "num_tokens",
        "consumed_tokens",
        "train/tokens",
        "trainer/tokens",
    ),
}


@dataclass
class ImportedRuns:
    """What `import_logs` found: the two tables, the columns it used and its warnings."""

    runs: pd.DataFrame
    checkpoints: pd.DataFrame | None
    columns: dict = field(default_factory=dict)
    schedule: str = "cosine"
    n_invalid_checkpoints: int = 0
    curves: pd.DataFrame | None = None  # run, step, lr, loss[, tokens, N] (a log with lr)

    def summary(self) -> str:
        used = ", ".join(f"{k}={v}" for k, v in self.columns.items() if v is not None)
        n_ck = 0 if self.checkpoints is None else len(self.checkpoints)
        return (
            f"{len(self.runs)} runs, {n_ck} checkpoints (schedule {self.schedule}; "
            f"{self.n_invalid_checkpoints} mid-schedule); columns: {used}"
        )


def parse_final(text: str) -> int:
    """``last`` -> 1, ``mean:k`` -> k (the number of last evaluations averaged)."""
    t = str(text).strip()
    if t == "last":
        return 1
    if t.startswith("mean:"):
        try:
            k = int(t[5:])
        except ValueError:
            k = 0
        if k >= 1:
            return k
    raise InputError(f"--final must be 'last' or 'mean:k' with k >= 1, got {text!r}")


def _pick(df, given, name, flag, where) -> str | None:
    if given is not None:
        if given not in df.columns:
            raise InputError(
                f"{where}: no column {given!r} ({flag}); the log has columns: "
                f"{describe_columns(df)}"
            )
        return given
    if name == "loss":  # an evaluation loss logged by every run wins over a bare `loss`
        has = df.groupby(RUN, sort=False).count()
        ev = [c for c in CANDIDATES["loss"][1:7] if c in has and (has[c] > 0).all()]
        if ev:
            return ev[0]
    return next((c for c in CANDIDATES.get(name, ()) if c in df.columns), None)


def _number_or_column(v):
    """A flag value that is either a number (a constant) or a column name."""
    if v is None or isinstance(v, int | float):
        return v
    try:
        f = float(v)
    except ValueError:
        return str(v)
    if not (math.isfinite(f) and f > 0):
        raise InputError(f"parameter count must be a positive number, got {v!r}")
    return f


def _read_all(paths, fmt, run_col) -> pd.DataFrame:
    frames, seen = [], {}
    ids = [file_identity(check_log_path(p)) for p in paths]  # files, not spellings
    twice = [p for i, p in enumerate(paths) if ids[i] in ids[:i]]
    if twice:
        raise InputError(f"{twice[0]}: the same log is given twice")
    for p in paths:
        df = read_log(p, fmt, run_col)
        df["_row"] = np.arange(1, len(df) + 1)
        df["_file"] = str(p)
        for r in df[RUN].unique():
            if r in seen and seen[r] != str(p):
                raise InputError(f"run {r!r} appears in two logs: {seen[r]} and {p}")
            seen[r] = str(p)
        frames.append(df)
    out = pd.concat(frames, ignore_index=True, sort=False)
    out.attrs["wandb_summary"] = fmt == "wandb" and any(
        f.attrs.get("wandb_summary") for f in frames
    )
    return out


#: How a JSONL log's NaN / Infinity read (`readers._read_jsonl` keeps them as text).
_NON_FINITE = ("NaN", "Infinity", "-Infinity")


def _numeric(df, col, where, flag) -> np.ndarray:
    v = pd.to_numeric(df[col], errors="coerce")
    bad = v.isna() & df[col].notna()
    bad = bad | np.isinf(v) | df[col].map(lambda x: isinstance(x, bool | np.bool_))  # `true`
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raw = df[col].iloc[i]
        diverged = raw in _NON_FINITE or np.isinf(v.iloc[i])
        hint = (
            " (a diverged run? cut its log before the divergence, or leave the run out)"
            if diverged
            else ""
        )
        raise InputError(
            f"{df['_file'].iloc[i]}: run {df[RUN].iloc[i]!r}: row {int(df['_row'].iloc[i])}: "
            f"column {col!r} ({flag}) holds {fmt_value(raw)}, not a number{hint}"
        )
    return v.to_numpy(dtype=float)


def _params(df, runs, value, flag, models, model_col) -> pd.Series | None:
    """Per-run parameter counts from a number, a log column or the model table."""
    v = _number_or_column(value)
    if isinstance(v, float):
        return pd.Series(v, index=runs)
    if isinstance(v, str):
        if v not in df.columns:
            raise InputError(
                f"{df['_file'].iloc[0]}: no column {v!r} ({flag}); the log has columns: "
                f"{describe_columns(df.drop(columns=['_row', '_file']))}"
            )
        per = df.groupby(RUN)[v].agg(lambda s: pd.to_numeric(s, errors="coerce").dropna().unique())
        for r, u in per.items():
            if len(u) != 1:
                raise InputError(f"run {r!r}: column {v!r} ({flag}) is not one number per run")
        per = per.map(lambda u: float(u[0])).reindex(runs)
        check_params(per, str(df["_file"].iloc[0]), f"{v!r} ({flag})")
        return per
    if models is not None and model_col in models.columns:
        m = models.set_index("model")[model_col]
        missing = [r for r in runs if r not in m.index]
        if missing:
            raise InputError(f"--models: no row for run(s) {', '.join(map(repr, missing[:5]))}")
        return m.reindex(runs).astype(float)
    return None


def import_logs(
    paths,
    fmt: str,
    *,
    step: str | None = None,
    loss: str | None = None,
    tokens: str | None = None,
    tokens_per_step: float | None = None,
    params=None,
    params_total=None,
    models: pd.DataFrame | None = None,
    run: str | None = None,
    train_loss: str | None = None,
    keep=(),
    final: str = "last",
    schedule: str = "cosine",
    cooldown_ends=(),
    models_label: str = "--models",
    lr: str | None = None,
    curves_only: bool = False,
) -> ImportedRuns:
    """Read training logs and build the runs and checkpoints tables (see the module doc).
    `curves_only`: build the curves table alone (run, step, lr, loss), for which tokens and
    parameter counts are optional; ``runs`` and ``checkpoints`` are then None."""
    k = parse_final(final)
    if schedule not in SCHEDULES:
        raise InputError(f"--schedule must be one of {', '.join(SCHEDULES)}, got {schedule!r}")
    if models is not None:
        models = check_models(models, models_label)
    paths = [Path(p) for p in paths]
    if not paths:
        raise InputError("give at least one log file")
    df = _read_all(paths, fmt, run)
    where = str(paths[0]) if len(paths) == 1 else "the logs"
    shown = df.drop(columns=["_row", "_file"])
    summary = fmt == "wandb" and bool(df.attrs.get("wandb_summary"))
    st = None if summary else _pick(shown, step, "step", "--step", where)
    if st is None and not summary:
        raise InputError(
            f"{where}: no step column (looked for {', '.join(CANDIDATES['step'])}); name it with "
            f"--step; the log has columns: {describe_columns(shown)}"
        )
    lo = _pick(shown, loss, "loss", "--loss", where)
    if lo is None:
        raise InputError(
            f"{where}: no loss column (looked for {', '.join(CANDIDATES['loss'])}); name it with "
            f"--loss; the log has columns: {describe_columns(shown)}"
        )
    tk = _pick(shown, tokens, "tokens", "--tokens", where)
    tl = _pick(shown, train_loss, "train_loss", "--train-loss", where)
    lc = None if summary else pick_lr(shown, lr, where)
    for c in keep:
        _pick(shown, c, c, "--keep", where)
    df[lo] = _trailing_non_finite(df, lo, st, tl)
    df["_loss"] = _numeric(df, lo, where, "--loss")
    if summary:
        df["_step"] = np.nan
    else:
        df["_step"] = _numeric(df, st, where, "--step")
        _check_steps(df, st)
    if tk is not None:
        if tokens_per_step is not None:  # never silently ignored
            raise InputError(
                f"{where}: the log has a tokens column ({tk!r}); give --tokens-per-step only "
                "for logs without one (or name another column with --tokens)"
            )
        df["_tokens"] = _numeric(df, tk, where, "--tokens")
    elif tokens_per_step is not None and not summary:
        df["_tokens"] = df["_step"] * float(tokens_per_step)
    elif not curves_only:
        raise InputError(
            f"{where}: no tokens column (looked for {', '.join(CANDIDATES['tokens'])}); name it "
            f"with --tokens, or give --tokens-per-step; the log has columns: "
            f"{describe_columns(shown)}"
        )
    if tl:
        df[tl] = pd.to_numeric(df[tl], errors="coerce")
    if lc is not None:
        df[lc] = _numeric(df, lc, where, "--lr")
        check_lr(df, lc)
    for c in dict.fromkeys(keep):
        if c != tl:
            df[c] = keep_column(df[c])
    if not summary:  # eval and train keys logged on separate lines at one step: merge them
        shown_cols = {"_loss": f"{lo!r} (--loss)"}
        if "_tokens" in df:
            shown_cols["_tokens"] = f"{tk!r} (--tokens)"
        shown_cols.update({c: f"{c!r}" for c in dict.fromkeys([*([tl] if tl else []), *keep])})
        check_conflicts(df, shown_cols)
        df = df.groupby([RUN, "_step"], sort=False, as_index=False).last()
    full = df  # with the steps that logged a learning rate but no loss (the curves table)
    before = df[[RUN, "_file"]].drop_duplicates(RUN)
    df = df[df["_loss"].notna()]  # steps that logged other keys only
    if df.empty:
        raise InputError(f"{where}: column {lo!r} (--loss) holds no values")
    lost = before[~before[RUN].isin(df[RUN])]
    if len(lost):  # a run that logs its loss under another name was dropped silently
        r = lost.iloc[0]
        raise InputError(
            f"{r['_file']}: run {r[RUN]!r} has no values in column {lo!r} (--loss); does it "
            "log its loss under another name? import it on its own with --loss NAME"
        )
    _check_increasing_and_positive(df, lo, tk)
    if "_tokens" in df:
        check_tokens(df, tk)
    runs = list(dict.fromkeys(df[RUN]))
    N = _params(df, runs, params, "--params", models, "N")
    if curves_only:  # the curves table alone: tokens and N are optional columns
        if summary:
            raise InputError(f"{where}: a W&B summary export has no steps, only final runs")
        if lc is None:
            raise InputError(
                f"{where}: no learning-rate column (looked for "
                f"{', '.join(LR_CANDIDATES)}); name it with --lr COL"
            )
        cols = {"step": st, "loss": lo, "tokens": tk, "train_loss": tl, "lr": lc}
        return ImportedRuns(None, None, cols, schedule, 0, curves_table(full, lc, N))
    if N is None:
        raise InputError(
            "give the parameter counts: --params N (a number or a log column) or --models "
            "TABLE with columns model, N (and N_total with embeddings)"
        )
    N_total = _params(df, runs, params_total, "--params-total", models, "N_total")
    if N_total is not None and (N_total < N).any():  # totals include the embeddings
        r = N_total.index[(N_total < N).to_numpy()][0]
        raise InputError(
            f"run {r!r}: total parameters {N_total[r]:.4g} (--params-total) are fewer than the "
            f"non-embedding ones {N[r]:.4g} (--params); the total includes the embeddings"
        )
    ck = _checkpoints(df, N, N_total, tl, keep, schedule, cooldown_ends)
    curves = None if lc is None else curves_table(full, lc, N)
    ck = ck if curves is None else with_lr(ck, curves)
    table = _runs_table(ck, k, keep, summary)
    for t, cols in ((ck, ("step",)), (table, ("steps", "n_final"))):
        for c in cols:
            if c in t and np.isfinite(t[c]).all() and (t[c] == np.round(t[c])).all():
                t[c] = t[c].astype(np.int64)
    n_bad = 0 if summary else int((~ck["valid"]).sum())
    cols = {"step": st, "loss": lo, "tokens": tk, "train_loss": tl, "lr": lc}
    return ImportedRuns(table, None if summary else ck, cols, schedule, n_bad, curves)


def _trailing_non_finite(df: pd.DataFrame, lo: str, st: str | None, tl: str | None) -> pd.Series:
    """The loss column with NaN / Infinity written in a JSONL log read as "not evaluated here"
    (json.dumps writes NaN for a step that logged other keys), except where it is a run's last
    logged loss and no finite training loss stands beside it: that run diverged, and the text
    is left for `_numeric` to refuse by row (it was read as a shorter, healthy run)."""
    raw = df[lo]
    text = raw.isin(_NON_FINITE)
    if not text.any():
        return raw
    keep = pd.Series(False, index=df.index)
    order = pd.to_numeric(df[st], errors="coerce") if st else pd.Series(0.0, index=df.index)
    for _, g in df.assign(_o=order.to_numpy()).groupby(RUN, sort=False):
        g = g[g[lo].notna()].sort_values("_o", kind="stable")
        if len(g) and g[lo].iloc[-1] in _NON_FINITE:
            beside = pd.to_numeric(g[tl], errors="coerce").iloc[-1] if tl else np.nan
            keep[g.index[-1]] = not np.isfinite(beside)
    return raw.where(~text | keep, np.nan)


def _check_increasing_and_positive(df: pd.DataFrame, lo: str, tk: str | None) -> None:
    """A loss must be > 0 (a cross-entropy), and tokens seen never go down within a run."""
    bad = np.flatnonzero(df["_loss"].to_numpy() <= 0)
    if len(bad):
        i = int(bad[0])
        raise InputError(
            f"{df['_file'].iloc[i]}: run {df[RUN].iloc[i]!r}: row {int(df['_row'].iloc[i])}: "
            f"column {lo!r} (--loss) holds {fmt_value(df['_loss'].iloc[i])}; a loss must be > 0"
        )
    for r, g in df.groupby(RUN, sort=False):
        if "_step" not in g or "_tokens" not in g:
            continue
        g = g.sort_values("_step", kind="stable")
        t = g["_tokens"].to_numpy()
        if not np.isfinite(t).all():
            continue
        back = np.flatnonzero(t[1:] < t[:-1])
        if len(back):
            row = g.iloc[int(back[0]) + 1]
            raise InputError(
                f"{row['_file']}: run {r!r}: row {int(row['_row'])}: tokens go down "
                f"({fmt_value(t[back[0] + 1])} after {fmt_value(t[back[0]])}, column "
                f"{tk or 'step x --tokens-per-step'!r}); a restarted run? keep one continuous "
                "log per run"
            )


def _check_steps(df: pd.DataFrame, st: str) -> None:
    for r, g in df.groupby(RUN, sort=False):
        s = g["_step"].to_numpy()
        if not np.isfinite(s).all():
            i = int(np.flatnonzero(~np.isfinite(s))[0])
            raise InputError(
                f"{g['_file'].iloc[i]}: run {r!r}: row {int(g['_row'].iloc[i])}: no {st!r} value"
            )
        back = np.flatnonzero(s[1:] < np.maximum.accumulate(s)[:-1])
        if len(back):
            i = int(back[0]) + 1
            raise InputError(
                f"{g['_file'].iloc[i]}: run {r!r}: row {int(g['_row'].iloc[i])}: step goes "
                f"backwards ({fmt_value(s[i])} after {fmt_value(s[:i].max())}); a restarted "
                "run? keep one continuous log per run"
            )


def _checkpoints(df, N, N_total, tl, keep, schedule, cooldown_ends) -> pd.DataFrame:
    ck = pd.DataFrame({"model": df[RUN].to_numpy(), "step": df["_step"].to_numpy()})
    ck["tokens"] = df["_tokens"].to_numpy()
    ck["N"] = N.reindex(ck["model"]).to_numpy()
    if N_total is not None:
        ck["N_total"] = N_total.reindex(ck["model"]).to_numpy()
    with np.errstate(over="ignore"):
        ck["C"] = 6.0 * ck["N"] * ck["tokens"]
    check_magnitudes(ck, df)
    ck["loss"] = df["_loss"].to_numpy()
    if tl is not None:
        ck["train_loss"] = df[tl].to_numpy()
    for c in keep:
        if c not in ck.columns:
            ck[c] = df[c].to_numpy()
    last = ck.groupby("model", sort=False)["step"].transform("max")
    ck["final"] = ck["step"] == last
    if schedule == "constant":
        ck["valid"] = True
    elif schedule == "wsd":
        ends = {float(s) for s in cooldown_ends}
        check_cooldown_ends(ck, sorted(ends))
        ck["valid"] = ck["final"] | ck["step"].isin(ends)
    else:
        ck["valid"] = ck["final"]
    return ck


def _runs_table(ck: pd.DataFrame, k: int, keep, summary: bool) -> pd.DataFrame:
    rows = []
    n_evals = ck.groupby("model", sort=False).size()
    if k > 1 and (n_evals < k).any():  # mean:50 of 10 evaluations averaged the whole curve
        m = n_evals[n_evals < k].index[0]
        raise InputError(
            f"--final mean:{k}: run {m!r} has only {int(n_evals[m])} evaluation(s); averaging "
            f"more than it has would average the training curve, not its end (use a k of at "
            f"most {int(n_evals.min())})"
        )
    for m, g in ck.groupby("model", sort=False):
        g = g.sort_values("step", kind="stable") if not summary else g
        tail = g.tail(k)
        end = g.iloc[-1]
        row = {"model": m, "N": end["N"]}
        if "N_total" in g:
            row["N_total"] = end["N_total"]
        row.update(D=end["tokens"], C=6.0 * end["N"] * end["tokens"], loss=tail["loss"].mean())
        if not summary:
            row.update(steps=end["step"], n_final=len(tail))
        for c in keep:
            row[c] = end[c]
        rows.append(row)
    return pd.DataFrame(rows)


def warn_if_misused(res: ImportedRuns) -> None:
    """One line, once: the checkpoints table holds mid-schedule rows."""
    if res.checkpoints is not None and res.n_invalid_checkpoints:
        warnings.warn(
            f"{res.n_invalid_checkpoints} of {len(res.checkpoints)} checkpoints are mid-run "
            f"under a {res.schedule} schedule and not comparable with final losses (marked "
            "valid=False); fit laws to the runs table, or pass --constant-lr / --schedule wsd "
            "--cooldown-ends if the learning rate allows",
            DomainWarning,
            stacklevel=2,
        )
