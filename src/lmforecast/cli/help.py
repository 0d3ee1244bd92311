"""Help that teaches: shared option descriptions, defaults shown, and examples on every verb.

`decorate(parser)` runs once on the finished `lmforecast` parser. It gives every parser a
formatter that shows defaults, fills in the description of a shared option that a method's
module declared without one (from the option catalog, `cli.options.OPTIONS`), and ends every
verb's help with runnable examples (`EXAMPLES`, written for a folder prepared with
``lmforecast examples copy .``).
"""

from __future__ import annotations

import argparse

from .options import OPTIONS

#: `lmforecast --help`: the first commands a new user runs.
GETTING_STARTED = [
    "lmforecast report --out report            # every analysis on the bundled data",
    "lmforecast examples copy .                # the example tables, to try each verb",
    "lmforecast supervised fit --runs supervised/runs.csv --out fit.json",
    "lmforecast supervised predict --fit fit.json --params 7e9 --tokens 1.4e11",
    "lmforecast backtest --suite --runs supervised/runs.csv   # how far to trust it",
    "lmforecast downstream fit --evals pythia --task piqa --out piqa.json",
]

EXAMPLES = {
    # toolbox: data-constrained law, isoFLOP approaches, recipes, next run
    "data-constrained epochs": [
        "lmforecast supervised fit --runs dataconstrained/runs.csv --form data-constrained "
        "--bootstrap 5 --out dc_fit.json",
        "lmforecast data-constrained epochs --fit dc_fit.json --params 6e8 --unique-tokens 1e9",
    ],
    "isoflop fit": [
        "lmforecast isoflop fit --runs isoflop/runs.csv --json",
        "lmforecast isoflop fit --runs isoflop/runs.csv --approach 1 --out isoflop.json",
    ],
    "isoflop plot": ["lmforecast isoflop plot --runs isoflop/runs.csv --out isoflop.png"],
    "compare-recipes": [
        "lmforecast compare-recipes --base recipes/base.csv --new recipes/new.csv --flops 1e18 "
        "--bootstrap 50 --json",
    ],
    "shape test": [
        "lmforecast shape test --runs shape/runs.csv --model-col model --permutations 500",
    ],
    "next-run": [
        "lmforecast next-run --runs nextrun/runs.csv --target-params 7e9 --target-tokens 1.4e11 "
        "--budget 1e18 --bootstrap 20",
    ],
    "supervised fit": [
        "lmforecast supervised fit --runs supervised/runs.csv --out fit.json",
        "lmforecast supervised fit --runs supervised/runs.csv --form chinchilla --json",
    ],
    "supervised allocate": [
        "lmforecast supervised allocate --fit fit.json --flops 1e22 --json",
        'lmforecast supervised allocate --preset busbridge2025 --flops 1e22 --accounting "F(N)"',
    ],
    "supervised predict": [
        "lmforecast supervised predict --preset hoffmann2022 --params 7e10 --tokens 1.4e12",
    ],
    "distill predict": [
        "lmforecast distill predict --student-params 1e9 --student-tokens 2e10 "
        "--teacher-params 7e9 --teacher-tokens 1.4e11 --json",
    ],
    "distill fit": [
        "lmforecast distill fit --runs distill/distill_runs.csv --supervised paper --bootstrap 8 "
        "--out distill_fit.json",
    ],
    "distill plan": [
        "lmforecast distill plan --student-params 1e9 --flops 1e22 "
        "--scenario teacher-pretraining-inference --json",
    ],
    "distill choose-teacher": [
        "lmforecast distill choose-teacher --student-params 1e9 --student-tokens 2e10 "
        "--teachers distill/teachers.csv --json",
    ],
    "distill ratios": [
        "lmforecast distill ratios --student-params 5e8 --target-loss 2.3 2.25 "
        "--scenario best-case --json",
    ],
    "distill crossover": ["lmforecast distill crossover --student-params 1e9 --draws 5 --json"],
    "flp fit": [
        "lmforecast flp fit --runs flp/runs.csv --checkpoints flp/checkpoints.csv --task ARC "
        "--out flp.json",
    ],
    "flp predict": ["lmforecast flp predict --fit flp.json --flops 8.4e22 --json"],
    "downstream fit": [
        "lmforecast downstream fit --evals pythia --task piqa --models pythia-70m,pythia-160m,"
        "pythia-410m,pythia-1b,pythia-1.4b --bootstrap 50 --out piqa.json",
        "lmforecast flp fit --evals pythia --loss-task lambada_openai --task arc_easy --json",
    ],
    "downstream predict": [
        "lmforecast downstream predict --fit piqa.json --params 2.8e9 --tokens 3e11 --json",
    ],
    "downstream backtest": [
        "lmforecast downstream backtest --evals pythia --task piqa,sciq --fit-models pythia-70m,"
        "pythia-160m,pythia-410m,pythia-1b,pythia-1.4b --target pythia-2.8b --methods ensemble "
        "--bootstrap 20",
    ],
    "flpm fit": [
        "lmforecast flpm fit --runs flp/mixture_runs.csv --checkpoints "
        "flp/mixture_checkpoints.csv --task HumanEval --out flpm.json",
    ],
    "flpm predict": ["lmforecast flpm predict --fit flpm.json --flops-per-source 7e20,3e20 --json"],
    "flpm optimize-mixture": [
        "lmforecast flpm optimize-mixture --fit flpm.json --flops 1e21 --json",
    ],
    "flpm compare": [
        "lmforecast flpm compare --runs flp/mixture_runs.csv --checkpoints "
        "flp/mixture_checkpoints.csv --targets flp/mixture_targets.csv --task HumanEval",
    ],
    "flpm single-distribution": [
        "lmforecast flpm single-distribution --runs RUNS.csv --checkpoints CKPTS.csv --targets "
        "TARGETS.csv --task T   # runs that all share one mixing ratio (e.g. the zoo's)",
    ],
    "osl pca": ["lmforecast osl pca --benchmarks osl/base_models.csv --json"],
    "osl fit": [
        "lmforecast osl fit --benchmarks osl/base_models.csv --target HumanEval "
        "--exclude-metric HumanEval --json",
        "lmforecast osl fit --benchmarks osl/base_models.csv --target HumanEval --out osl.json",
    ],
    "osl select": ["lmforecast osl select --benchmarks osl/base_models.csv --budget 8 --json"],
    "osl predict": [
        "lmforecast osl predict --fit osl.json --benchmarks osl/base_models.csv --json",
        "lmforecast osl predict --preset gsm-cot --benchmarks osl/base_models.csv --json",
    ],
    "osl gap": [
        "lmforecast osl gap --benchmarks base_llm_benchmark_eval.csv --without gsm_naive "
        "--with gsm_cot --json   # needs a table with both columns (the authors' full table)",
    ],
    "osl robustness": [
        "lmforecast osl robustness --benchmarks osl/base_models.csv --target MMLU "
        "--exclude-metric MMLU --n-fractions 4 --json",
    ],
    "salience map-losses": [
        "lmforecast salience map-losses --losses salience/losses.jsonl --texts "
        "salience/texts.jsonl --target-tokenizer words --out word_losses.jsonl",
    ],
    "salience fit": [
        "lmforecast salience fit --texts salience/texts.jsonl --losses salience/losses.jsonl "
        "--scores salience/scores.csv --task reasoning --chance 0 --out csv.json",
    ],
    "salience predict": [
        "lmforecast salience predict --fit csv.json --losses salience/new_losses.jsonl --json",
    ],
    "salience features": [
        "lmforecast salience features --texts salience/texts.jsonl --model ./my-hf-model "
        "--out features.npz   # needs the hf extra and a local model folder",
    ],
    "salience token-losses": [
        "lmforecast salience token-losses --texts salience/texts.jsonl --model ./my-hf-model "
        "--out losses.jsonl   # needs the hf extra and a local model folder",
    ],
    "salience plot": [
        "lmforecast salience plot --fit csv.json --texts salience/texts.jsonl --out weights.png"
    ],
    "zoo build": ["lmforecast zoo build --preset mini --out zoo-mini   # ~20 s, torch extra"],
    "zoo show": ["lmforecast zoo show --json"],
    "report": [
        "lmforecast report --out report",
        "lmforecast report --out report --sections supervised,osl",
    ],
    "backtest": [
        "lmforecast backtest --runs supervised/runs.csv --form chinchilla --n-cutoffs 3 "
        "--out bt.csv",
    ],
    "evals import": [
        "lmforecast evals import evals --models evals/models.csv --out my_evals.csv",
    ],
    "evals show": ["lmforecast evals show pythia   # the bundled Pythia table"],
    "runs import": [
        "lmforecast runs import logs/*.jsonl --format jsonl --models logs/models.csv "
        "--train-loss train_loss --out log_runs.csv --checkpoints-out log_checkpoints.csv",
        "lmforecast runs import logs/run-540m-r30.jsonl --format jsonl --params 5.4e8 "
        "--final mean:3 --out log_runs_540m.csv --json",
    ],
    "curves fit": [
        "lmforecast curves fit --runs curves/curves.csv --out curves_fit.json",
        "lmforecast curves fit --runs curves/curves.csv --law annealing --json",
    ],
    "curves predict": [
        "lmforecast curves predict --fit curves_fit.json --schedule curves/schedule.csv --final",
        "lmforecast curves predict --fit curves_fit.json --schedule curves/schedule.csv --json "
        "--out curves_forecast.csv",
    ],
    "curves plan": [
        "lmforecast curves plan --fit curves_fit.json --steps 16000",
        "lmforecast curves plan --fit curves_fit.json --steps 32K --floor-lr 1e-5 --json",
    ],
    "ledger add": [
        "lmforecast ledger add --ledger forecasts.db --method supervised --point 2.31 --lo 2.25 "
        "--hi 2.38 --level 0.9 --params 1e9 --tokens 2e10 --label plan-q3",
        "lmforecast supervised predict --preset hoffmann2022 --params 7e10 --tokens 1.4e12 "
        "--ledger forecasts.db --label chinchilla-70b",
    ],
    "ledger resolve": ["lmforecast ledger resolve 1 --ledger forecasts.db --observed 2.29"],
    "ledger correct": ["lmforecast ledger correct 1 --ledger forecasts.db --observed 2.27"],
    "ledger score": ["lmforecast ledger score --ledger forecasts.db --json"],
    "ledger show": ["lmforecast ledger show --ledger forecasts.db --label plan-q3"],
    "ledger export": ["lmforecast ledger export --ledger forecasts.db --out forecasts.csv"],
    "examples list": ["lmforecast examples list"],
    "examples copy": ["lmforecast examples copy ."],
}


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """Defaults shown after each option's help (unless it names one); epilogs keep line breaks."""

    def _get_help_string(self, action):
        text = action.help or ""
        default = action.default
        if (
            "default" in text
            or default in (None, False, argparse.SUPPRESS)
            or action.required
            or not action.option_strings
        ):
            return text
        return text + " (default: %(default)s)"


