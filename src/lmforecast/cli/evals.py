"""`lmforecast evals import|show`: lm-evaluation-harness results JSON -> one tidy table."""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from ..data.evals import (
    BUNDLED_PYTHIA_TASKS,
    load_pythia,
    read_evals_table,
    read_harness,
    write_evals_table,
)
from ..errors import InputError
from .common import add_output_flags, check_writable, emit

TABLE_EXTENSIONS = (".csv", ".csv.gz", ".tsv", ".parquet", ".pq", ".jsonl", ".ndjson")
BUNDLED = "pythia"  # `evals show pythia`: the bundled table


def _names(items: list[str] | None) -> list[str] | None:
    if not items:
        return None
    names = [t.strip() for item in items for t in item.split(",") if t.strip()]
    if not names:
        raise InputError(f"empty list {items!r}")
    return names


def _filtered_keys(paths) -> dict[str, str]:
    """Current-layout metric keys with a comma in the files (``"exact_match,strict-match"``),
    mapped to their metric name in the table (``"acc,none"`` -> ``"acc"``)."""
    from ..data.evals.harness_files import harness_docs

    keys: dict[str, str] = {}
    for _, _, doc in harness_docs(paths):  # files that are not harness output: skipped
        for entry in doc["results"].values():
            for key in entry if isinstance(entry, dict) else ():
                base, sep, filt = str(key).partition(",")
                if sep and not base.endswith("_stderr"):
                    keys[f"{base.strip()},{filt.strip()}"] = base if filt == "none" else str(key)
    return keys


def _metric_names(items: list[str] | None, paths) -> list[str] | None:
    """`--metric` values: comma-separated names, except that two neighbours that together
    are a `metric,filter` key of the files (``exact_match,strict-match``) are one name."""
    names = _names(items)
    if names is None or not any("," in item for item in items):
        return names
    keys = _filtered_keys(paths)
    out: list[str] = []
    for item in items:
        toks = [t.strip() for t in item.split(",") if t.strip()]
        i = 0
        while i < len(toks):
            pair = f"{toks[i]},{toks[i + 1]}" if i + 1 < len(toks) else None
            if pair in keys:
                out.append(keys[pair])
                i += 2
            else:
                out.append(toks[i])
                i += 1
    return out


def check_table_path(path: str, flag: str = "--out") -> Path:
    """Extension known, folder exists and is writable (before any work)."""
    p = check_writable(path)
    if not p.name.lower().endswith(TABLE_EXTENSIONS):
        raise InputError(
            f"{flag} {p}: unknown table format; use one of {', '.join(TABLE_EXTENSIONS)}"
        )
    folder = p.parent if str(p.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=".tmp-check-", dir=folder)
    except OSError as exc:
        raise InputError(f"{flag} {p}: folder {folder} is not writable ({exc.strerror})") from None
    os.close(fd)
    os.unlink(tmp)
    return p


def register(sub) -> None:
    p = sub.add_parser(
        "evals", help="lm-evaluation-harness results JSON -> one tidy table (model x step x task)"
    )
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    verbs.required = True

    i = verbs.add_parser(
        "import",
        help="read harness results (files or folders of *.json) into a tidy table",
        description="Read lm-evaluation-harness results JSON (the older layout with "
        "'acc'/'acc_stderr' keys and the current one with 'acc,none' keys) into one row per "
        "(model, step, task, metric). Columns: model, revision, step, task, metric, value, "
        "stderr, n_shot, source, params, params_nonembedding, tokens, flops (docs/evals.md).",
    )
    i.add_argument(
        "paths",
        nargs="+",
        metavar="PATH",
        help="result files, or folders walked recursively for *.json",
    )
    i.add_argument(
        "--out",
        required=True,
        help="output table; format by extension: .csv, .csv.gz, .tsv, .parquet, .jsonl "
        "(required, no default)",
    )
    i.add_argument(
        "--models",
        help="table with columns model, params [, params_nonembedding] and tokens and/or "
        "tokens_per_step; extends/overrides the built-in Pythia entries (default: built-in "
        "Pythia table only)",
    )
    i.add_argument(
        "--task",
        action="append",
        metavar="T",
        help="keep only these tasks (repeatable or comma-separated; default: all tasks)",
    )
    i.add_argument(
        "--metric",
        action="append",
        metavar="M",
        help="keep only these metrics (repeatable or comma-separated; a current-layout "
        "'metric,filter' key of the files, e.g. 'exact_match,strict-match', is one name; "
        "default: all metrics); "
        "without --task, tasks reporting none of them are skipped with one warning; with "
        "--task, every named task must report each of them",
    )
    add_output_flags(i)
    i.set_defaults(handler=_import)

    s = verbs.add_parser(
        "show",
        help="counts of models, steps, tasks and metrics in a tidy table",
    )
    s.add_argument(
        "table",
        metavar="TABLE",
        help=f"a table written by `evals import`, or '{BUNDLED}' for the bundled one (no default)",
    )
    add_output_flags(s)
    s.set_defaults(handler=_show)


def describe(df) -> dict:
    steps = df.groupby("model")["step"].nunique()
    return {
        "rows": len(df),
        "models": sorted(df["model"].unique().tolist()),
        "n_models": int(df["model"].nunique()),
        "steps_per_model": {str(k): int(v) for k, v in steps.items()},
        "n_steps": int(df["step"].nunique()),
        "has_final": bool(df["step"].isna().any()),
        "tasks": sorted(df["task"].unique().tolist()),
        "n_tasks": int(df["task"].nunique()),
        "metrics": {str(k): int(v) for k, v in df["metric"].value_counts().sort_index().items()},
        "n_shot": sorted(int(v) for v in df["n_shot"].dropna().unique()),
        "files": int(df["source"].nunique()),
    }


def _summary(d: dict, title: str) -> str:
    steps = sorted(set(d["steps_per_model"].values()))
    lines = [
        title,
        f"  {d['rows']} rows from {d['files']} files",
        f"  models ({d['n_models']}): {', '.join(d['models'])}",
        f"  steps: {d['n_steps']} distinct; per model {', '.join(map(str, steps))}"
        + ("; some final-model (no step) rows" if d["has_final"] else ""),
        f"  tasks ({d['n_tasks']}): {', '.join(d['tasks'][:12])}"
        + (" ..." if d["n_tasks"] > 12 else ""),
        "  metrics: " + ", ".join(f"{k} ({v})" for k, v in d["metrics"].items()),
        f"  n_shot: {', '.join(map(str, d['n_shot'])) or 'unknown'}",
    ]
    return "\n".join(lines)


def _import(args: argparse.Namespace) -> int:
    out = check_table_path(args.out)
    df = read_harness(
        args.paths,
        models=args.models,
        tasks=_names(args.task),
        metrics=_metric_names(args.metric, args.paths),
    )
    write_evals_table(df, out)
    d = describe(df)
    d["out"] = str(out)
    return emit(args, d, _summary(d, f"wrote {out}"))


def _show(args: argparse.Namespace) -> int:
    if args.table == BUNDLED and not Path(args.table).exists():
        df = load_pythia()
        title = f"bundled Pythia table (tasks: {', '.join(BUNDLED_PYTHIA_TASKS)})"
    else:
        df = read_evals_table(args.table)
        title = str(args.table)
    d = describe(df)
    return emit(args, d, _summary(d, title))
