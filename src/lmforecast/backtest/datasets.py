"""Real-run tables to backtest on, read from evaluation dumps the user already has.

`pythia_lambada_runs(folder)`: the Pythia suite (Biderman et al. 2023) as a loss proxy, from
lm-evaluation-harness zero-shot JSON dumps laid out as
``<folder>/pythia-<size>/<size>_step<k>.json`` (``results.lambada_openai.ppl``). One row per
(model, checkpoint): N = the model's parameter count (Pythia paper Table 1, total parameters),
D = step x 2,097,152 tokens (1,024 sequences of 2,048 tokens per step), C = 6ND,
loss = ln(LAMBADA perplexity). Caveat: Pythia trains every model on the same 300B-token cosine
schedule, so an intermediate checkpoint is not a run trained to its D (its learning rate has not
decayed): checkpoint losses lie above those of tuned runs.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import InputError

PYTHIA_PARAMS = {  # Biderman et al. 2023, Table 1 (total parameters)
    "70m": 70_426_624,
    "160m": 162_322_944,
    "410m": 405_334_016,
    "1b": 1_011_781_632,
    "1.4b": 1_414_647_808,
    "2.8b": 2_775_208_960,
    "6.9b": 6_857_302_016,
    "12b": 11_846_072_320,
}
TOKENS_PER_STEP = 2_097_152


def pythia_lambada_runs(
    folder: str | Path, *, deduped: bool = False, min_step: int = 13000
) -> pd.DataFrame:
    """Columns model, size, step, N, D, C, loss (see the module docstring)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(f"{folder}: no such folder")
    rows = []
    for sub in sorted(folder.iterdir()):
        m = re.fullmatch(r"pythia-([0-9.]+[mb])(-bf16)?(-deduped)?", sub.name)
        if not m or bool(m.group(3)) != deduped or m.group(1) not in PYTHIA_PARAMS:
            continue
        size = m.group(1)
        for f in sub.glob("*_step*.json"):
            step = int(re.search(r"_step(\d+)\.json$", f.name).group(1))
            if step < min_step:
                continue
            ppl = json.loads(f.read_text())["results"]["lambada_openai"]["ppl"]
            rows.append((sub.name, size, step, PYTHIA_PARAMS[size], step * TOKENS_PER_STEP, ppl))
    if not rows:
        raise InputError(f"{folder}: no pythia-*/*_step*.json evaluation files")
    df = pd.DataFrame(rows, columns=["model", "size", "step", "N", "D", "ppl"])
    df["C"] = 6.0 * df["N"] * df["D"]
    df["loss"] = np.log(df["ppl"])
    return df.sort_values(["N", "step"]).reset_index(drop=True)
