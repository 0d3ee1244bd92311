"""From a tidy evaluation table to the runs/checkpoints of one task.

The tidy table (`lmforecast.data.evals`) has one row per (model, revision, task, metric) with
columns `model, revision, step, task, metric, value, stderr, n_shot, source, params,
params_nonembedding, tokens, flops`. For a downstream forecast we need, per checkpoint
(model, step): the stage-1 loss (natural log of the loss task's perplexity, e.g. LAMBADA), the
task's score in percentage points and its standard error, and the training compute.

- checkpoints = every (model, step) with FLOPs > 0 that has both the loss and the score
  (step 0 has no training compute and is left out);
- runs = each model's last step (the final checkpoint).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..data.evals.registry import match_model_names
from ..data.evals.values import FRACTION_METRICS, bad_values, base_metric, value_problem
from ..data.evals.views import family_models
from ..data.io import read_table
from ..data.validate import check_columns
from ..errors import DomainWarning, InputError, did_you_mean
from ..scores import scale_of

EVALS_COLUMNS = ("model", "step", "task", "metric", "value", "flops")
LOSS_METRICS = (
    "ppl",
    "perplexity",
    "loss",
    "nll",
    "bits_per_byte",
    "bpb",
    "byte_perplexity",
    "word_perplexity",
)
# a task's own loss (the recommended stage 1 when present), best first: bits per byte (the
# OLMo ladder's choice), the harness's byte / word perplexity, a per-answer negative
# log-likelihood; also a task `<task>_bpb` (OLMo-style rows) with any loss metric
TASK_LOSS_METRICS = (
    "bits_per_byte",
    "bpb",
    "byte_perplexity",
    "word_perplexity",
    "nll",
    "loss",
    "ppl",
    "perplexity",
)
PERPLEXITIES = ("ppl", "perplexity", "byte_perplexity", "word_perplexity")
AUTO = "auto"
# score metrics that rise with compute: never a stage-1 loss (a Brier score falls, like a loss)
HIGHER_IS_BETTER = tuple(m for m in FRACTION_METRICS if m != "brier_score")
DEFAULT_LOSS_TASK = "lambada_openai"


def resolve_loss_task(
    evals: pd.DataFrame, task: str, loss_task: str = AUTO, loss_metric: str | None = None
) -> tuple[str, list[str]]:
    """(loss task, metrics to try). `auto`: the task's own loss when the table has one (a loss
    metric of `task` itself, else a task `<task>_bpb`), else `lambada_openai`. A score metric
    (`acc`, ...) given as the loss is refused: stage 1 is a loss that falls with compute."""
    if loss_metric and base_metric(loss_metric) in HIGHER_IS_BETTER:
        raise InputError(
            f"--loss-metric (loss_metric=) {loss_metric!r} is a score (a fraction that rises "
            "with compute), not a loss; stage 1 needs a loss metric such as "
            f"{', '.join(TASK_LOSS_METRICS[:4])} or ppl"
        )
    if loss_task != AUTO:
        return loss_task, [loss_metric] if loss_metric else list(LOSS_METRICS)
    tasks, metrics = evals["task"].astype(str), evals["metric"].astype(str)
    own = set(metrics[tasks == str(task)])
    want = [loss_metric] if loss_metric else list(TASK_LOSS_METRICS)
    if any(m in own for m in want):
        return str(task), want
    if (tasks == f"{task}_bpb").any():
        return f"{task}_bpb", [loss_metric] if loss_metric else list(LOSS_METRICS)
    return DEFAULT_LOSS_TASK, [loss_metric] if loss_metric else list(LOSS_METRICS)


@dataclass
class TaskData:
    """One task's checkpoints (all steps) and runs (final step per model)."""

    task: str
    metric: str
    loss_task: str
    checkpoints: pd.DataFrame  # model, step, N, D, C, loss, score, stderr
    n_dropped: dict

    @property
    def runs(self) -> pd.DataFrame:
        ck = self.checkpoints
        last = ck.groupby("model")["step"].transform("max") == ck["step"]
        return ck[last].sort_values("C").reset_index(drop=True)


def _rows(df: pd.DataFrame, task: str, what: str) -> pd.DataFrame:
    sub = df[df["task"].astype(str) == task]
    if sub.empty:
        tasks = sorted(df["task"].astype(str).unique())
        shown = ", ".join(tasks[:12]) + (f", ... ({len(tasks)} tasks)" if len(tasks) > 12 else "")
        near = did_you_mean(task, tasks)  # the list is cut at 12: name the nearest first
        found = f" ({len(tasks)} tasks in the table)" if near else f"; found {shown}"
        raise InputError(f"evals: {what} {task!r} not in column 'task'{near}{found}")
    return sub


