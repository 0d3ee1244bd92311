"""`flpm compare` (Sec. 6.2) and `flpm single-distribution` (Sec. 6.3): argument wiring of the
held-out comparisons in `flp.candidates` and `flp.single_distribution`."""

from __future__ import annotations

import argparse

from ..flp.candidates import LOSS_MODES, compare_loss_to_performance
from ..flp.schema import MAPPERS
from ..flp.single_distribution import single_distribution_check
from ..flp.study import read_targets, tasks_from_text
from ..laws.flp import MIXTURE_FORMS
from .common import (
    atomic_write_text,
    check_out_format,
    check_writable,
    emit,
)
from .flp_inputs import CHANCE_POINTS_FLAG, _column_flags, _columns, _read
from .options import add


def _study_flags(p: argparse.ArgumentParser) -> None:
    """Flags of the held-out comparisons (Sec. 6.2 / 6.3): sampling runs, checkpoints, targets."""
    add(p, "--runs", required=True, metavar=None, help="final sampling models (CSV/Parquet/JSONL)")
    add(p, "--checkpoints", help="their intermediate checkpoints (default: RUNS rows)")
    p.add_argument("--targets", required=True, help="held-out target runs (actual scores)")
    add(p, "--task", help="task name(s), comma-separated (score columns)")
    p.add_argument(
        "--chance",
        type=CHANCE_POINTS_FLAG,
        metavar="P",
        help="chance level in points for every task (default: Table 2 values)",
    )
    add(p, "--threshold", help="emergence margin (Sec. 3.3)")
    add(p, "--score-unit")
    add(p, "--form", choices=list(MIXTURE_FORMS), default="M4", help="FLP-M's FLOPs -> loss form")
    add(p, "--steps")
    _column_flags(p)
    add(p, "--out", help="save the result: .csv = one row per task, method and target; else JSON")
    add(p, "--json", "--quiet")


def _study_inputs(args):
    out = check_writable(args.out)
    check_out_format(out, (".json", ".csv"))
    tasks = tasks_from_text(args.task)
    runs, ck = _read(args)
    targets = read_targets(args.targets, args.model_col, args.step_col)
    common = dict(
        chance=args.chance,
        threshold=args.threshold,
        form=args.form,
        steps=args.steps,
        seed=args.seed,
        columns=_columns(args),
        score_unit=args.score_unit,
    )
    return out, runs, ck, targets, tasks, common


def _finish(args, out, res) -> int:
    if out is not None:
        atomic_write_text(out, res.file_text(out.suffix))
    return emit(args, res.contract(), res.summary())


def _flpm_compare(args) -> int:
    out, runs, ck, targets, tasks, common = _study_inputs(args)
    res = compare_loss_to_performance(runs, ck, targets, tasks, losses=args.losses, **common)
    return _finish(args, out, res)


def _flpm_single_distribution(args) -> int:
    out, runs, ck, targets, tasks, common = _study_inputs(args)
    res = single_distribution_check(
        runs, ck, targets, tasks, mapper=args.mapper, ratio_tol=args.ratio_tol, **common
    )
    return _finish(args, out, res)


def register_studies(verbs) -> None:
    """Add `compare` and `single-distribution` to the `flpm` verbs."""
    c = verbs.add_parser(
        "compare", help="Sec. 6.2: FLOPs / Average / Domain-Linear / Domain-Neural loss -> score"
    )
    _study_flags(c)
    c.add_argument(
        "--losses",
        choices=LOSS_MODES,
        default="actual",
        help="feed the targets' actual losses (the paper's ablation, default) or predicted ones",
    )
    c.set_defaults(handler=_flpm_compare)
    sd = verbs.add_parser(
        "single-distribution", help="Sec. 6.3: FLP vs FLP-M when all runs share one mixture"
    )
    _study_flags(sd)
    sd.add_argument("--mapper", choices=MAPPERS, default="neural", help="FLP-M's stage 2")
    sd.add_argument(
        "--ratio-tol",
        type=float,
        default=1e-3,
        help="largest allowed difference of a source's share between runs (default 1e-3)",
    )
    sd.set_defaults(handler=_flpm_single_distribution)
