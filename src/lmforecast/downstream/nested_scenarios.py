"""The scenarios of the nested backtests (`nested`): which smaller models of a suite a
forecaster is fitted on, which larger targets it forecasts, on which tasks, and whether the
scenario belongs to the `select` or the `report` split (docs/downstream_validation.md,
"Nested protocol")."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from .backtest import pythia_name

PYTHIA_ACC_TASKS = ("piqa", "arc_easy", "arc_challenge", "sciq", "winogrande", "logiqa", "wsc")
PYTHIA_NORM_TASKS = ("piqa", "arc_easy", "arc_challenge", "sciq", "logiqa")


@dataclass
class Scenario:
    suite: str
    split: str  # "select" or "report"
    name: str
    fit_models: list
    targets: list
    tasks: tuple
    loss_task: str
    metric: str
    chance: dict = field(default_factory=dict)  # task -> points (None: the bundled table)
    stage1: str = "saturating"


def pythia_scenarios(metric: str = "acc") -> list[Scenario]:
    """Select: 1B and 1.4B from <= 410M, 1.4B from <= 1B; report: 2.8B from <= 1.4B and from
    <= 1B; both suites (standard, deduped)."""
    sizes = ("70m", "160m", "410m", "1b", "1.4b", "2.8b")
    plan = (
        ("select", 3, ["1b", "1.4b"]),
        ("select", 4, ["1.4b"]),
        ("report", 5, ["2.8b"]),
        ("report", 4, ["2.8b"]),
    )
    tasks = PYTHIA_ACC_TASKS if metric == "acc" else PYTHIA_NORM_TASKS
    out = []
    for suite in ("standard", "deduped"):
        for split, k, tg in plan:
            name = f"{suite} {metric}: {'/'.join(tg)} from <= {sizes[k - 1]}"
            out.append(
                Scenario(
                    f"pythia-{metric}",
                    split,
                    name,
                    [pythia_name(s, suite) for s in sizes[:k]],
                    [pythia_name(t, suite) for t in tg],
                    tasks,
                    "lambada_openai",
                    metric,
                )
            )
    return out


def gemstones_scenarios(models: pd.DataFrame, chance: pd.DataFrame, tasks) -> list[Scenario]:
    """Size groups of the 22 Gemstones (params: <= 120M, ~0.5B, ~1B, ~2B). Select: the ~0.5B
    models from the smallest group, the ~1B from the two below; report: the ~2B from the three
    groups below and from the two below."""
    m = models.sort_values("params")
    p = m["params"].to_numpy(float)
    edges = (1.2e8, 7e8, 1.5e9)
    groups = [
        m["model"][p <= edges[0]].tolist(),
        m["model"][(p > edges[0]) & (p <= edges[1])].tolist(),
        m["model"][(p > edges[1]) & (p <= edges[2])].tolist(),
        m["model"][p > edges[2]].tolist(),
    ]
    ch = dict(zip(chance["task"].astype(str), chance["chance_points"].astype(float)))
    plan = (("select", 1, 1), ("select", 2, 2), ("report", 3, 3), ("report", 2, 3))
    out = []
    for split, k, tg in plan:
        fit = [x for g in groups[:k] for x in g]
        name = f"gemstones: group {tg + 1} from groups <= {k}"
        out.append(
            Scenario(
                "gemstones",
                split,
                name,
                fit,
                groups[tg],
                tuple(tasks),
                "fineweb_edu",
                "acc_norm",
                ch,
            )
        )
    return out
