"""Import a script of `benchmarks/` as a module (helper for the tests that check a benchmark's
rules on known data or run it on a shared suite in reduced form)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def load(name: str):
    """`benchmarks/<name>.py` as module `name`; the folder goes on sys.path so the script's own
    imports of its sibling scripts (`from trust_suites import ...`) resolve."""
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod
