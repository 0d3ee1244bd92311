"""The zoo's presets: which models are trained on what, and the build settings.

Every run is a `RunSpec`. The ``full`` preset covers each method's protocol in miniature:

- ``sup``: a size series (BPE tokenizer) at a fixed 20 tokens per non-embedding parameter,
  plus under-trained (5) and over-trained (80) variants -> the supervised law, FLP;
- ``mix``: the code share of the training mixture varied (general = prose + arithmetic 1:1)
  at several sizes -> FLP-M;
- ``byte``: a second family with the byte-level tokenizer -> salience across tokenizers;
- ``dst``: students distilled (pure distillation, lambda = 1, tau = 1) from fixed teachers of
  several sizes at two IsoFLOP student budgets, and ``ssup`` their supervised counterparts
  -> the distillation law (Busbridge et al. 2025, Sec. 4.2 fixed-M teacher / IsoFLOP students).
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import asdict, dataclass, field

from ..errors import InputError
from .model import ModelConfig, count_non_embedding

# App. G knobs of a distilled run and the paper's defaults (Eq. 6-7: pure distillation,
# lambda = 1, tau = 1, forward KL). Left out of `RunSpec.to_dict` at their defaults so the
# config hash (and the bundled zoo's run ids and tables) stay what they were.
KD_DEFAULTS = {"kd_lambda": 1.0, "kd_tau": 1.0, "kd_kl": "forward"}
_HASH_DEFAULTS = {**KD_DEFAULTS, "data_key": None}
KD_KL = ("forward", "reverse")


@dataclass(frozen=True)
class RunSpec:
    """One training run.

    ``data_key`` (default: the run id) seeds the run's batch order, so variants of a run can
    see exactly its data. Distilled runs (``teacher`` set) train on (1 - kd_lambda) L_NTP +
    kd_lambda L_KD (Eq. 7) with temperature ``kd_tau`` (Eq. 6) and ``kd_kl`` "forward" (Eq. 6,
    the paper's) or "reverse" (App. G.5, Table 7) KL; validated: kd_lambda in [0, 1], kd_tau > 0.
    """

    run_id: str
    kind: str  # supervised | mixture | byte | student-supervised | distilled
    tokenizer: str  # bpe | byte
    n_layers: int
    d_model: int
    tokens: int  # D: training tokens (targets)
    code_share: float = 0.4
    teacher: str | None = None
    kd_lambda: float = 1.0
    kd_tau: float = 1.0
    kd_kl: str = "forward"
    data_key: str | None = None  # batches are drawn by (seed, data_key or run_id, step)

    @property
    def data_id(self) -> str:
        """The key of the run's data order: ablation variants share their base run's."""
        return self.data_key or self.run_id

    def __post_init__(self) -> None:
        lam, tau = self.kd_lambda, self.kd_tau
        if not (isinstance(lam, int | float) and 0.0 <= lam <= 1.0):
            raise InputError(f"run {self.run_id}: kd_lambda must be in [0, 1], got {lam!r}")
        if not (isinstance(tau, int | float) and math.isfinite(tau) and tau > 0):
            raise InputError(f"run {self.run_id}: kd_tau must be > 0, got {tau!r}")
        if self.kd_kl not in KD_KL:
            raise InputError(
                f"run {self.run_id}: kd_kl must be one of {', '.join(KD_KL)}, got {self.kd_kl!r}"
            )
        if self.teacher is None and any(getattr(self, k) != v for k, v in KD_DEFAULTS.items()):
            raise InputError(f"run {self.run_id}: kd_lambda/kd_tau/kd_kl need a teacher")

    def to_dict(self) -> dict:
        """The run's fields; the App. G knobs and data_key only where they differ from the
        defaults (so presets hash as they did before these fields existed)."""
        d = asdict(self)
        for k, v in _HASH_DEFAULTS.items():
            if d[k] == v:
                del d[k]
        return d

    def model_config(self, vocab_size: int, n_ctx: int) -> ModelConfig:
        return ModelConfig(
            self.n_layers, self.d_model, max(1, self.d_model // 16), vocab_size, n_ctx
        )

    @property
    def N(self) -> int:
        return count_non_embedding(ModelConfig(self.n_layers, self.d_model, 1, 1, 1))


@dataclass(frozen=True)
class Preset:
    """Build settings and the list of runs."""

    name: str
    seed: int
    n_ctx: int
    bpe_vocab: int
    corpus_chars: dict
    max_files: int | None
    valid_tokens: int  # per domain, per evaluation
    n_mc_items: int
    n_arith_items: int
    n_checkpoints: int
    target_steps: int  # batch size is chosen so that a run takes about this many steps
    max_batch: int
    lr: float
    threads: int
    salience_text_chars: int
    runs: tuple[RunSpec, ...] = field(default_factory=tuple)
    min_batch: int = 4  # sequences per step, at least
    arith_digits: int = 2  # operands of the arithmetic text and task have up to this many digits
    lr_width: float = 0.0  # > 0: peak lr = lr_width / d_model (Adam width scaling), else ``lr``
    lr_batch_sqrt: bool = False  # also scale the peak lr by sqrt(batch / min_batch)

    def batch(self, spec: RunSpec) -> int:
        """Sequences per step, so that the run takes about ``target_steps`` steps
        (``min_batch`` to ``max_batch``)."""
        b = round(spec.tokens / (self.n_ctx * self.target_steps))
        return int(min(max(b, self.min_batch), self.max_batch))

    def peak_lr(self, spec: RunSpec) -> float:
        """The run's peak learning rate: ``lr_width / d_model`` when set (the Adam learning rate
        of a hidden layer scales as 1/width, as in muP), otherwise the fixed ``lr``; with
        ``lr_batch_sqrt`` also times sqrt(batch / min_batch), the square-root rule for Adam
        (Malladi et al. 2022), since larger runs take larger batches (docs/zoo.md)."""
        lr = self.lr_width / spec.d_model if self.lr_width > 0 else self.lr
        if self.lr_batch_sqrt:
            lr *= (self.batch(spec) / self.min_batch) ** 0.5
        return lr

    def to_dict(self) -> dict:
        d = asdict(self)
        d["runs"] = [r.to_dict() for r in self.runs]
        return d

    def config_hash(self) -> str:
        return hashlib.sha256(json.dumps(self.to_dict(), sort_keys=True).encode()).hexdigest()[:16]

    def run(self, run_id: str) -> RunSpec:
        return next(r for r in self.runs if r.run_id == run_id)


def _n(L: int, d: int) -> int:
    return count_non_embedding(ModelConfig(L, d, 1, 1, 1))


def _series(shapes, ratios_by_shape, kind="supervised", tokenizer="bpe", prefix="sup", share=0.4):
    runs = []
    for L, d in shapes:
        for r in ratios_by_shape(L, d):
            rid = f"{prefix}-L{L}d{d}-r{r:g}"
            if share != 0.4:
                rid += f"-c{share:g}"
            runs.append(RunSpec(rid, kind, tokenizer, L, d, int(r * _n(L, d)), share))
    return runs


def _students(student_shapes, teachers, budget_ratios, ref_shape):
    """IsoFLOP students: for a budget C = 6 N_ref D_ref (D_ref = ratio x N_ref), each student
    size gets D_S = C / (6 N_S); each (student, budget) is distilled from every teacher and also
    trained supervised."""
    runs = []
    n_ref = _n(*ref_shape)
    for ratio in budget_ratios:
        c_over_6 = ratio * n_ref * n_ref
        for L, d in student_shapes:
            D = int(c_over_6 / _n(L, d))
            base = f"L{L}d{d}-b{ratio:g}"
            runs.append(RunSpec(f"ssup-{base}", "student-supervised", "bpe", L, d, D))
            for t in teachers:
                runs.append(RunSpec(f"dst-{base}-T{t}", "distilled", "bpe", L, d, D, teacher=t))
    return runs


def _full() -> Preset:
    shapes = [(1, 16), (1, 32), (2, 32), (2, 48), (3, 64)]
    big = {(2, 48), (3, 64)}
    sup = _series(shapes, lambda L, d: [5, 20] if (L, d) in big else [5, 20, 80])
    mix = []
    for share in (0.1, 0.25, 0.6):
        mix += _series(
            [(1, 32), (2, 32), (2, 48)], lambda L, d: [20], "mixture", prefix="mix", share=share
        )
    byte = _series([(1, 16), (1, 32), (2, 32), (2, 48)], lambda L, d: [20], "byte", "byte", "byte")
    teachers = ["sup-L1d32-r20", "sup-L2d48-r20", "sup-L3d64-r20"]
    dst = _students([(1, 32), (2, 32)], teachers, (10, 40), (1, 32))
    return Preset(
        name="full",
        seed=1234,
        n_ctx=64,
        bpe_vocab=512,
        corpus_chars={"prose": 3_000_000, "code": 6_000_000, "arith": 2_000_000},
        max_files=None,
        valid_tokens=4096,
        n_mc_items=160,
        n_arith_items=155,  # the whole single-digit table
        n_checkpoints=30,
        target_steps=2000,
        max_batch=24,  # so that the largest run also takes ~2,000 steps
        lr=1e-2,  # unused: lr_width sets each run's peak lr
        threads=1,
        salience_text_chars=240,
        runs=tuple(sup + mix + byte + dst),
        min_batch=2,
        arith_digits=1,
        lr_width=0.08,
        lr_batch_sqrt=True,
    )


def _mini() -> Preset:
    shapes = [(1, 16), (1, 24), (2, 24)]
    sup = _series(shapes, lambda L, d: [10, 30])
    mix = _series([(1, 16), (1, 24)], lambda L, d: [10], "mixture", prefix="mix", share=0.1)
    byte = _series([(1, 16), (1, 24)], lambda L, d: [10], "byte", "byte", "byte")
    dst = _students([(1, 16)], ["sup-L1d24-r10", "sup-L2d24-r10"], (10,), (1, 16))
    return Preset(
        name="mini",
        seed=7,
        n_ctx=48,
        bpe_vocab=320,
        corpus_chars={"prose": 150_000, "code": 150_000, "arith": 60_000},
        max_files=80,
        valid_tokens=1024,
        n_mc_items=40,
        n_arith_items=64,
        n_checkpoints=8,
        target_steps=60,
        max_batch=16,
        lr=1e-2,
        threads=1,
        salience_text_chars=120,
        runs=tuple(sup + mix + byte + dst),
        arith_digits=1,
        lr_width=0.08,
        lr_batch_sqrt=True,
    )


PRESETS = {"full": _full, "mini": _mini}


def get_preset(name: str) -> Preset:
    """The preset called ``name`` (``full`` or ``mini``)."""
    if name not in PRESETS:
        raise InputError(f"unknown zoo preset {name!r}; use one of {', '.join(PRESETS)}")
    return PRESETS[name]()
