"""`build_zoo`: train every run of a preset and write the zoo's measurement tables.

The output folder holds ``build.json`` (preset and config hash), ``tokenizers/``, one folder per
run (``result.json``, ``final.pt``, and ``state.pt`` while training) and ``tables/`` (the tidy
tables and ``metadata.json``; schema in docs/zoo.md). A finished run is never retrained, so a
killed build resumes where it stopped; a folder holding a different build is refused.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import DomainWarning, InputError, require
from ..parallel import backend_for, map_tasks, uses_dask
from ..store import atomic_write_text
from .corpus import DOMAINS, build_corpus
from .data import encode_corpus
from .evaluate import build_evalset, token_losses
from .model import count_non_embedding
from .output import TASKS, write_tables
from .presets import Preset, RunSpec, get_preset
from .resume import load_result
from .tasks import arith_items, build_tasks
from .tokenizers import BPETokenizer, ByteTokenizer, load_tokenizer
from .train import load_final, load_verified, plan_run, train_run

MARKER = "build.json"


def estimate_disk_bytes(preset: Preset) -> int:
    """Upper bound on what a build writes: per run, weights + a state with Adam moments."""
    total = 0
    for r in preset.runs:
        vocab = 257 if r.tokenizer == "byte" else preset.bpe_vocab
        n_all = r.N + (vocab + preset.n_ctx) * r.d_model
        total += 4 * n_all * (1 + 3)  # float32 final weights + state (weights, 2 moments)
    return total + 64 * 2**20  # tokenizers, results, tables


def prepare_out_dir(out: str | Path, preset: Preset) -> Path:
    """Validate the output folder before any training (no side effects): a folder (or
    creatable), writable, empty or holding this very build, with enough free disk."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out}: exists and is not a folder")
    parent = out if out.exists() else out.parent  # the folder that must be writable
    if not out.exists() and not out.parent.exists():
        raise InputError(f"--out {out}: parent folder {out.parent} does not exist")
    if out.exists():
        marker = out / MARKER
        if marker.exists():
            try:
                info = json.loads(marker.read_text())
            except (OSError, ValueError, RecursionError) as exc:
                why = " ".join(str(exc).split())[:100] or type(exc).__name__
                raise InputError(f"--out {out}: unreadable {MARKER} ({why})") from None
            if not isinstance(info, dict):
                raise InputError(f"--out {out}: {MARKER} is not a JSON object; use a new folder")
            if info.get("config_hash") != preset.config_hash():
                raise InputError(
                    f"--out {out}: holds a different zoo build (preset {info.get('preset')!r}, "
                    f"config {info.get('config_hash')}); use a new folder"
                )
        elif any(out.iterdir()):
            raise InputError(f"--out {out}: folder is not empty and holds no zoo build")
    if not os.access(parent, os.W_OK):
        raise InputError(f"--out {out}: folder is not writable")
    need = estimate_disk_bytes(preset)
    free = shutil.disk_usage(parent).free
    if free < need:
        raise InputError(
            f"--out {out}: needs about {need / 2**20:.0f} MiB of free disk, "
            f"only {free / 2**20:.0f} MiB free"
        )
    return out


def _claim_out_dir(out: Path, preset: Preset) -> None:
    """Create the folder and mark it as this build's."""
    out.mkdir(exist_ok=True)
    if not (out / MARKER).exists():
        atomic_write_text(
            out / MARKER,
            json.dumps({"preset": preset.name, "config_hash": preset.config_hash()}, indent=1),
        )


def salience_texts(valid: dict[str, list[str]], n_chars: int, per_domain: int = 4) -> list[dict]:
    """Mixed validation texts (prose, code, arithmetic) for per-token losses."""
    texts = []
    for d in DOMAINS:
        docs = [t for t in valid[d] if len(t) >= n_chars + 40]
        for i in range(per_domain):
            doc = docs[(i * 7) % len(docs)]
            start = (i * 97) % (len(doc) - n_chars)
            texts.append({"text_id": f"{d}-{i}", "domain": d, "text": doc[start : start + n_chars]})
    return texts


def corpus_and_tasks(preset: Preset):
    """The corpus and the downstream tasks of a preset. Multi-digit arithmetic items are held
    out of the training text; the single-digit task is the whole table, which the training text
    teaches (there is no unseen single-digit problem to hold out)."""
    held = preset.arith_digits > 1
    tasks_arith = arith_items(preset.n_arith_items, preset.seed + 2, preset.arith_digits)
    corpus = build_corpus(
        preset.corpus_chars,
        preset.seed,
        preset.max_files,
        exclude_arith=[p for p, _ in tasks_arith] if held else [],
        arith_digits=preset.arith_digits,
    )
    tasks = build_tasks(
        corpus.valid, preset.n_mc_items, preset.n_arith_items, preset.seed, preset.arith_digits
    )
    return corpus, tasks