def _metric(sub: pd.DataFrame, task: str, metrics, flag: str) -> tuple[pd.DataFrame, str]:
    have = list(dict.fromkeys(sub["metric"].astype(str)))
    for m in metrics:
        if m in have:
            return sub[sub["metric"].astype(str) == m], m
    raise InputError(
        f"evals: task {task!r} has no metric {' or '.join(map(repr, metrics))} ({flag}); "
        f"found {', '.join(map(repr, have))}"
    )


def _row(df: pd.DataFrame, i: int) -> int:
    """The table's own data-row number of position i (rows filtered out before still count)."""
    label = df.index[i]
    return int(label) + 1 if isinstance(label, int | np.integer) else i + 1


def _check_numbers(df: pd.DataFrame) -> None:
    """step, value, flops, stderr numeric (step, flops and stderr >= 0); each value one its
    metric can take. Row numbers are the table's own (data rows from 1)."""
    for c in ("step", "value", "flops", "stderr"):
        if c not in df.columns:
            continue
        vals = pd.to_numeric(df[c], errors="coerce")
        bad = vals.isna() & df[c].notna()
        if c != "value":
            bad = bad | (vals < 0) | np.isinf(vals.to_numpy(float))
        if bad.any():
            i = int(np.argmax(bad.to_numpy()))
            why = "is not a number" if pd.isna(vals.iloc[i]) else "must be a finite number >= 0"
            raise InputError(f"evals: column {c!r} row {_row(df, i)}: {df[c].iloc[i]!r} {why}")
    val = pd.to_numeric(df["value"], errors="coerce")
    bad = bad_values(df["metric"], val) & val.notna().to_numpy()
    if bad.any():
        i = int(np.argmax(bad))
        why = value_problem(str(df["metric"].iloc[i]), val.iloc[i])
        raise InputError(f"evals: column 'value' row {_row(df, i)}: {val.iloc[i]!r} {why}")


def _no_missing_value(sub: pd.DataFrame) -> pd.DataFrame:
    """A row of the task (or loss task) with an empty value is refused, naming it: dropping it
    would silently move the model's 'final' checkpoint to an earlier step."""
    miss = sub["value"].isna().to_numpy()
    if miss.any():
        i = int(np.argmax(miss))
        r = sub.iloc[i]
        raise InputError(
            f"evals: column 'value' row {_row(sub, i)} (model {r['model']!r}, task "
            f"{r['task']!r}, metric {r['metric']!r}) is missing; a value cannot be missing"
        )
    return sub


def _dedupe(d: pd.DataFrame, what: str) -> pd.DataFrame:
    """One row per (model, step); two rows for one checkpoint (the same value twice, or two
    different values) are refused: which one to forecast from is the user's choice."""
    dup = d.duplicated(["model", "step"], keep=False).to_numpy()
    if dup.any():
        r = d.iloc[int(np.argmax(dup))]
        step = "final" if not np.isfinite(r["step"]) else f"{r['step']:g}"
        same = d[(d["model"] == r["model"]) & (d["step"] == r["step"])]
        vals = same["value"].tolist()
        kind = "duplicate" if len(set(vals)) == 1 else "contradictory"
        shots = same["n_shot"].dropna().unique().tolist() if "n_shot" in d.columns else []
        hint = (
            f"; they differ in n_shot ({', '.join(f'{v:g}' for v in shots)}): keep the "
            "rows of one n_shot (filter column 'n_shot')"
            if len(shots) > 1
            else "; keep one row per checkpoint"
        )
        raise InputError(
            f"evals: {kind} rows for model {r['model']!r} step {step} {what} (values "
            f"{', '.join(f'{v:g}' for v in vals)}){hint}"
        )
    return d


