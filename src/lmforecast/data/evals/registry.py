"""Model registry of the evals reader: the built-in Pythia models and user models tables.

Non-embedding parameters are Table 1 of Biderman et al. (2023), "Pythia: A Suite for Analyzing
Large Language Models Across Training and Scaling" (ICML 2023); total parameters add the two
untied GPT-NeoX embedding matrices, 2 * vocab * d_model (padded vocabulary of each model's
`config.json`); 2,097,152 tokens per step, 143,000 steps (Sec. 2). See `lmforecast.data.evals`.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from ...errors import InputError, did_you_mean
from ..io import read_table
from ..validate import check_columns, numeric_column

PYTHIA_TOKENS_PER_STEP = 2_097_152  # 1024 x 2048 tokens (Biderman et al. 2023, Sec. 2)
PYTHIA_FINAL_STEP = 143_000
PYTHIA_TOKENS = PYTHIA_FINAL_STEP * PYTHIA_TOKENS_PER_STEP  # 299,892,736,000 ~ 300B

# size: (n_layers, d_model, padded vocab of config.json, non-embedding params of Table 1)
PYTHIA_ARCHITECTURES = {
    "70m": (6, 512, 50304, 18_915_328),
    "160m": (12, 768, 50304, 85_056_000),
    "410m": (24, 1024, 50304, 302_311_424),
    "1b": (16, 2048, 50304, 805_736_448),
    "1.4b": (24, 2048, 50304, 1_208_602_624),
    "2.8b": (32, 2560, 50304, 2_517_652_480),
    "6.9b": (32, 4096, 50432, 6_444_163_072),
    "12b": (36, 5120, 50688, 11_327_027_200),
}
# the pythia README "total params" column (= non-embedding + 2 * vocab * d_model)
PYTHIA_TOTAL_PARAMS = {
    "70m": 70_426_624,
    "160m": 162_322_944,
    "410m": 405_334_016,
    "1b": 1_011_781_632,
    "1.4b": 1_414_647_808,
    "2.8b": 2_775_208_960,
    "6.9b": 6_857_302_016,
    "12b": 11_846_072_320,
}

BUNDLED_PYTHIA_TASKS = (
    "arc_challenge",
    "arc_easy",
    "lambada_openai",
    "logiqa",
    "piqa",
    "sciq",
    "winogrande",
    "wsc",
)

_PYTHIA_RE = re.compile(
    r"^(?:eleutherai/)?pythia-(?:v1\.1-|v1-)?(?P<size>\d+(?:\.\d+)?[mb])"
    r"(?P<dedup>-deduped)?(?:-(?:bf16|fp16|fp32|float16|bfloat16))?$",
    re.IGNORECASE,
)

# ----------------------------------------------------------------------------- model registry


def pythia_models() -> pd.DataFrame:
    """The built-in registry: 16 Pythia models (see the module docstring for the sources)."""
    rows = []
    for size, (_, _, _, nonemb) in PYTHIA_ARCHITECTURES.items():
        for suffix in ("", "-deduped"):
            rows.append(
                {
                    "model": f"pythia-{size}{suffix}",
                    "params": float(PYTHIA_TOTAL_PARAMS[size]),
                    "params_nonembedding": float(nonemb),
                    "tokens": float(PYTHIA_TOKENS),
                    "tokens_per_step": float(PYTHIA_TOKENS_PER_STEP),
                }
            )
    return pd.DataFrame(rows)


def read_models(source: str | Path | pd.DataFrame) -> pd.DataFrame:
    """A user models table: `model`, `params`, optional `params_nonembedding`, and `tokens`
    (final model) and/or `tokens_per_step`. Returns the registry's five columns (NaN if absent)."""
    what = "models" if isinstance(source, pd.DataFrame) else str(source)
    df = source.copy() if isinstance(source, pd.DataFrame) else read_table(source)
    df.columns = [str(c).strip() for c in df.columns]
    check_columns(df, ["model", "params"], what)
    if "tokens" not in df.columns and "tokens_per_step" not in df.columns:
        raise InputError(f"{what}: needs a 'tokens' or a 'tokens_per_step' column")
    for col in ("params", "params_nonembedding", "tokens", "tokens_per_step"):
        if col in df.columns:  # `True` is no count (pandas reads it as 1.0)
            flag = df[col].map(lambda x: isinstance(x, bool | np.bool_)).to_numpy()
            if flag.any():
                i = int(np.argmax(flag))
                raise InputError(
                    f"{what}: column {col!r} row {i + 1}: {df[col].iloc[i]!r} is not a number"
                )
    out = pd.DataFrame({"model": df["model"].astype(str).str.strip()})
    out["params"] = numeric_column(df, "params", positive=True, what=what)
    for col in ("params_nonembedding", "tokens", "tokens_per_step"):
        if col in df.columns:
            out[col] = numeric_column(df, col, positive=True, allow_nan=True, what=what)
        else:
            out[col] = np.nan
    dup = out["model"].duplicated().to_numpy()
    if dup.any():
        i = int(np.argmax(dup))
        raise InputError(f"{what}: row {i + 1} repeats model {out['model'].iloc[i]!r}")
    return out


