"""Training one zoo run: next-token prediction or pure distillation, with resumable checkpoints.

Objective (Busbridge et al. 2025, Eq. 4-7): L = (1 - lambda) L_NTP + lambda L_KD + lambda_Z L_Z
with L_KD = -tau^2 sum_a softmax(z_T/tau)_a log softmax(z_S/tau)_a. Supervised runs use
lambda = 0; distilled runs take lambda, tau and the KL direction from their `RunSpec`
(kd_lambda, kd_tau, kd_kl), by default the paper's law-fitting setting lambda = 1, tau = 1,
forward KL (pure distillation; App. G ablates them, `zoo.kd_ablation`); Z-loss lambda_Z = 1e-4
(App. I) everywhere. AdamW (beta2 0.95, weight decay 0.1
on matrices), linear warm-up over 5% of steps then cosine decay to 10% of the peak, global-norm
clipping 1.0.

The run is evaluated every 1/n_checkpoints of its steps; after each evaluation its full state is
saved with a SHA-256 sidecar, so a killed build resumes there. A state whose hash does not match
(a torn or corrupt file) is detected and the run is redone from scratch, never silently reused.
States are loaded with ``torch.load(weights_only=True)``: a file carrying pickled code is refused
with an `InputError`, never executed (the sidecar checks integrity, not origin).
"""

from __future__ import annotations

import copy
import hashlib
import math
import os
import pickle
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

from ..compute.flops import training_flops
from ..errors import DomainWarning, InputError, require
from .data import Streams, mixture_weights, sample_batch
from .evaluate import EvalSet, evaluate
from .model import build_model, zoo_architecture
from .presets import Preset, RunSpec

Z_LOSS = 1e-4
KD_LAMBDA = 1.0
KD_TAU = 1.0


@dataclass
class RunPlan:
    """Derived settings of a run: batch size, steps and the evaluation steps."""

    batch: int
    steps: int
    eval_steps: list[int]
    save_steps: list[int]


CHECKPOINTED_KINDS = ("supervised", "mixture")


def plan_run(spec: RunSpec, preset: Preset) -> RunPlan:
    """Batch size so the run takes about ``target_steps`` steps (``min_batch`` to ``max_batch``
    sequences).

    Supervised and mixture runs (FLP, FLP-M) are evaluated every 1/n_checkpoints of training;
    the other runs only at the end (their methods use final models only)."""
    per_seq = preset.n_ctx
    batch = preset.batch(spec)
    steps = max(preset.n_checkpoints, math.ceil(spec.tokens / (batch * per_seq)))
    k = preset.n_checkpoints
    save_steps = sorted({max(1, round(i * steps / k)) for i in range(1, k + 1)})
    eval_steps = save_steps if spec.kind in CHECKPOINTED_KINDS else [steps]
    return RunPlan(batch, steps, eval_steps, save_steps)


def lr_at(step: int, steps: int, peak: float) -> float:
    """Linear warm-up (5% of steps) then cosine decay to 10% of the peak."""
    warm = max(1, int(0.05 * steps))
    if step < warm:
        return peak * (step + 1) / warm
    t = (step - warm) / max(1, steps - warm)
    return peak * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * t)))


def distillation_loss(student_logits, teacher_logits, tau: float = KD_TAU):
    """Eq. 6: L_KD = -tau^2 sum_a softmax(z_T/tau)_a log softmax(z_S/tau)_a, averaged over
    positions (logits flattened to ``(positions, vocab)``)."""
    torch = require("torch", "torch")
    t_prob = torch.softmax(teacher_logits / tau, -1)
    return -(tau**2) * (t_prob * torch.log_softmax(student_logits / tau, -1)).sum(-1).mean()


def reverse_distillation_loss(student_logits, teacher_logits, tau: float = KD_TAU):
    """Reverse KL (App. G.5, Table 7): tau^2 KL(p_S || p_T) = tau^2 sum_a p_S,a (log p_S,a -
    log p_T,a) at temperature tau (p = softmax(z/tau)), averaged over positions. Unlike the
    forward form, the student's own entropy is part of the objective (mode seeking)."""
    torch = require("torch", "torch")
    log_s = torch.log_softmax(student_logits / tau, -1)
    log_t = torch.log_softmax(teacher_logits / tau, -1)
    return (tau**2) * (log_s.exp() * (log_s - log_t)).sum(-1).mean()


