"""lm-evaluation-harness results JSON -> one tidy table (one row per model, step, task, metric).

Layouts read (both detected per metric key):

- **older harness** (v0.3, the Pythia suite's `evals/pythia-v1` files): top-level `results`
  (task -> {"acc": .., "acc_stderr": ..}), `versions`, `config` with `model_args` a string
  `"pretrained=EleutherAI/pythia-v1.1-160m,revision=step0"` and `num_fewshot`;
- **current harness** (v0.4+): metric keys `"<metric>,<filter>"` (`"acc,none"`,
  `"acc_stderr,none"`, `"exact_match,strict-match"`), plus `configs`, `n-shot`, `versions`,
  `config.model_args` as a string or a dict, `config.model_name` / top-level `model_name`
  in some versions. Keys without a filter in a current-layout entry (`alias`, `name`,
  `sample_len`) are metadata and skipped; so are non-numeric values (`"N/A"` stderr).

`<metric>_stderr` is folded into the `stderr` column of `<metric>` (same filter). A metric with
filter `none` is named by its bare name (`acc`); any other filter keeps the harness notation
(`exact_match,strict-match`).

Model names: `pretrained=` of `model_args` (else `config.model_name`, else top-level
`model_name`). Pythia repositories get a canonical short name (`canonical_model_name`):
`EleutherAI/pythia-v1.1-160m` -> `pythia-160m`, `EleutherAI/pythia-v1.1-1b-bf16` -> `pythia-1b`,
`EleutherAI/pythia-410m-deduped` -> `pythia-410m-deduped`; any other model keeps its `pretrained`
string. The training step comes from `revision=stepN`; no revision (or `main`) is the final model
(step NA).

Built-in models registry (`pythia_models()`): the 16 Pythia models (8 sizes, standard and
deduplicated). Non-embedding parameters are Table 1 of Biderman et al. (2023), "Pythia: A Suite
for Analyzing Large Language Models Across Training and Scaling" (ICML 2023), also the
EleutherAI/pythia README / model cards. Total parameters are the non-embedding count plus the two
untied GPT-NeoX embedding matrices, 2 * vocab * d_model, with the padded vocabulary of each
model's Hugging Face `config.json` (50,304; 50,432 for 6.9B; 50,688 for 12B); this is the
"total params" of the pythia README (e.g. 70,426,624 for 70M). Every model saw 2,097,152 tokens
per step (1024 sequences x 2048 tokens), 143,000 steps = 299,892,736,000 tokens (~300B, Sec. 2).

FLOPs: `6 * params * tokens` (`compute.flops.training_flops`, 6ND accounting, total parameters,
as the observational-scaling-law tables do); 0 at step 0.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from ...compute.flops import training_flops
from ...errors import InputError, did_you_mean
from .harness_files import harness_docs, warn_skipped
from .registry import canonical_model_name, models_registry
from .table import COLUMNS, normalize
from .values import (
    FRACTION_METRICS,
    LOSS_METRICS,
    PERPLEXITY_METRICS,
    stderr_problem,
    value_problem,
)

_STEP_RE = re.compile(r"^step(\d+)$")
_FINAL_REVISIONS = ("", "main")
MAX_STEP = 2**53  # a training step above this is not a step (and not exact in a float column)


def _model_args(config: dict, path: Path) -> dict:
    args = config.get("model_args")
    if args is None:
        return {}
    if isinstance(args, dict):
        return {str(k): v for k, v in args.items()}
    if not isinstance(args, str):
        raise InputError(f"{path}: config.model_args is neither a string nor an object")
    out = {}
    for part in args.split(","):
        if not part.strip():
            continue
        key, sep, val = part.partition("=")
        if not sep:
            raise InputError(f"{path}: config.model_args item {part!r} is not key=value")
        out[key.strip()] = val.strip()
    return out


def _identity(doc: dict, path: Path) -> tuple[str, str | None]:
    """(raw model name, revision or None)."""
    config = doc.get("config") if isinstance(doc.get("config"), dict) else {}
    args = _model_args(config, path)
    name = args.get("pretrained") or config.get("model_name") or doc.get("model_name")
    if not name:
        raise InputError(
            f"{path}: no model name (config.model_args has no pretrained=, and no model_name)"
        )
    rev = args.get("revision")
    return str(name), (None if rev is None else str(rev).strip())


def parse_step(revision: str | None, path: Path | str = "?") -> int | None:
    """`stepN` -> N; absent / `main` -> None (final model); anything else -> InputError."""
    if revision is None or revision in _FINAL_REVISIONS:
        return None
    m = _STEP_RE.match(revision)
    if m is None:
        raise InputError(
            f"{path}: cannot parse a training step from revision={revision!r} "
            "(expected stepN, main, or none)"
        )
    step = int(m.group(1))
    if step > MAX_STEP:
        raise InputError(
            f"{path}: revision={revision!r}: step {step} is too large (at most {MAX_STEP})"
        )
    return step


def _number(x) -> float | None:
    if isinstance(x, bool) or not isinstance(x, int | float):
        return None
    try:
        return float(x)
    except OverflowError:  # an integer beyond the float range: refused as not finite
        return float("inf")


def _known_metric(base: str) -> bool:
    """A metric name the readers know (`acc`, `word_perplexity`, `bpb`, ...): its text value
    ("N/A", "abc") is a skipped metric, not metadata such as "alias"."""
    b = base.strip().lower()
    return (
        b in FRACTION_METRICS
        or b in PERPLEXITY_METRICS
        or b in LOSS_METRICS
        or b.endswith(("_ppl", "_bpb"))
    )


def _looks_numeric(x) -> bool:
    """A string holding a number ("0.5"): a metric value written as text."""
    try:
        float(x)
    except (TypeError, ValueError):
        return False
    return isinstance(x, str)


def _split_metric(key: str) -> tuple[str, str]:
    base, sep, filt = key.partition(",")
    return base, (filt if sep else "none")


def _metric_name(base: str, filt: str) -> str:
    return base if filt == "none" else f"{base},{filt}"


def _n_shot(doc: dict, task: str, path=None):
    """The task's number of few-shot examples (``n-shot``, else its config's ``num_fewshot``,
    else the run's), refused unless a whole number >= 0 (2.5 was read as 2, -3 kept)."""
    found = []
    nshot = doc.get("n-shot")
    if isinstance(nshot, dict) and _number(nshot.get(task)) is not None:
        found.append(("n-shot", nshot[task]))
    configs = doc.get("configs")
    if not found and isinstance(configs, dict) and isinstance(configs.get(task), dict):
        if _number(configs[task].get("num_fewshot")) is not None:
            found.append((f"configs[{task!r}].num_fewshot", configs[task]["num_fewshot"]))
    config = doc.get("config")
    if not found and isinstance(config, dict) and _number(config.get("num_fewshot")) is not None:
        found.append(("config.num_fewshot", config["num_fewshot"]))
    if not found:
        return None
    key, v = found[0]
    f = _number(v)
    if not (math.isfinite(f) and f >= 0 and f == int(f)):
        raise InputError(
            f"{path}: results[{task!r}]: {key} {v!r} is not a number of examples (a whole "
            "number >= 0)"
        )
    return int(f)


