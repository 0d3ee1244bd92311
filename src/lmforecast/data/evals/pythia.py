"""The bundled tidy Pythia table (EleutherAI/pythia `evals/pythia-v1`, zero-shot, Apache-2.0)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pandas as pd

from ..io import read_table
from .harness import read_harness
from .registry import BUNDLED_PYTHIA_TASKS
from .table import check_evals_frame, read_evals_table


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


def read_evals(path: str | Path, *, strict: bool = True) -> pd.DataFrame:
    """The evals table at `path`; the word ``pythia`` (where no such file exists) is the bundled
    Pythia table (`load_pythia`), as every ``--evals`` flag reads it. `strict`: a tidy table as
    `evals import` writes it (`read_evals_table`); otherwise any table a method can fit from
    (`check_evals_frame`: the tidy columns, numeric meta columns)."""
    if str(path) == "pythia" and not Path(path).exists():
        return load_pythia()
    if strict:
        return read_evals_table(path)
    return check_evals_frame(read_table(path), str(path))
