"""Compute accounting (Eq. 9) and compute-optimal distillation (Eq. 10) of Busbridge et al. 2025.

FLOPs = 3 F(N_S) D_S + F(N_T) (delta_Lgt D_S + delta_Pre 3 D_T)      (Eq. 9, F of App. H.1)

For a student size N_S and budget C, Eq. 10 minimises L_S over (D_S, N_T, D_T) subject to
FLOPs = C, with every variable in [1e6, 1e17] (App. D.4). We eliminate the equality constraint
exactly instead of handing it to SLSQP:

- best case (teacher free): D_S = C / 3F(N_S); minimise over L_T directly (the capacity gap,
  Sec. 5.2), then report the supervised-compute-optimal teacher reaching L_T*;
- teacher inference: D_T sits at its upper bound (a free teacher is trained as long as
  allowed: finding 5), D_S = C / (3F(N_S) + F(N_T)); one variable, log N_T;
- teacher pretraining (+ inference): a share phi of C trains the teacher, D_T = phi C / 3F(N_T),
  D_S = (1 - phi) C / (3F(N_S) + delta_Lgt F(N_T)); two variables (log N_T, logit phi).

Each problem is solved by a vectorised scan over a coarse grid followed by repeated zooming
around the best point, for all budgets at once (no per-budget optimiser loop).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..compute.flops import forward_flops_per_token as F
from ..errors import InputError, fmt_value
from .checks import PAPER_RANGES, pinned, range_notes, units_notes, verdict
from .model import DistillationScalingLaw
from .uncertainty import intervals_in_chunks

VAR_MIN, VAR_MAX = 1e6, 1e17  # App. D.4 bounds on N_T, D_S, D_T


@dataclass(frozen=True)
class Scenario:
    """A row of Table 2: whether teacher logits (delta_Lgt) and pretraining (delta_Pre) count."""

    name: str
    delta_lgt: int
    delta_pre: int
    description: str


SCENARIOS: dict[str, Scenario] = {
    s.name: s
    for s in (
        Scenario("best-case", 0, 0, "teacher free (fully amortised); choose L_T freely"),
        Scenario("teacher-inference", 1, 0, "teacher exists; pay its forward passes on D_S"),
        Scenario("teacher-pretraining", 0, 1, "train the teacher; logits stored and reused"),
        Scenario("teacher-pretraining-inference", 1, 1, "train a teacher for this one student"),
    )
}


def get_scenario(name: str | Scenario) -> Scenario:
    if isinstance(name, Scenario):
        return name
    if name not in SCENARIOS:
        raise InputError(
            f"--scenario: unknown scenario {name!r}; use one of {', '.join(SCENARIOS)}"
        )
    return SCENARIOS[name]


def distillation_flops(N_S, D_S, N_T, D_T, scenario: str | Scenario) -> dict[str, np.ndarray]:
    """Eq. 9 term by term: student training 3F(N_S)D_S, teacher inference F(N_T)D_S (if
    delta_Lgt), teacher pretraining 3F(N_T)D_T (if delta_Pre), and their total."""
    s = get_scenario(scenario)
    N_S, D_S, N_T, D_T = (np.asarray(v, float) for v in (N_S, D_S, N_T, D_T))
    student = 3.0 * F(N_S) * D_S
    inference = s.delta_lgt * F(N_T) * D_S
    pretraining = s.delta_pre * 3.0 * F(N_T) * D_T
    return {
        "student_training": student,
        "teacher_inference": inference,
        "teacher_pretraining": pretraining,
        "total": student + inference + pretraining,
    }


@dataclass
class DistillationPlan:
    """Compute-optimal distillation (Eq. 10) for each (N_S, C): arrays of equal shape."""

    scenario: str
    student_params: np.ndarray
    flops: np.ndarray
    student_tokens: np.ndarray
    teacher_params: np.ndarray
    teacher_tokens: np.ndarray
    teacher_loss: np.ndarray
    student_loss: np.ndarray
    supervised_loss: np.ndarray
    flops_student_training: np.ndarray
    flops_teacher_inference: np.ndarray
    flops_teacher_pretraining: np.ndarray
    student_loss_lo: np.ndarray | None = None  # the L_S* interval, when set (from plan_interval)
    student_loss_hi: np.ndarray | None = None

    @property
    def distillation_better(self) -> np.ndarray:
        """True where distillation beats supervised training of the student at equal compute."""
        return self.student_loss < self.supervised_loss

    @property
    def verdict(self):
        """'distill', 'train supervised', or 'too close to call' where the supervised loss at
        the same compute lies inside the L_S* interval (`student_loss_lo`/`_hi`, set them from
        `plan_intervals.plan_interval`; without them the point values decide)."""
        return verdict(
            self.student_loss, self.supervised_loss, self.student_loss_lo, self.student_loss_hi
        )

    def to_frame(self) -> pd.DataFrame:
        cols = {
            k: np.ravel(getattr(self, k))
            for k in (
                "student_params",
                "flops",
                "student_tokens",
                "teacher_params",
                "teacher_tokens",
                "teacher_loss",
                "student_loss",
                "supervised_loss",
                "flops_student_training",
                "flops_teacher_inference",
                "flops_teacher_pretraining",
            )
        }
        df = pd.DataFrame(cols)
        df.insert(0, "scenario", self.scenario)
        return df

    def to_dict(self) -> dict:
        """The CLI contract's keys (scalars for a single plan, lists otherwise)."""

        def f(a):
            a = np.asarray(a)
            return float(a) if a.ndim == 0 else a.tolist()

        return {
            "student_tokens": f(self.student_tokens),
            "teacher_params": f(self.teacher_params),
            "teacher_tokens": f(self.teacher_tokens),
            "teacher_loss": f(self.teacher_loss),
            "student_loss": f(self.student_loss),
            "supervised_loss": f(self.supervised_loss),
            "flops": {
                "student_training": f(self.flops_student_training),
                "teacher_inference": f(self.flops_teacher_inference),
                "teacher_pretraining": f(self.flops_teacher_pretraining),
            },
        }


