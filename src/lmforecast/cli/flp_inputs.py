"""Input flags and readers shared by the `flp` / `flpm` verbs (runs, checkpoints, columns)."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..data.io import read_table
from ..data.validate import check_run_tables
from ..errors import InputError
from ..flp.tables import Columns
from .flags import _named, float_range
from .options import add

#: ``--chance P`` of the flp/flpm verbs: the chance level in points (a value of 100 or more is
#: refused by the estimator, which names the task).
CHANCE_POINTS_FLAG = _named(float_range(0.0), "--chance")


def _table_flags(p: argparse.ArgumentParser) -> None:
    add(p, "--runs", required=True, metavar=None, help="final sampling models (CSV/Parquet/JSONL)")
    add(p, "--checkpoints")
    add(p, "--task", help="task name = its score column (points)")
    p.add_argument(
        "--chance",
        type=CHANCE_POINTS_FLAG,
        metavar="P",
        help="chance level in points (default: the task's Table 2 value)",
    )
    add(p, "--threshold", "--score-unit")
    _column_flags(p)
    add(p, "--out", help="save the fit as JSON")
    add(p, "--json", "--quiet")


def _column_flags(p: argparse.ArgumentParser) -> None:
    add(p, "--model-col", "--step-col", "--c-col", "--loss-col", "--train-loss-col", "--seed")


def _columns(args) -> Columns:
    return Columns(
        model=args.model_col,
        step=args.step_col,
        C=args.c_col,
        loss=args.loss_col,
        train_loss=args.train_loss_col,
    )


def _read(args):
    runs = read_table(args.runs)
    ck = read_table(args.checkpoints) if args.checkpoints else None
    check_run_tables(runs, ck, args.model_col, args.step_col)
    return runs, ck


def _load(path: str, cls):
    if not Path(path).exists():
        raise InputError(f"{path}: no such file")
    return cls.from_json(Path(path))
