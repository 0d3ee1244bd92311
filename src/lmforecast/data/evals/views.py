"""Wide views of a tidy evals table: the observational-scaling-law benchmark frame and the
salience scores table (see `lmforecast.data.evals`)."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pandas as pd

from ...errors import InputError
from ..validate import check_columns
from .table import COLUMNS

# ----------------------------------------------------------------------------- wide views

_SIZE_TOKEN = re.compile(r"[-_]\d+(?:\.\d+)?[mbkMBK](?=$|[-_])")


def default_family(model: str) -> str:
    """Family = the model name without its size token: `pythia-410m-deduped` ->
    `pythia-deduped`, `pythia-1b` -> `pythia`; a name without one is its own family."""
    fam = _SIZE_TOKEN.sub("", str(model), count=1)
    return fam or str(model)


FAMILY_CHOICES = ("standard", "deduped", "all")


def family_models(models, family: str = "standard") -> tuple[list[str], str | None]:
    """(models kept, note) where `models` mix a family with its deduplicated twin (`pythia-*`
    and `pythia-*-deduped`, families by `default_family`): the two are one suite trained on two
    versions of the data, not a larger sample, so one is fitted: `family` 'standard' (default)
    keeps the standard models, 'deduped' the deduplicated ones, 'all' both. The note says what
    was kept (None when nothing was mixed, or with 'all')."""
    if family not in FAMILY_CHOICES:
        raise InputError(f"--family (family=) {family!r}: use one of {', '.join(FAMILY_CHOICES)}")
    names = list(dict.fromkeys(map(str, models)))
    fam = {m: default_family(m) for m in names}
    twins = sorted({f for f in fam.values() if f"{f}-deduped" in set(fam.values())})
    if not twins or family == "all":
        return names, None
    dropped = {f"{f}-deduped" for f in twins} if family == "standard" else set(twins)
    kept = [m for m in names if fam[m] not in dropped]
    keep = twins if family == "standard" else [f"{f}-deduped" for f in twins]
    other, choice = (
        ([f"{f}-deduped" for f in twins], "deduped")
        if family == "standard"
        else (twins, "standard")
    )
    note = (
        f"models: the {', '.join(keep)} family, {len(kept)} of {len(names)} models (the "
        f"table also holds {', '.join(other)}: --family {choice} to fit those, --family all "
        "for both)"
    )
    return kept, note


def select_rows(
    df: pd.DataFrame,
    metric: str | dict[str, str] = "acc",
    step: int | None = None,
    tasks: Sequence[str] | None = None,
    n_shot: int | None = None,
) -> pd.DataFrame:
    """One row per (model, task): `metric` (or a task -> metric mapping), at `step` (default:
    each model's final evaluation: step NA if present, else its largest step), optional
    `n_shot`. Errors name the task/model at fault."""
    check_columns(df, COLUMNS, "evals table")
    d = df
    if tasks is not None:
        missing = [t for t in tasks if t not in set(d["task"])]
        if missing:
            raise InputError(
                f"evals table: no task {missing[0]!r}; found {', '.join(sorted(set(d['task'])))}"
            )
        d = d[d["task"].isin(list(tasks))]
    if n_shot is not None:
        d = d[d["n_shot"] == n_shot]
        if d.empty:
            raise InputError(f"evals table: no rows with n_shot={n_shot}")
    if isinstance(metric, dict):
        default = metric.get("*")
        wanted = d["task"].map(lambda t: metric.get(t, default))
        unmapped = sorted(set(d.loc[wanted.isna(), "task"]))
        if unmapped:
            raise InputError(f"evals table: no metric given for task {unmapped[0]!r}")
    else:
        wanted = pd.Series(metric, d.index)
    for task, group in d.groupby("task", sort=True):
        want = metric.get(task, metric.get("*")) if isinstance(metric, dict) else metric
        if not (group["metric"] == want).any():
            have = ", ".join(sorted(set(group["metric"])))
            raise InputError(f"evals table: task {task!r} has no metric {want!r} (has {have})")
    d = d[d["metric"] == wanted]
    if step is None:
        stepf = d["step"].astype("Float64").fillna(np.inf)
        last = stepf.groupby(d["model"]).transform("max")
        d = d[stepf == last]
    else:
        have = d.loc[d["step"] == step, "model"].unique()
        lacking = [m for m in d["model"].unique() if m not in set(have)]
        if lacking:
            raise InputError(f"evals table: model {lacking[0]!r} has no results at step {step}")
        d = d[d["step"] == step]
    dup = d.duplicated(["model", "task"]).to_numpy()
    if dup.any():
        r = d.iloc[int(np.argmax(dup))]
        raise InputError(
            f"evals table: model {r['model']!r} task {r['task']!r} has several rows "
            f"(different n_shot?); pick one with n_shot"
        )
    return d


def to_benchmark_frame(
    df: pd.DataFrame,
    metric: str | dict[str, str] = "acc",
    step: int | None = None,
    tasks: Sequence[str] | None = None,
    n_shot: int | None = None,
    family=None,
) -> pd.DataFrame:
    """Pivot a tidy evals table into the observational-scaling-law table (`osl.data` format).

    One row per model (its final evaluation, or `step`); columns `Model`, `Model Family`,
    `Model Size (B)` = params / 1e9, `Pretraining Data Size (T)` = tokens / 1e12,
    `FLOPs (1E21)` = flops / 1e21, then one column per task holding `metric` (default `acc`,
    the one accuracy every multiple-choice harness task reports; pass a dict for per-task
    choices, e.g. {"*": "acc", "arc_challenge": "acc_norm"}; `"*"` is the default).
    `family`: None (`default_family`), a dict model -> family, or a callable.
    """
    d = select_rows(df, metric, step, tasks, n_shot)
    wide = d.pivot(index="model", columns="task", values="value")
    wide.columns = [str(c) for c in wide.columns]
    meta = d.drop_duplicates("model").set_index("model")
    models = list(wide.index)
    if family is None:
        fams = [default_family(m) for m in models]
    elif isinstance(family, dict):
        fams = [family.get(m, m) for m in models]
    else:
        fams = [family(m) for m in models]
    out = pd.DataFrame(
        {
            "Model": models,
            "Model Family": fams,
            "Model Size (B)": meta.loc[models, "params"].to_numpy(float) / 1e9
            if "params" in meta
            else np.nan,
            "Pretraining Data Size (T)": meta.loc[models, "tokens"].to_numpy(float) / 1e12
            if "tokens" in meta
            else np.nan,
            "FLOPs (1E21)": meta.loc[models, "flops"].to_numpy(float) / 1e21
            if "flops" in meta
            else np.nan,
        }
    )
    out = pd.concat([out, wide.reset_index(drop=True)], axis=1)
    order = np.argsort(out["FLOPs (1E21)"].to_numpy(float), kind="stable")
    return out.iloc[order].reset_index(drop=True)


def to_scores(
    df: pd.DataFrame,
    task: str,
    metric: str = "acc",
    step: int | None = None,
    n_shot: int | None = None,
    family=None,
) -> pd.DataFrame:
    """The salience `--scores` table for one task: columns `model`, `family`, `size` (params,
    billions), `<task>` (the metric's value). Combine with `salience.records.size_split` (App. A)
    for the train/validation/test split; values must be fractions in [0, 1] (accuracies)."""
    wide = to_benchmark_frame(df, metric, step, [task], n_shot, family)
    return pd.DataFrame(
        {
            "model": wide["Model"],
            "family": wide["Model Family"],
            "size": wide["Model Size (B)"],
            task: wide[task],
        }
    )