@dataclass
class _Build:
    """What every run of one build shares (module-global while a parallel build forks its
    workers, so they inherit it instead of rebuilding the corpus and tokenizers)."""

    preset: Preset
    out: Path
    toks: dict
    streams: dict
    evalsets: dict
    texts: list


_SHARED: _Build | None = None
_CONTEXTS: dict = {}  # a Dask worker's build contexts, by (config hash, out folder)


def _context(preset: Preset, out: Path, corpus, tasks, toks: dict) -> _Build:
    """What every run shares: token streams, evaluation sets and salience texts."""
    used = {r.tokenizer for r in preset.runs}
    streams = {k: encode_corpus(corpus, toks[k]) for k in used}
    evalsets = {
        k: build_evalset(toks[k], streams[k], tasks, preset.n_ctx, preset.valid_tokens)
        for k in used
    }
    texts = salience_texts(corpus.valid, preset.salience_text_chars)
    return _Build(preset, out, toks, streams, evalsets, texts)


def build_zoo(
    preset: str | Preset,
    out: str | Path,
    *,
    progress: bool = True,
    jobs: int = 1,
    scheduler=None,
) -> dict:
    """Train (or resume) every run of the preset (a name, or a `Preset`, e.g. a variant made
    with ``dataclasses.replace``) into ``out`` and write ``out/tables``.

    ``jobs > 1`` trains that many runs at once in forked worker processes (one torch thread
    each; students after their teachers). Every run is a function of (seed, run, step) and its
    teacher's weights only, so the tables equal a serial build's, wall times aside.
    On a Dask scheduler (``scheduler=``, a ``lmforecast.parallel.scheduler`` block or
    ``LMFORECAST_SCHEDULER``; docs/scaling-out.md) the runs go to the cluster instead, in the
    same two phases; its workers must see ``out`` (a shared filesystem beyond one machine).
    Returns the metadata dict (also written to ``tables/metadata.json``).
    """
    if not isinstance(preset, Preset):
        preset = get_preset(preset)
    if int(jobs) < 1:
        raise InputError(f"--jobs {jobs}: must be at least 1")
    out = prepare_out_dir(out, preset)
    torch = require("torch", "torch")
    require("tokenizers", "torch")
    from tqdm.auto import tqdm

    _claim_out_dir(out, preset)  # only once every check has passed

    torch.set_num_threads(preset.threads)
    torch.use_deterministic_algorithms(True)
    t_start = time.perf_counter()

    corpus, tasks = corpus_and_tasks(preset)
    tok_dir = out / "tokenizers"
    tok_dir.mkdir(exist_ok=True)
    bpe_path = tok_dir / "bpe.json"
    bpe = None
    if bpe_path.exists():
        try:  # a garbage file is retrained (BPE training is deterministic: the same tokenizer)
            bpe = load_tokenizer(bpe_path)
        except Exception as exc:  # noqa: BLE001 - any unreadable tokenizer is redone
            why = " ".join(str(exc).split())[:80] or type(exc).__name__
            warnings.warn(
                f"{bpe_path}: unreadable tokenizer ({why}); retraining it",
                DomainWarning,
                stacklevel=2,
            )
    if bpe is None:
        docs = [t for d in DOMAINS for t in corpus.train[d]]
        bpe = BPETokenizer.train(docs, preset.bpe_vocab)
        atomic_write_text(bpe_path, bpe.to_json())
    toks = {"bpe": bpe, "byte": ByteTokenizer()}
    atomic_write_text(tok_dir / "byte.json", toks["byte"].to_json())

    flops = {r.run_id: _run_cost(r, preset) for r in preset.runs}
    overall = tqdm(
        total=sum(flops.values()),
        desc=f"zoo {preset.name}",
        unit="FLOP",
        unit_scale=True,
        disable=not progress,
        file=sys.stderr,
        position=0,
    )
    results: dict[str, dict] = {}
    todo = []
    for spec in preset.runs:
        res_path = out / "runs" / spec.run_id / "result.json"
        if res_path.exists():
            rec = load_result(res_path, spec.run_id, _RESULT_NUMBERS)
            if rec is not None:
                results[spec.run_id] = rec
                overall.update(flops[spec.run_id])
                continue
        todo.append(spec)
    # token streams and evaluation sets only where something is left to train: a finished
    # build's rerun just rewrites its tables
    ctx = _context(preset, out, corpus, tasks, toks) if todo else None
    texts = ctx.texts if ctx else salience_texts(corpus.valid, preset.salience_text_chars)
    with backend_for(scheduler) as sched:  # one cluster for both phases
        if uses_dask(sched):
            _train_parallel(ctx, todo, results, int(jobs), overall, flops, sched, dask=True)
        elif int(jobs) == 1:
            for spec in todo:
                label = f"[{preset.runs.index(spec) + 1}/{len(preset.runs)}] "
                _train_one(ctx, spec, results, label, progress, overall, flops)
        else:
            _train_parallel(ctx, todo, results, int(jobs), overall, flops)
    overall.close()
    wall = time.perf_counter() - t_start
    meta = write_tables(out / "tables", preset, results, tasks, texts, wall)
    return meta