def zoom_minimise(f, lo: np.ndarray, hi: np.ndarray, n0: int = 48, n: int = 9, levels: int = 40):
    """Minimise f(X) over boxes [lo, hi] (shape (B, k)) for B problems at once.

    f takes X of shape (B, m, k) and returns (B, m) (inf where infeasible). A coarse n0^k scan
    picks a basin; each level rescans an n^k grid spanning +-2 cells around the incumbent and
    halves the cell. Returns (X* (B, k), f* (B,)).
    """
    lo, hi = np.atleast_2d(lo).astype(float), np.atleast_2d(hi).astype(float)
    B, k = lo.shape
    u = np.linspace(0.0, 1.0, n0)
    U = np.stack(np.meshgrid(*([u] * k), indexing="ij"), -1).reshape(-1, k)
    X = lo[:, None, :] + U[None] * (hi - lo)[:, None, :]
    with np.errstate(all="ignore"):
        vals = f(X)
    vals = np.where(np.isfinite(vals), vals, np.inf)
    i = np.argmin(vals, axis=1)
    best, fbest = X[np.arange(B), i], vals[np.arange(B), i]
    cell = (hi - lo) / (n0 - 1)
    v = np.linspace(-2.0, 2.0, n)
    V = np.stack(np.meshgrid(*([v] * k), indexing="ij"), -1).reshape(-1, k)
    for _ in range(levels):
        Xl = np.clip(best[:, None, :] + V[None] * cell[:, None, :], lo[:, None, :], hi[:, None, :])
        with np.errstate(all="ignore"):
            vl = f(Xl)
        vl = np.where(np.isfinite(vl), vl, np.inf)
        j = np.argmin(vl, axis=1)
        cand, fc = Xl[np.arange(B), j], vl[np.arange(B), j]
        better = fc <= fbest
        best = np.where(better[:, None], cand, best)
        fbest = np.where(better, fc, fbest)
        cell = cell * 0.5
    return best, fbest


