"""Reading FLP / FLP-M tables and the checkpoint filter of Sec. 3.3.

RUNS (final, fully trained sampling models): `model`, `N`, `D` or `C`, `loss`; for FLP-M also
`C_<source>` per source (or `ratio` plus `C` for two sources, or `ratio_<source>` plus `C`) and
`loss_<domain>` per validation domain. CKPTS (intermediate checkpoints): `model`, `step`, `C`,
`loss` (and `loss_<domain>`), optional `train_loss`, and one score column per task.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..data.validate import check_columns, numeric_column
from ..errors import DomainWarning, InputError, fmt_value
from ..scores import scale_of

DEFAULT_SOURCES = ("general", "code")


@dataclass(frozen=True)
class Columns:
    """Column names of the input tables (the defaults work without flags)."""

    model: str = "model"
    step: str = "step"
    C: str = "C"
    N: str = "N"
    D: str = "D"
    loss: str = "loss"
    train_loss: str = "train_loss"


def final_flops(df: pd.DataFrame, cols: Columns = Columns(), what: str = "runs") -> np.ndarray:
    """Training FLOPs of each row: column C, or 6 N D when only N and D are given."""
    if cols.C in df.columns:
        return numeric_column(df, cols.C, positive=True, what=what)
    if cols.N in df.columns and cols.D in df.columns:
        N = numeric_column(df, cols.N, positive=True, what=what)
        return 6.0 * N * numeric_column(df, cols.D, positive=True, what=what)
    raise InputError(
        f"{what}: need a FLOPs column {cols.C!r} or both {cols.N!r} and {cols.D!r}; found "
        f"{', '.join(map(repr, df.columns))}"
    )


def score_column(df: pd.DataFrame, task: str, what: str) -> str:
    """The column holding `task`'s score: exactly the task name, else a case-insensitive match."""
    if task in df.columns:
        return task
    hits = [c for c in df.columns if c.lower() == task.lower()]
    if hits:
        return hits[0]
    raise InputError(
        f"{what}: no score column for task {task!r}; found {', '.join(map(repr, df.columns))}"
    )


def points_column(
    df: pd.DataFrame, col: str, unit: str = "auto", what: str = "checkpoints", positive=False
) -> np.ndarray:
    """Column `col` of scores as points (0-100), converted at the door (`scores.to_points`):
    ``unit="auto"`` reads the WHOLE column as fractions when all its values lie in [0, 1] (as
    the lm-evaluation-harness writes accuracies), as points otherwise; "points" keeps values
    <= 1 as points. A value outside the unit's range is refused in one line naming the table,
    column, row and value."""
    v = numeric_column(df, col, positive=positive, lower=0.0, what=what)
    row = int(np.argmax(v)) + 1 if v.size else 1  # scale_of refuses the largest value
    return v * scale_of(v, unit, f"{what}: column {col!r} row {row}")


def task_scores(df: pd.DataFrame, task: str, unit: str = "auto", what: str = "checkpoints"):
    """(column name, scores in points) of `task` in `df` (`score_column`, `points_column`)."""
    col = score_column(df, task, what)
    return col, points_column(df, col, unit, what)


@dataclass
class FilterReport:
    """Which checkpoints the Sec. 3.3 filter kept, and why the others were dropped."""

    kept: np.ndarray  # bool per checkpoint row
    not_improved: np.ndarray  # bool: training loss did not improve
    not_emerged: np.ndarray  # bool: score < random + threshold

    def counts(self) -> dict[str, int]:
        return {
            "checkpoints": int(self.kept.size),
            "kept": int(self.kept.sum()),
            "dropped_not_improved": int(self.not_improved.sum()),
            "dropped_not_emerged": int((self.not_emerged & ~self.not_improved).sum()),
        }


def improved_loss_mask(models, steps, train_loss, decimals: int = 2) -> np.ndarray:
    """Sec. 3.3: keep a checkpoint only if its training loss, rounded to `decimals`, is strictly
    below that of the previous *kept* checkpoint of the same model (the first one is kept);
    ties are dropped (METHODS.md 3.7 item 7)."""
    models = np.asarray(models)
    steps = np.asarray(steps, float)
    tl = np.round(np.asarray(train_loss, float), decimals)
    keep = np.zeros(tl.size, bool)
    order = np.lexsort((steps, models.astype(str)))
    best: dict = {}
    for i in order:
        m = models[i]
        if m not in best or tl[i] < best[m]:
            keep[i] = True
            best[m] = tl[i]
    return keep


