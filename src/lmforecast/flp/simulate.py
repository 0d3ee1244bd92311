"""Sampling-model studies simulated from known laws, shaped like the paper's experiments.

Until the small-model zoo provides real checkpoints, tests, the report section and the docs
examples run on these. Model sizes, token counts and FLOPs are Table 1's; a checkpoint is saved
every 1/30 of training (Sec. 3.3). The ground truth is deliberately *not* the fitted forms:

- FLP (`simulate_flp`): final loss L(C) = (C/C_N)^alpha plus 0.5% noise; an intermediate
  checkpoint at fraction f of training sits 2% x (1 - f) above the curve (learning rate not yet
  decayed). Scores follow a soft ramp r + s softplus((w0 + w1 L - r)/s) around a linear
  post-emergence map, plus noise: random level below emergence, linear above (Sec. 2.2, App. A).
- FLP-M (`simulate_flpm`): per-domain loss L_D = ((C_1 + sum_k w_Dk C_k)/C_T)^alpha_D, an M3-like
  law that is defined at ratio 0; scores are a sum of soft ramps in *different* weighted
  combinations of domain losses (a reasoning skill fed by general + scientific + math losses and
  a code skill), so the average loss cannot explain them and the best code ratio is interior.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..errors import InputError
from .tasks import table1

DOMAINS = ("math", "code", "scientific", "wikipedia", "general")
FLP_SAMPLING = (
    "43M",
    "64M",
    "89M",
    "0.12B",
    "0.15B",
    "0.2B",
    "0.25B",
    "0.32B",
    "0.5B",
    "0.72B",
    "1B",
    "3B",
)
FLP_TARGETS = ("7B", "13B")
FLPM_SIZES = ("0.12B", "0.2B", "0.32B", "0.5B", "0.72B", "1B")
FLPM_RATIOS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5)

# FLOPs -> loss truth: L(5e22) = 2.2 and L(3.7e17) = 3.9 (alpha = -0.0485)
LOSS_ALPHA = -0.0485
LOSS_LOG_CN = np.log(5.09208e22) + np.log(2.2) / 0.0485

# post-emergence linear maps P = w0 + w1 L (points), per task
FLP_TASKS = {
    "ARC": (25.0, 25.0 + 30.8 * 2.85, -30.8),
    "Hellaswag": (25.0, 25.0 + 55.0 * 2.95, -55.0),
    "RACE": (25.0, 25.0 + 22.0 * 3.05, -22.0),
    "TriviaQA": (0.0, 60.0 * 2.75, -60.0),
    "BBH": (0.0, 35.0 * 2.8, -35.0),
    "HumanEval": (0.0, 70.0 * 2.7, -70.0),
}


@dataclass
class SimulatedStudy:
    """Runs (final sampling models), checkpoints, held-out targets and the ground truth."""

    runs: pd.DataFrame
    checkpoints: pd.DataFrame
    targets: pd.DataFrame
    truth: dict = field(default_factory=dict)


def _softramp(x, r, s=1.5):
    return r + s * np.logaddexp(0.0, (x - r) / s)


def flp_loss(C):
    """Ground-truth FLOPs -> loss of `simulate_flp`."""
    return np.exp(LOSS_ALPHA * (np.log(C) - LOSS_LOG_CN))


def flp_score(task: str, L):
    r, w0, w1 = FLP_TASKS[task]
    return _softramp(w0 + w1 * np.asarray(L, float), r)


def simulate_flp(
    tasks=("ARC", "Hellaswag", "TriviaQA"),
    seed: int = 0,
    n_checkpoints: int = 30,
    loss_noise: float = 0.005,
    score_noise: float = 0.7,
) -> SimulatedStudy:
    """Table 1's 12 sampling LMs with 30 checkpoints each; 7B and 13B as held-out targets."""
    rng = np.random.default_rng(seed)
    t1 = table1().set_index("model")
    rows, ck, tg = [], [], []
    for m in FLP_SAMPLING + FLP_TARGETS:
        cfg = t1.loc[m]
        C = float(cfg["flops"])
        N = C / (6.0 * float(cfg["tokens"]))
        Lf = flp_loss(C) * np.exp(rng.normal(0, loss_noise))
        sc = {
            t: float(np.clip(flp_score(t, Lf) + rng.normal(0, score_noise), 0, 100)) for t in tasks
        }
        nll = {f"nll_{t}": float(0.6 * Lf + rng.normal(0, 0.01)) for t in tasks}
        rec = {"model": m, "N": N, "D": float(cfg["tokens"]), "C": C, "loss": Lf, **sc, **nll}
        if m in FLP_TARGETS:
            tg.append(rec)
            continue
        rows.append(rec)
        for k in range(1, n_checkpoints + 1):
            f = k / n_checkpoints
            Lk = (
                Lf
                if k == n_checkpoints
                else (flp_loss(C * f) * (1 + 0.02 * (1 - f)) * np.exp(rng.normal(0, loss_noise)))
            )
            sk = (
                sc
                if k == n_checkpoints
                else {
                    t: float(np.clip(flp_score(t, Lk) + rng.normal(0, score_noise), 0, 100))
                    for t in tasks
                }
            )
            nk = {f"nll_{t}": float(0.6 * Lk + rng.normal(0, 0.01)) for t in tasks}
            tl = Lk + 0.02 + rng.normal(0, 0.004)
            ck.append({"model": m, "step": k, "C": C * f, "loss": Lk, "train_loss": tl, **sk, **nk})
    truth = {
        "alpha_N": LOSS_ALPHA,
        "C_N": float(np.exp(LOSS_LOG_CN)),
        "tasks": {
            t: {"random": FLP_TASKS[t][0], "w0": FLP_TASKS[t][1], "w1": FLP_TASKS[t][2]}
            for t in tasks
        },
    }
    return SimulatedStudy(pd.DataFrame(rows), pd.DataFrame(ck), pd.DataFrame(tg), truth)


