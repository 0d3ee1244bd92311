"""Every command as (name, one-line help, module): the parser lists the commands from this table
without importing their modules (only the module of the command being run is imported).

Kept equal to what each module's `register(sub)` declares with ``sub.add_parser("name", help=...)``
by `tests/test_cli_startup.py::test_command_table_matches_the_modules` (read from their source with
`cli.main.commands_in_source`); reading it here instead saves parsing 18 modules on every call.
"""

COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("supervised", "supervised pretraining-loss laws L(N, D)", "lmforecast.cli.supervised"),
    (
        "distill",
        "distillation scaling laws and compute-optimal distillation",
        "lmforecast.cli.distill",
    ),
    ("flp", "FLP: FLOPs -> loss -> downstream score (Chen et al.)", "lmforecast.cli.flp"),
    ("flpm", "FLP-M: data mixtures -> domain losses -> score", "lmforecast.cli.flp"),
    (
        "downstream",
        "downstream scores from evaluation tables (backtested)",
        "lmforecast.cli.downstream",
    ),
    ("osl", "observational scaling laws from public benchmark scores", "lmforecast.cli.osl"),
    ("salience", "Capability Salience Vector: token losses -> accuracy", "lmforecast.cli.salience"),
    ("zoo", "the small-model zoo: really trained tiny LMs", "lmforecast.cli.zoo"),
    (
        "evals",
        "lm-evaluation-harness results JSON -> one tidy table (model x step x task)",
        "lmforecast.cli.evals",
    ),
    (
        "report",
        "HTML + JSON report of every analysis, on bundled data and on yours",
        "lmforecast.cli.report",
    ),
    (
        "backtest",
        "rolling-origin backtest in compute: fit below a cutoff, forecast above",
        "lmforecast.cli.backtest",
    ),
    ("examples", "list or copy the example input files", "lmforecast.cli.examples"),
    (
        "data-constrained",
        "data-constrained law (repeated epochs, Muennighoff et al.)",
        "lmforecast.cli.dataconstrained",
    ),
    (
        "isoflop",
        "isoFLOP estimators of N*(C), D*(C) (Hoffmann Approach 1/2)",
        "lmforecast.cli.isoflop",
    ),
    ("compare-recipes", "effective-compute multiplier of a new recipe", "lmforecast.cli.recipes"),
    ("next-run", "rank candidate runs by interval shrinkage per FLOP", "lmforecast.cli.nextrun"),
    ("shape", "width/depth: does model shape matter beyond N", "lmforecast.cli.shape"),
    ("runs", "import training logs into the runs/checkpoints tables", "lmforecast.cli.runs"),
    ("curves", "loss curves under learning-rate schedules (MPL)", "lmforecast.cli.curves"),
    ("ledger", "a forecast ledger: register, resolve, score (SQLite)", "lmforecast.cli.ledger"),
)