_RESULT_NUMBERS = (
    "N",
    "N_total",
    "D",
    "tokens_per_param",
    "batch",
    "lr",
    "steps",
    "C",
    "C_FN",
    "loss",
    *(f"loss_{d}" for d in DOMAINS),
    *TASKS,
)


def _teacher_model(ctx: _Build, spec: RunSpec, results: dict):
    """The teacher's trained weights, retraining the teacher if they are missing or corrupt."""
    tspec = ctx.preset.run(spec.teacher)
    vocab = ctx.toks[spec.tokenizer].vocab_size
    tdir = ctx.out / "runs" / spec.teacher
    teacher = load_final(tspec, ctx.preset, vocab, tdir)
    if teacher is None:
        _train_one(ctx, tspec, results)
        teacher = load_final(tspec, ctx.preset, vocab, tdir)
    return teacher


def _train_one(
    ctx: _Build,
    spec: RunSpec,
    results: dict,
    label: str = "",
    progress: bool = False,
    overall=None,
    flops: dict | None = None,
) -> dict:
    """Train one run, record its result (``result.json``, atomically) and drop its state."""
    from tqdm.auto import tqdm

    preset, tok = ctx.preset, ctx.toks[spec.tokenizer]
    run_dir = ctx.out / "runs" / spec.run_id
    run_dir.mkdir(parents=True, exist_ok=True)
    teacher = _teacher_model(ctx, spec, results) if spec.teacher is not None else None
    plan = plan_run(spec, preset)
    per_step = flops[spec.run_id] / plan.steps if flops else 0.0
    bar = tqdm(
        total=plan.steps,
        desc=f"{label}{spec.run_id}",
        unit="step",
        leave=False,
        disable=not progress,
        file=sys.stderr,
        position=1,
    )

    def tick(n):
        bar.update(n)
        if overall is not None:
            overall.update(n * per_step)

    trained = train_run(
        spec,
        preset,
        ctx.streams[spec.tokenizer],
        ctx.evalsets[spec.tokenizer],
        tok.vocab_size,
        tok.bos_id,
        run_dir,
        teacher=teacher,
        progress=tick,
    )
    bar.close()
    results[spec.run_id] = _finish_run(spec, preset, trained, tok, ctx.texts, results)
    atomic_write_text(run_dir / "result.json", json.dumps(results[spec.run_id]))
    state = run_dir / "state.pt"
    for p in (state, state.with_suffix(".pt.sha256")):
        if p.exists():
            p.unlink()
    return results[spec.run_id]


def _worker(run_id: str, results: dict) -> dict:
    """A forked worker's job: one run, with the build context inherited from the parent
    (``results`` holds the run's teacher's record, for L_T)."""
    torch = require("torch", "torch")
    torch.set_num_threads(_SHARED.preset.threads)
    torch.use_deterministic_algorithms(True)
    return _train_one(_SHARED, _SHARED.preset.run(run_id), dict(results))


def _dask_worker(payload: dict, shared: dict) -> dict:
    """A Dask task (plain data: the preset, the output folder, a run id and its teacher's
    record): one run. The worker rebuilds the build context once (the corpus is a function of
    the preset; the tokenizer is read from ``out``) and keeps it for its next runs."""
    preset, out = shared["preset"], Path(shared["out"])
    key = (preset.config_hash(), str(out))
    if key not in _CONTEXTS:
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        corpus, tasks = corpus_and_tasks(preset)
        toks = {"bpe": load_tokenizer(out / "tokenizers" / "bpe.json"), "byte": ByteTokenizer()}
        _CONTEXTS.clear()
        _CONTEXTS[key] = _context(preset, out, corpus, tasks, toks)
    torch = require("torch", "torch")
    torch.set_num_threads(preset.threads)
    torch.use_deterministic_algorithms(True)
    ctx = _CONTEXTS[key]
    return _train_one(ctx, preset.run(payload["run_id"]), dict(payload["results"]))


