"""`supervised predict` loads only what a forecast needs (benchmarks/bench_predict_cli.py times
it against a baseline revision): no scipy.stats, scipy.optimize, ledger or data-constrained
modules unless the line asks for them. Checked by module, not by the clock."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("scipy.stats", "scipy.optimize", "sqlite3", "lmforecast.ledger", "lmforecast.cli.ledger",
         "lmforecast.dataconstrained", "matplotlib")  # fmt: skip


def _loaded(*argv: str) -> set[str]:
    code = ("import io, json, sys, contextlib\n"
            "from lmforecast.cli.main import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    rc = main({list(argv)!r})\n"
            "print(json.dumps([rc, sorted(sys.modules)]))")  # fmt: skip
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    rc, mods = json.loads(r.stdout.strip().splitlines()[-1])
    assert rc == 0
    return set(mods)


def test_predict_loads_no_heavy_module_it_does_not_use():
    mods = _loaded("supervised", "predict", "--preset", "hoffmann2022", "--params", "7e9",
                   "--tokens", "1.4e11")  # fmt: skip
    assert not mods & set(HEAVY), sorted(mods & set(HEAVY))
    assert "lmforecast.supervised.model" in mods