def kd_objective(spec: RunSpec, student_logits, teacher_logits, ntp):
    """Eq. 7 without the Z-loss: (1 - lambda) L_NTP + lambda L_KD, with the run's lambda, tau
    and KL direction. lambda = 1 (the default) is pure distillation: L_NTP gets weight 0 (the
    same expression as before these knobs existed, so default runs are bit-identical)."""
    lam, tau = spec.kd_lambda, spec.kd_tau
    kd_fn = distillation_loss if spec.kd_kl == "forward" else reverse_distillation_loss
    kd = kd_fn(student_logits, teacher_logits, tau)
    return (1 - lam) * ntp + lam * kd


def z_loss(logits):
    """Eq. 5: L_Z = (log sum_a exp z_a)^2, averaged over positions."""
    torch = require("torch", "torch")
    return torch.logsumexp(logits, -1).pow(2).mean()


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def save_verified(obj, path: Path) -> None:
    """torch.save atomically, then record the file's SHA-256 in ``path.sha256``."""
    torch = require("torch", "torch")
    tmp = path.with_suffix(".tmp")
    torch.save(obj, tmp)
    digest = _sha256(tmp)
    os.replace(tmp, path)
    side = path.with_suffix(path.suffix + ".sha256")
    side_tmp = side.with_suffix(".tmp2")
    side_tmp.write_text(digest)
    os.replace(side_tmp, side)


def load_verified(path: Path):
    """Load a file saved by `save_verified`; None when missing, torn or corrupt."""
    torch = require("torch", "torch")
    side = path.with_suffix(path.suffix + ".sha256")
    if not path.exists():
        return None
    if not side.exists() or side.read_text().strip() != _sha256(path):
        warnings.warn(
            f"{path}: checkpoint does not match its SHA-256 (corrupt or partial); redoing it",
            DomainWarning,
            stacklevel=2,
        )
        return None
    # weights_only=True: the SHA-256 sidecar proves integrity, not origin (anyone who can write
    # the file can write a matching sidecar), so the file is never unpickled with arbitrary
    # globals. A state that holds anything but tensors and plain containers is refused.
    try:
        return torch.load(path, weights_only=True)
    except pickle.UnpicklingError as exc:
        raise InputError(
            f"{path}: refused to load: not a plain weights/state file ({_first_line(exc)}); "
            "it may have been tampered with; delete it to retrain that run"
        ) from None
    except Exception:  # noqa: BLE001 - any unreadable state is redone
        warnings.warn(f"{path}: unreadable checkpoint; redoing it", DomainWarning, stacklevel=2)
        return None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:160] if text else type(exc).__name__


def _param_groups(model, weight_decay: float):
    decay = [p for p in model.parameters() if p.dim() >= 2]
    rest = [p for p in model.parameters() if p.dim() < 2]
    return [{"params": decay, "weight_decay": weight_decay}, {"params": rest, "weight_decay": 0.0}]


