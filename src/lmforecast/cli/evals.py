"""`lmforecast evals import|show`: lm-evaluation-harness results JSON -> one tidy table."""

from __future__ import annotations

import argparse

from ..data.evals import BUNDLED_PYTHIA_TASKS
from ..data.evals.imports import (
    BUNDLED,
    check_table_name,
    describe,
    import_harness,
    open_evals_table,
)
from .common import check_writable, emit
from .options import add


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
    add(
        i,
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
    add(i, "--json", "--quiet")
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
    add(s, "--json", "--quiet")
    s.set_defaults(handler=_show)


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
    out = check_table_name(check_writable(args.out))
    df = import_harness(args.paths, out, models=args.models, tasks=args.task, metrics=args.metric)
    d = describe(df)
    d["out"] = str(out)
    return emit(args, d, _summary(d, f"wrote {out}"))


def _show(args: argparse.Namespace) -> int:
    df, bundled = open_evals_table(args.table)
    title = f"bundled Pythia table (tasks: {', '.join(BUNDLED_PYTHIA_TASKS)})"
    d = describe(df)
    return emit(args, d, _summary(d, title if bundled else str(args.table)))
