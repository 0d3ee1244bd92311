"""The shipped zoo tables show what real models show."""

from __future__ import annotations

import json

import numpy as np
import pytest

from lmforecast.compute.flops import training_flops
from lmforecast.report.builder import ReportContext
from lmforecast.supervised import SupervisedScalingLaw
from lmforecast.zoo import load_zoo
from lmforecast.zoo.model import zoo_architecture
from lmforecast.zoo.presets import get_preset


@pytest.fixture(scope="module")
def zoo():
    return load_zoo()


def test_bundled_zoo_is_the_full_build(zoo):
    meta = zoo.metadata
    assert meta["preset"] == "full"
    assert meta["config_hash"] == get_preset("full").config_hash()  # tables match the code
    assert len(zoo.runs) == len(meta["runs"])
    assert meta["versions"]["torch"].startswith("2.13.0")
    assert meta["wall_s_total"] > 0 and meta["seed"] == meta["config"]["seed"]


def test_flops_come_from_the_package_accounting(zoo):
    r = zoo.runs
    assert np.allclose(r["C"], training_flops(r["N"], r["D"], "6ND"), rtol=1e-5)
    for _, row in r.iterrows():
        arch = zoo_architecture(row["d_model"] / row["n_layers"], row["n_ctx"], row["vocab_size"])
        expected = training_flops(row["N"], row["D"], "F(N)", arch)
        assert row["C_FN"] == pytest.approx(float(expected), rel=1e-5)


def test_loss_falls_with_parameters_and_with_tokens(zoo):
    sup = zoo.supervised_runs()
    sup = sup.assign(ratio=(sup["D"] / sup["N"]).round())
    at20 = sup[sup["ratio"] == 20].sort_values("N")
    assert len(at20) >= 5 and np.all(np.diff(at20["loss"]) < 0)
    for _, g in sup.groupby("N"):
        g = g.sort_values("D")
        assert np.all(np.diff(g["loss"]) < 0)
    # checkpoints of every run: validation loss at the end well below the first checkpoint
    for _, g in zoo.checkpoints.groupby("model"):
        if len(g) > 1:
            assert g["loss"].iloc[-1] < g["loss"].iloc[0] - 0.3


_FITS: dict = {}


def _rel_errors(runs, form="chinchilla", key="law"):
    if (key, form) not in _FITS:  # one fit per (runs, form), shared by the tests below
        law = SupervisedScalingLaw(form=form, intervals=False).fit(runs)
        rel = law.predict(runs["N"].to_numpy(), runs["D"].to_numpy()) / runs["loss"] - 1
        _FITS[(key, form)] = (law, rel)
    return _FITS[(key, form)]


def test_law_runs_follow_the_documented_rule(zoo):
    sup, law_runs = zoo.supervised_runs(), zoo.law_runs()
    ratio = sup["D"] / sup["N"]
    assert set(law_runs["model"]) == set(sup.loc[ratio >= 20 * (1 - 1e-3), "model"])
    assert set(sup["model"]) - set(law_runs["model"]) == set(sup.loc[ratio < 6, "model"])
    # the fitted runs still span 1.5 decades of N and 4 tokens-per-parameter ratios x sizes
    assert np.log10(law_runs["N"].max() / law_runs["N"].min()) >= 1.5
    assert law_runs["N"].nunique() >= 5 and len(law_runs) >= 8


@pytest.mark.xfail(
    strict=True,
    reason="known gap (docs/zoo.md, Known limits): the zoo's loss steepens with N (concave in "
    "log-log) where every law of the family is convex; the best fits miss the largest size by "
    "8.2% (Busbridge form) and 9.2% (Chinchilla form)",
)
@pytest.mark.parametrize("form", ["chinchilla-gamma", "chinchilla"])
def test_supervised_law_fits_within_two_percent(zoo, form):
    # the supervised law fits it within 2% relative error
    _, rel = _rel_errors(zoo.law_runs(), form)
    assert np.abs(rel).max() < 0.02


@pytest.mark.parametrize("form", ["chinchilla-gamma", "chinchilla"])
def test_supervised_law_misses_only_where_the_curve_steepens(zoo, form):
    # what the zoo does meet (a regression guard on the measured errors): every run below the
    # largest size within 3.5%; the largest is the worst, and lies *below* the fitted curve
    # (prediction too high), as the steepening top of the curve (test_zoo_diagnostics) implies
    runs = zoo.law_runs()
    law, rel = _rel_errors(runs, form)
    largest = (runs["N"] == runs["N"].max()).to_numpy()
    assert np.abs(rel[~largest]).max() < 0.035
    assert np.abs(rel[largest]).min() > np.abs(rel[~largest]).max() and (rel[largest] > 0).all()


def test_supervised_law_explains_most_of_the_variation_with_every_run(zoo):
    sup = zoo.supervised_runs()
    law, rel = _rel_errors(sup, key="all")
    log_resid = np.log1p(rel)
    # with the under-trained runs too, the law removes >= 90% of the variance of log loss
    assert np.var(log_resid) < 0.1 * np.var(np.log(sup["loss"]))
    assert np.abs(rel).max() < 0.15
    assert law.params_["beta"] > 0.05  # more data lowers the loss


