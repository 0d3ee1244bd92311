"""Report section: how far to trust downstream forecasts (OSL and FLP / FLP-M).

Coverage of nominal prediction intervals on held-out models, beside naive baselines:

- OSL (Ruan et al. 2024) on the bundled Table B.1 (77 base models): the Sec. 4 FLOPs-cutoff
  holdout (fit on models up to Llama-2-7B's 8.4e22 FLOPs, forecast the rest) for every printed
  benchmark as target; PC law, FLOPs-only sigmoid, persistence (`osl.holdout`).
- FLP and FLP-M (Chen et al.) on simulated studies and on the small-model zoo's really trained
  runs (`flp.calibration`).

Everything is fitted here with the methods' default interval settings (fewer seeds in quick
mode); the numbers land in the report JSON under `trust_downstream`.
"""

from __future__ import annotations

import warnings

import pandas as pd

from ...flp.calibration import (
    simulated_flp_forecasts,
    simulated_flpm_forecasts,
    zoo_flp_forecasts,
    zoo_flpm_forecasts,
)
from ...osl import load_table_b1
from ...osl.holdout import holdout_forecasts
from ...plots.intervals import calibration_figure
from ...uncertainty.coverage import calibration_curve, summarise_intervals
from ..builder import ReportContext, Section

LEVEL = 0.9


def _records(df: pd.DataFrame) -> list[dict]:
    return [
        {k: (v.item() if hasattr(v, "item") else v) for k, v in r.items()}
        for r in df.to_dict(orient="records")
    ]


def build_section(ctx: ReportContext) -> Section:
    sec = Section("trust_downstream", "How far to trust downstream forecasts: OSL and FLP")
    sec.text(
        "Every downstream forecast of lmforecast carries a prediction interval (90% by default). "
        "Here those intervals meet held-out data: the share of held-out actuals that fall inside "
        "their nominal 90% interval (coverage; 0.9 is calibrated, lower is overconfident), the "
        "median interval width and the mean absolute error, beside naive baselines. Held-out "
        "models are always larger or stronger than every fitted one: these are extrapolations."
    )
    # ---- OSL --------------------------------------------------------------------------------
    osl = holdout_forecasts(load_table_b1())
    per_target = summarise_intervals(osl, ("target", "method"), LEVEL)
    pooled = summarise_intervals(osl, ("method",), LEVEL)
    sec.html("<h3>Observational scaling laws: Table B.1, FLOPs-cutoff holdout (Sec. 4)</h3>")
    sec.text(
        "Fit on the models trained with at most 8.4e22 FLOPs (Llama-2-7B), forecast every other "
        "model; each printed benchmark in turn is the target and the other six span the PCs. "
        "OSL intervals: App. C.8 delta method plus the larger of the residual SD and a rolling "
        "backtest RMSE inside the training set. Persistence forecasts the best training model's "
        "score, its interval from the same rule's errors inside the training set. Models without "
        "FLOPs are forecast by the PC law only, so its n is larger."
    )
    sec.table(
        pooled, f"Pooled over targets, nominal {LEVEL:g} intervals (scores in points, 0-100)."
    )
    sec.table(per_target, "Per target.", "{:.3g}")
    # ---- FLP / FLP-M -----------------------------------------------------------------------
    seeds = range(3) if ctx.quick else range(10)
    flpm_tasks = ("HumanEval",) if ctx.quick else ("HumanEval", "RACE")
    from ...zoo import load_zoo

    zoo = load_zoo()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sim = pd.concat(
            [
                simulated_flp_forecasts(seeds, bootstrap=200),
                simulated_flpm_forecasts(range(1), flpm_tasks, steps=600 if ctx.quick else 2000),
            ],
            ignore_index=True,
        )
        real = pd.concat(
            [zoo_flp_forecasts(zoo), zoo_flpm_forecasts(zoo, steps=600 if ctx.quick else 2000)],
            ignore_index=True,
        )
    flp_tab = pd.concat(
        [
            summarise_intervals(sim, ("study", "method"), LEVEL),
            summarise_intervals(real, ("study", "method"), LEVEL),
        ],
        ignore_index=True,
    )
    sec.html("<h3>FLP and FLP-M: held-out larger runs</h3>")
    sec.text(
        "Simulated: `simulate_flp` studies (7B and 13B forecast from sampling models up to 3B; "
        f"{len(seeds)} seeds, three tasks) and one `simulate_flpm` study (3B at five code ratios "
        "and 7B at 0.3). docs/flp.md has the same tables over more seeds. "
        "Zoo: each of the three largest sizes of the supervised runs forecast from "
        "the smaller ones (FLP), and the largest mixture size from the smaller ones (FLP-M). "
        "Scores in points; default fits (FLP: 200 bootstrap refits per stage, FLP-M: 50)."
    )
    sec.table(
        flp_tab,
        f"Coverage of nominal {LEVEL:g} prediction intervals. An interval spanning the whole "
        "0-100 range (`whole_range`) says nothing: like a non-finite one (`nonfinite`) it counts "
        "as a miss.",
        "{:.3g}",
    )
    sec.table(
        summarise_intervals(real, ("method", "task"), LEVEL),
        "Zoo, per task (FLP cannot be fitted where fewer than 2 checkpoints pass the filter).",
        "{:.3g}",
    )
    curves = {
        "OSL, Table B.1 holdout": calibration_curve(osl),
        "FLP / FLP-M, simulated": calibration_curve(sim),
        "FLP / FLP-M, zoo": calibration_curve(real),
    }
    sec.figure(
        calibration_figure(curves),
        "Calibration: share of held-out actuals inside the interval against its nominal level "
        "(on the dashed line = calibrated, below = overconfident).",
    )
    sec.numbers.update(
        level=LEVEL,
        osl_pooled=_records(pooled),
        osl_per_target=_records(per_target),
        flp=_records(flp_tab),
        calibration={k: _records(v) for k, v in curves.items()},
    )
    return sec
