"""Benchmark: `lmforecast zoo build --jobs 2` against the serial build (`--jobs 1`).

Builds the same preset twice from scratch into fresh folders, once serially and once with two
forked workers, checks that the tables are identical (wall times aside) and prints both wall
times and the ratio. The corpus and tokenizer work is serial in both, so the ratio grows with
the preset's training share (mini: mostly corpus work; full: mostly training).

Run: PYTHONPATH=src python benchmarks/bench_zoo_parallel.py [--preset mini|full]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import pandas as pd


def _tables(folder: Path) -> dict:
    out = {}
    for name in ("runs", "checkpoints", "distillation", "scores"):
        df = pd.read_csv(folder / "tables" / f"{name}.csv")
        out[name] = df.drop(columns=[c for c in df.columns if c == "wall_s"])
    out["token_losses"] = (folder / "tables" / "token_losses.jsonl").read_text()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="mini")
    args = ap.parse_args()
    from lmforecast.zoo.build import build_zoo, corpus_and_tasks
    from lmforecast.zoo.presets import get_preset

    corpus_and_tasks(get_preset(args.preset))  # warm-up: imports and the file cache, untimed
    with tempfile.TemporaryDirectory() as tmp:
        times = {}
        for jobs in (1, 2):
            out = Path(tmp) / f"jobs{jobs}"
            t = time.perf_counter()
            build_zoo(args.preset, out, progress=False, jobs=jobs)
            times[jobs] = time.perf_counter() - t
        a, b = _tables(Path(tmp) / "jobs1"), _tables(Path(tmp) / "jobs2")
        same = all(a[k] == b[k] if isinstance(a[k], str) else a[k].equals(b[k]) for k in a)
    print(f"preset {args.preset}: serial (--jobs 1) {times[1]:.1f} s, --jobs 2 {times[2]:.1f} s")
    print(f"speed-up {times[1] / times[2]:.2f}x; identical tables: {same}")


if __name__ == "__main__":
    main()
