"""App. G ablation of the distillation objective on the zoo: mixing weight lambda (Eq. 7),
temperature tau (Eq. 6) and the KL direction (App. G.5), with one teacher.

`kd_ablation` trains one teacher and tiny distilled students that differ only in their App. G
knobs (same initialisation, batches (`RunSpec.data_key`), tokens and learning rate: paired
comparisons; without the shared batches the data order alone moved lambda = 0 students by up
to 0.09 nats on the mini preset), then reports each student's
validation cross-entropy w.r.t. the data. The paper (App. G.1-G.2) finds pure distillation,
lambda = 1 and tau = 1, best (or as good as any) at its scale, and forward KL far better than
reverse (Table 7: 2.42 vs 2.70); `docs/zoo.md` states what the mini preset shows.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pandas as pd

from ..errors import InputError
from .build import build_zoo
from .presets import KD_DEFAULTS, Preset, RunSpec, get_preset

LAMBDAS = (0.0, 0.5, 1.0)
TAUS = (0.5, 1.0, 2.0)


def ablation_runs(
    base: Preset,
    student: str | None = None,
    lambdas=LAMBDAS,
    taus=TAUS,
    grid: bool = False,
    reverse: bool = True,
    replicates: int = 1,
) -> tuple[RunSpec, list[RunSpec]]:
    """(teacher, students): variants of one distilled run of `base` (default: its first
    distilled run). ``grid=False`` varies one axis at a time around lambda = 1, tau = 1 (the
    paper's setting, the base run itself); ``grid=True`` trains every (lambda, tau) pair.
    ``reverse`` adds the reverse-KL student at lambda = 1, tau = 1. ``replicates`` > 1 repeats
    the set with other batch orders (data keys ``<run>#r<k>``, run ids ``...-r<k>``): the
    spread between replicates is the noise the single-run comparisons carry."""
    if int(replicates) < 1:
        raise InputError(f"replicates must be >= 1, got {replicates}")
    dst = [r for r in base.runs if r.teacher is not None]
    if not dst:
        raise InputError(f"preset {base.name!r} has no distilled run to ablate")
    spec = dst[0] if student is None else next((r for r in dst if r.run_id == student), None)
    if spec is None:
        raise InputError(f"no distilled run {student!r} in preset {base.name!r}")
    pairs = (
        [(lam, tau) for lam in lambdas for tau in taus]
        if grid
        else [(lam, 1.0) for lam in lambdas] + [(1.0, tau) for tau in taus if tau != 1.0]
    )
    if (1.0, 1.0) not in pairs:
        pairs.append((1.0, 1.0))
    kls = [("forward", lam, tau) for lam, tau in dict.fromkeys(pairs)]
    if reverse:
        kls.append(("reverse", 1.0, 1.0))
    students = []
    for k in range(int(replicates)):
        key = spec.data_id if k == 0 else f"{spec.data_id}#r{k}"
        for kl, lam, tau in kls:
            d = {"kd_lambda": float(lam), "kd_tau": float(tau), "kd_kl": kl}
            rid = spec.run_id
            if d != KD_DEFAULTS:  # the default student keeps its run id (and its zoo result)
                rid += f"-lam{lam:g}-tau{tau:g}" + ("-rkl" if kl == "reverse" else "")
            if k:
                rid += f"-r{k}"
            students.append(replace(spec, run_id=rid, data_key=key, **d))
    return base.run(spec.teacher), students


def kd_ablation(
    out: str | Path,
    preset: str | Preset = "mini",
    *,
    student: str | None = None,
    lambdas=LAMBDAS,
    taus=TAUS,
    grid: bool = False,
    reverse: bool = True,
    replicates: int = 1,
    progress: bool = False,
) -> pd.DataFrame:
    """Train the ablation into ``out`` (a zoo build of the teacher and the student variants;
    resumable) and return one row per student: kd_lambda, kd_tau, kd_kl, its validation
    cross-entropy `loss` (nats/token w.r.t. the data), the teacher's `L_T`, and `delta_vs_paper`
    = loss minus the lambda = 1, tau = 1, forward-KL student's loss on the same batches (> 0:
    worse), and `replicate` (the batch order)."""
    base = preset if isinstance(preset, Preset) else get_preset(preset)
    teacher, students = ablation_runs(base, student, lambdas, taus, grid, reverse, replicates)
    variant = replace(base, name=f"{base.name}-kd-ablation", runs=(teacher, *students))
    out = Path(out)
    build_zoo(variant, out, progress=progress)
    rows = []
    for s in students:
        rec = json.loads((out / "runs" / s.run_id / "result.json").read_text())
        rows.append(
            {
                "model": s.run_id,
                "replicate": s.data_key,
                "kd_lambda": s.kd_lambda,
                "kd_tau": s.kd_tau,
                "kd_kl": s.kd_kl,
                "N_S": rec["N"],
                "D_S": rec["D"],
                "loss": rec["loss"],
                "L_T": rec["L_T"],
                "teacher": s.teacher,
            }
        )
    df = pd.DataFrame(rows)
    paper = (df["kd_lambda"] == 1.0) & (df["kd_tau"] == 1.0) & (df["kd_kl"] == "forward")
    ref = df[paper].set_index("replicate")["loss"]
    df["delta_vs_paper"] = df["loss"] - df["replicate"].map(ref)
    return df


__all__ = ["kd_ablation", "ablation_runs", "LAMBDAS", "TAUS"]
