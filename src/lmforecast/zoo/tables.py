"""Reading the zoo's measurement tables (bundled with the package, or from a build folder)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import pandas as pd

from ..data.validate import check_columns, numeric_column
from ..errors import InputError
from ..store import load_json

TABLES = ("runs", "checkpoints", "distillation", "tasks", "scores")

#: The supervised law is fitted on runs with at least this many tokens per parameter.
LAW_MIN_TOKENS_PER_PARAM = 20.0


@dataclass
class ZooTables:
    """The zoo's tidy tables (schema in docs/zoo.md) and its metadata."""

    runs: pd.DataFrame
    checkpoints: pd.DataFrame
    distillation: pd.DataFrame
    tasks: pd.DataFrame
    scores: pd.DataFrame
    metadata: dict
    folder: Path

    @property
    def texts_path(self) -> Path:
        return self.folder / "texts.jsonl"

    @property
    def token_losses_path(self) -> Path:
        return self.folder / "token_losses.jsonl"

    def supervised_runs(self) -> pd.DataFrame:
        """Final supervised runs of the BPE family at the reference mixture (N, D, loss)."""
        r = self.runs
        return r[(r["kind"] == "supervised") & (r["tokenizer"] == "bpe")].reset_index(drop=True)

    def law_runs(self, min_tokens_per_param: float = LAW_MIN_TOKENS_PER_PARAM) -> pd.DataFrame:
        """The supervised runs the law is fitted on: those trained on at least
        ``min_tokens_per_param`` tokens per parameter (default 20, the fixed ratio and the
        over-trained variants). The 5-tokens/parameter variants are left out: their models are
        still on the initial plateau (docs/zoo.md, "Readings of ambiguous passages"), as the
        distillation paper fits runs from M = D/N ~ 20 upwards (Busbridge et al. 2025, Sec. 4.2).
        """
        r = self.supervised_runs()
        keep = r["D"] / r["N"] >= min_tokens_per_param * (1 - 1e-3)
        return r[keep].reset_index(drop=True)

    def texts(self) -> list[dict]:
        return [json.loads(line) for line in self.texts_path.read_text().splitlines()]

    def token_losses(self) -> list[dict]:
        return [json.loads(line) for line in self.token_losses_path.read_text().splitlines()]


def bundled_folder() -> Path:
    return Path(str(resources.files("lmforecast.data") / "bundled" / "zoo"))


def load_zoo(folder: str | Path | None = None) -> ZooTables:
    """Load the zoo tables from ``folder`` (a build's ``tables/`` or the build folder itself);
    default: the tables bundled with the package."""
    folder = Path(folder) if folder is not None else bundled_folder()
    if not folder.exists():
        raise InputError(f"{folder}: not a zoo tables folder (no such folder)")
    if not folder.is_dir():
        raise InputError(
            f"{folder}: not a zoo tables folder (a file; give a build folder or its tables/)"
        )
    if (folder / "tables").is_dir():
        folder = folder / "tables"
    missing = [t for t in TABLES if not (folder / f"{t}.csv").exists()]
    if missing or not (folder / "metadata.json").exists():
        raise InputError(
            f"{folder}: not a zoo tables folder (missing {missing or 'metadata.json'})"
        )
    frames = {t: _read_csv(folder / f"{t}.csv") for t in TABLES}
    check_columns(frames["runs"], RUNS_COLUMNS, str(folder / "runs.csv"))
    for c in ("N", "D", "loss"):
        numeric_column(frames["runs"], c, positive=True, what=str(folder / "runs.csv"))
    frames["runs"]["teacher"] = frames["runs"]["teacher"].fillna("")
    meta = load_json(folder / "metadata.json", "zoo metadata file")
    return ZooTables(**frames, metadata=meta, folder=folder)


#: Columns of runs.csv every reader of the zoo relies on (docs/zoo.md has the full schema).
RUNS_COLUMNS = ("model", "kind", "tokenizer", "teacher", "N", "D", "loss")


def _read_csv(path: Path) -> pd.DataFrame:
    """A zoo table, or an InputError naming the file (empty, binary or malformed)."""
    try:
        return pd.read_csv(path, keep_default_na=True)
    except pd.errors.EmptyDataError:
        raise InputError(f"{path}: the table is empty") from None
    except (UnicodeDecodeError, pd.errors.ParserError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"{path}: not a zoo table ({first})") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a folder, expected a CSV file") from None
