"""The zoo's output: tidy tables (runs, checkpoints, scores, texts, token losses) and
``metadata.json`` with versions and timings, each file written atomically (docs/zoo.md)."""

from __future__ import annotations

import datetime as _dt
import json
import platform
import sys
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pandas as pd

from .. import __version__
from ..errors import require
from ..store import atomic_write_text
from .presets import Preset

TASKS = ("hellaswag_like", "arith", "code_mc")


def _versions() -> dict:
    torch = require("torch", "torch")
    import tokenizers

    return {
        "python": sys.version.split()[0],
        "torch": torch.__version__,
        "tokenizers": tokenizers.__version__,
        "numpy": np.__version__,
        "pandas": pd.__version__,
        "lmforecast": __version__,
        "platform": platform.platform(),
    }


def _split_by_size(df: pd.DataFrame) -> pd.Series:
    """Salience split per tokenizer family: smaller models train, the larger validate/test."""
    split = pd.Series("train", index=df.index)
    for _, g in df.groupby("tokenizer"):
        order = g.sort_values(["N", "D", "model"]).index
        n = len(order)
        n_test = max(1, round(0.2 * n))
        n_val = max(1, round(0.2 * n)) if n >= 4 else 0
        split[order[n - n_test :]] = "test"
        if n_val:
            split[order[n - n_test - n_val : n - n_test]] = "validation"
    return split


def write_tables(
    tables: Path, preset: Preset, results: dict, tasks, texts: list[dict], wall: float
) -> dict:
    """Write the tidy tables and metadata.json (atomically, file by file)."""
    tables.mkdir(exist_ok=True)
    order = [r.run_id for r in preset.runs]
    runs = pd.DataFrame(
        [
            {k: v for k, v in results[m].items() if k not in ("checkpoints", "token_losses")}
            for m in order
        ]
    )
    ck = []
    for m in order:
        r = results[m]
        for row in r["checkpoints"]:
            ck.append(
                {
                    "model": m,
                    "kind": r["kind"],
                    "tokenizer": r["tokenizer"],
                    "N": r["N"],
                    "code_share": r["code_share"],
                    **row,
                    "C_general": row["C"] * (1 - r["code_share"]),
                    "C_code": row["C"] * r["code_share"],
                    "final": row["step"] == r["steps"],
                }
            )
    ckpts = pd.DataFrame(ck)
    dst = runs[runs["kind"] == "distilled"]
    sup_students = runs[runs["kind"] == "student-supervised"].set_index(["N", "D"])["loss"]
    distill = pd.DataFrame(
        {
            "model": dst["model"],
            "teacher": dst["teacher"],
            "N_S": dst["N"],
            "D_S": dst["D"],
            "N_T": dst["N_T"].astype(int),
            "D_T": dst["D_T"].astype(int),
            "L_T": dst["L_T"],
            "L_S": dst["loss"],
            "L_S_supervised": [
                sup_students.get((n, d), np.nan) for n, d in zip(dst["N"], dst["D"])
            ],
            "C_S": dst["C"],
        }
    )
    task_df = pd.DataFrame(
        [
            {**vars(t), "n_items": n}
            for t, n in zip(tasks.infos(), [len(tasks.prose), len(tasks.arith), len(tasks.code)])
        ]
    )
    scores = runs[["model", "tokenizer", "N", "D"]].copy()
    scores["split"] = _split_by_size(runs)
    for t in TASKS:
        scores[t] = runs[t] / 100.0
    scores = scores.drop(columns=["N", "D"])

    def csv(df, name):
        atomic_write_text(tables / name, df.to_csv(index=False, float_format="%.6g"))

    csv(runs, "runs.csv")
    csv(ckpts, "checkpoints.csv")
    csv(distill, "distillation.csv")
    csv(task_df, "tasks.csv")
    csv(scores, "scores.csv")
    atomic_write_text(
        tables / "texts.jsonl",
        "".join(
            json.dumps({"text_id": t["text_id"], "domain": t["domain"], "text": t["text"]}) + "\n"
            for t in texts
        ),
    )
    atomic_write_text(
        tables / "token_losses.jsonl",
        "".join(json.dumps(rec) + "\n" for m in order for rec in results[m]["token_losses"]),
    )
    meta = {
        "preset": preset.name,
        "config_hash": preset.config_hash(),
        "config": {k: v for k, v in preset.to_dict().items() if k != "runs"},
        "runs": [asdict(r) for r in preset.runs],
        "seed": preset.seed,
        "threads": preset.threads,
        "objective": {"z_loss": 1e-4, "distillation_lambda": 1.0, "distillation_tau": 1.0},
        "versions": _versions(),
        "wall_s_total": wall,
        "wall_s_training": float(runs["wall_s"].sum()),
        "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "tables": sorted(p.name for p in tables.iterdir() if not p.name.startswith("."))
        + ["metadata.json"],
    }
    atomic_write_text(tables / "metadata.json", json.dumps(meta, indent=1, default=str))
    return meta
