"""lm-evaluation-harness results JSON -> one tidy table (one row per model, step, task, metric).

Layouts read (both detected per metric key):

- **older harness** (v0.3, the Pythia suite's `evals/pythia-v1` files): top-level `results`
  (task -> {"acc": .., "acc_stderr": ..}), `versions`, `config` with `model_args` a string
  `"pretrained=EleutherAI/pythia-v1.1-160m,revision=step0"` and `num_fewshot`;
- **current harness** (v0.4+): metric keys `"<metric>,<filter>"` (`"acc,none"`,
  `"acc_stderr,none"`, `"exact_match,strict-match"`), plus `configs`, `n-shot`, `versions`,
  `config.model_args` as a string or a dict, `config.model_name` / top-level `model_name`
  in some versions. Keys without a filter in a current-layout entry (`alias`, `name`,
  `sample_len`) are metadata and skipped; so are non-numeric values (`"N/A"` stderr).

`<metric>_stderr` is folded into the `stderr` column of `<metric>` (same filter). A metric with
filter `none` is named by its bare name (`acc`); any other filter keeps the harness notation
(`exact_match,strict-match`).

Model names: `pretrained=` of `model_args` (else `config.model_name`, else top-level
`model_name`). Pythia repositories get a canonical short name (`canonical_model_name`):
`EleutherAI/pythia-v1.1-160m` -> `pythia-160m`, `EleutherAI/pythia-v1.1-1b-bf16` -> `pythia-1b`,
`EleutherAI/pythia-410m-deduped` -> `pythia-410m-deduped`; any other model keeps its `pretrained`
string. The training step comes from `revision=stepN`; no revision (or `main`) is the final model
(step NA).

Built-in models registry (`pythia_models()`): the 16 Pythia models (8 sizes, standard and
deduplicated). Non-embedding parameters are Table 1 of Biderman et al. (2023), "Pythia: A Suite
for Analyzing Large Language Models Across Training and Scaling" (ICML 2023), also the
EleutherAI/pythia README / model cards. Total parameters are the non-embedding count plus the two
untied GPT-NeoX embedding matrices, 2 * vocab * d_model, with the padded vocabulary of each
model's Hugging Face `config.json` (50,304; 50,432 for 6.9B; 50,688 for 12B); this is the
"total params" of the pythia README (e.g. 70,426,624 for 70M). Every model saw 2,097,152 tokens
per step (1024 sequences x 2048 tokens), 143,000 steps = 299,892,736,000 tokens (~300B, Sec. 2).

FLOPs: `6 * params * tokens` (`compute.flops.training_flops`, 6ND accounting, total parameters,
as the observational-scaling-law tables do); 0 at step 0.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Sequence
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from ..compute.flops import training_flops
from ..errors import InputError
from ..safe_write import output_file
from .io import read_table
from .validate import check_columns, numeric_column

COLUMNS = ["model", "revision", "step", "task", "metric", "value", "stderr", "n_shot", "source"]
META_COLUMNS = ["params", "params_nonembedding", "tokens", "flops"]
ALL_COLUMNS = COLUMNS + META_COLUMNS

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
_STEP_RE = re.compile(r"^step(\d+)$")
_FINAL_REVISIONS = ("", "main")
# pandas < 3 parses CSV floats with a fast, not always exact, parser unless asked
_EXACT_FLOATS = {} if int(pd.__version__.split(".")[0]) >= 3 else {"float_precision": "round_trip"}


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


# ----------------------------------------------------------------------------- file reading


def _harness_files(paths) -> list[tuple[Path, str]]:
    """(file, source label): files as given; directories walked for *.json (sorted)."""
    if isinstance(paths, str | Path):
        paths = [paths]
    out: list[tuple[Path, str]] = []
    for raw in paths:
        p = Path(raw)
        if not p.exists():
            raise InputError(f"{p}: no such file or directory")
        if p.is_dir():
            found = sorted(f for f in p.rglob("*.json") if f.is_file())
            if not found:
                raise InputError(f"{p}: no *.json files in this folder")
            out.extend((f, (Path(p.resolve().name) / f.relative_to(p)).as_posix()) for f in found)
        else:
            out.append((p, str(raw)))
    seen: set[Path] = set()  # a file reached twice (a folder and a file in it) is read once
    unique = []
    for f, label in out:
        key = f.resolve()
        if key not in seen:
            seen.add(key)
            unique.append((f, label))
    return unique


def _load_json(path: Path) -> dict:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{path}: not lm-evaluation-harness output (not UTF-8 text)") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"{path}: not lm-evaluation-harness output (not JSON: {exc.msg} at line {exc.lineno})"
        ) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), dict):
        raise InputError(f"{path}: not lm-evaluation-harness output (no 'results' object)")
    return doc


def _model_args(config: dict, path: Path) -> dict:
    args = config.get("model_args")
    if args is None:
        return {}
    if isinstance(args, dict):
        return {str(k): v for k, v in args.items()}
    if not isinstance(args, str):
        raise InputError(f"{path}: config.model_args is neither a string nor an object")
    out = {}
    for part in args.split(","):
        if not part.strip():
            continue
        key, sep, val = part.partition("=")
        if not sep:
            raise InputError(f"{path}: config.model_args item {part!r} is not key=value")
        out[key.strip()] = val.strip()
    return out


def _identity(doc: dict, path: Path) -> tuple[str, str | None]:
    """(raw model name, revision or None)."""
    config = doc.get("config") if isinstance(doc.get("config"), dict) else {}
    args = _model_args(config, path)
    name = args.get("pretrained") or config.get("model_name") or doc.get("model_name")
    if not name:
        raise InputError(
            f"{path}: no model name (config.model_args has no pretrained=, and no model_name)"
        )
    rev = args.get("revision")
    return str(name), (None if rev is None else str(rev).strip())


def parse_step(revision: str | None, path: Path | str = "?") -> int | None:
    """`stepN` -> N; absent / `main` -> None (final model); anything else -> InputError."""
    if revision is None or revision in _FINAL_REVISIONS:
        return None
    m = _STEP_RE.match(revision)
    if m is None:
        raise InputError(
            f"{path}: cannot parse a training step from revision={revision!r} "
            "(expected stepN, main, or none)"
        )
    return int(m.group(1))


def _number(x) -> float | None:
    if isinstance(x, bool) or not isinstance(x, int | float):
        return None
    return float(x)


def _split_metric(key: str) -> tuple[str, str]:
    base, sep, filt = key.partition(",")
    return base, (filt if sep else "none")


def _metric_name(base: str, filt: str) -> str:
    return base if filt == "none" else f"{base},{filt}"


def _n_shot(doc: dict, task: str):
    nshot = doc.get("n-shot")
    if isinstance(nshot, dict) and _number(nshot.get(task)) is not None:
        return int(nshot[task])
    configs = doc.get("configs")
    if isinstance(configs, dict) and isinstance(configs.get(task), dict):
        v = _number(configs[task].get("num_fewshot"))
        if v is not None:
            return int(v)
    config = doc.get("config")
    if isinstance(config, dict) and _number(config.get("num_fewshot")) is not None:
        return int(config["num_fewshot"])
    return None


def _file_rows(doc: dict, path: Path, source: str, tasks, metrics) -> list[tuple]:
    raw_name, revision = _identity(doc, path)
    model = canonical_model_name(raw_name)
    step = parse_step(revision, path)
    rows = []
    for task, entry in doc["results"].items():
        if tasks is not None and task not in tasks:
            continue
        if not isinstance(entry, dict):
            raise InputError(f"{path}: results[{task!r}] is not an object")
        values, errs = {}, {}
        # current layout: metrics are "<metric>,<filter>"; bare keys are metadata there
        # ("alias", "name", "sample_len"); the older layout has only bare metric keys
        current = any("," in str(k) for k in entry)
        for key, raw in entry.items():
            if current and "," not in str(key):
                continue
            v = _number(raw)
            base, filt = _split_metric(str(key))
            if base.endswith("_stderr"):
                errs[(base[: -len("_stderr")], filt)] = np.nan if v is None else v
            elif v is not None:
                values[(base, filt)] = v
        named = {_metric_name(b, f): (b, f) for (b, f) in values}
        if metrics is not None:
            for m in metrics:
                if m not in named:
                    raise InputError(
                        f"{path}: results[{task!r}] has no metric {m!r} "
                        f"(found {', '.join(sorted(named)) or 'none'})"
                    )
        n_shot = _n_shot(doc, task)
        for name, key in named.items():
            if metrics is not None and name not in metrics:
                continue
            rows.append(
                (
                    model,
                    revision,
                    step,
                    task,
                    name,
                    values[key],
                    errs.get(key, np.nan),
                    n_shot,
                    source,
                )
            )
    return rows


# ----------------------------------------------------------------------------- public API


def read_harness(
    paths: str | Path | Iterable[str | Path],
    models=None,
    *,
    tasks: Sequence[str] | None = None,
    metrics: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Read lm-evaluation-harness results (files, or folders walked for *.json) into a tidy table.

    Columns: `model, revision, step, task, metric, value, stderr, n_shot, source, params,
    params_nonembedding, tokens, flops` (see `docs/evals.md`). `models` (CSV/table path or
    DataFrame, columns `model, params[, params_nonembedding][, tokens][, tokens_per_step]`)
    extends/overrides the built-in Pythia registry. `tasks` keeps only those tasks; `metrics`
    keeps only those metrics and requires every kept task entry to have each of them.

    Raises `InputError` (naming the file) for a file that is not harness output, an unparsable
    step, a missing requested metric, a model in neither registry, and for two files giving the
    same (model, step, task, metric, n_shot).
    """
    task_set = None if tasks is None else set(tasks)
    metric_list = None if metrics is None else list(dict.fromkeys(metrics))
    rows: list[tuple] = []
    seen: dict[tuple, str] = {}
    model_file: dict[str, str] = {}
    for path, source in _harness_files(paths):
        doc = _load_json(path)
        for row in _file_rows(doc, path, source, task_set, metric_list):
            key = (row[0], -1 if row[2] is None else row[2], row[3], row[4], row[7])
            if key in seen:
                step = "final" if row[2] is None else row[2]
                raise InputError(
                    f"duplicate result for model {row[0]!r} step {step} task {row[3]!r} "
                    f"metric {row[4]!r} in {seen[key]} and {path}"
                )
            seen[key] = str(path)
            model_file.setdefault(row[0], str(path))
            rows.append(row)
    if not rows:
        raise InputError("no results found (check --task/--metric filters and the files given)")
    df = pd.DataFrame(rows, columns=COLUMNS)
    registry = models_registry(models).set_index("model")
    unknown = [m for m in df["model"].unique() if m not in registry.index]
    if unknown:
        given = models is not None and not isinstance(models, pd.DataFrame)
        where = f" and {models}" if given else ""
        raise InputError(
            f"{model_file[unknown[0]]}: model {unknown[0]!r} is not in the built-in models table"
            f"{where}; give --models MODELS.csv with columns model, params, tokens_per_step"
        )
    df = _attach_meta(df, registry)
    df = normalize(df)
    order = ["model", "step", "task", "metric", "n_shot"]
    return df.sort_values(order, na_position="last", kind="stable").reset_index(drop=True)


