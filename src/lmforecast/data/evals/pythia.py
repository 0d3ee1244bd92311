"""The bundled tidy Pythia table (EleutherAI/pythia `evals/pythia-v1`, zero-shot, Apache-2.0)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pandas as pd

from .harness import read_harness
from .registry import BUNDLED_PYTHIA_TASKS
from .table import read_evals_table


def load_pythia() -> pd.DataFrame:
    """The bundled tidy Pythia table (EleutherAI/pythia `evals/pythia-v1`, zero-shot, Apache-2.0).

    12 models (70M-2.8B, standard and deduped), 27 checkpoints each, `BUNDLED_PYTHIA_TASKS`.
    """
    path = resources.files("lmforecast").joinpath("data/bundled/pythia/pythia_zero_shot.csv.gz")
    with resources.as_file(path) as p:
        return read_evals_table(p)


def make_pythia_table(zero_shot_dir: str | Path) -> pd.DataFrame:
    """The bundled table from the Pythia `zero-shot` folder: `BUNDLED_PYTHIA_TASKS`, all metrics."""
    return read_harness(zero_shot_dir, tasks=BUNDLED_PYTHIA_TASKS)