def _file_rows(
    doc: dict, path: Path, source: str, tasks, metrics, tally: dict | None = None
) -> list[tuple]:
    """Rows of one file. With `metrics` and no `tasks` (`tally` given), a task entry that
    reports none of the metrics is skipped and counted in `tally` (`read_harness` warns once);
    with `tasks` named, every kept entry must report each metric."""
    raw_name, revision = _identity(doc, path)
    model = canonical_model_name(raw_name)
    step = parse_step(revision, path)
    rows = []
    for task, entry in doc["results"].items():
        if tasks is not None and task not in tasks:
            continue
        if not isinstance(entry, dict):
            raise InputError(f"{path}: results[{task!r}] is not an object")
        values, errs, skipped = {}, {}, {}
        # current layout: metrics are "<metric>,<filter>"; bare keys are metadata there
        # ("alias", "name", "sample_len"); the older layout has only bare metric keys
        current = any("," in str(k) for k in entry)
        for key, raw in entry.items():
            if current and "," not in str(key):
                continue
            v = _number(raw)
            base, filt = _split_metric(str(key))
            if base.endswith("_stderr"):
                errs[(base[: -len("_stderr")], filt)] = np.nan if v is None else v
            elif v is not None:
                values[(base, filt)] = v
            elif (
                current
                or isinstance(raw, bool | type(None))
                or _looks_numeric(raw)
                or _known_metric(base)
            ):
                skipped[_metric_name(base, filt)] = raw  # a metric value that is not a number
        for (b, f), v in values.items():
            why = value_problem(b, v)
            if why is not None:
                raise InputError(f"{path}: results[{task!r}][{_metric_name(b, f)!r}] = {v!r} {why}")
        for (b, f), v in errs.items():
            if stderr_problem(v) is not None:
                raise InputError(
                    f"{path}: results[{task!r}][{_metric_name(b + '_stderr', f)!r}] = {v!r} "
                    f"{stderr_problem(v)}"
                )
        named = {_metric_name(b, f): (b, f) for (b, f) in values}
        if metrics is not None and tally is not None:  # no --task: skip, count, warn once
            tally["reported"].update(named)
            for m in metrics:  # there, but text or null: said with the skip or the refusal
                if m in skipped and m not in named:
                    tally["text"].setdefault(m, (f"{path}, results[{task!r}]", skipped[m]))
                    tally["text_tasks"].add(task)
            has = [m for m in metrics if m in named]
            tally["kept" if has else "skipped"].setdefault(task, 0)
            tally["kept" if has else "skipped"][task] += 1
            if not has:
                continue
        elif metrics is not None:
            for m in metrics:
                if m not in named:
                    there = (
                        f"; {m!r} is there but {skipped[m]!r} is not a number"
                        if m in skipped
                        else ""
                    )
                    raise InputError(
                        f"{path}: results[{task!r}] has no metric {m!r} "
                        f"(found {', '.join(sorted(named)) or 'none'}{there})"
                        f"{did_you_mean(m, named) if not there else ''}"
                    )
        if skipped:  # after the checks above: a refused file gets its one error line only
            shown = ", ".join(f"{k!r} = {v!r}" for k, v in list(skipped.items())[:3])
            warnings.warn(
                f"{path}: results[{task!r}]: skipped value(s) that are not numbers: {shown}",
                stacklevel=2,
            )
        n_shot = _n_shot(doc, task, path)
        for name, key in named.items():
            if metrics is not None and name not in metrics:
                continue
            rows.append(
                (
                    model,
                    revision,
                    step,
                    task,
                    name,
                    values[key],
                    errs.get(key, np.nan),
                    n_shot,
                    source,
                )
            )
    return rows


