"""Forecast intervals of supervised laws calibrated across real training suites (docs/trust.md).

A forecast's 90% interval in log loss is

    log L_hat(x) +- z (sqrt(s_noise^2 + s_boot(x)^2) + k r),
    r = max(0, ln C/C_max, ln N/N_max, ln D/D_max)

- s_noise: the fit's robust residual scale (or the seed-replicate spread, if larger);
- s_boot(x): half the 16-84 percentile range of the forecast (`uncertainty.percentile.
  bootstrap_sd`) over a *cluster* bootstrap that resamples whole model sizes, each resample
  fitted from scratch (`uncertainty.cluster.cluster_bootstrap`);
- k r: how forecast errors grow with the distance r beyond the fitted runs, added linearly to
  the base spread (errors of a form that extrapolates badly are not independent of how loosely
  the runs pin it; leave-one-suite-out, the linear sum covered every suite at >= 0.72 where the
  quadrature sum left Gemstones at 0.50: docs/trust.md). k is a prior
  chosen on real suites (Pythia, datablations, Gemstones, Porian, zoo): the smallest k for which
  the interval above covers 90% of their held-out forecasts, each suite weighted equally. It is
  bundled as one number per form in `trust_prior.json` with its provenance; the benchmark
  `benchmarks/trust_suites.py` regenerates it and reports it leave-one-suite-out (each suite
  scored with the k chosen on the other four).
- with `calibration="prior+backtest"` and enough runs (>= 3 sizes fitted below a cut) the user's
  own size-cut backtest (fits from scratch) updates k: the user's split-conformal k (the 90%
  quantile of the k each held-out forecast needs) is averaged with the prior, which counts as
  PRIOR_WEIGHT forecasts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..backtest.suites import distance, score_forecasts, suite_splits
from ..compute.consistency import ratio_range
from ..errors import InputError
from ..uncertainty.normal import z_of
from ..uncertainty.percentile import weighted_quantile
from .stack import extrapolation_term, unit_term

if TYPE_CHECKING:  # pandas loads where a table is read or built, not at import
    import pandas as pd

PRIOR_FILE = Path(__file__).with_name("trust_prior.json")
PRIOR_WEIGHT = 10.0  # the prior counts as this many held-out forecasts in a user update
CLUSTER_BOOTSTRAP = 20  # default resamples of model sizes


@lru_cache(maxsize=1)
def load_prior() -> dict:
    """The bundled prior: {"k": {form: k}, "level", "provenance", ...} (trust_prior.json)."""
    return json.loads(PRIOR_FILE.read_text())


def prior_k(form: str) -> float:
    ks = load_prior()["k"]
    return float(ks.get(form, ks["default"]))


# forecasts of a size-cut backtest at least this far beyond the fitted runs (r = 0.05: 5% in
# N, D or C) update k; nearer ones divided a miss by r ~ 1e-6 (k_90 ~ 9,000 on the bundled
# example, an interval [0, inf])
R_INFORMATIVE = 0.05


STACK_IGNORES_UPDATE = (
    "; the prior+backtest update of k applies to a single form's interval, not to this "
    "stacked one (scaled by the stack's own inner backtest, s_inner): use --no-stack "
    "(stack=False) or an explicit --form for it"
)


def run_scatter(res, data: pd.DataFrame) -> float:
    """The runs' scatter in log loss: the fit's robust residual scale corrected for the
    parameters it fitted (x sqrt(n / (n - p)), p free parameters: a law through n runs leaves
    residuals smaller than the scatter; 5-8 runs gave 0.0-0.3% intervals around 1-8% errors),
    or the spread of seed replicates where larger."""
    n = int(res.n_obs)
    p = int((res.meta.get("identification") or {}).get("n_free", len(res.theta)))
    dof = float(np.sqrt(n / max(n - p, 1)))
    return max(float(res.residual_scale) * dof, float(data.attrs.get("replicate_sd", 0.0)))


def fitted_range(data: pd.DataFrame) -> dict:
    """The fitted runs' largest compute (6ND), model size and data: where extrapolation starts;
    their D/N range says whether they identify the compute-optimal split (`consistency`)."""
    N, D = data["N"].to_numpy(float), data["D"].to_numpy(float)
    C = 6.0 * N * D
    return {
        "max_compute": float(np.max(C)),
        "max_N": float(N.max()),
        "max_D": float(D.max()),
        "min_compute": float(np.min(C)),
        "min_N": float(N.min()),
        "min_D": float(D.min()),
        "ratio_range": ratio_range(N, D),
    }


def needed_k(log_error, r, base, level: float = 0.9) -> np.ndarray:
    """Per forecast: the smallest k whose interval z (base + k r) covers it (0 if the base
    spread does; inf if it lies at r = 0 outside the base spread)."""
    e, r, s = (np.asarray(v, float) for v in (log_error, r, base))
    d = np.abs(e) / z_of(level)
    need = np.maximum(d - s, 0.0) / np.maximum(r, 1e-12)
    need = np.where(d <= s, 0.0, need)
    return np.where((d > s) & (r <= 0), np.inf, need)


def choose_k(need, weights, level: float = 0.9) -> float:
    """Weighted `level`-quantile of the needs (the largest finite need if it is infinite)."""
    need = np.asarray(need, float)
    k = weighted_quantile(need, np.asarray(weights, float), level)
    return k if np.isfinite(k) else float(np.max(need[np.isfinite(need)], initial=0.0))


def spread_interval(t, s_boot, noise, extra, level: float = 0.9):
    """(lower, upper) in log space: t +- z (sqrt(noise^2 + s_boot^2) + extra), `extra` the
    extrapolation term (k r for a single form, `stack.extrapolation_term` for a stack)."""
    s = np.hypot(noise, np.asarray(s_boot, float)) + np.asarray(extra, float)
    z = z_of(level)
    return t - z * s, t + z * s


def interval(t, s_boot, noise, r, k, level: float = 0.9):
    """(lower, upper) in log space of a single form: extrapolation term k r."""
    return spread_interval(t, s_boot, noise, k * np.asarray(r, float), level)


def stack_interval(
    t, s_boot, noise, r, stack: Mapping, k_stack: float, level: float = 0.9, excess=None, k=0.0
):
    """(lower, upper) in log space of a stacked forecast (`supervised.stack`): the base spread
    plus k_stack times the inner backtest's RMS error, growing beyond the distance it measured,
    and never below k x `excess` (`stack.untested_reach`; k: the single form's prior)."""
    term = extrapolation_term(stack, r, k_stack, excess, k)
    return spread_interval(t, s_boot, noise, term, level)


def suite_weights(f: pd.DataFrame) -> np.ndarray:
    """Each suite 1, shared equally by its (sub-suite, split) cells, each cell by its rows."""
    cell = ["suite", "sub", "split"]
    size = f.groupby(cell)["truth"].transform("size").to_numpy(float)
    cells = f.drop_duplicates(cell).groupby("suite").size()
    return 1.0 / size / f["suite"].map(cells).to_numpy(float)


def _is_stack(f: pd.DataFrame) -> np.ndarray:
    """Rows forecast by a stack (`supervised.stack`: they carry a finite inner RMS error)."""
    if "s_inner" not in f.columns:
        return np.zeros(len(f), bool)
    return np.isfinite(f["s_inner"].to_numpy(float))


def _unit(f: pd.DataFrame) -> np.ndarray:
    """Per row, what one unit of the fitted scale adds to the spread: r for a single form's
    k r, s_inner max(1, r / R_MEASURED) for a stack's k_stack term (`stack.unit_term`)."""
    r = f["r"].to_numpy(float)
    if "s_inner" not in f.columns:
        return r
    with np.errstate(all="ignore"):
        return np.where(_is_stack(f), unit_term(f["s_inner"].to_numpy(float), r), r)


def calibrate_k(f: pd.DataFrame, level: float = 0.9) -> dict[str, float]:
    """Scales from a forecasts table of the default method (columns truth, forecast, r, noise,
    s_boot, suite, sub, split; s_inner, r_inner for stacked rows): per family, the
    equal-suite-weight `level`-quantile of the scale each forecast needs. {"default": k of the
    single-form rows' k r, "stack": k_stack of the stacked rows} (a family with rows from fewer
    than two suites keeps the bundled prior)."""
    base = np.hypot(f["noise"].to_numpy(float), f["s_boot"].to_numpy(float))
    need = needed_k(np.log(f["truth"] / f["forecast"]), _unit(f), base, level)
    w = suite_weights(f)
    st = _is_stack(f)
    out = {}
    suites = f["suite"].to_numpy()
    for key, rows in (("default", ~st), ("stack", st)):
        enough = np.unique(suites[rows]).size >= 2  # one suite's few rows are not a prior
        out[key] = choose_k(need[rows], w[rows], level) if enough else prior_k(key)
    return out


def rescale(f: pd.DataFrame, k: Mapping | float, level: float = 0.9) -> pd.DataFrame:
    """The forecasts with their intervals recomputed at scales k ({"default", "stack"})."""
    ks = k if isinstance(k, Mapping) else {"default": float(k), "stack": float(k)}
    st = _is_stack(f)
    kk = np.where(st, ks.get("stack", prior_k("stack")), ks["default"])
    t = np.log(f["forecast"].to_numpy(float))
    term = kk * _unit(f)
    if "excess" in f.columns:  # as predict_interval: never below the single form's prior k r
        ex = np.nan_to_num(f["excess"].to_numpy(float))
        term = np.where(st, np.maximum(term, prior_k("default") * ex), term)
    lo, hi = spread_interval(t, f["s_boot"], f["noise"].to_numpy(float), term, level)
    return f.assign(lower=np.exp(lo), upper=np.exp(hi))


def loso_table(f: pd.DataFrame, method: str = "default", level: float = 0.9):
    """Leave-one-suite-out: per held-out suite, k chosen on the others and the suite scored with
    it. Returns (table per suite with the simple laws beside, pooled dict, k on all suites)."""
    import pandas as pd

    d = f[f["method"] == method]
    parts = []
    ks = {}
    for s in d["suite"].unique():
        k = calibrate_k(d[d["suite"] != s], level)
        ks[s] = k
        held = d[d["suite"] == s]
        if "k_user" in held.columns:
            # prior+backtest: each fit's own size-cut k averaged with the LOSO prior (the prior
            # alone where the fit had too few sizes for a backtest)
            n = np.nan_to_num(held["n_user"].to_numpy(float))
            ku = np.nan_to_num(held["k_user"].to_numpy(float))
            k = {**k, "default": (PRIOR_WEIGHT * k["default"] + n * ku) / (PRIOR_WEIGHT + n)}
        parts.append(rescale(held, k, level))
    loso = pd.concat([*parts, f[f["method"] != method]], ignore_index=True)
    table = score_forecasts(loso, by=("suite", "method"))
    # the scale of the family most of the suite's forecasts use (stack where fits stacked)
    fam = {s: "stack" if _is_stack(d[d["suite"] == s]).mean() >= 0.5 else "default" for s in ks}
    table["k"] = table["suite"].map({s: ks[s][fam[s]] for s in ks}).where(table["method"] == method)
    dm = loso[loso["method"] == method]
    w = suite_weights(dm)
    fin = np.isfinite(dm["lower"]) & np.isfinite(dm["upper"])
    cov = fin & (dm["lower"] <= dm["truth"]) & (dm["truth"] <= dm["upper"])
    pooled = {"coverage": float(np.sum(w * cov) / np.sum(w)), "n": int(len(dm)), "k_loso": ks}
    return table, pooled, calibrate_k(d, level)


def write_prior(k_all: Mapping | float, f: pd.DataFrame, path: Path = PRIOR_FILE) -> None:
    """Store the prior with its provenance (numbers derived from the suites, not their data)."""
    d = f[f["method"] == "default"]
    ks = dict(k_all) if isinstance(k_all, Mapping) else {"default": float(k_all)}
    # the single form's k is the fallback of small fits (too few sizes or held-out runs for a
    # stack); fewer than three suites' fallbacks do not replace the five-suite single-form
    # benchmark's value
    if isinstance(k_all, Mapping) and np.unique(d.loc[~_is_stack(d), "suite"]).size < 3:
        ks["default"] = prior_k("default")
    prov = {
        "suites": sorted(d["suite"].unique()),
        "forecasts": int(len(d)),
        "splits": "largest size out, two largest sizes out, top 20% compute out",
        "rule": "smallest k covering 90% of held-out forecasts, each suite weighted equally; "
        "'stack': k_stack of the stacked default (supervised.stack), 'default': k of a single "
        "form's k r term (kept from the single-form benchmark where too few fits were single)",
        "script": "benchmarks/trust_suites.py --write-prior",
    }
    path.write_text(json.dumps({"k": dict(ks), "level": 0.9, "provenance": prov}, indent=1) + "\n")
    load_prior.cache_clear()


def user_update(est, form: str, data: pd.DataFrame, k_prior: float, level: float) -> dict:
    """k updated by a size-cut backtest on the user's runs (split-conformal): each split fits
    `form` from scratch (no bootstrap, no warm start) below the cut and forecasts above it; the
    `level` quantile of the k its n forecasts need is averaged with the prior, which counts as
    PRIOR_WEIGHT forecasts."""
    try:
        splits = suite_splits(data)
    except InputError:
        splits = []
    needs = []
    for _name, tr, te in splits:
        inner = type(est)(
            form,
            loss=est.loss,
            huber_delta=est.huber_delta,
            intervals=False,
            fixed=est.fixed,
            n_jobs=1,
            replicates="keep",
        )
        inner.fit(data[tr].reset_index(drop=True))
        test = data[te]
        t = np.log(inner.predict(test["N"].to_numpy(float), test["D"].to_numpy(float)))
        e = np.log(test["loss"].to_numpy(float)) - t
        r = distance(data[tr], test)
        far = r >= R_INFORMATIVE  # a miss at r ~ 0 says nothing of the growth per unit of r
        need = needed_k(e[far], r[far], float(inner.result_.residual_scale), level)
        needs.extend(need.tolist())
    n = len(needs)
    if not n:
        return {
            "method": "prior (too few sizes, or no forecast beyond the fitted runs, for a "
            "backtest on these runs)"
        }
    k_user = choose_k(np.array(needs), np.ones(n), level)
    k = (PRIOR_WEIGHT * k_prior + n * k_user) / (PRIOR_WEIGHT + n)
    return {
        "method": f"prior averaged with a size-cut backtest on these runs ({n} forecasts)",
        "k": float(k),
        "k_user": float(k_user),
        "backtest_forecasts": n,
    }
