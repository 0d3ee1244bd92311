"""Inputs of `lmforecast osl`: `--benchmarks` or `--evals` (a tidy harness table), and the
comma-separated model lists of the holdout flags."""

from __future__ import annotations

import argparse

from ..errors import InputError
from ..osl.data import read_benchmarks


def add_evals_flags(p: argparse.ArgumentParser) -> None:
    """`--evals TABLE` (a tidy lm-evaluation-harness table) as an alternative to --benchmarks."""
    p.add_argument(
        "--evals",
        help="tidy evals table from `lmforecast evals import` (or 'pythia' for the bundled one) "
        "instead of --benchmarks: one row per model, one column per task (default: none)",
    )
    p.add_argument(
        "--evals-metric",
        default="acc",
        help="metric of --evals used as each task's score; per-task choices as "
        "'acc,arc_challenge=acc_norm' (bare name = every other task) (default: %(default)s)",
    )
    p.add_argument(
        "--step",
        type=int,
        help="with --evals: training step to use (default: each model's final evaluation)",
    )


def _evals_metric(text: str):
    if "=" not in text:
        return text.strip()
    out = {}
    for item in names_list(text):
        task, sep, metric = item.partition("=")
        if not sep:  # a bare metric is the default of every task not named
            task, metric = "*", task
        if not task.strip() or not metric.strip():
            raise InputError(f"--evals-metric: {item!r} is not task=metric")
        out[task.strip()] = metric.strip()
    return out


def read_benchmarks_or_evals(args: argparse.Namespace):
    """--benchmarks (wide or long table) or --evals (tidy harness table), exactly one."""
    if (args.benchmarks is None) == (args.evals is None):
        raise InputError("give exactly one of --benchmarks and --evals")
    if args.benchmarks is not None:
        if args.step is not None:
            raise InputError("--step applies to --evals only")
        return read_benchmarks(args.benchmarks)
    from ..data.evals import read_evals, to_benchmark_frame

    return read_benchmarks(
        to_benchmark_frame(
            read_evals(args.evals), _evals_metric(args.evals_metric), step=args.step
        ),
        args.evals,
    )


def names_list(text: str | None, flag: str = "") -> list[str] | None:
    if text is None:
        return None
    names = [t.strip() for t in text.split(",") if t.strip()]
    if not names:
        raise InputError(f"{flag + ': ' if flag else ''}empty list {text!r}")
    return names