def test_arithmetic_rises_from_chance_to_well_above(zoo):
    random = zoo.tasks.set_index("name").loc["arith", "chance"]
    assert random == pytest.approx(100 * (100 / 19 + 55 / 10) / 155)  # single-digit table
    sup = zoo.supervised_runs().sort_values(["N", "D"])
    smallest = sup[sup["N"] == sup["N"].min()]
    assert smallest["arith"].max() <= 1.5 * random  # chance level
    # well above chance for the largest model: emergence (exact match of whole answers)
    largest = sup[sup["N"] == sup["N"].max()]
    assert largest["arith"].max() == sup["arith"].max() >= 10 * random
    # it rises with scale at the fixed ratio, and with data at a fixed size
    at20 = sup[np.isclose(sup["D"] / sup["N"], 20, rtol=0.01)]
    assert np.all(np.diff(at20["arith"]) >= 0) and at20["arith"].iloc[:3].max() < 2 * random
    for _, g in sup.groupby("N"):
        assert g["arith"].iloc[-1] >= g["arith"].iloc[0]
    # and with training: the best run's last checkpoint far above its first
    best = sup.loc[sup["arith"].idxmax(), "model"]
    ck = zoo.checkpoints[zoo.checkpoints["model"] == best]
    assert ck["arith"].iloc[-1] > ck["arith"].iloc[0] + 5 * random


def test_distilled_students_depend_on_teacher_loss(zoo):
    d = zoo.distillation
    assert d["teacher"].nunique() >= 3 and d.groupby(["N_S", "D_S"]).ngroups >= 4
    spreads = []
    for _, g in d.groupby(["N_S", "D_S"]):
        # different teachers give measurably different students
        spreads.append(g["L_S"].max() - g["L_S"].min())
        assert np.all(g["L_S"] > g["L_T"].min())  # no student beats the strongest teacher
    assert min(spreads) > 0.05 and max(spreads) > 0.4
    # capacity gap (Busbridge et al. 2025, Sec. 5.1): for some students the strongest teacher
    # is not the best one; a mid-sized teacher gives a lower student loss
    best_teacher_loss = d.loc[d.groupby(["N_S", "D_S"])["L_S"].idxmin(), "L_T"]
    assert (best_teacher_loss > d["L_T"].min()).any()
    # and distillation beats supervised training of the same student for a good teacher
    assert (
        d.groupby(["N_S", "D_S"])["L_S"].min() < d.groupby(["N_S", "D_S"])["L_S_supervised"].first()
    ).all()


def test_mixtures_move_domain_losses_the_right_way(zoo):
    r = zoo.runs[zoo.runs["kind"].isin(["mixture", "supervised"])]
    r = r[np.isclose(r["D"] / r["N"], 20, rtol=0.01)]
    sizes = 0
    for _, g in r.groupby("N"):
        if g["code_share"].nunique() < 4:
            continue
        sizes += 1
        lo, hi = g.loc[g["code_share"].idxmin()], g.loc[g["code_share"].idxmax()]
        assert hi["loss_code"] < lo["loss_code"] - 0.1  # more code, lower code loss
        # and less of the general source (prose + arithmetic 1:1), higher loss on it
        general = (g["loss_prose"] + g["loss_arith"]) / 2
        assert general[hi.name] > general[lo.name] + 0.02
    assert sizes >= 3


def test_token_losses_cover_every_model_and_both_tokenizers(zoo):
    texts = {t["text_id"]: t["text"] for t in zoo.texts()}
    recs = zoo.token_losses()
    assert {r["model"] for r in recs} == set(zoo.runs["model"])
    per_tok = {}
    for r in recs:
        assert r["offsets"][0][0] == 0 and r["offsets"][-1][1] == len(texts[r["text_id"]])
        per_tok.setdefault(r["model"], []).append(len(r["offsets"]) / len(texts[r["text_id"]]))
    kinds = zoo.runs.set_index("model")["tokenizer"]
    assert all(np.mean(v) == 1.0 for m, v in per_tok.items() if kinds[m] == "byte")
    assert all(np.mean(v) < 0.8 for m, v in per_tok.items() if kinds[m] == "bpe")


@pytest.mark.slow
def test_report_section_states_the_fit_and_held_out_error():
    from lmforecast.report.sections.zoo import build_section

    sec = build_section(ReportContext(quick=True))
    n = sec.numbers
    assert n["n_runs"] == len(load_zoo().runs)
    _, rel = _rel_errors(load_zoo().law_runs())
    assert n["supervised_max_rel_error"] == pytest.approx(np.abs(rel).max(), rel=1e-3)
    _, rel_gamma = _rel_errors(load_zoo().law_runs(), "chinchilla-gamma")
    assert n["supervised_gamma_max_rel_error"] == pytest.approx(np.abs(rel_gamma).max(), rel=1e-3)
    assert n["supervised_law_runs"] == len(load_zoo().law_runs())
    slopes = n["supervised_local_slopes"]
    assert len(slopes) >= 4 and n["supervised_steepening_steps"] == int(
        (np.diff(slopes) < -1e-9).sum()
    )
    assert np.isfinite(n["supervised_held_out_max_rel_error"])
    assert n["arith_best"] > n["arith_chance"]
    json.dumps(n)  # serialisable for report.json


def test_cli_show_summarises_the_bundled_zoo(cli):
    code, out, _ = cli("zoo", "show", "--json")
    info = json.loads(out)
    assert code == 0 and info["preset"] == "full" and info["checkpoints"] > 0
    code, _, err = cli("zoo", "show", "/nonexistent/zoo")
    assert code == 2 and "not a zoo tables folder" in err