def _train_parallel(
    ctx: _Build, todo: list, results: dict, jobs: int, overall, flops, scheduler=None, dask=False
) -> None:
    """Runs without a teacher first, then the students, ``jobs`` at a time in forked workers,
    or on the Dask cluster (`dask`, `scheduler`) (a teacher whose weights are gone is
    retrained once, here, before its students start)."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed

    global _SHARED
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")  # the parent already tokenised
    phases = [[s for s in todo if s.teacher is None], [s for s in todo if s.teacher is not None]]
    _SHARED = ctx
    try:
        for phase in phases:
            for t in sorted({s.teacher for s in phase if s.teacher}):
                tspec = ctx.preset.run(t)
                vocab = ctx.toks[tspec.tokenizer].vocab_size
                if load_final(tspec, ctx.preset, vocab, ctx.out / "runs" / t) is None:
                    _train_one(ctx, tspec, results)
            if not phase:
                continue
            if dask:
                payloads = [
                    {"run_id": s.run_id, "results": {t: results[t] for t in [s.teacher] if t}}
                    for s in phase
                ]

                def done(i, rec, phase=phase):
                    results[phase[i].run_id] = rec
                    overall.update(flops[phase[i].run_id])

                map_tasks(
                    _dask_worker,
                    payloads,
                    shared={"preset": ctx.preset, "out": str(ctx.out)},
                    scheduler=scheduler,
                    on_result=done,
                )
                continue
            with ProcessPoolExecutor(jobs, mp_context=mp.get_context("fork")) as pool:
                futures = {
                    pool.submit(_worker, s.run_id, {t: results[t] for t in [s.teacher] if t}): s
                    for s in phase
                }
                for f in as_completed(futures):
                    spec = futures[f]
                    results[spec.run_id] = f.result()
                    overall.update(flops[spec.run_id])
    finally:
        _SHARED = None


def _run_cost(spec: RunSpec, preset: Preset) -> float:
    """Training FLOPs (6ND), plus 2 N_T D for a teacher's forward passes."""
    c = 6.0 * spec.N * spec.tokens
    if spec.teacher:
        c += 2.0 * preset.run(spec.teacher).N * spec.tokens
    return c


def _finish_run(spec, preset, trained, tok, texts, results) -> dict:
    """The result record of a finished run (final metrics = the last evaluation)."""
    model, cfg, plan = trained["model"], trained["config"], trained["plan"]
    final = trained["rows"][-1]
    N, D = spec.N, trained["D"]
    n_total = N + (cfg.vocab_size + cfg.n_ctx) * cfg.d_model
    rec = {
        "model": spec.run_id,
        "kind": spec.kind,
        "tokenizer": spec.tokenizer,
        "n_layers": cfg.n_layers,
        "d_model": cfg.d_model,
        "n_heads": cfg.n_heads,
        "vocab_size": cfg.vocab_size,
        "n_ctx": cfg.n_ctx,
        "N": N,
        "N_total": n_total,
        "D": D,
        "tokens_per_param": D / N,
        "batch": plan.batch,
        "lr": preset.peak_lr(spec),
        "steps": plan.steps,
        "code_share": spec.code_share,
        "C": final["C"],
        "C_FN": final["C_FN"],
        "C_general": final["C"] * (1 - spec.code_share),
        "C_code": final["C"] * spec.code_share,
        **{k: final[k] for k in ["loss", *[f"loss_{d}" for d in DOMAINS], *TASKS]},
        "teacher": spec.teacher or "",
        "N_T": np.nan,
        "D_T": np.nan,
        "L_T": np.nan,
        "wall_s": trained["wall_s"],
    }
    if spec.teacher:
        t = results[spec.teacher]
        rec.update(N_T=t["N"], D_T=t["D"], L_T=t["loss"])
    assert count_non_embedding(cfg) == N
    rec["checkpoints"] = trained["rows"]
    rec["token_losses"] = []
    for t in texts:
        offsets, losses = token_losses(model, tok, t["text"], preset.n_ctx)
        rec["token_losses"].append(
            {
                "model": spec.run_id,
                "text_id": t["text_id"],
                "offsets": offsets.tolist(),
                "losses": [round(float(v), 5) for v in losses],
            }
        )
    return rec


__all__ = ["build_zoo", "prepare_out_dir", "estimate_disk_bytes", "load_verified"]