# ---- FLP-M ---------------------------------------------------------------------------------
# per-domain (weight of each non-first source relative to the first, alpha, loss at 1e21 FLOPs)
_DOMAIN_LAW = {
    "math": (1.2, -0.050, 2.30),
    "code": (6.0, -0.060, 1.60),
    "scientific": (0.7, -0.048, 2.55),
    "wikipedia": (0.12, -0.045, 2.75),
    "general": (0.06, -0.046, 3.05),
}
# tasks: random level and soft-ramp skills [(domain weights, intercept, slope)]
FLPM_TASKS = {
    "ARC": (
        25.0,
        [
            ({"general": 0.5, "scientific": 0.3, "math": 0.2}, 3.2, -45.0, None),
            ({"code": 1.0, "general": -0.5}, 0.05, -60.0, 6.0),
        ],
    ),
    "RACE": (25.0, [({"general": 0.7, "wikipedia": 0.3}, 3.3, -40.0, None)]),
    "HumanEval": (0.0, [({"code": 1.0}, 1.72, -120.0, None), ({"general": 1.0}, 3.1, -20.0, None)]),
}
"""Tasks of `simulate_flpm`: random level and skills (domain weights, onset loss, slope in
points per nat, cap in points or None); each skill is a soft ramp, soft-capped when a cap is set."""


def domain_losses(F: np.ndarray, sources=("general", "code")) -> dict[str, np.ndarray]:
    """Ground-truth per-domain loss of `simulate_flpm` for FLOPs per source F (n, K)."""
    F = np.atleast_2d(np.asarray(F, float))
    out = {}
    for d, (w, a, L21) in _DOMAIN_LAW.items():
        ws = np.array([1.0] + [w * (0.5 ** (k - 1)) for k in range(1, F.shape[1])])
        eff = F @ ws
        out[d] = L21 * (eff / 1e21) ** a
    return out


def flpm_score(task: str, losses: dict[str, np.ndarray]) -> np.ndarray:
    r, skills = FLPM_TASKS[task]
    total = 0.0
    for weights, icpt, slope, cap in skills:
        x = sum(v * losses[d] for d, v in weights.items())
        z = slope * (x - icpt) / 1.5
        part = 1.5 * np.logaddexp(0.0, z)
        if cap is not None:
            part = part - 1.5 * np.logaddexp(0.0, z - cap / 1.5)
        total = total + part
    return r + total