def _attach_meta(df: pd.DataFrame, registry: pd.DataFrame) -> pd.DataFrame:
    reg = registry.reindex(df["model"].to_numpy())
    params = reg["params"].to_numpy(float)
    step = pd.to_numeric(df["step"], errors="coerce").to_numpy(float)
    tokens = np.where(
        np.isnan(step), reg["tokens"].to_numpy(float), step * reg["tokens_per_step"].to_numpy(float)
    )
    flops = np.full(len(df), np.nan)
    ok = np.isfinite(tokens) & (tokens > 0)
    if ok.any():
        flops[ok] = training_flops(params[ok], tokens[ok], "6ND")
    flops[np.isfinite(tokens) & (tokens == 0)] = 0.0
    df = df.copy()
    df["params"] = params
    df["params_nonembedding"] = reg["params_nonembedding"].to_numpy(float)
    df["tokens"] = tokens
    df["flops"] = flops
    return df


def normalize(df: pd.DataFrame) -> pd.DataFrame:
    """Column order and dtypes of a tidy evals table (one for every reader)."""
    cols = [c for c in ALL_COLUMNS if c in df.columns]
    out = df[cols].copy().reset_index(drop=True)
    for c in ("model", "task", "metric", "source"):
        out[c] = out[c].astype(str)
    out["revision"] = out["revision"].astype(object).where(out["revision"].notna(), None)
    for c in ("step", "n_shot"):
        out[c] = pd.to_numeric(out[c], errors="coerce").astype("Int64")
    for c in ("value", "stderr", *[m for m in META_COLUMNS if m in out.columns]):
        out[c] = pd.to_numeric(out[c], errors="coerce").astype(float)
    return out