def _check_budget(N_S, C):
    if not np.all(np.isfinite(C)) or np.any(C <= 0):
        raise InputError(f"compute budget must be positive, got {np.ravel(C)[np.argmin(C)]:g}")
    if not np.all(np.isfinite(N_S)) or np.any(N_S <= 0):
        raise InputError("student parameters must be positive")
    need = 3.0 * F(N_S) * VAR_MIN
    if np.any(C < need):
        i = int(np.argmax(np.ravel(C < need)))
        raise InputError(
            f"budget {np.ravel(C)[i]:.3g} FLOPs is too small to train a {np.ravel(N_S)[i]:.3g}-"
            f"parameter student on {VAR_MIN:.0e} tokens (needs >= {np.ravel(need)[i]:.3g})"
        )
    # the largest budget the bounded search can spend: student, teacher inference and teacher
    # pretraining all at the App. D.4 bounds (1e17 tokens, 1e17 teacher parameters)
    cap = 3.0 * F(N_S) * VAR_MAX + 4.0 * F(VAR_MAX) * VAR_MAX
    if np.any(C > cap):
        i = int(np.argmax(np.ravel(C > cap)))
        raise InputError(
            f"budget {np.ravel(C)[i]:.3g} FLOPs is beyond the planner's range for a "
            f"{np.ravel(N_S)[i]:.3g}-parameter student: the valid range is "
            f"{np.ravel(need)[i]:.3g} to {np.ravel(cap)[i]:.3g} FLOPs (tokens and teacher size "
            f"within the App. D.4 bounds [{VAR_MIN:.0e}, {VAR_MAX:.0e}])"
        )


def cheapest_teacher(model: DistillationScalingLaw, L_T) -> tuple[np.ndarray, np.ndarray]:
    """(N_T, D_T) minimising teacher training compute 3F(N_T)D_T subject to L(N_T, D_T) = L_T
    (the supervised-compute-optimal teacher reaching L_T; reported in the best case, D.4)."""
    p = model.supervised_.params_
    L_T = np.atleast_1d(np.asarray(L_T, float))
    g = p.get("gamma", 1.0)
    resid = np.maximum(L_T - p["E"], 1e-300) ** (1.0 / g)  # A/N^alpha + B/D^beta

    def tokens(logn):
        bd = resid[:, None] - p["A"] / np.exp(logn) ** p["alpha"]
        return np.where(bd > 0, (p["B"] / bd) ** (1.0 / p["beta"]), np.inf)

    def cost(X):
        logn = X[..., 0]
        return np.log(F(np.exp(logn))) + np.log(tokens(logn))

    lo = np.tile([np.log(VAR_MIN)], (L_T.size, 1))
    hi = np.tile([np.log(VAR_MAX)], (L_T.size, 1))
    x, _ = zoom_minimise(cost, lo, hi, n0=64, levels=36)
    N = np.exp(x[:, 0])
    return N, tokens(x[:, :1])[:, 0]


