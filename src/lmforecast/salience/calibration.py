"""How far to trust CSV forecasts: prediction-interval backtest on the zoo's held-out models.

`zoo_forecasts` fits the CSV of each task on the small-model zoo's token losses (default fit:
Algorithm 2 with 300 steps, 200 bootstrap resamples of the law) and scores the prediction
intervals of the zoo's *test* models (the largest model of each tokenizer family, App. A-style
split by size; docs/zoo.md). It returns a forecasts table (`lmforecast.uncertainty.coverage`).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import pandas as pd

from ..uncertainty.coverage import DEFAULT_LEVELS
from .pipeline import fit_salience
from .zoo_data import emerged_tasks, zoo_salience_inputs


def zoo_forecasts(
    zoo,
    tasks: Sequence[str] | None = None,
    *,
    levels: Sequence[float] = DEFAULT_LEVELS,
    bootstrap: int = 200,
    seed: int = 0,
    **options,
) -> pd.DataFrame:
    """One row per task, test model and level: y (score), y_pred, lower, upper (points).
    `tasks` defaults to the zoo tasks that emerge (`emerged_tasks`)."""
    rows = []
    for task in tasks if tasks is not None else emerged_tasks(zoo):
        texts, records, scores, gamma = zoo_salience_inputs(zoo, task)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = fit_salience(
                texts,
                records,
                scores,
                task=task,
                chance=gamma,
                bootstrap=bootstrap,
                seed=seed,
                **options,
            )
        tab = fit.table()
        test = tab[tab["split"] == "test"]
        for lv in levels:
            lo, hi = fit.predict_interval(test["capability"].to_numpy(), lv)
            rows.append(
                pd.DataFrame(
                    {
                        "method": "CSV",
                        "study": "zoo",
                        "task": task,
                        "target": test["model"].to_numpy(),
                        "level": lv,
                        "y": test["score"].to_numpy(),
                        "y_pred": test["predicted"].to_numpy(),
                        "lower": lo,
                        "upper": hi,
                    }
                )
            )
    cols = ["level", "y", "y_pred", "lower", "upper"]
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=cols)


__all__ = ["zoo_forecasts"]
