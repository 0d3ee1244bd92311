"""Inputs of `lmforecast osl`: `--benchmarks` or `--evals` (a tidy harness table), and the
comma-separated model lists of the holdout flags."""

from __future__ import annotations

import argparse

from ..errors import InputError
from ..osl.inputs import read_benchmark_source
from .options import add


def add_evals_flags(p: argparse.ArgumentParser) -> None:
    """`--evals TABLE` (a tidy lm-evaluation-harness table) as an alternative to --benchmarks."""
    add(
        p,
        "--evals",
        required=False,
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


def read_source(args: argparse.Namespace):
    """The benchmark table of --benchmarks or --evals (`osl.inputs.read_benchmark_source`)."""
    return read_benchmark_source(
        args.benchmarks, args.evals, evals_metric=args.evals_metric, step=args.step
    )


def names_list(text: str | None, flag: str = "") -> list[str] | None:
    """A comma-separated flag value as a list of names (None passes through)."""
    if text is None:
        return None
    names = [t.strip() for t in text.split(",") if t.strip()]
    if not names:
        raise InputError(f"{flag + ': ' if flag else ''}empty list {text!r}")
    return names
