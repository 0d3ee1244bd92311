"""Benchmark: V-optimal model-subset search (Ruan et al. 2024, Sec. 5, Eq. 9, Table 1).

Ours: exact, vectorised enumeration of family subsets with summed Gram matrices and batched
3 x 3 inverses (`SubsetSelector.search`). Baselines, timed in the same run:
  1. the authors' approach: one pandas selection + Gram + inverse per family combination
     (431,909 combinations of the 20 non-Llama-2 families, up to 9 of them), timed on a sample
     and extrapolated;
  2. a straightforward per-subset numpy loop over all combinations (also used to check that the
     selections are identical).
Run: PYTHONPATH=src python benchmarks/bench_osl_selection.py [path/to/base_llm_benchmark_eval.csv]
"""

from __future__ import annotations

import itertools
import sys
import time
from pathlib import Path

import numpy as np

from lmforecast.fitting.threads import single_blas_thread
from lmforecast.osl import SubsetSelector, paper_base_models, read_benchmarks
from lmforecast.osl.selection import n_family_combinations

CSV = Path(__file__).resolve().parents[2] / "shared/data/obsscaling/base_llm_benchmark_eval.csv"
BUDGETS = (8, 12, 20)
SAMPLE = 3000


def combos(free: list[str], max_free: int):
    return itertools.chain.from_iterable(
        itertools.combinations(free, r) for r in range(1, max_free + 1)
    )


def pandas_loop(df, free, include, n_sample):
    """The authors' per-combination evaluation: DataFrame filter, Gram, inverse, trace."""
    pcs = ["PC-1", "PC-2", "PC-3"]
    gram_all = df[pcs].T @ df[pcs]
    t0 = time.perf_counter()
    for combo in itertools.islice(combos(free, 9), n_sample):
        sel = df[df["Model Family"].isin([*combo, include])]
        if len(sel) >= 3:
            g = sel[pcs].T @ sel[pcs]
            -np.trace(gram_all @ np.linalg.inv(g))
    return (time.perf_counter() - t0) / n_sample


def numpy_loop(S, fam, free, include):
    """Straightforward per-subset loop over every combination; returns all objectives."""
    gram_all = S.T @ S
    out = []
    for combo in combos(free, 9):
        m = np.isin(fam, [*combo, include])
        Ss = S[m]
        n = int(m.sum())
        obj = np.trace(gram_all @ np.linalg.inv(Ss.T @ Ss)) if n >= 3 else np.inf
        out.append((n, obj, combo))
    return out


def main() -> None:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else CSV
    table = paper_base_models(read_benchmarks(path))
    with single_blas_thread():
        t0 = time.perf_counter()
        sel = SubsetSelector(3, include=["Llama-2"]).fit(table)
        t_fit = time.perf_counter() - t0
        ours = {}
        for b in BUDGETS:
            t0 = time.perf_counter()
            ours[b] = sel.search(b)
            ours[b].seconds = time.perf_counter() - t0
        t0 = time.perf_counter()
        unpruned = sel.search(len(table))  # every subset of <= 10 families is admissible
        t_unpruned = time.perf_counter() - t0

        free = [f for f in sel.families_ if f != "Llama-2"]
        n_all = n_family_combinations(len(free), 9)
        df = sel.table_.copy()
        for k in range(3):
            df[f"PC-{k + 1}"] = sel.S_[:, k]
        per_pandas = pandas_loop(df, free, "Llama-2", SAMPLE)
        t0 = time.perf_counter()
        loop = numpy_loop(sel.S_, sel.table_["Model Family"].to_numpy(), free, "Llama-2")
        t_numpy = time.perf_counter() - t0

    print(f"candidates: {len(table)} models, {len(sel.families_)} families; PCA fit {t_fit:.3f} s")
    print(f"family combinations (authors' brute force): {n_all:,}")
    head = f"{'budget':>6} {'ours [s]':>10} {'subsets':>9} {'objective':>10}"
    print(head + "  same as loop  families")
    for b in BUDGETS:
        feasible = [r for r in loop if r[0] <= b]
        n, obj, combo = min(feasible, key=lambda r: r[1])
        same = set(ours[b].families) == {"Llama-2", *combo} and np.isclose(obj, ours[b].objective)
        print(
            f"{b:>6} {ours[b].seconds:>10.4f} {ours[b].n_candidates:>9,} "
            f"{ours[b].objective:>10.4f}  {str(same):<12}  {', '.join(ours[b].families)}"
        )
    print(f"ours, no budget pruning ({unpruned.n_candidates:,} subsets): {t_unpruned:.3f} s")
    t_pandas = per_pandas * n_all
    print(
        f"authors-style pandas loop: {per_pandas * 1e3:.3f} ms/subset on {SAMPLE} sampled -> "
        f"{t_pandas:.0f} s per search (extrapolated)"
    )
    print(f"per-subset numpy loop, all {n_all:,} subsets: {t_numpy:.2f} s")
    worst = max(ours[b].seconds for b in BUDGETS)
    print(f"speed-up vs pandas loop: {t_pandas / worst:,.0f}x (slowest budget), "
          f"{t_pandas / t_unpruned:,.0f}x (unpruned)")  # fmt: skip
    print(f"speed-up vs numpy loop:  {t_numpy / worst:,.0f}x (slowest budget), "
          f"{t_numpy / t_unpruned:,.0f}x (unpruned)")  # fmt: skip


if __name__ == "__main__":
    main()
