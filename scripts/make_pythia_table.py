"""Regenerate the bundled Pythia table from the shared evals files.

Usage: python scripts/make_pythia_table.py [ZERO_SHOT_DIR]
(default ../shared/data/pythia/zero-shot, relative to the repository root). Writes
src/lmforecast/data/bundled/pythia/pythia_zero_shot.csv.gz (deterministic gzip, mtime 0).
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from lmforecast.data.evals import make_pythia_table, write_evals_table  # noqa: E402

OUT = REPO / "src/lmforecast/data/bundled/pythia/pythia_zero_shot.csv.gz"


def main(argv: list[str]) -> int:
    src = Path(argv[0]) if argv else REPO.parent / "shared/data/pythia/zero-shot"
    df = make_pythia_table(src)
    write_evals_table(df, OUT)
    print(
        f"{OUT.relative_to(REPO)}: {len(df)} rows, {df['model'].nunique()} models, "
        f"{df['step'].nunique()} steps, {df['task'].nunique()} tasks, "
        f"{OUT.stat().st_size} bytes"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