def read_evals_table(path: str | Path) -> pd.DataFrame:
    """Read a tidy evals table written by `write_evals_table` / `lmforecast evals import`.

    CSV/TSV floats and JSONL numbers are parsed exactly (round trip), so a written table reads
    back equal to the one in memory.
    """
    p = Path(path)
    if not p.exists():
        raise InputError(f"{p}: no such file")
    name = p.name.lower()
    try:
        if name.endswith((".csv", ".csv.gz", ".tsv")):
            sep = "\t" if name.endswith(".tsv") else ","
            df = pd.read_csv(p, sep=sep, **_EXACT_FLOATS)
        elif name.endswith((".jsonl", ".ndjson")):
            with open(p, encoding="utf-8") as fh:
                df = pd.DataFrame([json.loads(line) for line in fh if line.strip()])
        else:
            df = read_table(p)
    except InputError:
        raise
    except Exception as exc:  # parser errors: one line, no traceback
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"{p}: could not read as an evals table: {first}") from exc
    if df.shape[0] == 0:
        raise InputError(f"{p}: the table has no rows")
    check_columns(df, COLUMNS, str(p))
    return normalize(df)


def load_pythia() -> pd.DataFrame:
    """The bundled tidy Pythia table (EleutherAI/pythia `evals/pythia-v1`, zero-shot, Apache-2.0).

    12 models (70M-2.8B, standard and deduped), 27 checkpoints each, `BUNDLED_PYTHIA_TASKS`.
    """
    path = resources.files("lmforecast").joinpath("data/bundled/pythia/pythia_zero_shot.csv.gz")
    with resources.as_file(path) as p:
        return read_evals_table(p)


