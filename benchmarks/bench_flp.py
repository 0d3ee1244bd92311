"""Benchmark: the FLP-M loss -> performance network (Sec. 4.2) on 500 checkpoints x 5 domains
for the full 2,000 Adam steps, pure numpy, against a naive per-sample Python loop.

The naive loop is timed on a fraction of the steps and extrapolated linearly (its cost per step
is constant). Both train the same architecture and schedule; the vectorised trainer trains
`n_init` networks at once (5 by default) and is also timed with n_init=1.

    PYTHONPATH=src python benchmarks/bench_flp.py
"""

from __future__ import annotations

import time

import numpy as np

from lmforecast.fitting.threads import single_blas_thread
from lmforecast.flp.network import TwoLayerNetwork, naive_train


def main(n=500, K=5, steps=2000, naive_steps=40) -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(2.5, 0.2, (n, K))
    v = rng.dirichlet(np.ones(K))
    y = 40 - 30 * np.maximum(0.0, X @ v - 2.4) + rng.normal(0, 0.5, n)
    Z = (X - X.mean(0)) / X.std(0)
    t = (y - y.mean()) / y.std()
    with single_blas_thread():
        t0 = time.perf_counter()
        net = TwoLayerNetwork(steps=steps, n_init=5).fit(X, y)
        t_ours5 = time.perf_counter() - t0
        t0 = time.perf_counter()
        net1 = TwoLayerNetwork(steps=steps, n_init=1).fit(X, y)
        t_ours1 = time.perf_counter() - t0
        t0 = time.perf_counter()
        naive_train(Z, t, steps=naive_steps)
        t_naive = (time.perf_counter() - t0) * steps / naive_steps
    print(f"data: {n} checkpoints x {K} domains, {steps} Adam steps (lr 0.05 -> 0, wd 0.01)")
    print(f"ours, 5 networks at once : {t_ours5:8.3f} s   training MSE {net.train_mse_:.4f}")
    print(f"ours, 1 network          : {t_ours1:8.3f} s   training MSE {net1.train_mse_:.4f}")
    print(
        f"naive per-sample loop    : {t_naive:8.3f} s   (timed on {naive_steps} steps, x"
        f"{steps // naive_steps})"
    )
    print(f"speed-up (1 network)     : {t_naive / t_ours1:8.1f}x")
    print(
        f"speed-up (5 networks)    : {t_naive / t_ours5:8.1f}x per call, "
        f"{5 * t_naive / t_ours5:.1f}x per network"
    )
    print(f"under 10 s target        : {'yes' if t_ours5 < 10 else 'NO'}")


if __name__ == "__main__":
    main()
