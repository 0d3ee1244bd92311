"""Readers for real training suites laid out as tidy CSV tables (docs/trust.md).

Each reader takes the path of a suite's CSV (or its folder) and returns *runs tables*: one
DataFrame per sub-suite (a dataset, a recipe), with columns N, D, C (= 6ND), loss plus the
suite's own identifying columns. Nothing here fits; backtests and calibration consume the
tables. The suites themselves are never bundled (only numbers derived from them are):

- `datablations_runs`: Muennighoff et al. 2023, final C4 runs (N, D, U, epochs, seed). The plain
  laws have no term for repeated data, so by default only single-epoch rows (D <= U) are
  returned; seed replicates of one configuration are averaged (their spread is kept in
  ``replicate_sd``, the standard deviation of log loss among the seeds).
- `gemstones_runs`: McLeish et al. 2025, checkpoints of 22 models trained at constant learning
  rate (so every checkpoint is comparable); `every` keeps one checkpoint in `every`.
- `porian_runs`: Porian et al. 2024 isoFLOP points, one table per configuration (recipe).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import InputError


def _read(path: str | Path, default_name: str, need: tuple[str, ...]) -> pd.DataFrame:
    p = Path(path)
    if p.is_dir():
        p = p / default_name
    if not p.is_file():
        raise InputError(f"{p}: no such file")
    df = pd.read_csv(p)
    missing = [c for c in need if c not in df.columns]
    if missing:
        raise InputError(f"{p}: missing column(s) {', '.join(map(repr, missing))}")
    return df


def average_replicates(df: pd.DataFrame, keys=("N", "D"), target: str = "loss") -> pd.DataFrame:
    """One row per distinct `keys`: the mean of `target` (other columns from the first row),
    `n_replicates` and `replicate_sd` (sample sd of log target among replicates, 0 for one)."""
    keys = list(keys)
    g = df.assign(_log=np.log(df[target].to_numpy(float))).groupby(keys, sort=False)
    first = g.first().reset_index()
    first[target] = g[target].mean().to_numpy()
    first["n_replicates"] = g.size().to_numpy()
    first["replicate_sd"] = g["_log"].std(ddof=1).fillna(0.0).to_numpy()
    return first.drop(columns="_log")


def datablations_runs(path: str | Path, *, single_epoch: bool = True) -> dict[str, pd.DataFrame]:
    """{"c4": runs} from datablations ``runs.csv`` (columns run, N, D, U, epochs, C, loss, seed).

    `single_epoch=True` keeps rows with D <= U (no repeated data: what a law in N and D alone
    can describe) and averages seed replicates; False keeps every row (for a law with a U term)."""
    df = _read(path, "runs.csv", ("N", "D", "U", "loss"))
    df = df.copy()
    if single_epoch:
        df = df[df["D"].to_numpy(float) <= df["U"].to_numpy(float) * (1 + 1e-9)]
        df = average_replicates(df, ("N", "D"))
    df["C"] = 6.0 * df["N"].to_numpy(float) * df["D"].to_numpy(float)
    return {"c4": df.sort_values(["N", "D"]).reset_index(drop=True)}


def gemstones_runs(
    path: str | Path, *, loss: str = "loss_fineweb_edu", every: int = 3
) -> dict[str, pd.DataFrame]:
    """{"fineweb-edu": runs} from Gemstones ``loss.csv``: every `every`-th checkpoint of each
    model (always including its last), N = all parameters, D = step x 4,194,304 tokens."""
    df = _read(path, "loss.csv", ("model", "N", "D", "step", loss))
    if every < 1:
        raise InputError(f"every must be >= 1, got {every}")
    out = []
    for _, g in df.groupby("model", sort=False):
        g = g.sort_values("step")
        idx = np.arange(len(g) - 1, -1, -every)[::-1]
        out.append(g.iloc[idx])
    df = pd.concat(out, ignore_index=True)
    df = df.assign(loss=df[loss].to_numpy(float))
    df["C"] = 6.0 * df["N"].to_numpy(float) * df["D"].to_numpy(float)
    name = loss.removeprefix("loss_").replace("_", "-")
    return {name: df.sort_values(["N", "D"]).reset_index(drop=True)}


def porian_runs(path: str | Path, *, configs=None) -> dict[str, pd.DataFrame]:
    """{config: runs} from Porian ``isoflops.csv``: one table per configuration (recipe), the
    FLOPs budget kept as ``budget`` and C = 6ND (the paper's own FLOP count differs by recipe)."""
    df = _read(path, "isoflops.csv", ("config", "budget", "N", "D", "loss"))
    names = list(dict.fromkeys(df["config"])) if configs is None else list(configs)
    out = {}
    for c in names:
        g = df[df["config"] == c]
        if g.empty:
            raise InputError(f"porian: no configuration {c!r}")
        g = average_replicates(g, ("N", "D"))
        g["C"] = 6.0 * g["N"].to_numpy(float) * g["D"].to_numpy(float)
        out[str(c)] = g.sort_values(["N", "D"]).reset_index(drop=True)
    return out


def shared_suites(root: str | Path) -> dict[str, dict[str, pd.DataFrame]]:
    """All three shared suites under `root` (the folder holding datablations/, gemstones/,
    porian/): {suite: {sub-suite: runs}}."""
    root = Path(root)
    return {
        "datablations": datablations_runs(root / "datablations"),
        "gemstones": gemstones_runs(root / "gemstones"),
        "porian": porian_runs(root / "porian"),
    }


__all__ = [
    "average_replicates",
    "datablations_runs",
    "gemstones_runs",
    "porian_runs",
    "shared_suites",
]