def plan_distillation(
    model: DistillationScalingLaw, N_S, C, scenario: str | Scenario = "best-case"
) -> DistillationPlan:
    """Compute-optimal distillation, Eq. 10: D_S*, N_T*, D_T* for student size(s) N_S and
    budget(s) C (broadcast together) in one of the four scenarios of Table 2."""
    s = get_scenario(scenario)
    N_S, C = np.broadcast_arrays(np.asarray(N_S, float), np.asarray(C, float))
    shape = N_S.shape
    N, Cf = N_S.ravel(), C.ravel()
    _check_budget(N, Cf)
    FS = F(N)
    sup = model.supervised_
    L_sup = sup.predict(N, Cf / (3.0 * FS))
    L_floor = float(sup.predict(VAR_MAX, VAR_MAX))  # best teacher within the bounds
    E = model.E_
    logmin, logmax = np.log(VAR_MIN), np.log(VAR_MAX)

    if s.delta_lgt == 0 and s.delta_pre == 0:
        D_S = Cf / (3.0 * FS)
        Lsup_S = model.supervised_loss(N, D_S)

        def f(X):
            return model._loss(N[:, None], D_S[:, None], E + np.exp(X[..., 0]), Lsup_S[:, None])

        lo = np.full((N.size, 1), np.log(L_floor - E))
        hi = np.full((N.size, 1), np.log(10.0))
        x, L_S = zoom_minimise(f, lo, hi)
        L_T = E + np.exp(x[:, 0])
        N_T, D_T = cheapest_teacher(model, L_T)
    elif s.delta_pre == 0:  # teacher inference: D_T at its bound

        def d_s(logn):
            return Cf[:, None] / (3.0 * FS[:, None] + F(np.exp(logn)))

        def f(X):
            logn = X[..., 0]
            D = d_s(logn)
            LT = model.teacher_loss(np.exp(logn), VAR_MAX)
            val = model._loss(N[:, None], D, LT)
            return np.where(D >= VAR_MIN, val, np.inf)

        lo = np.full((N.size, 1), logmin)
        hi = np.full((N.size, 1), logmax)
        x, L_S = zoom_minimise(f, lo, hi)
        N_T = np.exp(x[:, 0])
        D_T = np.full(N.size, VAR_MAX)
        D_S = d_s(x[:, :1])[:, 0]
        L_T = model.teacher_loss(N_T, D_T)
    else:  # teacher pretraining (+ inference): variables (log N_T, logit phi)
        dl = float(s.delta_lgt)

        def split(X):
            NT = np.exp(X[..., 0])
            phi = 1.0 / (1.0 + np.exp(-X[..., 1]))
            FT = F(NT)
            DT = phi * Cf[:, None] / (3.0 * FT)
            DS = (1.0 - phi) * Cf[:, None] / (3.0 * FS[:, None] + dl * FT)
            return NT, DT, DS

        def f(X):
            NT, DT, DS = split(X)
            ok = (DT >= VAR_MIN) & (DT <= VAR_MAX) & (DS >= VAR_MIN) & (DS <= VAR_MAX)
            LT = model.teacher_loss(NT, np.clip(DT, VAR_MIN, VAR_MAX))
            return np.where(ok, model._loss(N[:, None], DS, LT), np.inf)

        lo = np.tile([logmin, -25.0], (N.size, 1))
        hi = np.tile([logmax, 12.0], (N.size, 1))
        x, L_S = zoom_minimise(f, lo, hi, n0=40)
        if not np.all(np.isfinite(L_S)):
            i = int(np.argmax(~np.isfinite(L_S)))
            raise InputError(
                f"budget {Cf[i]:.3g} FLOPs is too small to train both a teacher and a "
                f"{N[i]:.3g}-parameter student within the token bounds [1e6, 1e17]"
            )
        N_T, D_T, D_S = (a[:, 0] for a in split(x[:, None, :]))
        L_T = model.teacher_loss(N_T, D_T)

    fl = distillation_flops(N, D_S, N_T, D_T, s)

    def r(a):
        return np.asarray(a, float).reshape(shape)

    return DistillationPlan(
        scenario=s.name,
        student_params=r(N),
        flops=r(Cf),
        student_tokens=r(D_S),
        teacher_params=r(N_T),
        teacher_tokens=r(D_T),
        teacher_loss=r(L_T),
        student_loss=r(L_S),
        supervised_loss=r(L_sup),
        flops_student_training=r(fl["student_training"]),
        flops_teacher_inference=r(fl["teacher_inference"]),
        flops_teacher_pretraining=r(fl["teacher_pretraining"]),
    )


