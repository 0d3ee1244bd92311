"""The forecasting methods ("members") a `DownstreamForecaster` can use or combine.

Each member turns one task's data (`TaskData`) into a point forecast and bootstrap replicates at
new compute. Two-stage members share one stage-1 fit (compute -> loss, `stage1.py`); their
stage 2 is a loss -> score map (`maps.py`) fitted on all checkpoints.

- `flp`: Eq. 1 on finals, Eq. 2 on checkpoints >= chance + 5 points; refuses if < 2 survive
  (Chen et al. Sec. 3, run through `lmforecast.flp.FLP` unchanged).
- `fp`: Eq. 3 P = (C/C_M)^alpha on the same retained checkpoints (METHODS 3.7 item 6); when
  fewer than 2 survive, on all checkpoints with C > 0 (marked as a fallback).
- `sigmoid`: stage 1, then the sigmoid map with a fitted floor and ceiling 100 (Llama-3 style).
- `sigmoid-chance`: the same with the floor fixed at the chance level (the Llama-3 reading).
- `local-linear`: stage 1, then Eq. 2 on the checkpoints nearest the forecast (lowest losses).
- `trend`: P = a + b ln C on the `trend_points` largest final checkpoints (more when they
  span less than a factor 3 in compute: `trend_runs`).
- `persistence`: the largest fitted model's own final score (naive baseline).
"""

from __future__ import annotations

import warnings

import numpy as np

from ..errors import DomainWarning, InputError
from ..flp.model import FLP
from ..uncertainty.resample import resample_indices, residual_draws
from .maps import LinearMap, LocalLinearMap, SigmoidMap, weights
from .stage1 import STAGE1
from .tables import TaskData

PERSISTENCE_REPLICATES = 200
TWO_STAGE = ("sigmoid", "sigmoid-chance", "local-linear")
DIRECT = ("trend", "persistence")
PAPER = ("flp", "fp")
MEMBERS = TWO_STAGE + DIRECT + PAPER


class Stage1:
    """Compute -> loss, with residual-bootstrap replicates."""

    def __init__(self, kind: str) -> None:
        if kind not in STAGE1:
            raise InputError(f"unknown stage 1 {kind!r}; use one of {', '.join(STAGE1)}")
        self.kind, self.law = kind, STAGE1[kind]()

    def _xy(self, td: TaskData):
        if self.law.needs == "finals":
            r = td.runs
            return {"C": r["C"].to_numpy()}, r["loss"].to_numpy()
        ck = td.checkpoints
        ck = ck[ck["step"] >= self.law.min_fraction * ck.groupby("model")["step"].transform("max")]
        if ck[["N", "D"]].isna().any().any():
            raise InputError("stage 1 'nd' needs columns params and tokens in the evals table")
        return {"N": ck["N"].to_numpy(), "D": ck["D"].to_numpy()}, ck["loss"].to_numpy()

    def fit(self, td: TaskData, B: int, rng) -> dict:
        X, L = self._xy(td)
        args = (X["C"],) if "C" in X else (X["N"], X["D"])
        p = self.law.fit(*args, L)
        fitted = self.law.predict(p, **X)
        r = L - fitted
        n, k = L.size, p.size
        if n <= k:  # the law passes through every point: a residual bootstrap cannot move it
            warnings.warn(
                f"{td.task}: stage 1 ({self.kind!r}, {k} parameters) is fitted on {n} model "
                "finals, no more than its parameters: its residual bootstrap cannot measure "
                f"stage 1's uncertainty, so the interval is too narrow; fit at least {k + 1} models"
                + (" or use --stage1 power (stage1='power', 2 parameters)" if k > 2 else ""),
                DomainWarning,
                stacklevel=4,
            )
        infl = np.sqrt(n / (n - k)) if n > k else 1.0
        boot = [
            self.law.fit(*args, fitted + infl * residual_draws(rng, r, n), start=p)
            for _ in range(B)
        ]
        return {
            "params": p.tolist(),
            "boot": np.asarray(boot).reshape(B, p.size).tolist(),
            "resid_sd": float(np.sqrt((r**2).sum() / max(n - k, 1))),
        }

    def predict(self, params, C, N=None, D=None):
        return self.law.predict(np.asarray(params, float), C=C, N=N, D=D)


def _map(name: str, chance: float, window: float):
    if name == "sigmoid":
        return SigmoidMap(chance, floor="fit")
    if name == "sigmoid-chance":
        return SigmoidMap(chance, floor="chance")
    if name == "local-linear":
        return LocalLinearMap(window)
    return LinearMap()


def fit_two_stage(name, td: TaskData, chance, window, B, rng) -> dict:
    ck = td.checkpoints
    L, P, w = ck["loss"].to_numpy(), ck["score"].to_numpy(), weights(ck["stderr"])
    m = _map(name, chance, window)
    p = m.fit(L, P, w)
    boot = []
    n = L.size
    for _ in range(B):
        i = resample_indices(rng, n)
        boot.append(m.fit(L[i], P[i], w[i], start=p))
    return {"params": p.tolist(), "boot": np.asarray(boot).reshape(B, p.size).tolist()}


TREND_SPAN = 3.0  # the trend's finals span at least this factor in compute when they can


def trend_runs(runs, k: int):
    """The `k` largest finals, extended to smaller ones until they span a factor TREND_SPAN in
    compute (models of one size but other shapes, e.g. Gemstones, give no slope alone)."""
    C = runs["C"].to_numpy(float)
    n = min(k, len(runs))
    while n < len(runs) and C[-1] < TREND_SPAN * C[-n]:
        n += 1
    return runs.tail(n)


