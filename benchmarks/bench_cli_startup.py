"""Benchmark: start-up of the `lmforecast` command (issue 26 target: `--version` within 0.5 s).

Baseline, timed in the same run: a bare interpreter, ``python -c pass``. Each command runs
`--repeat` times in fresh processes, interleaved with the baseline so machine load hits both
alike; the median wall time of each and their ratio are printed. Also timed: ``--help`` and
one real verb (``supervised predict`` with a preset), which imports only its own module.

    python benchmarks/bench_cli_startup.py [--repeat 7]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

CASES = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "lmforecast --version": [sys.executable, "-m", "lmforecast", "--version"],
    "lmforecast --help": [sys.executable, "-m", "lmforecast", "--help"],
    "lmforecast supervised predict": [
        sys.executable, "-m", "lmforecast", "supervised", "predict", "--preset",
        "hoffmann2022", "--params", "7e10", "--tokens", "1.4e12",
    ],
}  # fmt: skip


def _time(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    times: dict[str, list[float]] = {k: [] for k in CASES}
    for _ in range(args.repeat):
        for name, cmd in CASES.items():
            times[name].append(_time(cmd))
    base = statistics.median(times["python -c pass"])
    for name, ts in times.items():
        med = statistics.median(ts)
        print(f"{name:32s} median {med:6.3f} s   ratio to python -c pass {med / base:5.1f}x")
    version = statistics.median(times["lmforecast --version"])
    print(f"--version within 0.5 s: {'yes' if version <= 0.5 else 'NO'} ({version:.3f} s)")


if __name__ == "__main__":
    main()