def choose_teacher(
    model: DistillationScalingLaw,
    teachers: pd.DataFrame,
    N_S: float,
    *,
    D_S: float | None = None,
    C: float | None = None,
    scenario: str | Scenario = "teacher-inference",
    level: float = 0.9,
    top: int | None = None,
) -> pd.DataFrame:
    """Rank existing teachers for a student (Sec. 5.2; Eq. 27 for a fixed budget).

    `teachers` has columns N_T and D_T (or L_T; N_T is needed when logits are paid for). With a
    token budget D_S every teacher distils on D_S tokens; with a compute budget C the student
    gets D_S = (C - delta_Pre 3F(N_T)D_T) / (3F(N_S) + delta_Lgt F(N_T)) tokens (Eq. 27).
    Returns the teachers with columns D_S, L_T, L_S, L_S_lo, L_S_hi (the `level` prediction
    interval of L_S, when the model has parameter draws; a teacher given by N_T, D_T gets the
    supervised law's uncertainty about its L_T, `teacher_uncertainty`), supervised_loss (with
    C: the student trained supervised on all of C; with D_S: on the same D_S tokens),
    interval_pinned (True where every draw gives the same L_S: `checks.pinned_note` says why;
    not an interval) and verdict (`checks.verdict`: distill / train supervised / too close to
    call), sorted best first; a teacher at or below the supervised law's E raises InputError
    naming its row; a teacher whose costs exceed C has D_S and L_S NaN;
    with `top`, only the best `top` teachers (the point ranking covers every teacher, the
    intervals only those returned, computed in chunks: memory stays bounded at any table size).
    """
    s = get_scenario(scenario)
    if (D_S is None) == (C is None):
        raise InputError("give exactly one of a token budget D_S or a compute budget C")
    t = teachers.copy().reset_index(drop=True)
    if len(t) == 0:
        raise InputError("teachers: the table is empty")
    by_size = "L_T" not in t.columns  # L_T = L(N_T, D_T), a forecast
    if by_size:
        if not {"N_T", "D_T"} <= set(t.columns):
            raise InputError("teachers: need columns N_T and D_T, or L_T")
        t["L_T"] = model.teacher_loss(t["N_T"].to_numpy(float), t["D_T"].to_numpy(float))
    low = t["L_T"].to_numpy(float) <= model.E_
    if low.any():  # as `distill predict --teacher-loss`: no teacher reaches E (Eq. 8)
        i = int(np.argmax(low))
        raise InputError(
            f"teachers: column 'L_T' row {i + 1}: {fmt_value(t['L_T'].iloc[i])} is at or below "
            f"the irreducible loss E = {model.E_:.4g} of the supervised law: no teacher reaches "
            "it (Eq. 8 needs L_T > E)"
        )
    if C is not None:
        need = (s.delta_lgt or s.delta_pre) and "N_T" not in t.columns
        if need or (s.delta_pre and "D_T" not in t.columns):
            raise InputError("teachers: this scenario needs columns N_T (and D_T) to cost them")
        FT = F(t["N_T"].to_numpy(float)) if "N_T" in t.columns else 0.0
        pre = s.delta_pre * 3.0 * FT * (t["D_T"].to_numpy(float) if s.delta_pre else 0.0)
        ds = (C - pre) / (3.0 * F(N_S) + s.delta_lgt * FT)
        t["D_S"] = np.where(ds >= VAR_MIN, ds, np.nan)  # at least the App. D.4 token bound
        if t["D_S"].isna().all():
            raise InputError(
                f"budget {C:.3g} FLOPs does not cover any teacher's cost plus {VAR_MIN:.0e} "
                "student tokens"
            )
    else:
        t["D_S"] = float(D_S)
    ok = t["D_S"].notna().to_numpy()
    t["L_S"] = np.nan
    t.loc[ok, "L_S"] = model.predict(
        np.full(ok.sum(), float(N_S)), t.loc[ok, "D_S"].to_numpy(float), t.loc[ok, "L_T"]
    )
    if C is not None:  # the alternative to distilling: the student trained supervised on ALL of
        # C (D = C / 3F(N_S)), the same for every teacher -- not on the tokens left after a
        # teacher's costs, which would flatter every teacher (Eq. 9's comparison, as `plan`)
        t["supervised_loss"] = float(model.supervised_loss(float(N_S), C / (3.0 * F(N_S))))
    else:  # a token budget: supervised training on the same D_S tokens
        t["supervised_loss"] = np.nan
        t.loc[ok, "supervised_loss"] = model.supervised_loss(
            float(N_S), t.loc[ok, "D_S"].to_numpy(float)
        )
    t = t.sort_values("L_S", na_position="last", kind="stable").reset_index(drop=True)
    if top is not None:
        t = t.head(int(top)).copy()
    ok = t["L_S"].notna().to_numpy()
    if model.has_intervals() and ok.any():
        size = {k: t.loc[ok, k].to_numpy(float) for k in ("N_T", "D_T")} if by_size else {}
        lo, hi = intervals_in_chunks(
            model,
            float(N_S),
            t.loc[ok, "D_S"].to_numpy(float),
            t.loc[ok, "L_T"].to_numpy(float),
            level,
            CHOOSE_CHUNK_ELEMENTS,
            **size,
        )
        t.insert(t.columns.get_loc("L_S") + 1, "L_S_lo", np.nan)
        t.insert(t.columns.get_loc("L_S") + 2, "L_S_hi", np.nan)
        t.loc[ok, "L_S_lo"], t.loc[ok, "L_S_hi"] = lo, hi
        t["interval_pinned"] = False
        t.loc[ok, "interval_pinned"] = pinned(t.loc[ok, "L_S"].to_numpy(float), lo, hi)
    lo_hi = (t["L_S_lo"], t["L_S_hi"]) if "L_S_lo" in t.columns else (None, None)
    t["verdict"] = verdict(
        t["L_S"].to_numpy(float),
        t["supervised_loss"].to_numpy(float),
        *(None if v is None else v.to_numpy(float) for v in lo_hi),
    )
    return t


