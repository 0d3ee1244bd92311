"""Report section: Capability Salience Vector (Ge, Xing et al.).

The paper publishes no token losses, so the CSV is fitted on *simulated* data (planted: accuracy
driven by a known subset of tokens, model families with different tokenizers whose average
losses mislead), and on the small-model zoo's real per-token losses (BPE and byte-level models
mapped by Algorithm 1 onto one word tokenizer). The paper's own numbers (Table 1 MSEs, Tables
3-4 scores) are shown for reference from the bundled transcription. Scores and the chance level
are percentage points, MSEs points^2 (the paper's Table 1 prints MSEs of fractions: x 1e4).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...errors import InputError
from ...plots.salience import fit_figure, weights_figure
from ...salience.paper import TABLE1_MSE, paper_scores
from ...salience.pipeline import fit_salience
from ...salience.simulate import planted_salience_data
from ...scores import to_points
from ..builder import ReportContext, Section


def build_section(ctx: ReportContext) -> Section:
    sec = Section("salience", "Capability Salience Vector: token-weighted loss -> accuracy")
    n_texts, steps = (20, 150) if ctx.quick else (60, 300)
    data = planted_salience_data(n_texts=n_texts, seed=ctx.seed)
    fit = fit_salience(
        data.texts,
        data.records,
        data.scores[["model", "split", "score"]],
        task="planted",
        chance=data.chance,
        label_losses=data.label_losses,
        lr=3e-2,
        n_steps=steps,
    )
    m, base = fit.metrics, fit.metrics["baselines"]
    sec.text(
        "SIMULATED DATA first (the zoo subsection at the end uses real token losses). The "
        "paper publishes no token losses, so this part fits the CSV "
        f"(Eq. 1-3, Algorithms 1-2) on planted data: {len(data.texts)} texts, "
        f"{len(fit.models)} models in {data.scores['family'].nunique()} families with different "
        "tokenizers (mapped by Algorithm 1 onto a word tokenizer), accuracy driven by the loss "
        "on 10 'reasoning' words, and family offsets that make the average loss of the more "
        "capable family higher. Train/validation/test split by model size within each family "
        "(App. A). Features: torch-free hashed n-grams; Adam, lr 3e-2."
    )
    rows = [("CSV", m)] + [(k.replace("_", " "), v) for k, v in base.items()]
    tab = pd.DataFrame(
        {
            "predictor": [r[0] for r in rows],
            "train MSE": [r[1]["train_mse"] for r in rows],
            "validation MSE": [r[1]["validation_mse"] for r in rows],
            "test MSE": [r[1]["test_mse"] for r in rows],
        }
    )
    sec.table(tab, "Held-out prediction error on the planted data (points^2; Table 1 style, x 1e4)")
    sec.figure(fit_figure(fit), "Eq. 2 fit: accuracy vs CSV score and predicted vs observed")

    sal, other = [], []
    for tid, text in data.texts.items():
        off, w = fit.weights_of(tid)
        mask = np.array([text[s:e].lower() in data.salient_words for s, e in off])
        sal.append(w[mask])
        other.append(w[~mask])
    sal_mean, other_mean = float(np.concatenate(sal).mean()), float(np.concatenate(other).mean())
    tid = fit.text_ids[0]
    off, w = fit.weights_of(tid)
    sec.figure(
        weights_figure(data.texts[tid], off, w, title=f"learned CSV on text {tid}"),
        "Learned token weights (Fig. 9 style): the planted salient words light up",
    )
    sec.text(
        f"Mean weight on the planted salient tokens {sal_mean:.3g} vs {other_mean:.3g} on the "
        f"rest ({sal_mean / other_mean:.0f}x). Test MSE (points^2): CSV {m['test_mse']:.3g}, "
        f"all-token "
        f"{base['all_token']['test_mse']:.3g}, label-token {base['label_token']['test_mse']:.3g}."
    )
    t1 = (
        (1e4 * pd.DataFrame(TABLE1_MSE).T)
        .round(6)
        .rename(columns={"csv": "CSV", "all_token": "all token", "label_token": "label token"})
    )
    t1.index.name = "task"
    sec.table(
        t1.reset_index(),
        "Paper Table 1 in points^2 (printed in fractions, x 1e4; reference, not reproduced: "
        "needs the paper's token losses); hellaswag's all-token 31.5 (printed 3.15e-3) is kept "
        "as printed (likely a typo for 315, printed 3.15e-2)",
    )
    scores = paper_scores()
    sec.text(
        f"Bundled: App. C Tables 3-4, {len(scores)} open-source models x 6 tasks with the "
        "Table 2 split, ready for a fit once token losses of those models are available."
    )
    sec.numbers.update(
        {
            "simulated": True,
            "test_mse": m["test_mse"],
            "validation_mse": m["validation_mse"],
            "all_token_test_mse": base["all_token"]["test_mse"],
            "label_token_test_mse": base["label_token"]["test_mse"],
            "alpha": fit.alpha,
            "beta": fit.beta,
            "best_step": m["best_step"],
            "salient_weight_ratio": sal_mean / other_mean,
            "paper_table1_mse": TABLE1_MSE,
            "bundled_models": int(len(scores)),
        }
    )
    _zoo_part(sec, ctx)
    return sec


def zoo_salience_summary(zoo, tasks=None, *, n_steps: int = 300, seed: int = 0) -> dict:
    """CSV fit (Eq. 1-3, Algorithms 1-2) per zoo task (default: those whose best score clears
    random + 5 points) on the zoo's token losses, with the zoo's size-based split (scores.csv);
    test MSE (points^2) against the all-token baseline (Table 1) and a constant predictor (the
    train models' mean score); chance in points."""
    from ...salience.zoo_data import emerged_tasks, zoo_salience_inputs

    out, fits = {}, {}
    for task in tasks if tasks is not None else emerged_tasks(zoo):
        texts, records, scores, gamma = zoo_salience_inputs(zoo, task)
        fit = fit_salience(
            texts,
            records,
            scores[["model", "split", "score"]],
            task=task,
            chance=gamma,
            lr=3e-2,
            n_steps=n_steps,
            bootstrap=0,
            seed=seed,
        )
        A = to_points(scores["score"].to_numpy(float), what=f"zoo scores of {task}")
        split = scores["split"].to_numpy(str)
        test = split == "test"
        m, base = fit.metrics, fit.metrics["baselines"]
        fits[task] = fit
        out[task] = {
            "chance": gamma,
            "n_models": len(scores),
            "n_test": int(test.sum()),
            "tokenizers": sorted(scores["tokenizer"].unique()),
            "n_texts": len(texts),
            "train_mse": m["train_mse"],
            "validation_mse": m["validation_mse"],
            "test_mse": m["test_mse"],
            "all_token_test_mse": base["all_token"]["test_mse"],
            "constant_test_mse": float(np.mean((A[test] - A[split == "train"].mean()) ** 2)),
            "alpha": fit.alpha,
            "beta": fit.beta,
            "best_step": m["best_step"],
        }
    return {"tasks": out, "fits": fits}


def _zoo_part(sec: Section, ctx: ReportContext) -> None:

    from ...zoo.tables import load_zoo

    sec.html("<h3>On the small-model zoo (real token losses)</h3>")
    try:
        z = load_zoo()
    except InputError as exc:
        sec.text(f"No zoo tables in this installation ({exc}).")
        return
    s = zoo_salience_summary(z, n_steps=150 if ctx.quick else 300, seed=ctx.seed)
    res = s["tasks"]
    if not res:
        sec.text("No zoo task's best score clears random + 5 points: nothing to fit.")
        return
    first = next(iter(res.values()))
    skipped = [t for t in z.tasks["name"] if t not in res]
    sec.text(
        f"Real data: per-token losses of the zoo's {first['n_models']} final models (tokenizers "
        f"{', '.join(first['tokenizers'])}) on {first['n_texts']} validation texts, each model's "
        "losses mapped by Algorithm 1 onto the hashed-n-gram feature tokenizer (words), and "
        "their multiple-choice accuracies; train/validation/test split by size within each "
        f"tokenizer family ({first['n_test']} test models). Few texts, few models and scores "
        "within a few points of chance (160 items each, the same items for every model) make "
        "this a weak test; the numbers below are what it gives. Tasks whose best score never "
        "clears random + 5 points are not fitted"
        + (f" ({', '.join(skipped)})." if skipped else ".")
    )
    tab = pd.DataFrame(
        [
            {
                "task": t,
                "CSV test MSE": v["test_mse"],
                "all-token test MSE": v["all_token_test_mse"],
                "constant test MSE": v["constant_test_mse"],
                "CSV validation MSE": v["validation_mse"],
                "CSV train MSE": v["train_mse"],
                "best step": v["best_step"],
            }
            for t, v in res.items()
        ]
    )
    sec.table(
        tab,
        "Zoo: held-out (largest models) mean squared error of the accuracy, points^2; constant "
        "= the train models' mean score",
        "{:.3g}",
    )
    verdict = []
    for t, v in res.items():
        ratio = v["all_token_test_mse"] / v["test_mse"]
        verdict.append(
            f"{t}: CSV test MSE {v['test_mse']:.2e} vs all-token {v['all_token_test_mse']:.2e} "
            f"({max(ratio, 1 / ratio):.3g}x {'lower' if ratio > 1 else 'higher'} with the CSV) "
            "and constant "
            f"{v['constant_test_mse']:.2e}"
        )
    sec.text("; ".join(verdict) + ".")
    t0 = min(res, key=lambda t: res[t]["test_mse"] / res[t]["all_token_test_mse"])
    sec.figure(fit_figure(s["fits"][t0]), f"Zoo, {t0}: Eq. 2 fit on the CSV score")
    sec.numbers["zoo"] = res