def _verbs(parser: argparse.ArgumentParser, prefix=()):
    """(name tuple, parser) of every parser under `parser`, the leaves marked by has_sub=False."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    yield prefix, parser, bool(subs)
    for a in subs:
        for name, sp in a.choices.items():
            yield from _verbs(sp, prefix + (name,))


def leaf_verbs(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """Every runnable verb, keyed "group verb" (or "group" for single-verb groups)."""
    return {" ".join(k): p for k, p, has_sub in _verbs(parser) if not has_sub and k}


def decorate(parser: argparse.ArgumentParser) -> None:
    for key, p, _ in _verbs(parser):
        p.formatter_class = _Formatter
        for a in p._actions:
            if a.help is None and a.option_strings:
                entry = OPTIONS.get(a.option_strings[-1]) or OPTIONS.get(a.option_strings[0])
                a.help = (entry or {}).get("help")
        name = " ".join(key)
        lines = EXAMPLES.get(name) if name else GETTING_STARTED
        if lines is None:  # a group: its verbs' examples, in order (a fit before its use)
            lines = list(
                dict.fromkeys(
                    ln for k, v in EXAMPLES.items() if k.startswith(name + " ") for ln in v
                )
            )
        if lines and not p.epilog:
            p.epilog = "examples (after `lmforecast examples copy .`):\n" + "\n".join(
                "  " + line for line in lines
            )
