"""Real-run tables to backtest on, read from evaluation dumps the user already has.

`pythia_lambada_runs(folder)`, or `pythia_lambada_runs()` for the bundled harness table
(`data.evals.load_pythia`, the same numbers): the Pythia suite (Biderman et al. 2023) as a loss
proxy, from lm-evaluation-harness zero-shot JSON dumps laid out as
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

from ..data.evals import PYTHIA_TOKENS_PER_STEP, PYTHIA_TOTAL_PARAMS, load_pythia
from ..errors import InputError

# total parameters (Pythia Table 1) and tokens per step: one source for the whole package
PYTHIA_PARAMS = PYTHIA_TOTAL_PARAMS
TOKENS_PER_STEP = PYTHIA_TOKENS_PER_STEP


def pythia_lambada_runs(
    folder: str | Path | None = None, *, deduped: bool = False, min_step: int = 13000
) -> pd.DataFrame:
    """Columns model, size, step, N, D, C, loss (see the module docstring); `folder=None`
    reads the bundled tidy Pythia table instead of the harness JSON."""
    if folder is None:
        return _bundled_lambada_runs(deduped, min_step)
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


def _bundled_lambada_runs(deduped: bool, min_step: int) -> pd.DataFrame:

    t = load_pythia()
    t = t[(t["task"] == "lambada_openai") & (t["metric"] == "ppl") & (t["step"] >= min_step)]
    t = t[t["model"].str.endswith("-deduped") == deduped]
    size = t["model"].str.extract(r"pythia-([0-9.]+[mb])", expand=False)
    df = pd.DataFrame(
        {
            "model": t["model"].to_numpy(),
            "size": size.to_numpy(),
            "step": t["step"].to_numpy(int),
            "N": size.map(PYTHIA_PARAMS).to_numpy(float),
            "D": t["step"].to_numpy(float) * TOKENS_PER_STEP,
            "ppl": t["value"].to_numpy(float),
        }
    )
    df["C"] = 6.0 * df["N"] * df["D"]
    df["loss"] = np.log(df["ppl"])
    return df.sort_values(["N", "step"]).reset_index(drop=True)