# ----------------------------------------------------------------------------- public API


def read_harness(
    paths: str | Path | Iterable[str | Path],
    models=None,
    *,
    tasks: Sequence[str] | None = None,
    metrics: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Read lm-evaluation-harness results (files, or folders walked for *.json) into a tidy table.

    Columns: `model, revision, step, task, metric, value, stderr, n_shot, source, params,
    params_nonembedding, tokens, flops` (see `docs/evals.md`). `models` (CSV/table path or
    DataFrame, columns `model, params[, params_nonembedding][, tokens][, tokens_per_step]`)
    extends/overrides the built-in Pythia registry. `tasks` keeps only those tasks; `metrics`
    keeps only those metrics. With `tasks` named, every kept task entry must report each
    metric; without, a task entry reporting none of them is skipped (one summary warning) and
    one reporting some keeps those, but a metric that no task reports is refused (a typo).

    Raises `InputError` (naming the file) for a file that is not harness output, an unparsable
    step, a missing requested metric, a model in neither registry, and for two files giving the
    same (model, step, task, metric, n_shot).
    """
    task_set = None if tasks is None else set(tasks)
    metric_list = None if metrics is None else list(dict.fromkeys(metrics))
    rows: list[tuple] = []
    seen: dict[tuple, str] = {}
    model_file: dict[str, str] = {}
    every_task: set[str] = set()
    tally = None
    if metric_list is not None and task_set is None:
        tally = {"reported": set(), "kept": {}, "skipped": {}, "text": {}, "text_tasks": set()}
    skipped: list[str] = []
    for path, source, doc in harness_docs(paths, skipped):
        if isinstance(doc, dict) and isinstance(doc.get("results"), dict):
            every_task |= set(map(str, doc["results"]))
        for row in _file_rows(doc, path, source, task_set, metric_list, tally):
            key = (row[0], -1 if row[2] is None else row[2], row[3], row[4], row[7])
            if key in seen:
                step = "final" if row[2] is None else row[2]
                raise InputError(
                    f"duplicate result for model {row[0]!r} step {step} task {row[3]!r} "
                    f"metric {row[4]!r} in {seen[key]} and {path}"
                )
            seen[key] = str(path)
            model_file.setdefault(row[0], str(path))
            rows.append(row)
    if tally is not None:
        _metric_tally(tally, metric_list)
    found_tasks = {r[3] for r in rows} if rows else every_task
    absent = sorted(task_set - found_tasks) if task_set is not None else []
    if not rows and skipped and not every_task:
        more = f"; {len(skipped) - 1} other file(s) neither" if len(skipped) > 1 else ""
        raise InputError(f"{skipped[0]}{more}: no file is lm-evaluation-harness output")
    warn_skipped(skipped)
    if not rows and not absent:
        raise InputError("no results found (check --task/--metric filters and the files given)")
    df = pd.DataFrame(rows, columns=COLUMNS)
    if absent:  # a misspelt --task is not dropped in silence
        found = sorted(found_tasks)
        more = " ..." if len(found) > 12 else ""
        raise InputError(
            f"task(s) {', '.join(map(repr, absent))} (--task) in no results file"
            f"{did_you_mean(absent[0], found)} (found {', '.join(found[:12])}"
            f"{more})"
        )
    registry = models_registry(models).set_index("model")
    unknown = [m for m in df["model"].unique() if m not in registry.index]
    folded = {str(k).casefold(): k for k in registry.index}  # names match ignoring case
    same = {m: folded[m.casefold()] for m in unknown if m.casefold() in folded}
    if same:
        df["model"] = df["model"].replace(same)
        unknown = [m for m in unknown if m not in same]
    if unknown:
        given = models is not None and not isinstance(models, pd.DataFrame)
        where = f" and {models}" if given else ""
        raise InputError(
            f"{model_file[unknown[0]]}: model {unknown[0]!r} is not in the built-in models table"
            f"{where}{did_you_mean(unknown[0], registry.index)}; give --models MODELS.csv with "
            "columns model, params, tokens_per_step"
        )
    df = _attach_meta(df, registry)
    df = normalize(df)
    order = ["model", "step", "task", "metric", "n_shot"]
    return df.sort_values(order, na_position="last", kind="stable").reset_index(drop=True)


def _metric_tally(tally: dict, metrics: list[str]) -> None:
    """`--metric` without `--task`: refuse a metric no task reports (a typo, with the nearest
    name); warn once about the tasks skipped for reporting none of the metrics."""
    flag = f"--metric {','.join(metrics)}"
    nowhere = [m for m in metrics if m not in tally["reported"]]
    if nowhere:
        found = sorted(tally["reported"])
        more = " ..." if len(found) > 12 else ""
        m = nowhere[0]
        if m in tally["text"]:  # the metric is there, as text or null only
            where, raw = tally["text"][m]
            raise InputError(
                f"--metric {m!r}: no task in the files reports it as a number; "
                f"{m!r} is there but {raw!r} is not a number ({where})"
            )
        raise InputError(
            f"--metric {m!r}: no task in the files reports it"
            f"{did_you_mean(m, found)} (metrics found: {', '.join(found[:12])}{more})"
        )
    gone = sorted(t for t in tally["skipped"] if t not in tally["kept"])
    some = sorted(t for t in tally["skipped"] if t in tally["kept"])
    if not (gone or some):
        return
    n = len(set(tally["kept"]) | set(tally["skipped"]))
    it = "it" if len(metrics) == 1 else "them"
    parts = []
    if gone:
        shown = ", ".join(gone[:3]) + (f" +{len(gone) - 3} more" if len(gone) > 3 else "")
        parts.append(f"skipped {len(gone)} of {n} task(s) that report none of {it}: {shown}")
        text = len(tally["text_tasks"] & set(gone))
        if text:
            parts[-1] += f" ({text} of them hold it as text or null)"
    if some:
        more = " ..." if len(some) > 3 else ""
        parts.append(
            f"{len(some)} task(s) lack {it} in some files only (those entries "
            f"skipped: {', '.join(some[:3])}{more})"
        )
    warnings.warn(
        f"{flag}: " + "; ".join(parts) + " (naming tasks with --task requires each metric of each)",
        stacklevel=3,
    )


def _attach_meta(df: pd.DataFrame, registry: pd.DataFrame) -> pd.DataFrame:
    reg = registry.reindex(df["model"].to_numpy())
    params = reg["params"].to_numpy(float)
    step = pd.to_numeric(df["step"], errors="coerce").to_numpy(float)
    tokens = np.where(
        np.isnan(step), reg["tokens"].to_numpy(float), step * reg["tokens_per_step"].to_numpy(float)
    )
    flops = np.full(len(df), np.nan)
    ok = np.isfinite(tokens) & (tokens > 0)
    if ok.any():
        flops[ok] = training_flops(params[ok], tokens[ok], "6ND")
    flops[np.isfinite(tokens) & (tokens == 0)] = 0.0
    df = df.copy()
    df["params"] = params
    df["params_nonembedding"] = reg["params_nonembedding"].to_numpy(float)
    df["tokens"] = tokens
    df["flops"] = flops
    return df
