"""What a supervised fit may use: the form the runs can identify, pinned parameters, replicates.

- `choose_form("auto", data)`: the default form, gated on what the runs can identify (docs/trust.md
  gives the evidence): `chinchilla-gamma`'s extra exponent needs at least GAMMA_MIN_SIZES distinct
  model sizes, a tokens-per-parameter range D/N of at least GAMMA_MIN_DN_DECADES decades and
  GAMMA_MIN_RUNS runs (its 6 parameters and one more);
  otherwise `chinchilla`; with fewer than CHINCHILLA_RUNS runs, or every run at about one token
  count (D spanning less than ONE_D_DECADES decades: a ladder of final checkpoints trained on the
  same tokens), the 1-D compute law `compute` (fewer than COMPUTE_RUNS: refused).
  Either way the choice and its reason are stored in the fit.
- `fix_bounds(law, fixed)`: pin named natural parameters (E, alpha, ...) by equal bounds in fit
  space (`fit_law` treats equal bounds as fixed); unknown names or values outside the law's
  bounds are refused.
- `collapse_replicates(data, mode)`: rows sharing (N, D) are seed replicates; refuse them unless
  `mode` is "mean" (average, keeping the spread of log loss as a noise floor) or "keep".
- `identification(law, theta, boot)`: a fit is unidentified when its cluster-bootstrap refits do
  not pin an exponent (90% range wider than a factor EXP_MAX_RATIO) or it sits on a bound.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from ..compute.consistency import NOT_IDENTIFIED, parameter_problems
from ..errors import DomainWarning, InputError
from ..fitting.engine import fit_law
from ..fitting.losses import huber
from ..laws.compute_power import ComputeND

if TYPE_CHECKING:  # pandas loads where a table is read or built, not at import
    import pandas as pd

AUTO = "auto"
GAMMA_MIN_SIZES = 5
GAMMA_MIN_DN_DECADES = 1.0
ONE_D_DECADES = 0.1  # runs whose D spans less (26%) have one token count: no D term to fit
GAMMA_MIN_RUNS = 7  # chinchilla-gamma's 6 parameters and one run more to show the scatter
CHINCHILLA_RUNS = 6  # chinchilla's 5 parameters and one run more; fewer: form "compute"
COMPUTE_RUNS = 4  # fewer: refused
NO_SPLIT = (
    "the 1-D compute law depends on 6ND only: it has no compute-optimal N/D split (fit "
    "runs at several D/N for a law in N and D)"
)
EXP_MAX_RATIO = 3.0
FEW_DOF = 2  # runs left over the free parameters at or below which the scatter term is blind
REGISTRY: dict[str, str] = {}  # form -> the simpler form it falls back to (extensible)


def dn_decades(data: pd.DataFrame) -> float:
    r = np.log10(data["D"].to_numpy(float) / data["N"].to_numpy(float))
    return float(r.max() - r.min())


def choose_form(form: str, data: pd.DataFrame, n_fixed: int = 0) -> tuple[str, str]:
    """(form to fit, reason) for a requested form; only "auto" is ever changed. `n_fixed`
    parameters pinned by the user (`--fix`) need no runs of their own."""
    if form != AUTO:
        return form, f"{form} (as requested)"
    n_sizes = int(np.unique(data["N"].to_numpy(float)).size)
    dec = dn_decades(data)
    if len(data) < COMPUTE_RUNS:
        runs = "; ".join(f"N={n:.4g} D={d:.4g}" for n, d in zip(data["N"], data["D"]))
        raise InputError(
            f"runs: only {len(data)} distinct runs (rows {runs}): a forecast needs at least "
            f"{COMPUTE_RUNS} (the 1-D compute law has 3 parameters, and one run more shows its "
            "scatter)"
        )
    d_dec = float(np.log10(data["D"].max() / data["D"].min()))
    if d_dec < ONE_D_DECADES:
        return "compute", (
            f"compute (simplest): every run has about one token count (D = "
            f"{data['D'].min():.3g} to {data['D'].max():.3g}), so the runs cannot separate a "
            "law's N and D terms; at one D the 1-D compute law E + A (6ND)^-a is a law in N "
            "(forecasts at another D are extrapolations: their distance r counts it)"
        )
    if len(data) < CHINCHILLA_RUNS - n_fixed:
        return "compute", (
            f"compute (simplest): {len(data)} runs cannot fit a law in N and D (chinchilla has "
            f"{CHINCHILLA_RUNS - 1} parameters and needs one run more to show the runs' scatter); "
            "the 1-D compute law E + A (6ND)^-a has 3 and no "
            "compute-optimal N/D split"
        )
    if n_sizes >= GAMMA_MIN_SIZES and dec >= GAMMA_MIN_DN_DECADES and len(data) >= GAMMA_MIN_RUNS:
        return "chinchilla-gamma", (
            f"chinchilla-gamma: {n_sizes} model sizes and D/N over {dec:.2g} decades identify "
            "its extra exponent"
        )
    return "chinchilla", (
        f"chinchilla (simpler): {len(data)} runs at {n_sizes} model size(s) with D/N over "
        f"{dec:.2g} decades cannot identify chinchilla-gamma's extra exponent (needs >= "
        f"{GAMMA_MIN_SIZES} sizes, >= {GAMMA_MIN_DN_DECADES:g} decade of D/N and >= "
        f"{GAMMA_MIN_RUNS} runs)"
    )


def fix_bounds(law, fixed: Mapping[str, float] | None) -> list[tuple[float, float]] | None:
    """Fit-space bounds with `fixed` natural parameters pinned (None when nothing is fixed)."""
    if not fixed:
        return None
    bounds = [tuple(b) for b in law.bounds]
    by_nat = {}
    for i, p in enumerate(law.parameters):
        by_nat[p.name] = (i, "id")
        nat = getattr(p, "natural", None) or p.name
        by_nat[nat] = (i, getattr(p, "transform", None) or "id")
    for name, value in fixed.items():
        if name not in by_nat:
            names = ", ".join(dict.fromkeys(n for n in by_nat if not n.startswith("log_")))
            raise InputError(
                f"--fix (fixed=): {law.name} has no parameter {name!r}; use one of {names}"
            )
        i, tr = by_nat[name]
        twin = next((n for n in fixed if n != name and by_nat.get(n, (None,))[0] == i), None)
        if twin is not None:
            raise InputError(
                f"--fix (fixed=): {name} and {twin} pin the same parameter of {law.name}; give one"
            )
        v = float(value)
        if tr == "exp" and not name.startswith("log_"):
            if not v > 0:
                raise InputError(f"--fix (fixed=): {name} must be > 0, got {value}")
            v = float(np.log(v))
        if name in ("alpha", "beta") and v == 0:  # A/N^0 is a constant E absorbs
            raise InputError(
                f"--fix (fixed=): {name}=0 turns its term into a constant that E absorbs, so "
                "the fit is not identified; pin a positive exponent or leave it free"
            )
        lo, hi = bounds[i]
        if not (np.isfinite(v) and lo <= v <= hi):
            raise InputError(
                f"--fix (fixed=): {name}={value} is outside the bounds of {law.name} "
                f"({_nat(lo, tr)} to {_nat(hi, tr)})"
            )
        bounds[i] = (v, v)
    return bounds


def check_pins(fixed: Mapping[str, float] | None, data: pd.DataFrame) -> None:
    """Before the form is chosen (so no form warning precedes the refusal): one parameter pinned
    under two names (E and log_E), and a pinned E (the loss no model reaches) at or above a
    run's loss: every law of the family stays above E, so the fit cannot come near that run
    (`--fix E=5` on runs of loss 2.3-4 forecast 5.0 for a fitted run of 2.57, with a "not
    identified" warning only). `fix_bounds` checks names and bounds against the chosen law."""
    twin = next((n for n in fixed or {} if f"log_{n}" in fixed), None)
    if twin is not None:
        raise InputError(f"--fix (fixed=): {twin} and log_{twin} pin the same parameter; give one")
    if not fixed or not {"E", "log_E"} & set(fixed):
        return
    name = "E" if "E" in fixed else "log_E"
    E = float(fixed["E"]) if name == "E" else float(np.exp(float(fixed["log_E"])))
    L = data["loss"].to_numpy(float)
    i = int(np.argmin(L))
    if E >= L[i]:
        raise InputError(
            f"--fix (fixed=): {name}={float(fixed[name]):g}"
            + (f" (E = {E:.4g})" if name != "E" else "")
            + " is at or above the lowest loss of the runs "
            f"({L[i]:.4g}, the run at N={data['N'].iloc[i]:.4g}, D={data['D'].iloc[i]:.4g}): E "
            "is the irreducible loss, below every run's; pin a smaller E or leave it free"
        )


def _nat(v: float, tr: str) -> str:
    return f"{np.exp(v):.3g}" if tr == "exp" else f"{v:g}"


def refuse_repeated_data(data: pd.DataFrame, U, u_col: str = "U") -> None:
    """Rows sharing (N, D) but not their unique tokens U were trained on repeated data (more
    epochs over fewer tokens): they are not seed replicates, and averaging them would mix
    losses of different runs. One-line InputError naming two such rows."""
    import pandas as pd

    U = np.asarray(U, float)
    g = pd.DataFrame({"N": data["N"].to_numpy(float), "D": data["D"].to_numpy(float), "U": U})
    spread = g.groupby(["N", "D"])["U"].transform(lambda u: u.max() > u.min() * (1 + 1e-9))
    if not spread.any():
        return
    i = int(np.flatnonzero(spread.to_numpy())[0])
    same = (g["N"] == g["N"].iloc[i]) & (g["D"] == g["D"].iloc[i]) & (g["U"] != g["U"].iloc[i])
    j = int(np.flatnonzero(same.to_numpy())[0])
    raise InputError(
        f"runs: rows {i + 1} and {j + 1} share N={g['N'].iloc[i]:.6g}, D={g['D'].iloc[i]:.6g} but "
        f"not column {u_col!r} ({g['U'].iloc[i]:.6g} vs {g['U'].iloc[j]:.6g} unique tokens): "
        "repeated-data runs, not seed replicates; fit them with --form data-constrained "
        "(Muennighoff et al. 2023), or keep the single-epoch rows (D <= U)"
    )


def collapse_replicates(
    data: pd.DataFrame, mode: str | None, rows=None
) -> tuple[pd.DataFrame, float]:
    """(runs, replicate noise floor): see the module docstring. `rows`: 1-based row numbers."""
    import pandas as pd

    if mode not in (None, "mean", "keep"):
        raise InputError(f"--replicates (replicates=) must be 'mean' or 'keep', got {mode!r}")
    key = data[["N", "D"]]
    dup = key.duplicated(keep=False).to_numpy()
    if not dup.any():
        return data, 0.0
    if mode is None:
        i = int(np.flatnonzero(key.duplicated(keep="first").to_numpy())[0])
        j = int(np.flatnonzero((key == key.iloc[i]).all(axis=1).to_numpy())[0])
        num = (lambda k: k + 1) if rows is None else (lambda k: int(rows[k]))
        raise InputError(
            f"runs: row {num(i)} duplicates row {num(j)} (N={data['N'].iloc[i]:.6g}, "
            f"D={data['D'].iloc[i]:.6g}; seed replicates?): pass --replicates mean or "
            "--replicates keep (Python: replicates='mean' or 'keep')"
        )
    logl = np.log(data["loss"].to_numpy(float))
    g = pd.Series(logl).groupby([data["N"].to_numpy(), data["D"].to_numpy()])
    sd = g.std(ddof=1).dropna()
    noise = float(np.sqrt(np.mean(sd.to_numpy() ** 2))) if len(sd) else 0.0
    if mode == "keep":
        return data, noise
    out = data.groupby(["N", "D"], sort=False, as_index=False)["loss"].mean()
    return out.reset_index(drop=True), noise


def identification(law, theta, boot: np.ndarray | None, bounds=None, requested: int = 0) -> dict:
    """{"identified": bool, "reason": str, "n_free": int}: exponents (parameters without an exp
    transform) whose cluster-bootstrap 5-95% range spans more than EXP_MAX_RATIO, or that sit on
    a bound, and parameters whose interval excludes the estimate or spans more than three
    decades (`compute.consistency`; listed under "not_identified"). `theta` may be the
    FitResult itself: then a fit with at most FEW_DOF runs more than free parameters also warns
    that its interval is a lower bound (docs/trust.md)."""
    probs = []
    fit = theta if hasattr(theta, "n_obs") else None
    th = np.asarray(fit.theta if fit is not None else theta, float)
    bnds = np.array(bounds if bounds is not None else law.bounds, float)
    for i, p in enumerate(law.parameters):
        if bnds[i, 0] == bnds[i, 1]:
            continue
        if np.isclose(th[i], bnds[i, 0]) or np.isclose(th[i], bnds[i, 1]):
            probs.append(f"{p.natural_name}={p.to_natural(th[i]):.3g} on its bound")
            continue
        if getattr(p, "transform", None) == "exp":
            continue
        if boot is not None and len(boot) >= 5:
            lo, hi = np.quantile(boot[:, i], [0.05, 0.95])
            if lo <= 0 or hi / lo > EXP_MAX_RATIO:
                probs.append(f"{p.name}={th[i]:.3g} (resampled sizes give {lo:.3g} to {hi:.3g})")
    if boot is not None and len(boot) < min(5, requested):
        probs.append(
            f"its exponents: only {len(boot)} of {requested} size resamples could be refitted "
            "(a resample needs at least as many distinct runs as free parameters)"
        )
    exp_names = [p.natural_name for p in law.parameters if getattr(p, "transform", "") == "exp"]
    refused = parameter_problems(fit.params, fit.ci, exp_names) if fit is not None else {}
    probs += [f"{name}: {why}" for name, why in refused.items()]
    n_free = int(np.sum(bnds[:, 0] != bnds[:, 1]))  # the residual scale's degrees of freedom
    if fit is not None and fit.n_obs - n_free <= FEW_DOF:
        warnings.warn(
            f"{law.name} fitted to {fit.n_obs} runs has {fit.n_obs - n_free} run(s) more than free "
            "parameters: the run-scatter term cannot see how far the law misses between the runs "
            "(6-8 runs of one Porian recipe covered about 60% of its other runs at nominal 90%); "
            "read the interval as a lower bound, or add runs",
            DomainWarning,
            stacklevel=4,
        )
    if not probs:
        return {"identified": True, "reason": "every exponent pinned by the runs", "n_free": n_free}
    return {
        "identified": False,
        "n_free": n_free,
        "not_identified": {k: f"{NOT_IDENTIFIED}: {why}" for k, why in refused.items()},
        "reason": "the runs do not pin "
        + "; ".join(probs)
        + "; use a simpler form or --fix (docs/trust.md)",
    }


def compute_law(data: pd.DataFrame) -> dict:
    """The 1-D compute law L = E + A C^-a (C = 6ND) fitted to the same runs (Huber on log loss),
    shown beside every forecast: {"E", "A", "a", "theta"}."""
    X = {"N": data["N"].to_numpy(float), "D": data["D"].to_numpy(float)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # the 4 best grid starts reach the 8-best-plus-one-per-grid-value optimum (within 2e-15)
        # on 174 real-suite fits, at a quarter of the polishes (docs/fitting.md)
        res = fit_law(
            ComputeND(),
            X,
            data["loss"].to_numpy(float),
            loss=huber(1e-3),
            n_polish=4,
            stratify=False,
        )
    return {**{k: float(v) for k, v in res.params.items()}, "theta": list(res.theta)}


def compute_law_predict(cl: Mapping, N, D) -> np.ndarray:
    return ComputeND().predict(np.asarray(cl["theta"], float), N=N, D=D)
