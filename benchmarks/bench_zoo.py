"""Benchmark: the zoo's batched checkpoint evaluation vs a naive one-sequence-at-a-time loop.

Each checkpoint of a supervised/mixture run is scored on ~1,700 short sequences (validation
windows and task continuations); the full build evaluates ~780 checkpoints. This times
`lmforecast.zoo.evaluate._logprobs` (256 sequences per forward pass, no gradients) against the
naive baseline of one forward pass per sequence, on the same model and data, checks that both
give the same log-probabilities, and prints both timings and the ratio.

Run: PYTHONPATH=src python benchmarks/bench_zoo.py [--sequences 1024]
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sequences", type=int, default=1024, help="sequences scored (default 1024)")
    a = ap.parse_args(argv)
    import torch

    from lmforecast.zoo.evaluate import _logprobs
    from lmforecast.zoo.model import ModelConfig, build_model

    torch.set_num_threads(1)
    cfg = ModelConfig(n_layers=2, d_model=48, n_heads=3, vocab_size=512, n_ctx=64)
    model = build_model(cfg, seed=0).eval()
    rng = np.random.default_rng(0)
    x = rng.integers(0, 512, size=(a.sequences, 40))
    y = rng.integers(0, 512, size=(a.sequences, 40))

    t = time.perf_counter()
    lp_batched, _ = _logprobs(model, x, y)
    t_batched = time.perf_counter() - t

    t = time.perf_counter()
    rows = []
    with torch.no_grad():
        for i in range(len(x)):  # naive: one sequence per forward pass
            logits = model(torch.from_numpy(x[i : i + 1]))
            lp = torch.log_softmax(logits, -1)
            rows.append(lp.gather(-1, torch.from_numpy(y[i : i + 1])[..., None])[..., 0].numpy())
    t_naive = time.perf_counter() - t
    lp_naive = np.concatenate(rows)

    err = float(np.abs(lp_batched - lp_naive).max())
    print(f"sequences: {len(x)} x {x.shape[1]} tokens, model N=55,776 (2 layers, d=48)")
    print(f"batched (ours): {t_batched:.3f} s")
    print(f"naive loop    : {t_naive:.3f} s")
    print(f"speed-up      : {t_naive / t_batched:.1f}x   (max |log p| difference {err:.2e})")


if __name__ == "__main__":
    main()