def task_data(
    evals: pd.DataFrame,
    *,
    task: str,
    loss_task: str = AUTO,
    metric: str = "acc",
    loss_metric: str | None = None,
    models=None,
) -> TaskData:
    """Checkpoints of `task` joined with the stage-1 loss of `loss_task` (see module doc).

    `loss_task` `auto` (default): the task's own loss when present (`resolve_loss_task`), else
    `lambada_openai`. `loss_metric` None: the first loss metric present (`LOSS_METRICS`, or
    `TASK_LOSS_METRICS` for the task's own loss); perplexities are stored as ln ppl.
    `models`: keep only these model names (default: all). Scores are converted to points
    (x100) when the metric's values all lie in [0, 1].
    """
    if not isinstance(evals, pd.DataFrame):
        raise InputError("evals: expected a DataFrame (or a path to a table)")
    check_columns(evals, EVALS_COLUMNS, "evals")
    df = evals
    if models is not None:
        models = [models] if isinstance(models, str) else [str(m) for m in models]
        models = match_model_names(
            models, df["model"].astype(str).unique(), "evals: model", "in column 'model'"
        )  # any case; a typo named
        df = df[df["model"].astype(str).isin(models)]
    _check_numbers(df)
    num = [c for c in ("value", "stderr", "flops", "params", "tokens") if c in df.columns]
    df = df.assign(**{c: pd.to_numeric(df[c], errors="coerce").astype(float) for c in num})
    # a row without a revision (step NA) is the final model: it sorts after every step
    df = df.assign(step=pd.to_numeric(df["step"], errors="coerce").astype(float).fillna(np.inf))
    loss_task, lmets = resolve_loss_task(df, task, loss_task, loss_metric)
    lsub, lmet = _metric(
        _rows(df, loss_task, "loss task (--loss-task)"), loss_task, lmets, "--loss-task"
    )
    ssub, _ = _metric(_rows(df, task, "task"), task, [metric], "--metric")
    lsub = _dedupe(_no_missing_value(lsub), f"task {loss_task!r} metric {lmet!r}")
    ssub = _dedupe(_no_missing_value(ssub), f"task {task!r} metric {metric!r}")
    loss = lsub["value"].to_numpy(float)
    if lmet in PERPLEXITIES:
        if (loss <= 0).any():
            raise InputError(f"evals: task {loss_task!r} metric {lmet!r}: perplexity must be > 0")
        loss = np.log(loss)
    lsub = lsub.assign(loss=loss)[["model", "step", "loss"]]
    m = ssub.merge(lsub, on=["model", "step"], how="inner")
    n_all = len(ssub)
    ok = np.isfinite(m["loss"]) & np.isfinite(m["value"]) & (m["flops"] > 0)
    dropped = {"no_loss": int(n_all - len(m)), "no_compute_or_nan": int((~ok).sum())}
    m = m[ok]
    if m.empty:
        raise InputError(
            f"evals: task {task!r} and loss task {loss_task!r} share no checkpoint with FLOPs > 0"
        )
    if models is not None:  # a model asked for by name is never left out silently
        lost = [x for x in models if x not in set(m["model"].astype(str))]
        if lost:
            raise InputError(
                f"evals: model(s) {', '.join(map(repr, lost))} have no checkpoint with a "
                f"{task!r} {metric!r} score, a {loss_task!r} loss and FLOPs > 0; drop them "
                "from --models or complete their rows"
            )
    score = m["value"].to_numpy(float)
    se = (
        pd.to_numeric(m["stderr"], errors="coerce").to_numpy(float)
        if "stderr" in m.columns
        else np.full(len(m), np.nan)
    )
    # fractions or points: read off every row of the task's metric, not the fitted subset (a
    # points metric whose small models all score below 1 point would read as fractions)
    every = evals[(evals["task"].astype(str) == task) & (evals["metric"].astype(str) == metric)]
    scale = score_scale(pd.to_numeric(every["value"], errors="coerce").to_numpy(float), metric)
    if scale == 1.0:
        warn_mixed_scales(every, task, metric)
    N = m["params"].to_numpy(float) if "params" in m.columns else np.full(len(m), np.nan)
    D = m["tokens"].to_numpy(float) if "tokens" in m.columns else np.full(len(m), np.nan)
    ck = (
        pd.DataFrame(
            {
                "model": m["model"].astype(str).to_numpy(),
                "step": m["step"].to_numpy(float),
                "N": N,
                "D": D,
                "C": m["flops"].to_numpy(float),
                "loss": m["loss"].to_numpy(float),
                "score": score * scale,
                "stderr": se * scale,
            }
        )
        .sort_values(["C", "model", "step"])
        .reset_index(drop=True)
    )
    return TaskData(str(task), str(metric), str(loss_task), ck, dropped)


def warn_mixed_scales(rows: pd.DataFrame, task: str, metric: str) -> None:
    """Points (0-100) with some models' scores all at most 1 while other models' scores are
    mostly above 1: fractions mixed with percent? (A table edited by hand; a custom metric name
    escapes the harness's own fraction metrics.) Warned, not refused: an emergent task's small
    models can score below 1 point."""
    v = pd.to_numeric(rows["value"], errors="coerce")
    top = v.groupby(rows["model"].astype(str)).max().dropna()
    small = top[top <= 1.0]
    big = top[top > 1.0]
    if len(small) and len(big) and float(big.median()) > 20 * float(small.median() + 1e-12):

        def names(idx) -> str:
            more = f" and {len(idx) - 3} more" if len(idx) > 3 else ""
            return ", ".join(map(repr, idx[:3])) + more

        warnings.warn(
            f"evals: task {task!r} metric {metric!r}: model(s) {names(small.index)} score at "
            f"most {float(small.max()):g} while {names(big.index)} score up to "
            f"{float(big.max()):g}: fractions mixed with points? (the values are read as points "
            "in [0, 100])",
            stacklevel=3,
        )