PAPER_SIZES = PAPER_RANGES["N"]  # Busbridge et al. Table 13: the models Eq. 8 was fitted on
PLAN_LABELS = {"N_S": "N_S", "D_S": "D_S*", "D_S/N_S": "D_S*/N_S", "L_T": "L_T*", "N": "N_T*"}


def plan_notes(model, plan) -> list[str]:
    """What a plan (Eq. 10) uses outside the runs behind the coefficients, one line per
    quantity (`checks.range_notes`): for a preset the paper's runs (Table 13 models 103M-12.6B,
    1e9-5.12e11 student tokens; the teacher size against the same models), for a fit the
    fitted runs' N_S, D_S, D_S/N_S, L_T and model sizes; there the plan extrapolates Eq. 8.
    Also a student size that looks like a units mistake (`checks.units_notes`)."""
    return units_notes(plan.student_params) + range_notes(
        model,
        PLAN_LABELS,
        N_S=plan.student_params,
        D_S=plan.student_tokens,
        L_T=plan.teacher_loss,
        N=plan.teacher_params,
    )


def choose_teacher_notes(
    ranked: pd.DataFrame, C: float | None, scenario: str, D_S: float | None = None
) -> list[str]:
    """What a user must be told about a `choose_teacher` ranking: teachers whose costs exceed
    the budget (empty rows), no teacher beating supervised training (on all of the budget C,
    or on the same D_S tokens), and a best teacher too close to supervised to call."""
    notes = []
    n_over = int(ranked["L_S"].isna().sum())
    if n_over:
        notes.append(
            f"{n_over} teacher(s) cost more than --flops {C:.3g} in scenario "
            f"{scenario!r} (their rows are empty: no tokens left for the "
            "student)"
        )
    best = ranked.iloc[0]
    what = (
        f"on all {C:.3g} FLOPs"
        if C is not None
        else "on the same tokens"
        if D_S is None
        else f"on the same {D_S:.4g} tokens"
    )
    if best["L_S"] >= best["supervised_loss"]:
        notes.append(
            f"no teacher beats training the student supervised {what} "
            f"(L = {best['supervised_loss']:.4f}): train supervised"
        )
    elif best.get("verdict") == "too close to call":
        notes.append(
            f"the best teacher's L_S = {best['L_S']:.4f} beats training supervised "
            f"{what} (L = {best['supervised_loss']:.4f}) by less than its interval "
            "[L_S_lo, L_S_hi]: too close to call at this level"
        )
    return notes


CHOOSE_CHUNK_ELEMENTS = 1 << 22  # teachers x parameter draws per interval chunk (32 MB)