def filter_checkpoints(
    ckpts: pd.DataFrame,
    scores: np.ndarray,
    chance: float,
    threshold: float = 5.0,
    cols: Columns = Columns(),
    decimals: int = 2,
) -> FilterReport:
    """The checkpoint filter of Sec. 3.3: improved training loss, then emerged score."""
    n = len(ckpts)
    if cols.train_loss in ckpts.columns:
        tl = numeric_column(ckpts, cols.train_loss, positive=True, what="checkpoints")
        # training order within a model: the step, else the compute (C grows with the step);
        # never the file's row order, which a sort or a merge can shuffle
        order_col = next((c for c in (cols.step, cols.C) if c in ckpts.columns), None)
        if order_col is None:
            raise InputError(
                f"checkpoints: the training-loss filter (Sec. 3.3) needs each checkpoint's "
                f"position in training: add a {cols.step!r} (or {cols.C!r}) column; found "
                f"{', '.join(map(repr, ckpts.columns))}"
            )
        steps = numeric_column(ckpts, order_col, what="checkpoints")
        improved = improved_loss_mask(ckpts[cols.model].to_numpy(), steps, tl, decimals)
    else:
        improved = np.ones(n, bool)
    emerged = scores >= chance + threshold
    return FilterReport(improved & emerged, ~improved, ~emerged)


def emerged_checkpoints(
    ck: pd.DataFrame,
    task: str,
    chance: float,
    threshold: float,
    cols: Columns,
    decimals: int,
    need: int | None,
    score_unit: str = "auto",
) -> tuple[pd.DataFrame, np.ndarray, FilterReport]:
    """Stage-2 input shared by FLP and FLP-M (Sec. 3.3): the task's scores in points (a column
    in fractions is converted at the door, `points_column` with `score_unit`), the checkpoint
    filter, and a one-line error saying why too few checkpoints survived when fewer than `need`
    do (None: no minimum). Returns (checkpoints, scores, filter report); the checkpoints carry
    the task's column in points, so a later read of it agrees with the scores."""
    col, P = task_scores(ck, task, score_unit, "checkpoints")
    ck = ck.assign(**{col: P})
    if cols.model not in ck.columns:
        ck = ck.assign(**{cols.model: np.arange(len(ck)).astype(str)})
    rep = filter_checkpoints(ck, P, chance, threshold, cols, decimals)
    kept = int(rep.kept.sum())
    if need is not None and kept < need:
        c = rep.counts()
        raise InputError(
            f"task {task!r}: {kept} checkpoint(s) usable of {c['checkpoints']}"
            f" ({c['dropped_not_improved']} dropped: training loss did not improve; "
            f"{c['dropped_not_emerged']} dropped: score below random {chance:g} + "
            f"{threshold:g}); need at least {need}" + (" emerged checkpoints" if need == 2 else "")
        )
    return ck, P, rep


def check_models_have_runs(ckpts: pd.DataFrame, runs: pd.DataFrame, col: str = "model") -> None:
    """Every checkpoint must belong to a final model of RUNS."""
    check_columns(runs, [col], "runs")
    check_columns(ckpts, [col], "checkpoints")
    known = set(runs[col].astype(str))
    m = ckpts[col].astype(str).to_numpy()
    bad = ~np.isin(m, list(known))
    if bad.any():
        i = int(np.argmax(bad))
        raise InputError(
            f"checkpoints: row {i + 1}: model {fmt_value(m[i])} has no final model in the runs "
            f"table ({int(bad.sum())} checkpoint row(s) affected)"
        )