def simulate_flpm(
    tasks=("ARC", "RACE", "HumanEval"),
    sources=("general", "code"),
    seed: int = 0,
    n_checkpoints: int = 30,
    loss_noise: float = 0.004,
    score_noise: float = 0.6,
) -> SimulatedStudy:
    """Sec. 5.1's design: sizes 0.12B-1B x code ratios 0-0.5 plus 3B at 0.3; targets 3B at the
    other ratios and 7B at 0.3. With K > 2 sources the non-first share is split evenly."""
    design = [(m, r, False) for m in FLPM_SIZES for r in FLPM_RATIOS] + [("3B", 0.3, False)]
    design += [("3B", r, True) for r in FLPM_RATIOS if r != 0.3] + [("7B", 0.3, True)]
    return _simulate_mixture(design, tasks, sources, seed, n_checkpoints, loss_noise, score_noise)


SINGLE_DISTRIBUTION_RATIO = 0.05
"""Code share of the single-distribution study: RedPajama v1's GitHub part is ~59B of ~1.2T
tokens (~5%), the data of the paper's FLP experiments (Sec. 3, Sec. 6.3)."""


def simulate_single_distribution(
    tasks=("ARC", "RACE", "HumanEval"),
    ratio: float = SINGLE_DISTRIBUTION_RATIO,
    sources=("general", "code"),
    seed: int = 0,
    n_checkpoints: int = 30,
    loss_noise: float = 0.004,
    score_noise: float = 0.6,
) -> SimulatedStudy:
    """Sec. 6.3's setting: every sampling LM is trained on one data distribution (one mixing
    ratio). Sizes are FLP's (Table 1, 43M-3B; targets 7B and 13B, Sec. 3), losses and scores
    follow the FLP-M ground truth (`domain_losses`, `flpm_score`) at code share `ratio`."""
    if not 0 <= ratio <= 1:
        raise InputError(f"ratio must be in [0, 1], got {ratio}")
    design = [(m, ratio, False) for m in FLP_SAMPLING] + [(m, ratio, True) for m in FLP_TARGETS]
    return _simulate_mixture(design, tasks, sources, seed, n_checkpoints, loss_noise, score_noise)


def _simulate_mixture(
    design, tasks, sources, seed, n_checkpoints, loss_noise, score_noise
) -> SimulatedStudy:
    """Runs, checkpoints and targets for `design`, rows of (Table 1 model, code share, is
    target), from the FLP-M ground truth."""
    rng = np.random.default_rng(seed)
    t1 = table1().set_index("model")
    K = len(sources)
    rows, ck, tg = [], [], []
    for m, r, target in design:
        C = float(t1.loc[m, "flops"])
        share = np.array([1.0 - r] + [r / (K - 1)] * (K - 1))
        name = f"{m}-r{r:.2f}"

        def measure(F, f):
            Ld = domain_losses(F[None, :], sources)
            Ld = {
                d: float(v[0] * (1 + 0.02 * (1 - f)) * np.exp(rng.normal(0, loss_noise)))
                for d, v in Ld.items()
            }
            sc = {
                t: float(np.clip(flpm_score(t, Ld) + rng.normal(0, score_noise), 0, 100))
                for t in tasks
            }
            return Ld, sc

        Ld, sc = measure(C * share, 1.0)
        base = {"model": name, "C": C, "ratio": r}
        base.update({f"C_{s}": C * share[i] for i, s in enumerate(sources)})
        rec = {
            **base,
            "loss": float(np.mean(list(Ld.values()))),
            **{f"loss_{d}": v for d, v in Ld.items()},
            **sc,
        }
        if target:
            tg.append(rec)
            continue
        rows.append(rec)
        for k in range(1, n_checkpoints + 1):
            f = k / n_checkpoints
            Lk, sk = (Ld, sc) if k == n_checkpoints else measure(C * f * share, f)
            avg = float(np.mean(list(Lk.values())))
            ck.append(
                {
                    "model": name,
                    "step": k,
                    "C": C * f,
                    "loss": avg,
                    "train_loss": avg + 0.02 + rng.normal(0, 0.004),
                    **{f"loss_{d}": v for d, v in Lk.items()},
                    **sk,
                }
            )
    runs = pd.DataFrame(rows)
    if K != 2:
        runs = runs.drop(columns=["ratio"])
    truth = {
        "domains": {
            d: {"weight": w, "alpha": a, "L_1e21": L} for d, (w, a, L) in _DOMAIN_LAW.items()
        }
    }
    return SimulatedStudy(runs, pd.DataFrame(ck), pd.DataFrame(tg), truth)