def models_registry(models=None) -> pd.DataFrame:
    """Built-in Pythia entries, overridden/extended by `models` (path or DataFrame)."""
    base = pythia_models()
    if models is None:
        return base
    user = read_models(models)
    base = base[~base["model"].isin(user["model"])]
    return pd.concat([base, user], ignore_index=True)


def canonical_model_name(pretrained: str) -> str:
    """`EleutherAI/pythia-v1.1-160m-deduped` -> `pythia-160m-deduped`; others unchanged."""
    name = str(pretrained).strip().rstrip("/")
    m = _PYTHIA_RE.match(name)
    if m is None:
        return name
    return f"pythia-{m['size'].lower()}{'-deduped' if m['dedup'] else ''}"


def match_model_name(name: str, known, what: str = "model", where: str = "known") -> str:
    """The name in `known` that `name` refers to: the exact name, else the one name equal to it
    ignoring case (and surrounding blanks); otherwise an `InputError` naming `what` and the
    nearest known name (`pythia-41m` -> "did you mean 'pythia-410m'?")."""
    names = [str(k) for k in dict.fromkeys(map(str, known))]
    given = str(name).strip()
    if given in names:
        return given
    folded = [k for k in names if k.casefold() == given.casefold()]
    if len(folded) == 1:
        return folded[0]
    if len(folded) > 1:
        raise InputError(
            f"{what} {given!r} matches {', '.join(map(repr, folded))} ignoring case; "
            "give the exact name"
        )
    lower = {k.casefold(): k for k in names}
    near = did_you_mean(given.casefold(), lower)
    if near:  # name the suggestion in its own spelling
        key = near.split("'")[1]
        near = f"; did you mean {lower.get(key, key)!r}?"
    shown = ", ".join(names[:8]) + (f", ... ({len(names)} names)" if len(names) > 8 else "")
    raise InputError(f"{what} {given!r} is not {where}{near} (known: {shown})")


def match_model_names(names, known, what: str = "model", where: str = "known") -> list[str]:
    """`match_model_name` for each of `names` (order kept, a name given twice kept once)."""
    return list(dict.fromkeys(match_model_name(n, known, what, where) for n in names))


def lookup_model(name: str, models=None) -> dict:
    """`name`'s row of the registry (`models_registry(models)`: the built-in Pythia models, a
    user models table overriding/extending it), matched by `match_model_name`: a dict with
    `model`, `params`, `params_nonembedding`, `tokens` (final model), `tokens_per_step`."""
    reg = models_registry(models)
    where = "in the built-in models table" + ("" if models is None else f" or {models}")
    hit = match_model_name(name, reg["model"], "model", where)
    row = reg[reg["model"] == hit].iloc[0]
    return {k: (str(v) if k == "model" else float(v)) for k, v in row.items()}