def train_run(
    spec: RunSpec,
    preset: Preset,
    streams: Streams,
    evalset: EvalSet,
    vocab_size: int,
    bos_id: int,
    run_dir: Path,
    teacher=None,
    progress=None,
) -> dict:
    """Train (or resume) one run in ``run_dir``; returns its measurements.

    Writes ``state.pt`` during training and ``final.pt`` (weights) at the end; the caller writes
    the result file. ``progress(n_steps)`` is called as steps complete.
    """
    torch = require("torch", "torch")
    F = torch.nn.functional
    torch.manual_seed(preset.seed)
    cfg = spec.model_config(vocab_size, preset.n_ctx)
    model = build_model(cfg, seed=preset.seed)
    plan = plan_run(spec, preset)
    opt = torch.optim.AdamW(_param_groups(model, 0.1), lr=preset.peak_lr(spec), betas=(0.9, 0.95))
    weights = mixture_weights(spec.code_share)
    arch = zoo_architecture(cfg.d_model / cfg.n_layers, cfg.n_ctx, cfg.vocab_size)
    N = spec.N
    tokens_per_step = plan.batch * preset.n_ctx

    rows: list[dict] = []
    step, wall, loss_sum, loss_n = 0, 0.0, 0.0, 0
    state_path = run_dir / "state.pt"
    state = load_verified(state_path)
    if state is not None and state.get("run_id") == spec.run_id:
        fresh = (copy.deepcopy(model.state_dict()), copy.deepcopy(opt.state_dict()))
        try:  # a state of another shape (hand-made, another preset) restarts the run
            model.load_state_dict(state["model"])
            opt.load_state_dict(state["opt"])
            step, rows, wall = int(state["step"]), list(state["rows"]), float(state["wall"])
            loss_sum, loss_n = state["loss_acc"]
        except Exception as exc:  # noqa: BLE001 - any state that does not fit is redone
            warnings.warn(
                f"{state_path}: checkpoint does not fit this run "
                f"({_first_line(exc)}); restarting the run",
                DomainWarning,
                stacklevel=2,
            )
            model.load_state_dict(fresh[0])
            opt.load_state_dict(fresh[1])
            step, rows, wall, loss_sum, loss_n = 0, [], 0.0, 0.0, 0
        if progress:
            progress(step)
    if teacher is not None:
        teacher.eval()
    model.train()
    t0 = time.perf_counter()
    while step < plan.steps:
        for g in opt.param_groups:
            g["lr"] = lr_at(step, plan.steps, preset.peak_lr(spec))
        x, y = sample_batch(
            streams, weights, plan.batch, preset.n_ctx, bos_id, preset.seed, spec.data_id, step
        )
        xb, yb = torch.from_numpy(x), torch.from_numpy(y)
        logits = model(xb)
        flat = logits.reshape(-1, logits.shape[-1])
        ntp = F.cross_entropy(flat, yb.reshape(-1))
        if teacher is None:
            loss = ntp
        else:
            with torch.no_grad():
                t_logits = teacher(xb).reshape(-1, logits.shape[-1])
            loss = kd_objective(spec, flat, t_logits, ntp)
        loss = loss + Z_LOSS * z_loss(flat)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        loss_sum += ntp.item()
        loss_n += 1
        step += 1
        if progress:
            progress(1)
        if step in plan.eval_steps:
            metrics = evaluate(model, evalset)
            D_seen = step * tokens_per_step
            rows.append(
                {
                    "step": step,
                    "tokens": D_seen,
                    "C": float(training_flops(N, D_seen, "6ND")),
                    "C_FN": float(training_flops(N, D_seen, "F(N)", arch)),
                    "train_loss": loss_sum / max(loss_n, 1),
                    **metrics,
                }
            )
            loss_sum, loss_n = 0.0, 0
        if step in plan.save_steps and step < plan.steps:
            save_verified(
                {
                    "run_id": spec.run_id,
                    "model": model.state_dict(),
                    "opt": opt.state_dict(),
                    "step": step,
                    "rows": rows,
                    "wall": wall + time.perf_counter() - t0,
                    "loss_acc": (loss_sum, loss_n),
                },
                state_path,
            )
    wall += time.perf_counter() - t0
    save_verified(model.state_dict(), run_dir / "final.pt")
    D = plan.steps * tokens_per_step
    return {
        "model": model,
        "plan": plan,
        "config": cfg,
        "arch": arch,
        "D": D,
        "rows": rows,
        "wall_s": wall,
    }


def load_final(spec: RunSpec, preset: Preset, vocab_size: int, run_dir: Path):
    """The trained weights of a finished run (None when missing or corrupt)."""
    sd = load_verified(run_dir / "final.pt")
    if sd is None:
        return None
    model = build_model(spec.model_config(vocab_size, preset.n_ctx), seed=preset.seed)
    try:
        model.load_state_dict(sd)
    except Exception as exc:  # noqa: BLE001 - weights of another shape: the run is redone
        warnings.warn(
            f"{run_dir / 'final.pt'}: weights do not fit this run ({_first_line(exc)}); redoing it",
            DomainWarning,
            stacklevel=2,
        )
        return None
    model.eval()
    return model
