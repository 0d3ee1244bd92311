"""The inputs of a distillation fit: the runs table (student size, tokens, teacher loss, student
loss) and the teacher's supervised law (Eq. 1) that gives L_T and L~_S."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from ..data.validate import check_no_duplicates, numeric_column
from ..errors import InputError, did_you_mean
from ..fitting import FitResult
from ..laws import get_law
from ..supervised import SupervisedScalingLaw
from ..supervised.presets import PRESETS as SUPERVISED_PRESETS

PAPER_SUPERVISED = ("busbridge2025", "paper")  # explicit opt-in names for Table 6's C4 law
MIN_SUPERVISED_RUNS = 6  # Eq. 1 has six coefficients


def _supervised_from(spec) -> SupervisedScalingLaw:
    if isinstance(spec, SupervisedScalingLaw):
        return spec
    if isinstance(spec, Mapping):  # natural parameters of Eq. 1
        law = get_law("chinchilla-gamma")
        p = {"gamma": 1.0, **dict(spec)}
        missing = [k for k in law.natural_names if k not in p]
        if missing:
            raise InputError(f"supervised coefficients: missing {', '.join(missing)}")
        res = FitResult(
            law="chinchilla-gamma",
            theta=law.from_natural(p).tolist(),
            params={k: float(p[k]) for k in law.natural_names},
            objective=float("nan"),
            loss={"name": "huber", "delta": 1e-3},
            n_obs=0,
            n_starts=0,
            n_polished=0,
            n_at_best=0,
            converged=True,
            message="given coefficients",
            meta={"form": "chinchilla-gamma", "source": "given coefficients"},
        )
        return SupervisedScalingLaw.from_result(res)
    s = str(spec)
    if s == "paper":
        s = "busbridge2025"
    if s.endswith(".json"):
        if not Path(s).exists():
            raise InputError(f"{s}: no such file")
        return SupervisedScalingLaw.load(s)
    if s not in SUPERVISED_PRESETS:
        raise InputError(
            f"unknown supervised law {s!r} (--supervised): use a preset "
            f"({', '.join(sorted(SUPERVISED_PRESETS))}), paper (= busbridge2025) or a "
            "`supervised fit --out` JSON" + did_you_mean(s, [*SUPERVISED_PRESETS, "paper"])
        )
    return SupervisedScalingLaw.from_preset(s)


def _supervised_source(spec) -> str:
    """One line saying which supervised law gives L~_S (reported in summary() and the JSON)."""
    if isinstance(spec, SupervisedScalingLaw):
        src = (getattr(spec, "result_", None) and spec.result_.meta.get("source")) or ""
        n = getattr(spec, "result_", None) and spec.result_.n_obs
        return f"given SupervisedScalingLaw ({src or f'fitted to {n} runs'})"
    if isinstance(spec, Mapping):
        return "given Eq. 1 coefficients"
    s = str(spec)
    if s in PAPER_SUPERVISED:
        return (
            "paper's law: busbridge2025 (Table 6 supervised column, English C4, chosen explicitly)"
        )
    if s.endswith(".json"):
        return f"supervised fit loaded from {s}"
    return f"preset {s} (chosen explicitly)"


def _no_supervised_error() -> InputError:
    return InputError(
        "no supervised law for L~_S (Eq. 8): add supervised runs to the table (rows with an "
        "empty L_T; their N_S, D_S, L_S are N, D, L), or pass --supervised FIT.json (from "
        "`supervised fit --out`), or opt into the paper's C4 law with --supervised paper "
        "(Python: supervised='busbridge2025')"
    )


def resolve_supervised(given, sup_runs: pd.DataFrame, lt_col: str, huber_delta: float):
    """The supervised law of a fit, first in the order of App. F: None where one was `given`
    to the constructor (refused when the runs hold supervised rows too), else (law, source
    line) with Eq. 1 fitted to the runs' supervised rows `sup_runs` (App. F.1: Huber
    `huber_delta` on log L, the 9,600-start grid), refused without enough of them."""
    n = len(sup_runs)
    if given is not None:
        if n:
            raise InputError(
                f"runs: {n} row(s) have an empty {lt_col!r} (supervised runs) but a "
                "supervised law was also given (--supervised); drop one of the two"
            )
        return None
    if n == 0:
        raise _no_supervised_error()
    if n < MIN_SUPERVISED_RUNS:
        raise InputError(
            f"runs: {n} supervised row(s) (empty {lt_col!r}) but Eq. 1 has "
            f"{MIN_SUPERVISED_RUNS} coefficients; add supervised runs or pass --supervised"
        )
    sup = SupervisedScalingLaw("chinchilla-gamma", huber_delta=huber_delta, n_jobs=1).fit(sup_runs)
    sup.result_.meta["source"] = f"fitted to {n} supervised rows of the runs"
    return sup, (
        f"fitted to the {n} supervised rows of the runs (empty {lt_col}; Eq. 1, "
        f"Huber {huber_delta:g} on log L, App. F.1 grid)"
    )


def distill_runs_from_frame(
    df: pd.DataFrame,
    ns_col: str = "N_S",
    ds_col: str = "D_S",
    lt_col: str = "L_T",
    ls_col: str = "L_S",
    what: str = "runs",
    *,
    supervised_rows: bool = False,
):
    """Validate a distillation runs table; returns columns N_S, D_S, L_T, L_S.

    With `supervised_rows=True`, rows whose L_T cell is empty are supervised runs (no teacher:
    N_S, D_S, L_S read as N, D, L of Eq. 1) and the call returns (distillation runs,
    supervised runs with columns N, D, loss). Row numbers in errors are those of `df`.
    """
    need = [ns_col, ds_col, lt_col, ls_col]
    seen: dict[str, str] = {}
    for flag, c in zip(("--ns-col", "--ds-col", "--lt-col", "--ls-col"), need):
        if c in seen:
            raise InputError(
                f"{what}: {flag} {c!r} is the same column as {seen[c]}: student size, student "
                "tokens, teacher loss and student loss must be four different columns"
            )
        seen[c] = flag
    missing = [c for c in need if c not in df.columns]
    if missing:
        raise InputError(
            f"{what}: missing column(s) {', '.join(map(repr, missing))}; found "
            f"{', '.join(map(repr, df.columns))} (name them with --ns-col/--ds-col/--lt-col/"
            "--ls-col)"
        )
    cols = {
        k: numeric_column(df, c, positive=True, what=what)
        for k, c in zip(("N_S", "D_S", "L_S"), (ns_col, ds_col, ls_col))
    }
    lt = numeric_column(df, lt_col, what=what, allow_nan=supervised_rows)
    sup = np.isnan(lt) if supervised_rows else np.zeros(lt.size, bool)
    bad = ~sup & ~((lt > 0) & np.isfinite(lt))
    if bad.any():
        i = int(np.argmax(bad))
        raise InputError(f"{what}: column {lt_col!r} row {i + 1}: value {lt[i]:g} must be > 0")
    out = pd.DataFrame(
        {"N_S": cols["N_S"], "D_S": cols["D_S"], "L_T": lt, "L_S": cols["L_S"]}, index=df.index
    )
    dist = out[~sup]
    check_no_duplicates(
        dist,
        ["N_S", "D_S", "L_T"],
        what,
        values=["L_S"],
        hint="a distillation run is one (student size, student tokens, teacher loss); "
        "remove the repeated row",
        row_numbers=np.flatnonzero(~sup) + 1,
    )
    if not supervised_rows:
        return out
    s = out[sup]
    sup_runs = pd.DataFrame({"N": s["N_S"], "D": s["D_S"], "loss": s["L_S"]})
    check_no_duplicates(
        sup_runs,
        ["N", "D"],
        what,
        values=["loss"],
        hint="a supervised run (empty L_T) is one (student size, student tokens); "
        "remove the repeated row",
        row_numbers=np.flatnonzero(sup) + 1,
    )
    return dist, sup_runs