def write_evals_table(df: pd.DataFrame, path: str | Path) -> None:
    """Write a tidy table by extension (.csv, .csv.gz, .tsv, .parquet, .jsonl), atomically.

    CSV floats are written with Python's repr, so `read_evals_table` reads them back exactly.
    """
    p = Path(path)
    name = p.name.lower()
    with output_file(p, suffix=p.suffix) as tmp:  # atomic, mode per umask, devices in place
        if name.endswith(".csv.gz"):
            import gzip

            # no file name, mtime 0 in the gzip header: the same table gives the same bytes
            with open(tmp, "wb") as raw, gzip.GzipFile("", "wb", 9, raw, mtime=0) as gz:
                gz.write(df.to_csv(index=False).encode("utf-8"))
        elif name.endswith(".csv"):
            df.to_csv(tmp, index=False)
        elif name.endswith(".tsv"):
            df.to_csv(tmp, sep="\t", index=False)
        elif name.endswith((".parquet", ".pq")):
            from ..errors import require

            require("pyarrow", "parquet")
            df.to_parquet(tmp, index=False)
        elif name.endswith((".jsonl", ".ndjson")):
            records = df.astype(object).where(df.notna(), None).to_dict(orient="records")
            with open(tmp, "w", encoding="utf-8") as fh:
                for rec in records:
                    fh.write(json.dumps(_plain(rec), allow_nan=False) + "\n")
        else:
            raise InputError(
                f"{p}: unknown table format; use .csv, .csv.gz, .tsv, .parquet or .jsonl"
            )


def make_pythia_table(zero_shot_dir: str | Path) -> pd.DataFrame:
    """The bundled table from the Pythia `zero-shot` folder: `BUNDLED_PYTHIA_TASKS`, all metrics."""
    return read_harness(zero_shot_dir, tasks=BUNDLED_PYTHIA_TASKS)


def _plain(rec: dict) -> dict:
    out = {}
    for k, v in rec.items():
        if isinstance(v, np.integer):
            v = int(v)
        elif isinstance(v, np.floating):
            v = float(v)
        out[k] = None if isinstance(v, float) and not math.isfinite(v) else v
    return out


# ----------------------------------------------------------------------------- wide views

_SIZE_TOKEN = re.compile(r"[-_]\d+(?:\.\d+)?[mbkMBK](?=$|[-_])")


def default_family(model: str) -> str:
    """Family = the model name without its size token: `pythia-410m-deduped` ->
    `pythia-deduped`, `pythia-1b` -> `pythia`; a name without one is its own family."""
    fam = _SIZE_TOKEN.sub("", str(model), count=1)
    return fam or str(model)