def fit_trend(td: TaskData, k: int, B: int, rng) -> dict:
    r = trend_runs(td.runs, k)
    x, P = np.log(r["C"].to_numpy() / 1e18), r["score"].to_numpy()
    if np.unique(x).size < 2:
        raise InputError("trend needs final checkpoints at >= 2 different compute values")
    a, b = np.polyfit(x, P, 1)
    fitted = a * x + b
    n = x.size
    s2 = ((P - fitted) ** 2).sum() / max(n - 2, 1)
    se2 = float(np.nanmean(r["stderr"].to_numpy() ** 2)) if r["stderr"].notna().any() else 0.0
    sd = np.sqrt(max(s2, se2, TAU_TREND**2))
    boot = [np.polyfit(x, fitted + rng.normal(0, sd, n), 1) for _ in range(B)]
    return {"params": [float(a), float(b)], "boot": np.asarray(boot).reshape(B, 2).tolist()}


TAU_TREND = 0.5  # points: smallest noise assumed on a final score when refitting the trend


def _flp_tables(td: TaskData, task_col: str = "score"):
    ck = td.checkpoints
    runs = td.runs[["model", "C", "loss"]]
    cks = ck[["model", "step", "C", "loss", "score"]].rename(columns={"score": task_col})
    return runs, cks


def fit_paper(name: str, td: TaskData, chance: float, B: int, seed: int) -> dict:
    """FLP (Eq. 1 + Eq. 2 with the Sec. 3.3 filter) or FP (Eq. 3) via `lmforecast.flp.FLP`."""

    runs, cks = _flp_tables(td)
    kw = dict(chance=min(chance, 99.0), bootstrap=B, seed=seed)
    try:
        est = FLP("score", method=name, **kw).fit(runs, cks)
        fallback = False
    except InputError as exc:
        if name == "flp":  # the FLP table's score column is named 'score': say the task
            raise InputError(str(exc).replace("task 'score'", f"task {td.task!r}")) from None
        est = FLP("score", method="fp", threshold=-1e9, **kw).fit(runs, cks)
        fallback = True
    return {"flp": est.to_dict(), "fallback": fallback}


def paper_estimator(state: dict):
    # the member's own FLP (fp: threshold -1e9, below what a saved FLP fit may hold), checked
    # with the downstream fit it belongs to
    return FLP._from_checked(state["flp"])


def member_predict(
    name, state, stage1: Stage1 | None, s1state, C, N=None, D=None, chance=0.0, window=0.3
):
    """Point forecast of one member at compute C (array)."""
    C = np.asarray(C, float)
    if name in TWO_STAGE:
        L = stage1.predict(s1state["params"], C, N, D)
        return _map(name, chance, window).predict(np.asarray(state["params"]), L)
    if name == "trend":
        a, b = state["params"]
        return a * np.log(C / 1e18) + b
    if name == "persistence":
        return np.full(C.shape, state["value"])
    return paper_estimator(state).predict(C)


def member_replicates(name, state, stage1, s1state, C, N=None, D=None, chance=0.0, window=0.3):
    """(B, n) bootstrap replicates of one member's forecast (no evaluation noise added)."""
    C = np.atleast_1d(np.asarray(C, float))
    if name in TWO_STAGE:
        m = _map(name, chance, window)
        T1, T2 = np.asarray(s1state["boot"]), np.asarray(state["boot"])
        B = min(len(T1), len(T2))
        return np.stack([m.predict(T2[b], stage1.predict(T1[b], C, N, D)) for b in range(B)])
    if name == "trend":
        T = np.asarray(state["boot"])
        return T[:, :1] * np.log(C / 1e18)[None, :] + T[:, 1:2]
    if name == "persistence":  # no fitted stage: the interval is the evaluation noise alone
        return np.full((PERSISTENCE_REPLICATES, C.size), state["value"])
    est = paper_estimator(state)
    if not est.stage2_.bootstrap:
        return est.predict(C)[None, :]
    lo_hi = []
    # FLP keeps bootstrap fits per stage; rebuild replicates by chaining them (as FLP does).
    T2 = np.asarray(est.stage2_.bootstrap)
    law2 = est.stage2_.law_
    if est.stage1_ is None:
        x = np.broadcast_to(C, (T2.shape[0], C.size))
    else:
        T1 = np.asarray(est.stage1_.bootstrap)[: T2.shape[0]]
        x = est.stage1_.law_.from_target(est.stage1_.law_.predict_target(T1, {"C": C}))
    inp = "L" if est.method == "flp" else "C"
    for b in range(T2.shape[0]):
        lo_hi.append(law2.from_target(law2.predict_target(T2[b : b + 1], {inp: x[b]})[0]))
    # centred on the point forecast: the paper's power laws refitted to near-chance resamples
    # can end on a parameter bound, and their percentile range then missed the point itself
    # (arc_challenge FP: point 22.3, replicates' 5-95% [1.1, 20.0]; docs/downstream.md)
    R = np.asarray(lo_hi)
    with np.errstate(invalid="ignore"):
        return R - np.nanmedian(R, axis=0) + est.predict(C)[None, :]


def subset(td: TaskData, models) -> TaskData:
    ck = td.checkpoints[td.checkpoints["model"].isin(list(models))].reset_index(drop=True)
    return TaskData(td.task, td.metric, td.loss_task, ck, td.n_dropped)
