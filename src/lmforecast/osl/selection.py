"""V-optimal model-subset selection over whole families (Ruan et al. 2024, Sec. 5, Eq. 9).

Objective: Tr(S^T S (S_M^T S_M)^-1), S (M x K) the capability matrix of all candidate models and
S_M its rows for the selected models; minimised over unions of whole families with at most
`budget` models and `max_families` families, some families forced in (Table 1: Llama-2).

Exact search, vectorised: the Gram matrix of a union of families is the sum of the families'
Gram matrices, so all admissible subsets are enumerated family by family (each step appends, to
every subset so far, the subsets extended by the next family, pruning those over the budget or
the family limit) and their K x K Gram matrices are accumulated in one array. The trace is then
computed for every subset at once from batched symmetric inverses.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import comb

import numpy as np
import pandas as pd

from ..errors import InputError
from .capability import CapabilitySpace
from .data import (
    FAMILY,
    FLOPS,
    MODEL,
    SIZE,
    check_metrics,
    default_metrics,
    read_benchmarks,
    to_fractions,
)
from .fit import fit_sigmoid, predict_sigmoid
from .result import POINTS2
from .splits import LLAMA2_7B_FLOPS, cutoff_split

MAX_SUBSETS = 5_000_000  # ~0.5 GB of Gram matrices (K=3)


@dataclass
class Selection:
    """One selected subset: families, models, objective (the Eq. 9 trace) and the search size."""

    budget: int
    families: list[str]
    models: list[str]
    objective: float
    n_candidates: int = 0  # admissible family subsets scored
    random_baseline: list[dict] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "budget": self.budget,
            "families": self.families,
            "models": self.models,
            "objective": self.objective,
            "n_candidates": self.n_candidates,
            "random_baseline": self.random_baseline,
        }


def family_grams(S: np.ndarray, families: np.ndarray, order: list[str]):
    """Per-family Gram matrices S_f^T S_f (F, K, K) and model counts (F,)."""
    K = S.shape[1]
    G = np.zeros((len(order), K, K))
    n = np.zeros(len(order), int)
    for i, f in enumerate(order):
        Sf = S[families == f]
        G[i] = Sf.T @ Sf
        n[i] = len(Sf)
    return G, n


def enumerate_subsets(
    G_fam: np.ndarray, n_fam: np.ndarray, budget: int, max_families: int, forced: np.ndarray
):
    """All family subsets (bitmasks) containing `forced`, with <= budget models and <=
    max_families families, and their summed Gram matrices. Non-empty beyond the forced set.
    """
    F, K, _ = G_fam.shape
    if F > 62:
        raise InputError(
            f"{F} families; the exact search supports at most 62 (a table without a "
            "'Model Family' column makes every model its own family)"
        )
    mask = np.zeros(1, np.int64)
    count = np.zeros(1, np.int64)
    nfam = np.zeros(1, np.int64)
    gram = np.zeros((1, K, K))
    for f in np.flatnonzero(forced):
        mask |= np.int64(1) << f
        count += n_fam[f]
        nfam += 1
        gram = gram + G_fam[f]
    if count[0] > budget:
        raise InputError(
            f"the included families already have {count[0]} models, over the budget of {budget}"
        )
    for f in np.flatnonzero(~forced):
        ok = (count + n_fam[f] <= budget) & (nfam + 1 <= max_families)
        if not ok.any():
            continue
        mask = np.concatenate([mask, mask[ok] | (np.int64(1) << f)])
        count = np.concatenate([count, count[ok] + n_fam[f]])
        nfam = np.concatenate([nfam, nfam[ok] + 1])
        gram = np.concatenate([gram, gram[ok] + G_fam[f]])
        if mask.size > MAX_SUBSETS:
            raise InputError(
                f"more than {MAX_SUBSETS:,} admissible family subsets; lower --budget or "
                "--max-families, or fix some families with --include"
            )
    new = nfam > forced.sum()
    return mask[new], count[new], gram[new]


def v_objective(gram_all: np.ndarray, grams: np.ndarray) -> np.ndarray:
    """Tr(A G^-1) for a batch of symmetric G (n, K, K); +inf where G is singular."""
    K = grams.shape[-1]
    out = np.full(grams.shape[0], np.inf)
    if K <= 3:
        inv, det = _sym_inverse_small(grams)
        scale = np.einsum("nii->n", grams) ** K
        ok = np.abs(det) > 1e-12 * np.maximum(scale, 1e-300)
        out[ok] = np.einsum("ij,nji->n", gram_all, inv[ok]) / det[ok]
        return out
    cond = np.linalg.cond(grams)
    ok = cond < 1e12
    out[ok] = np.einsum("ij,nji->n", gram_all, np.linalg.inv(grams[ok]))
    return out


def _sym_inverse_small(G: np.ndarray):
    """Adjugate and determinant of (n, K, K) matrices, K <= 3 (G^-1 = adj / det)."""
    K = G.shape[-1]
    if K == 1:
        return np.ones_like(G), G[:, 0, 0]
    if K == 2:
        a, b, c, d = G[:, 0, 0], G[:, 0, 1], G[:, 1, 0], G[:, 1, 1]
        adj = np.stack([np.stack([d, -b], -1), np.stack([-c, a], -1)], -2)
        return adj, a * d - b * c
    a, b, c = G[:, 0, 0], G[:, 0, 1], G[:, 0, 2]
    d, e, f = G[:, 1, 0], G[:, 1, 1], G[:, 1, 2]
    g, h, i = G[:, 2, 0], G[:, 2, 1], G[:, 2, 2]
    A, B, C = e * i - f * h, -(d * i - f * g), d * h - e * g
    D, E, F = -(b * i - c * h), a * i - c * g, -(a * h - b * g)
    Gc, H, I = b * f - c * e, -(a * f - c * d), a * e - b * d
    adj = np.stack([np.stack([A, D, Gc], -1), np.stack([B, E, H], -1), np.stack([C, F, I], -1)], -2)
    return adj, a * A + b * B + c * C


class SubsetSelector:
    """Choose which families of public models to evaluate (Sec. 5, Eq. 9, Table 1).

    Parameters: `n_components` K of the capability space (3), `max_families` (10, counting the
    included ones), `include` families always selected, `max_size` (B params) to restrict the
    candidates (Table 1's "sub 7B"), `intercept` to augment S with a ones column (METHODS 4.7
    item 6; off by default: the authors' reading, which reproduces Table 1), `score_unit`
    ("auto", "points", "fraction": the table's scores; the PCA runs on fractions, so the
    selection does not depend on the unit).
    Learned: `space_`, `S_` (capability matrix of the candidates), `families_`, `table_`.
    """

    def __init__(
        self,
        n_components: int = 3,
        *,
        max_families: int = 10,
        include: tuple[str, ...] | list[str] = (),
        max_size: float | None = None,
        intercept: bool = False,
        metrics: list[str] | None = None,
        score_unit: str = "auto",
    ) -> None:
        self.n_components = n_components
        self.max_families = max_families
        self.include = tuple(include)
        self.max_size = max_size
        self.intercept = intercept
        self.metrics = metrics
        self.score_unit = score_unit

    def fit(self, table: pd.DataFrame) -> SubsetSelector:
        """Build the capability space of the candidate pool (imputation + PCA, App. B.3)."""

        if self.max_families < 1:
            raise InputError(
                f"--max-families (max_families=) must be >= 1, got {self.max_families}"
            )
        metrics = list(self.metrics) if self.metrics else default_metrics(table)
        table = to_fractions(table, metrics, self.score_unit)[0]
        check_metrics(table, metrics)
        pool = table
        if self.max_size is not None:
            pool = pool[pool[SIZE] <= self.max_size]
        pool = pool.reset_index(drop=True)
        families = list(dict.fromkeys(pool[FAMILY]))
        for f in self.include:
            if f not in families:
                raise InputError(
                    f"--include (include=): family {f!r} is not in the table; families are "
                    f"{', '.join(families)}"
                )
        if len(pool) < self.n_components + 1:
            raise InputError(
                f"{len(pool)} candidate models; need more than --pcs (n_components=) "
                f"{self.n_components}"
            )
        self.space_ = CapabilitySpace(self.n_components).fit(pool, metrics)
        S = self.space_.transform(pool)
        if self.intercept:
            S = np.hstack([S, np.ones((len(S), 1))])
        self.S_ = S
        self.table_ = pool
        self.families_ = families
        self._fam = pool[FAMILY].to_numpy()
        self.gram_all_ = S.T @ S
        self.G_fam_, self.n_fam_ = family_grams(S, self._fam, families)
        return self

    def _forced(self) -> np.ndarray:
        return np.isin(np.array(self.families_, dtype=object), list(self.include))

    def search(self, budget: int) -> Selection:
        """Exact minimiser of Eq. 9 over whole-family subsets with <= budget models."""
        if budget < 1:
            raise InputError(f"--budget (budget=) must be >= 1, got {budget}")
        forced = self._forced()
        if forced.sum() > self.max_families:
            raise InputError(
                f"--include names {int(forced.sum())} families, more than --max-families "
                f"{self.max_families}"
            )
        masks, counts, grams = enumerate_subsets(
            self.G_fam_, self.n_fam_, budget, self.max_families, forced
        )
        obj = v_objective(self.gram_all_, grams)
        obj[counts < self.S_.shape[1]] = np.inf  # the authors require >= K models
        if masks.size == 0 or not np.isfinite(obj).any():
            raise InputError(
                f"no family subset within a budget of {budget} models gives an invertible "
                f"S_M^T S_M (need at least {self.S_.shape[1]} models)"
            )
        best = int(np.argmin(obj))
        return self._selection(budget, int(masks[best]), float(obj[best]), int(masks.size))

    def _selection(self, budget: int, mask: int, objective: float, n: int) -> Selection:
        fams = [f for i, f in enumerate(self.families_) if mask >> i & 1]
        models = self.table_.loc[self.table_[FAMILY].isin(fams), MODEL].tolist()
        return Selection(budget, fams, models, objective, n)

    def objective_of(self, families: list[str]) -> float:
        """Eq. 9 for a given family subset (a straightforward single evaluation)."""
        sel = np.isin(self._fam, families)
        Ssel = self.S_[sel]
        G = Ssel.T @ Ssel
        if sel.sum() < self.S_.shape[1] or np.linalg.cond(G) > 1e12:
            return float("inf")
        return float(np.trace(self.gram_all_ @ np.linalg.inv(G)))

    def random_baseline(self, budget: int, n_samples: int = 10, seed: int = 0) -> list[Selection]:
        """Random family subsets with budget-2..budget models (the authors' baseline, Sec. 5)."""
        forced = self._forced()
        masks, counts, grams = enumerate_subsets(
            self.G_fam_, self.n_fam_, budget, self.max_families, forced
        )
        lo = max(budget - 2, self.S_.shape[1])
        ok = np.flatnonzero((counts >= lo) & (counts <= budget))
        if ok.size == 0:
            return []
        rng = np.random.default_rng(seed)
        pick = rng.choice(ok, size=min(n_samples, ok.size), replace=False)
        obj = v_objective(self.gram_all_, grams[pick])
        return [
            self._selection(budget, int(masks[j]), float(o), int(ok.size))
            for j, o in zip(pick, obj)
        ]


def n_family_combinations(n_free: int, max_free: int) -> int:
    """Number of non-empty family subsets the authors' brute force visits."""
    return sum(comb(n_free, i) for i in range(1, max_free + 1))


def selection_validation(
    table: pd.DataFrame,
    targets,
    budgets=(8, 12, 16, 20),
    *,
    n_random: int = 10,
    seed: int = 0,
    include=("Llama-2",),
    n_components: int = 3,
    max_families: int = 10,
    cutoff_flops: float | None = None,
    metrics: list[str] | None = None,
    n_polish: int = 4,
    score_unit: str = "auto",
) -> pd.DataFrame:
    """Fig. 7a: test MSE of the law fitted on the V-optimal subset vs random subsets vs all.

    Per target: the candidate pool is the models with FLOPs <= `cutoff_flops` (Sec. 4's
    holdout; the stronger models are the test set); the capability space (K PCs of the other
    benchmarks) is fitted on the whole pool, since benchmark scores are cheap and only the target
    is to be evaluated on few models (Sec. 5); Eq. 6 is fitted on the selected models' targets
    and scored on the test models. For each budget: the Eq. 9 minimiser over whole families
    (`SubsetSelector.search`, `include` forced), `n_random` random family subsets of budget-2 to
    budget models (`random_baseline`, the authors' baseline) and the whole pool.

    Returns one row per budget and method ("v-optimal", "random", "all") with `gm_test_mse`,
    the geometric mean of the test MSE (points^2; scores read per `score_unit`) over targets
    (and random draws), `median_models` and `n_fits`. Per-target values are in
    `.attrs["per_target"]` (a DataFrame).
    """
    import warnings

    table = read_benchmarks(table)
    targets = [targets] if isinstance(targets, str) else list(targets)
    table = to_fractions(table, targets, score_unit, "targets")[0]
    read = set(targets)  # columns already in fractions (each converted once)
    cutoff = LLAMA2_7B_FLOPS if cutoff_flops is None else float(cutoff_flops)
    budgets = [int(b) for b in budgets]
    if not budgets or min(budgets) < 1:
        raise InputError(f"budgets must be positive integers, got {budgets}")
    rows = []
    for target in targets:
        if target not in table.columns:
            raise InputError(f"unknown target {target!r}")
        data = table[table[target].notna()].reset_index(drop=True)
        data = data[np.isfinite(data[FLOPS].to_numpy(float))].reset_index(drop=True)
        test = cutoff_split(data, cutoff)
        ms = [m for m in (metrics or default_metrics(data, exclude=(target,))) if m != target]
        new = [m for m in ms if m not in read]
        table = to_fractions(table, new, score_unit)[0]
        read.update(new)
        data = table[table[target].notna()].reset_index(drop=True)
        data = data[np.isfinite(data[FLOPS].to_numpy(float))].reset_index(drop=True)
        check_metrics(data, ms)
        pool = data.loc[~test].reset_index(drop=True)
        sel = SubsetSelector(
            n_components,
            max_families=max_families,
            include=tuple(include),
            metrics=ms,
            score_unit="fraction",
        ).fit(pool)
        X_pool, X_test = sel.space_.transform(pool), sel.space_.transform(data.loc[test])
        y_pool, y_test = pool[target].to_numpy(float), data.loc[test, target].to_numpy(float)

        def test_mse(models, pool=pool, X=X_pool, y=y_pool, Xt=X_test, yt=y_test) -> float:
            m = pool[MODEL].isin(models).to_numpy()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fit = fit_sigmoid(X[m], y[m], n_polish=n_polish)
            return POINTS2 * float(np.mean((predict_sigmoid(fit, Xt) - yt) ** 2))

        def row(b, method, draw, models, target=target) -> dict:
            return {
                "target": target,
                "budget": b,
                "method": method,
                "draw": draw,
                "n_models": len(models),
                "test_mse": test_mse(models),
            }

        everyone = pool[MODEL].tolist()
        full = row(0, "all", 0, everyone)
        for b in budgets:
            rows.append({**full, "budget": b})
            try:
                best = sel.search(b)
            except InputError:
                continue
            rows.append(row(b, "v-optimal", 0, best.models))
            for j, r in enumerate(sel.random_baseline(b, n_random, seed)):
                rows.append(row(b, "random", j, r.models))
    per = pd.DataFrame(rows)
    if per.empty:
        raise InputError("no budget admits a subset with an invertible S_M^T S_M")
    per["log_mse"] = np.log(per["test_mse"])
    out = (
        per.groupby(["budget", "method"], sort=True)
        .agg(
            gm_test_mse=("log_mse", "mean"),
            median_models=("n_models", "median"),
            n_fits=("test_mse", "size"),
        )
        .reset_index()
    )
    out["gm_test_mse"] = np.exp(out["gm_test_mse"])
    out.attrs["per_target"] = per.drop(columns="log_mse")
    return out