def score_scale(score: np.ndarray, metric: str) -> float:
    """100 when the scores are fractions (all in [0, 1]; the harness's fraction metrics always
    are), 1 when they are points in [0, 100]; anything else is refused naming the metric and
    the value (`scores.scale_of`, the package's one door to its score unit)."""
    return scale_of(score, "auto", f"evals: metric {metric!r}")


def flops_basis(evals: pd.DataFrame) -> str | None:
    """Which parameter column the table's FLOPs are 6 x N x tokens of ('params' or
    'params_nonembedding'), so `predict(N=, D=)` uses the same accounting; None if neither."""
    need = {"flops", "tokens"}
    if not need <= set(evals.columns):
        return None
    d = evals[(pd.to_numeric(evals["flops"], errors="coerce") > 0)].drop_duplicates(
        ["model", "step"]
    )
    if d.empty:
        return None
    for col in ("params", "params_nonembedding"):
        if col in d.columns:
            r = d["flops"].to_numpy(float) / (
                6.0 * d[col].to_numpy(float) * d["tokens"].to_numpy(float)
            )
            if np.all(np.abs(r - 1.0) < 1e-3):
                return col
    if "params" in d.columns:  # another accounting differs by a small factor, a unit by 1e9
        ratio = d["flops"].to_numpy(float) / (
            6.0 * d["params"].to_numpy(float) * d["tokens"].to_numpy(float)
        )
        ratio = ratio[np.isfinite(ratio) & (ratio > 0)]
        r = float(np.median(ratio)) if ratio.size else 1.0
        if not 1e-2 <= r <= 1e2:
            warnings.warn(
                f"evals: column 'flops' is {r:.3g} x 6 x params x tokens (median over the "
                "checkpoints): FLOPs in another unit (GFLOPs?) or params/tokens in millions? "
                "forecasts by FLOPs and by N, D would disagree",
                DomainWarning,
                stacklevel=3,
            )
    return None


def flp_tables(
    evals: pd.DataFrame,
    *,
    task: str,
    loss_task: str = "lambada_openai",
    metric: str = "acc",
    models=None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """RUNS and CKPTS in the input format of `lmforecast.flp.FLP` (Chen et al.), built from a
    tidy evals table: runs = final checkpoints (`model, C, loss`), checkpoints = every step with
    FLOPs > 0 (`model, step, C, loss, <task>` in points)."""
    td = task_data(evals, task=task, loss_task=loss_task, metric=metric, models=models)
    runs = td.runs[["model", "C", "loss"]].reset_index(drop=True)
    ck = td.checkpoints[["model", "step", "C", "loss", "score"]].rename(columns={"score": task})
    return runs, ck


def evals_frame(evals) -> pd.DataFrame:
    """The evaluation table given as a DataFrame or read from a path."""
    if isinstance(evals, pd.DataFrame):
        return evals
    if isinstance(evals, str | Path):
        return read_table(evals)
    raise InputError(f"evals: expected a DataFrame or a path, got {type(evals).__name__}")


def fit_models(df: pd.DataFrame, models, family: str | None) -> tuple[list | None, str | None]:
    """(models to fit, note): `models` as given, or without them, where the table mixes a
    family with its deduplicated twin, the `family` ("standard" by default) that
    `data.evals.family_models` keeps and its note; `family` beside `models` is refused."""
    if models is not None:
        if family is not None:
            raise InputError(
                "--family (family=) chooses among the table's models: give it without --models "
                "(models=)"
            )
        return models, None
    if "model" not in df.columns:
        return None, None
    kept, note = family_models(df["model"].astype(str).unique(), family or "standard")
    return (None, None) if note is None else (kept, note)


def largest_score(runs: pd.DataFrame) -> float:
    """The largest fitted model's final score (the mean when several finals share the largest
    compute, e.g. a standard and a deduplicated model of one size)."""
    top = runs["C"] >= runs["C"].max() * (1 - 1e-9)
    return float(runs.loc[top, "score"].mean())


def largest_label(runs: pd.DataFrame) -> str:
    """The largest fitted model's name; several sharing the largest compute (a standard and a
    deduplicated model of one size) are named together as the mean `largest_score` takes."""
    top = runs["C"] >= runs["C"].max() * (1 - 1e-9)
    names = list(dict.fromkeys(runs.loc[top, "model"].astype(str)))
    return names[0] if len(names) == 1 else f"mean of {' and '.join(names)}"
