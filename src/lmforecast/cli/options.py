"""The catalog of the command line's shared flags: each declared once, its help its documentation.

`OPTIONS` maps a flag to the keyword arguments of its `add_argument` (type, default, choices,
metavar, action, help); `add(parser, "--seed", "--out")` declares catalogued flags on a verb,
and ``add(parser, "--fit", help="a fit saved by `curves fit --out`")`` declares one flag with
its entry updated by the keywords given (what this verb's flag does differently). A verb's
help therefore words a shared flag the same everywhere, and a flag declared without help
(`help.decorate`) takes its entry's. Range checks of numeric flags are added afterwards by
the flag policy (`cli.flags.apply_flag_policy`), which reads the declared type.
"""

from __future__ import annotations

import argparse

from .argtypes import open_unit_interval, positive_float

OPTIONS: dict[str, dict] = {
    # ---- output -------------------------------------------------------------------------
    "--json": dict(action="store_true", help="print machine-readable JSON on stdout"),
    "--quiet": dict(action="store_true", help="no progress bars"),
    "--out": dict(help="output file (written atomically; nothing is written on error)"),
    # ---- inputs -------------------------------------------------------------------------
    # required by the verb (`common.require_runs`, one line naming the table), not by argparse
    "--runs": dict(
        metavar="TABLE",
        help="CSV/Parquet/JSONL with parameters, tokens (or FLOPs) and loss (required)",
    ),
    "--fit": dict(required=True, help="a fit saved with --out by the matching `fit` verb (JSON)"),
    "--preset": dict(help="published coefficients to use instead of a fit"),
    "--evals": dict(
        required=True,
        help="tidy evaluation table (CSV/Parquet/JSONL; `pythia`: the bundled Pythia table)",
    ),
    "--checkpoints": dict(help="intermediate checkpoints (default: use RUNS rows)"),
    "--task": dict(required=True, help="task to forecast (column 'task')"),
    "--chance": dict(
        action="append",
        metavar="P|TASK=P",
        help="chance level in points (default: the bundled table; required for a "
        "task without one); TASK=P names the task, repeatable",
    ),
    "--chance-file": dict(
        metavar="FILE",
        help="chance levels in points per task: a CSV with columns task, chance or a "
        "JSON object {task: chance}; --chance TASK=P overrides its entries",
    ),
    "--benchmarks": dict(help="benchmark table: one row per model, one column per benchmark"),
    "--metrics": dict(
        help="comma-separated benchmark columns to use (default: every known one present)"
    ),
    "--exclude-metric": dict(
        action="append",
        default=[],
        metavar="M",
        help="benchmark column to leave out of the capabilities (e.g. the target)",
    ),
    # one unit for scores (`lmforecast.scores`): the unit of the table a verb reads
    "--score-unit": dict(
        choices=["auto", "points", "fraction"],
        default="auto",
        help="unit of the score columns read: 'auto' (default) reads a column whose values "
        "all lie in [0, 1] as fractions, any other as points; outputs are points (0-100) "
        "either way",
    ),
    "--missing": dict(
        choices=("impute", "refuse"),
        default="impute",
        help="empty or '-' benchmark cells: impute them by iterative PCA as the paper does "
        "(App. B.3; default, reported as a warning), or refuse the table",
    ),
    "--texts": dict(required=True, help="JSONL of texts (text_id, text)"),
    "--losses": dict(required=True, help="JSONL: model, text_id, offsets, losses"),
    # ---- columns of an input table ------------------------------------------------------
    "--n-col": dict(default="N", help="column holding parameters N"),
    "--d-col": dict(default="D", help="column holding training tokens D"),
    "--c-col": dict(default="C", help="column holding training FLOPs C"),
    "--loss-col": dict(default="loss", help="column holding the loss"),
    "--model-col": dict(default="model", help="column naming the model"),
    "--step-col": dict(default="step", help="column holding the checkpoint step"),
    "--train-loss-col": dict(
        default="train_loss",
        help="column holding the training loss (for the improved-loss filter)",
    ),
    "--u-col": dict(help="column holding unique training tokens U (epochs = D/U)"),
    "--ns-col": dict(default="N_S", help="column holding student parameters N_S"),
    "--ds-col": dict(default="D_S", help="column holding student tokens D_S"),
    "--lt-col": dict(default="L_T", help="column holding the teacher's loss L_T"),
    "--ls-col": dict(default="L_S", help="column holding the student's loss L_S"),
    # ---- the point forecast -------------------------------------------------------------
    "--params": dict(
        type=positive_float("--params"),
        metavar="N",
        help="model parameters N (SI suffixes K, M, B, T accepted: 3B = 3e9)",
    ),
    "--tokens": dict(
        type=positive_float("--tokens"),
        metavar="D",
        help="training tokens D (SI suffixes accepted: 1.4T = 1.4e12)",
    ),
    "--flops": dict(
        type=positive_float("--flops"), required=True, help="training compute in FLOPs"
    ),
    "--accounting": dict(
        choices=["6ND", "F(N)"],
        default="6ND",
        help="FLOPs accounting: 6ND, or 3 F(N) D of the distillation paper (App. H)",
    ),
    "--level": dict(
        type=open_unit_interval,
        default=0.9,
        help="prediction-interval level, strictly between 0 and 1 (default 0.9); "
        'the JSON output carries it as "interval": [lo, hi]',
    ),
    "--actual": dict(type=float, help="actual score: also print Eq. 4 relative error"),
    # ---- distillation -------------------------------------------------------------------
    "--student-params": dict(
        type=positive_float("--student-params"),
        required=True,
        metavar="N",
        help="student non-embedding parameters",
    ),
    "--student-tokens": dict(
        type=positive_float("--student-tokens"),
        required=True,
        help="student training tokens D_S",
    ),
    "--teacher-loss": dict(
        type=positive_float("--teacher-loss"),
        help="the teacher's cross-entropy L_T (instead of its N_T, D_T)",
    ),
    "--teacher-params": dict(
        type=positive_float("--teacher-params"), help="teacher parameters N_T"
    ),
    "--teacher-tokens": dict(
        type=positive_float("--teacher-tokens"), help="teacher training tokens D_T"
    ),
    "--scenario": dict(
        default="best-case",
        help="which compute counts (Table 2 of the distillation paper)",
    ),
    "--coefficients": dict(
        default="busbridge2025",
        help="busbridge2025 (Table 6, default) or a fit saved by `distill fit --out`",
    ),
    "--draws": dict(
        type=int,
        default=20,
        metavar="K",
        help="confidence interval of the crossover over the first K parameter draws "
        "(each re-runs the search; 0 = point value only; default 20)",
    ),
    # ---- the law and its fit ------------------------------------------------------------
    "--form": dict(default="auto", help="functional form of the law"),
    "--method": dict(help="forecasting method"),
    "--loss": dict(
        choices=["huber", "squared"],
        default="huber",
        help="fitting loss on log loss: huber (robust) or squared",
    ),
    "--huber-delta": dict(
        type=positive_float("--huber-delta"),
        default=1e-3,
        help="Huber delta of the robust loss on log loss",
    ),
    "--fix": dict(
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="hold a coefficient fixed, e.g. --fix E=1.69 or --fix gamma=1 (repeatable)",
    ),
    "--replicates": dict(
        choices=["mean", "keep"],
        help="rows sharing (N, D) are seed replicates: average them or keep them (default: "
        "refuse); their spread is a floor on the run scatter",
    ),
    "--n-cutoffs": dict(type=int, default=4, help="cutoffs chosen when --cutoffs is absent"),
    "--threshold": dict(
        type=float,
        default=5.0,
        help="keep checkpoints scoring >= random + threshold points (Sec. 3.3)",
    ),
    "--steps": dict(type=int, default=2000, help="network training steps"),
    "--pcs": dict(type=int, default=3, help="number of principal components (capabilities) to use"),
    "--max-families": dict(
        type=int, default=10, help="at most this many model families in the selected subset"
    ),
    "--cutoff-flops": dict(
        type=positive_float("--cutoff-flops"),
        help="FLOPs cutoff between fitted and held-out models",
    ),
    "--reference-family": dict(default="Llama-2", help="model family the others are compared with"),
    "--activation": dict(
        choices=["softplus", "sigmoid"],
        default="softplus",
        help="activation of the scoring head",
    ),
    "--lr": dict(type=positive_float("--lr"), help="learning rate of the scoring head"),
    "--optimizer": dict(choices=["adam", "sgd"], help="optimiser of the scoring head"),
    "--kind": dict(help="which figure to draw"),
    "--device": dict(help="torch device for the language model (cpu, cuda)"),
    "--batch-size": dict(type=int, default=8, help="texts per forward pass"),
    "--max-length": dict(
        type=int,
        help="window length in tokens (default and maximum: the model's context); longer texts "
        "are scored with sliding windows advancing by half a window",
    ),
    # ---- resampling and workers ---------------------------------------------------------
    "--bootstrap": dict(
        type=int,
        default=200,
        metavar="B",
        help="bootstrap resamples behind the intervals (0: no interval)",
    ),
    "--ci-level": dict(
        type=float,
        default=0.9,
        help="level of the parameter intervals, strictly between 0 and 1",
    ),
    "--seed": dict(
        type=int,
        default=0,
        help="random seed (integer >= 0) for resampling, initialisation and training order",
    ),
    "--jobs": dict(type=int, default=-1, help="worker processes for the bootstrap"),
    # ---- the forecast ledger ------------------------------------------------------------
    "--ledger": dict(metavar="PATH", help="register the forecast a verb prints in this ledger"),
    "--label": dict(metavar="NAME", help="label of the registered forecast"),
}


def add(parser: argparse._ActionsContainer, *flags: str, **overrides) -> argparse.Action | None:
    """Declare the catalogued `flags` on `parser` (a parser or an argument group), in order;
    with `overrides`, one flag whose entry they update. Returns the last action added."""
    if overrides and len(flags) != 1:
        raise TypeError("overrides update one flag: add(parser, FLAG, **overrides)")
    action = None
    for flag in flags:
        entry = {k: list(v) if isinstance(v, list) else v for k, v in OPTIONS[flag].items()}
        action = parser.add_argument(flag, **{**entry, **overrides})
    return action
