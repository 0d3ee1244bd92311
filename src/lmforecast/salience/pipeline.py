"""End-to-end CSV fit for one task: Algorithm 1 mapping, Algorithm 2 optimisation, baselines.

Scores and the chance level are points at the boundary (a score table in fractions is converted
at the door, ``score_unit``); the fit runs on fractions (Eq. 2) and its `SalienceFit` reports
scores, predictions and intervals in points and MSEs in points^2.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd

from ..errors import InputError
from ..params import check
from .features import FeatureExtractor, HashedNgramFeatures, TextFeatures
from .law import baseline_fit
from .mapping import map_losses_many
from .model import CapabilitySalience, preset_options, split_scores
from .records import LossTable, loss_table
from .result import SalienceFit


def mapped_loss_matrix(table: LossTable, features: TextFeatures, models: list[str]) -> np.ndarray:
    """(M, T) losses of each model on the features' target tokens (Algorithm 1 per text)."""
    T = features.n_tokens
    ptr = features.ptr
    L = np.empty((len(models), T))
    where = [f"model {m!r}" for m in models]
    for i, tid in enumerate(features.text_ids):
        L[:, ptr[i] : ptr[i + 1]] = map_losses_many(
            [table[m][tid] for m in models],
            features.offsets[i],
            int(features.text_lengths[i]),
            [f"{w} text {tid!r}" for w in where],
        )
    return L


def _align_models(table: LossTable, scores: pd.DataFrame) -> pd.DataFrame:
    missing = [m for m in scores["model"] if m not in table]
    if missing:
        raise InputError(f"scores: model {missing[0]!r} has no token losses")
    return scores.reset_index(drop=True)


def fit_salience(
    texts: Mapping[str, str],
    records: Iterable[Mapping],
    scores: pd.DataFrame,
    *,
    task: str = "task",
    chance: float,
    features: TextFeatures | None = None,
    extractor: FeatureExtractor | None = None,
    label_losses: Mapping[str, float] | None = None,
    bootstrap: int = 200,
    seed: int = 0,
    preset: str | None = None,
    score_unit: str = "auto",
    **options,
) -> SalienceFit:
    """Fit the CSV of one task.

    `scores` has columns model, split, score, in `score_unit` ("auto": a column whose values
    all lie in [0, 1] is read as fractions, any other as points; or "points" / "fraction");
    `chance` is in points (25 for four choices). Features come from `features` (a cache)
    or are extracted from `texts` with `extractor` (default: the torch-free hashed n-grams).
    Options go to `CapabilitySalience` (activation, lr, n_steps, optimizer, l2, init_weight);
    `preset` ("default": Adam; "paper": SGD, lr 1e-3, 300 steps) supplies optimizer, lr and
    n_steps where the options leave them out (or None).
    `bootstrap` resamples of the train models refit alpha, beta with W fixed (intervals).
    """
    check("bootstrap", bootstrap)
    opt = preset_options(
        preset, **{k: options.pop(k, None) for k in ("optimizer", "lr", "n_steps")}
    )
    preset_name = opt.pop("preset")
    options.update(opt)
    lengths = {t: len(s) for t, s in texts.items()}
    table = loss_table(records, lengths)
    scores = _align_models(table, scores)
    if features is None:
        features = (extractor or HashedNgramFeatures()).extract(texts)
    else:
        features = features.select(list(texts))
        bad = [t for t, n in zip(features.text_ids, features.text_lengths) if int(n) != lengths[t]]
        if bad:
            raise InputError(f"features: text {bad[0]!r} has a different length than in the texts")
    models = scores["model"].tolist()
    splits = scores["split"].to_numpy().astype(str)
    A = scores["score"].to_numpy(float)
    n_train = int(np.sum(np.asarray(splits) == "train"))
    if n_train < 3:  # Eq. 2 has 2 free parameters (alpha, beta): 2 models would fit it exactly
        raise InputError(
            f"scores: {n_train} train model(s); a salience fit needs at least 3 (the Eq. 2 "
            "sigmoid has 2 parameters, so 2 models fit it exactly and test nothing)"
        )
    L = mapped_loss_matrix(table, features, models)

    est = CapabilitySalience(
        chance, bootstrap=int(bootstrap), seed=seed, score_unit=score_unit, **options
    )
    est.fit(features.H, L, features.n_chars, A, splits)
    A, A_points, _ = split_scores(A, score_unit)  # fractions for Eq. 2, points for the result
    pred = est.predict(L)  # points
    metrics: dict = {"best_step": int(est.best_step_)}
    for name in ("train", "validation", "test"):
        m = splits == name
        metrics[f"{name}_mse"] = float(np.mean((pred[m] - A_points[m]) ** 2)) if m.any() else None
    baselines = {}
    all_tok = baseline_fit(L.sum(axis=1) / features.n_chars, A, splits, est.gamma_)
    baselines["all_token"] = _points_mse(all_tok)
    if label_losses is not None:
        miss = [m for m in models if m not in label_losses]
        if miss:
            raise InputError(f"label losses: no value for model {miss[0]!r}")
        lab = baseline_fit(np.array([label_losses[m] for m in models]), A, splits, est.gamma_)
        baselines["label_token"] = _points_mse(lab)
    metrics["baselines"] = baselines

    boot = est.bootstrap_
    ptr = features.ptr
    return SalienceFit(
        task=str(task),
        gamma=float(est.gamma_),
        alpha=float(est.alpha_),
        beta=float(est.beta_),
        activation=est.activation,
        extractor=dict(features.extractor),
        theta=[float(v) for v in est.theta_],
        bias=float(est.bias_),
        law=est.law_.to_dict(),
        text_ids=list(features.text_ids),
        text_lengths=[int(n) for n in features.text_lengths],
        offsets=[np.asarray(o, int).tolist() for o in features.offsets],
        weights=[est.weights_[ptr[i] : ptr[i + 1]].tolist() for i in range(len(ptr) - 1)],
        models=models,
        splits=splits.tolist(),
        scores=[float(a) for a in A_points],
        capability=[float(c) for c in est.capability_],
        metrics=metrics,
        settings={
            "lr": float(est.lr),
            "n_steps": int(est.n_steps),
            "optimizer": est.optimizer,
            "preset": preset_name,
            "l2": float(est.l2),
            "init_weight": float(est.init_weight),
            "bootstrap": int(bootstrap),
            "seed": int(seed),
        },
        history=est.history_.tolist(),
        bootstrap=boot,
    )


def _points_mse(baseline: dict) -> dict:
    """A `baseline_fit` result without its predictions, its MSEs of fractions in points^2."""
    return {
        k: (v if v is None or not k.endswith("_mse") else 1e4 * v)
        for k, v in baseline.items()
        if k != "predicted"
    }