def source_flops(
    df: pd.DataFrame, cols: Columns = Columns(), sources=None, what: str = "runs"
) -> tuple[tuple[str, ...], np.ndarray]:
    """(source names, (n, K) FLOPs per source) from `C_<source>` columns, or `ratio_<source>`
    / `ratio` (share of the second source, two sources) times the total `C`."""
    c_cols = [c for c in df.columns if c.startswith("C_")]
    r_cols = [c for c in df.columns if c.startswith("ratio_")]
    if c_cols:
        names = tuple(c[2:] for c in c_cols)
        F = np.column_stack([numeric_column(df, c, lower=0.0, what=what) for c in c_cols])
        _warn_disagreeing_totals(df, cols, F, c_cols, what)
    elif r_cols or "ratio" in df.columns:
        C = final_flops(df, cols, what)
        if r_cols:
            names = tuple(c[6:] for c in r_cols)
            R = np.column_stack(
                [numeric_column(df, c, lower=0.0, upper=1.0, what=what) for c in r_cols]
            )
        else:
            r = numeric_column(df, "ratio", lower=0.0, upper=1.0, what=what)
            names = tuple(sources) if sources else DEFAULT_SOURCES
            if len(names) != 2:
                raise InputError(f"{what}: a single 'ratio' column needs exactly two sources")
            R = np.column_stack([1.0 - r, r])
        s = R.sum(axis=1)
        bad = np.abs(s - 1.0) > 1e-6
        if bad.any():
            i = int(np.argmax(bad))
            raise InputError(
                f"{what}: row {i + 1}: mixing ratios {', '.join(r_cols)} sum to {s[i]:g}, not 1"
            )
        F = R * C[:, None]
    else:
        raise InputError(
            f"{what}: need FLOPs per source (columns C_<source>, e.g. C_general, C_code) or "
            f"'ratio' plus 'C'; found {', '.join(map(repr, df.columns))}"
        )
    if sources is not None and tuple(sources) != names:
        raise InputError(f"{what}: sources {names} differ from the fit's {tuple(sources)}")
    tot = F.sum(axis=1)
    if (tot <= 0).any():
        i = int(np.argmax(tot <= 0))
        raise InputError(f"{what}: row {i + 1}: total FLOPs must be > 0")
    return names, F


def _warn_disagreeing_totals(df, cols: Columns, F: np.ndarray, c_cols, what: str) -> None:
    """A `C` or `ratio` column beside `C_<source>` columns is not read: say when it disagrees
    with them by more than 1% (a C three times their sum was ignored silently)."""
    tot = F.sum(axis=1)
    checks = []
    if cols.C in df.columns:
        C = pd.to_numeric(df[cols.C], errors="coerce").to_numpy(float)
        checks.append((cols.C, C, tot))
    if "ratio" in df.columns and F.shape[1] == 2:
        r = pd.to_numeric(df["ratio"], errors="coerce").to_numpy(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            checks.append(("ratio", r, F[:, 1] / tot))
    for name, given, implied in checks:
        with np.errstate(invalid="ignore", divide="ignore"):
            off = np.abs(given - implied) > 0.01 * np.maximum(np.abs(implied), 1e-12)
        if off.any():
            i = int(np.argmax(off))
            warnings.warn(
                f"{what}: row {i + 1}: column {name!r} ({given[i]:.4g}) disagrees with "
                f"{', '.join(c_cols)} ({implied[i]:.4g}); the {', '.join(c_cols)} columns are "
                "used",
                DomainWarning,
                stacklevel=4,
            )


def domain_columns(df: pd.DataFrame, what: str = "runs") -> list[str]:
    cols = [c for c in df.columns if c.startswith("loss_")]
    if not cols:
        raise InputError(
            f"{what}: no per-domain loss columns (loss_<domain>, e.g. loss_code); found "
            f"{', '.join(map(repr, df.columns))}"
        )
    return cols


def mixture_domains(runs: pd.DataFrame, ck: pd.DataFrame) -> list[str]:
    """The runs' domain loss columns, which the checkpoints must have too; a domain only the
    checkpoints have is left out of FLP-M, and said so (it was dropped silently)."""
    dcols = domain_columns(runs, "runs")
    missing = [c for c in dcols if c not in ck.columns]
    if missing:
        raise InputError(f"checkpoints: missing domain loss column(s) {missing}")
    extra = [c for c in ck.columns if c.startswith("loss_") and c not in dcols]
    if extra:
        warnings.warn(
            f"checkpoints: domain loss column(s) {', '.join(map(repr, extra))} are not in runs: "
            f"FLP-M uses the {len(dcols)} domains the runs have",
            DomainWarning,
            stacklevel=3,
        )
    return dcols
