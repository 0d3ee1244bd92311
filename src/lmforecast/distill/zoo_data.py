"""Adapters from the small-model zoo's tables (docs/zoo.md) to the distillation estimator.

The zoo has a dozen distilled students (2 sizes x 2 IsoFLOP budgets x 3 teachers), too few to
pin the nine coefficients of Eq. 8 (Busbridge et al. 2025). `zoo_fixed_coefficients` holds the
exponents (alpha', beta', gamma') and the break's shape (c1, f1) at Table 6 and leaves the
scales A', B', the teacher-loss exponent c0 and the break location d1 free.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from ..errors import DomainWarning, InputError
from ..supervised import SupervisedScalingLaw
from .model import DistillationScalingLaw
from .presets import DISTILL_PRESETS

ZOO_FREE = ("A'", "B'", "c0", "d1")
RUN_COLUMNS = ("model", "teacher", "N_S", "D_S", "N_T", "D_T", "L_T", "L_S", "L_S_supervised")


def zoo_distillation_runs(distillation: pd.DataFrame) -> pd.DataFrame:
    """The zoo's `distillation.csv` as estimator input (N_S, D_S, L_T, L_S plus context)."""
    missing = [c for c in RUN_COLUMNS if c not in distillation.columns]
    if missing:
        raise InputError(f"zoo distillation table: missing column(s) {', '.join(missing)}")
    if len(distillation) == 0:
        raise InputError("zoo distillation table: no distilled students")
    out = distillation[list(RUN_COLUMNS)].copy()
    return out.sort_values(["N_S", "D_S", "L_T"], ascending=[True, True, False]).reset_index(
        drop=True
    )


def zoo_fixed_coefficients(
    free: tuple[str, ...] = ZOO_FREE, preset: str = "busbridge2025"
) -> dict[str, float]:
    """Eq. 8 coefficients held at the preset (Table 6) values: every one not in `free`."""
    params = DISTILL_PRESETS[preset]["params"]
    unknown = [k for k in free if k not in params]
    if unknown:
        raise InputError(f"free: unknown coefficient(s) {', '.join(unknown)}")
    return {k: float(v) for k, v in params.items() if k not in free}


def student_groups(runs: pd.DataFrame) -> list[tuple[tuple[float, float], pd.DataFrame]]:
    """The runs grouped by student configuration (N_S, D_S), each sorted by teacher loss."""
    return [(k, g.sort_values("L_T")) for k, g in runs.groupby(["N_S", "D_S"])]


def zoo_backtest_fits(
    zoo, *, bootstrap: int = 32, seed: int = 0, n_jobs: int = 1
) -> dict[str, tuple[np.ndarray, DistillationScalingLaw]]:
    """The fits of `zoo_backtest`: {split: (held-out mask over `zoo_distillation_runs`, law
    fitted to the other runs)}. They do not depend on how the forecasts give the teacher, so
    one set serves both `teacher` modes (pass it as `zoo_backtest(..., fits=...)`)."""
    runs = zoo_distillation_runs(zoo.distillation)
    fixed = zoo_fixed_coefficients()
    C = (runs["N_S"] * runs["D_S"]).to_numpy()
    splits = {
        "size": (runs["N_S"] > runs["N_S"].min()).to_numpy(),
        "compute": C > np.median(C),
    }
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DomainWarning)  # E -> 0 on the zoo (docs/zoo.md)
        sup = SupervisedScalingLaw(form="chinchilla").fit(zoo.supervised_runs())
        for name, held in splits.items():
            m = DistillationScalingLaw(
                sup, fixed=fixed, n_polish=8, bootstrap=bootstrap, seed=seed, n_jobs=n_jobs
            ).fit(runs[~held])
            out[name] = (held, m)
    return out


def zoo_backtest(
    zoo,
    *,
    bootstrap: int = 32,
    level: float = 0.9,
    seed: int = 0,
    n_jobs: int = 1,
    teacher: str = "measured",
    fits=None,
) -> pd.DataFrame:
    """Forecast the zoo's larger distilled students from its smaller ones, with intervals.

    Two splits, as a user would extrapolate: "size" fits the 6 runs of the smaller student
    (N_S = 12,480) and forecasts the 6 of the larger (24,896); "compute" fits the 6 runs at the
    smaller IsoFLOP budget and forecasts the 6 at the 4x larger one. The fit is the zoo fit of
    the report (A', B', c0, d1 free, the rest at Table 6, L~_S from the Chinchilla law fitted to
    the zoo's supervised runs) with a multi-started bootstrap. Naive baselines: the measured
    supervised loss of the same student (`L_S_supervised`) and the teacher's loss. Returns one
    row per forecast: split, the run's columns, pred, lo, hi, covered and relative errors.
    `teacher="forecast"`: each teacher given by its size and tokens (N_T, D_T), its loss the
    supervised law's forecast, drawn in the interval (docs/distill_validation.md, "The teacher's
    uncertainty"), as when planning with a teacher not yet trained. `fits`: the result of
    `zoo_backtest_fits` for the same zoo (then `bootstrap`, `seed` and `n_jobs` are its own);
    None fits here.
    """
    if teacher not in ("measured", "forecast"):
        raise InputError(f"teacher must be 'measured' or 'forecast', got {teacher!r}")
    if fits is None:
        fits = zoo_backtest_fits(zoo, bootstrap=bootstrap, seed=seed, n_jobs=n_jobs)
    runs = zoo_distillation_runs(zoo.distillation)
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DomainWarning)  # E -> 0 on the zoo (docs/zoo.md)
        for name, (held, m) in fits.items():
            te = runs[held].copy()
            NS, DS = te["N_S"].to_numpy(), te["D_S"].to_numpy()
            kw = (
                {"teacher_loss": te["L_T"].to_numpy()}
                if teacher == "measured"
                else {"N_T": te["N_T"].to_numpy(), "D_T": te["D_T"].to_numpy()}
            )
            te["pred"] = m.predict(NS, DS, **kw)
            te["lo"], te["hi"] = m.predict_interval(NS, DS, level=level, **kw)
            te["covered"] = (te["L_S"] >= te["lo"]) & (te["L_S"] <= te["hi"])
            te["err"] = te["pred"] / te["L_S"] - 1
            te["err_supervised_baseline"] = te["L_S_supervised"] / te["L_S"] - 1
            te["err_teacher_baseline"] = te["L_T"] / te["L_S"] - 1
            te.insert(0, "split", name)
            out.append(te)
    return pd.concat(out, ignore_index=True)


__all__ = [
    "ZOO_FREE",
    "zoo_distillation_runs",
    "zoo_fixed_coefficients",
    "student_groups",
    "zoo_backtest",
    "zoo_backtest_fits",
]