def select_rows(
    df: pd.DataFrame,
    metric: str | dict[str, str] = "acc",
    step: int | None = None,
    tasks: Sequence[str] | None = None,
    n_shot: int | None = None,
) -> pd.DataFrame:
    """One row per (model, task): `metric` (or a task -> metric mapping), at `step` (default:
    each model's final evaluation: step NA if present, else its largest step), optional
    `n_shot`. Errors name the task/model at fault."""
    check_columns(df, COLUMNS, "evals table")
    d = df
    if tasks is not None:
        missing = [t for t in tasks if t not in set(d["task"])]
        if missing:
            raise InputError(
                f"evals table: no task {missing[0]!r}; found {', '.join(sorted(set(d['task'])))}"
            )
        d = d[d["task"].isin(list(tasks))]
    if n_shot is not None:
        d = d[d["n_shot"] == n_shot]
        if d.empty:
            raise InputError(f"evals table: no rows with n_shot={n_shot}")
    if isinstance(metric, dict):
        default = metric.get("*")
        wanted = d["task"].map(lambda t: metric.get(t, default))
        unmapped = sorted(set(d.loc[wanted.isna(), "task"]))
        if unmapped:
            raise InputError(f"evals table: no metric given for task {unmapped[0]!r}")
    else:
        wanted = pd.Series(metric, d.index)
    for task, group in d.groupby("task", sort=True):
        want = metric.get(task, metric.get("*")) if isinstance(metric, dict) else metric
        if not (group["metric"] == want).any():
            have = ", ".join(sorted(set(group["metric"])))
            raise InputError(f"evals table: task {task!r} has no metric {want!r} (has {have})")
    d = d[d["metric"] == wanted]
    if step is None:
        stepf = d["step"].astype("Float64").fillna(np.inf)
        last = stepf.groupby(d["model"]).transform("max")
        d = d[stepf == last]
    else:
        have = d.loc[d["step"] == step, "model"].unique()
        lacking = [m for m in d["model"].unique() if m not in set(have)]
        if lacking:
            raise InputError(f"evals table: model {lacking[0]!r} has no results at step {step}")
        d = d[d["step"] == step]
    dup = d.duplicated(["model", "task"]).to_numpy()
    if dup.any():
        r = d.iloc[int(np.argmax(dup))]
        raise InputError(
            f"evals table: model {r['model']!r} task {r['task']!r} has several rows "
            f"(different n_shot?); pick one with n_shot"
        )
    return d


def to_benchmark_frame(
    df: pd.DataFrame,
    metric: str | dict[str, str] = "acc",
    step: int | None = None,
    tasks: Sequence[str] | None = None,
    n_shot: int | None = None,
    family=None,
) -> pd.DataFrame:
    """Pivot a tidy evals table into the observational-scaling-law table (`osl.data` format).

    One row per model (its final evaluation, or `step`); columns `Model`, `Model Family`,
    `Model Size (B)` = params / 1e9, `Pretraining Data Size (T)` = tokens / 1e12,
    `FLOPs (1E21)` = flops / 1e21, then one column per task holding `metric` (default `acc`,
    the one accuracy every multiple-choice harness task reports; pass a dict for per-task
    choices, e.g. {"*": "acc", "arc_challenge": "acc_norm"}; `"*"` is the default).
    `family`: None (`default_family`), a dict model -> family, or a callable.
    """
    d = select_rows(df, metric, step, tasks, n_shot)
    wide = d.pivot(index="model", columns="task", values="value")
    wide.columns = [str(c) for c in wide.columns]
    meta = d.drop_duplicates("model").set_index("model")
    models = list(wide.index)
    if family is None:
        fams = [default_family(m) for m in models]
    elif isinstance(family, dict):
        fams = [family.get(m, m) for m in models]
    else:
        fams = [family(m) for m in models]
    out = pd.DataFrame(
        {
            "Model": models,
            "Model Family": fams,
            "Model Size (B)": meta.loc[models, "params"].to_numpy(float) / 1e9
            if "params" in meta
            else np.nan,
            "Pretraining Data Size (T)": meta.loc[models, "tokens"].to_numpy(float) / 1e12
            if "tokens" in meta
            else np.nan,
            "FLOPs (1E21)": meta.loc[models, "flops"].to_numpy(float) / 1e21
            if "flops" in meta
            else np.nan,
        }
    )
    out = pd.concat([out, wide.reset_index(drop=True)], axis=1)
    order = np.argsort(out["FLOPs (1E21)"].to_numpy(float), kind="stable")
    return out.iloc[order].reset_index(drop=True)


def to_scores(
    df: pd.DataFrame,
    task: str,
    metric: str = "acc",
    step: int | None = None,
    n_shot: int | None = None,
    family=None,
) -> pd.DataFrame:
    """The salience `--scores` table for one task: columns `model`, `family`, `size` (params,
    billions), `<task>` (the metric's value). Combine with `salience.records.size_split` (App. A)
    for the train/validation/test split; values must be fractions in [0, 1] (accuracies)."""
    wide = to_benchmark_frame(df, metric, step, [task], n_shot, family)
    return pd.DataFrame(
        {
            "model": wide["Model"],
            "family": wide["Model Family"],
            "size": wide["Model Size (B)"],
            task: wide[task],
        }
    )
