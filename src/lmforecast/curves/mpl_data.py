"""Reader of the multi-power-law authors' curves (Luo et al. 2025, public repository
``loss_curve_repo``): one CSV per run with ``step, lr, loss`` in a folder per model size.

Their CSVs omit the warmup, so the reader adds it as its README states: a linear warmup from
lr 0 at step 0 to the peak 3e-4 at step 2160. Otherwise the logged lr is the schedule, read as
any sparse schedule is (linearly between rows): the two-stage ``wsdcon_*`` runs' drop, logged
between steps 7936 and 8000, is spread over those 64 steps. ``exact_drop=True`` places it in one
step between 7999 and 8000 instead (the logged lr at step 8000 is already the lower one).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import InputError

SIZES = {"25M": 25e6, "100M": 100e6, "400M": 400e6}
SCHEDULES = (
    "constant_24000",
    "constant_72000",
    "cosine_24000",
    "cosine_72000",
    "wsd_20000_24000",
    "wsdld_20000_24000",
    "wsdcon_3",
    "wsdcon_9",
    "wsdcon_18",
)
PROTOCOL_FIT = ("cosine_24000", "constant_24000", "wsdcon_9")
WARMUP_STEPS, PEAK_LR, DROP_STEP = 2160, 3e-4, 8000
# the authors' fitted parameters (L0, A, alpha, B, C, beta, gamma) per size, as their repository
# reports them beside the protocol's errors (Luo et al. 2025, Table/README of loss_curve_repo)
PUBLISHED_PARAMS = {
    "25M": (3.040, 0.525, 0.508, 363.8, 2.066, 0.583, 0.641),
    "100M": (2.651, 0.601, 0.453, 437.9, 2.132, 0.598, 0.655),
    "400M": (2.375, 0.654, 0.429, 523.4, 2.025, 0.594, 0.635),
}


def read_mpl_run(
    path: str | Path, run: str | None = None, n: float | None = None, exact_drop: bool = False
) -> pd.DataFrame:
    """One of the authors' CSVs as a curves table (warmup rows added without loss)."""
    p = Path(path)
    if not p.exists():
        raise InputError(f"{p}: no such file")
    df = pd.read_csv(p)
    run = run or p.stem
    rows = [pd.DataFrame({"step": [0.0, WARMUP_STEPS], "lr": [0.0, PEAK_LR], "loss": np.nan})]
    rows.append(df[df["step"] > WARMUP_STEPS][["step", "lr", "loss"]].astype(float))
    if exact_drop and p.stem.startswith("wsdcon"):  # the drop in one step: 7999 -> 8000
        after = float(df.loc[df["step"] >= DROP_STEP, "lr"].iloc[0])
        rows.append(
            pd.DataFrame(
                {"step": [DROP_STEP - 1.0, DROP_STEP], "lr": [PEAK_LR, after], "loss": np.nan}
            )
        )
    out = pd.concat(rows, ignore_index=True).drop_duplicates("step", keep="first")
    out = out.sort_values("step", kind="stable").reset_index(drop=True)
    out.insert(0, "run", run)
    if n is not None:
        out["N"] = float(n)
    return out


def read_mpl_size(
    folder: str | Path, size: str, runs=SCHEDULES, exact_drop: bool = False
) -> pd.DataFrame:
    """The curves of one model size (``"25M"``, ``"100M"``, ``"400M"``) as one table with
    ``N``; runs are named ``<size>/<schedule>``."""
    if size not in SIZES:
        raise InputError(f"size {size!r} is not one of {', '.join(SIZES)}")
    base = Path(folder) / size
    return pd.concat(
        [read_mpl_run(base / f"{r}.csv", f"{size}/{r}", SIZES[size], exact_drop) for r in runs],
        ignore_index=True,
    )


__all__ = ["PROTOCOL_FIT", "SCHEDULES", "SIZES", "read_mpl_run", "read_mpl_size"]
