"""Distillation scaling law (Busbridge et al. 2025): law, accounting, preset findings, planning."""

import numpy as np
import pandas as pd
import pytest

from lmforecast.compute.allocation import compute_optimal
from lmforecast.compute.flops import forward_flops_per_token as F
from lmforecast.distill import DistillationScalingLaw, distillation_design
from lmforecast.distill.fitting import score_product_grid
from lmforecast.distill.planning import (
    SCENARIOS,
    choose_teacher,
    distillation_flops,
    plan_distillation,
)
from lmforecast.distill.reference import plan_slsqp
from lmforecast.distill.versus_supervised import crossover_compute
from lmforecast.errors import DomainWarning, InputError
from lmforecast.fitting import huber
from lmforecast.fitting.engine import Objective, clip_to_bounds, grid_to_array
from lmforecast.laws import Law, get_law
from lmforecast.laws.distillation import F1_FLOOR, DistillationLaw

TABLE6 = {
    "A'": 2243.0, "B'": 24181.0, "alpha'": 0.321, "beta'": 0.637, "gamma'": 0.764,
    "c0": 2.549, "c1": 522.6, "f1": 0.090, "d1": 1.315,
}  # fmt: skip


@pytest.fixture(scope="module")
def model():
    return DistillationScalingLaw.from_preset("busbridge2025")


def _random_inputs(n=40, seed=0):
    rng = np.random.default_rng(seed)
    return {
        "N_S": 10 ** rng.uniform(8, 10.5, n),
        "D_S": 10 ** rng.uniform(9, 12.5, n),
        "L_T": rng.uniform(1.5, 3.5, n),
        "L_sup": rng.uniform(1.8, 3.2, n),
    }


# ---- the law (Eq. 8 / Eq. 49) --------------------------------------------------------------
def test_log_space_form_equals_eq8_in_natural_space():
    law = get_law("busbridge-distillation")
    X = _random_inputs()
    got = law.predict(TABLE6, **X)
    L_T, Ls = X["L_T"], X["L_sup"]
    x = L_T / (Ls * 1.315)
    power = (2243.0 / X["N_S"] ** 0.321 + 24181.0 / X["D_S"] ** 0.637) ** 0.764
    want = L_T + L_T**-2.549 * (1 + x ** (1 / 0.09)) ** (-522.6 * 0.09) * power
    np.testing.assert_allclose(got, want, rtol=1e-13)


def test_analytic_jacobian_matches_finite_differences():
    law = get_law("busbridge-distillation")
    X = _random_inputs()
    theta = np.array([[7.0, 9.0, 0.3, 0.5, 0.8, 1.0, 1.2, 0.7, 0.2], law.from_natural(TABLE6)])
    theta[1, 6] = 3.0  # keep the bracket away from underflow so differences are measurable
    J = law.jacobian(theta, X)
    Jfd = Law.jacobian(law, theta, X)
    np.testing.assert_allclose(J, Jfd, rtol=1e-5, atol=1e-8)


def test_limits_infinite_student_and_very_weak_teacher_give_teacher_loss(model):
    # N_S, D_S -> inf: the power term vanishes, L_S -> L_T
    LS = model.predict(1e30, 1e40, 2.0)
    assert abs(LS - 2.0) < 1e-6
    # very weak teacher: L_S / L_T -> 1 (and L_S > L_T always: the law has no student-beats-teacher)
    LT = np.array([2.4, 2.6, 2.8, 3.0, 50.0])
    LS = model.predict(1e9, 2e10, LT)
    excess = (LS - LT) / LT
    assert np.all(excess[:-1] > 0) and np.all(np.diff(excess) < 0) and excess[-1] < 1e-12


def test_f1_floor_is_the_sharp_break_limit():
    law = get_law("busbridge-distillation")
    X = _random_inputs()
    p = dict(TABLE6, f1=F1_FLOOR, c1=2.0)
    got = law.predict(p, **X)
    x = X["L_T"] / (X["L_sup"] * p["d1"])
    power = (2243.0 / X["N_S"] ** 0.321 + 24181.0 / X["D_S"] ** 0.637) ** 0.764
    want = X["L_T"] + X["L_T"] ** -2.549 * np.maximum(1.0, x) ** -2.0 * power
    far = np.abs(np.log(x)) > 0.05  # the floor smooths the corner over |log x| ~ 10 f1
    np.testing.assert_allclose(got[far], want[far], rtol=1e-9)


def test_default_grid_is_app_f2_with_f1_zero_nudged():
    law = get_law("busbridge-distillation")
    G = grid_to_array(law, law.default_grid())
    assert G.shape == (216_000, 9)
    f1 = np.unique(G[:, law.param_names.index("f1")])
    assert f1[0] == F1_FLOOR and list(f1[1:]) == [0.5, 1.0, 1.5]


def test_separable_grid_scores_equal_the_engine_objective():
    law = get_law("busbridge-distillation")
    X = _random_inputs(60, seed=3)
    t = np.log(np.random.default_rng(1).uniform(2, 3, 60))
    starts, scores = score_product_grid(law, X, t, huber(1e-4), law.default_grid())
    G = clip_to_bounds(law, grid_to_array(law, law.default_grid()))
    np.testing.assert_array_equal(starts, G)
    idx = np.random.default_rng(2).choice(len(G), 2000, replace=False)
    ref = Objective(law, X, t, huber(1e-4)).batch(G[idx])
    np.testing.assert_allclose(scores[idx], ref, rtol=1e-12)


# ---- Eq. 9 ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name, lgt, pre",
    [("best-case", 0, 0), ("teacher-inference", 1, 0), ("teacher-pretraining", 0, 1),
     ("teacher-pretraining-inference", 1, 1)],
)  # fmt: skip
def test_eq9_accounting_per_scenario(name, lgt, pre):
    NS, DS, NT, DT = 1e9, 2e10, 7e9, 1.4e11
    fl = distillation_flops(NS, DS, NT, DT, name)
    # F(N) by hand, Eq. 69 with sigma1 n_ctx = 155.06, sigma2 n_vocab = 70,811 (METHODS [CALC])
    Fh = lambda N: 2 * N * (1 + 155.06 / N ** (1 / 3) + 70811 / N ** (2 / 3))  # noqa: E731
    assert fl["student_training"] == pytest.approx(3 * Fh(NS) * DS, rel=1e-4)
    assert fl["teacher_inference"] == pytest.approx(lgt * Fh(NT) * DS, rel=1e-4)
    assert fl["teacher_pretraining"] == pytest.approx(pre * 3 * Fh(NT) * DT, rel=1e-4)
    assert fl["total"] == pytest.approx(
        fl["student_training"] + fl["teacher_inference"] + fl["teacher_pretraining"]
    )


# ---- preset: numbers of METHODS 2.6 --------------------------------------------------------
def test_preset_is_table6(model):
    assert model.params_ == TABLE6
    assert model.supervised_.params_["E"] == 1.220
    assert model.result_.ci["c0"] == [2.425, 2.615]


@pytest.mark.parametrize(
    "NS, LS_star, LT_star, L_sup",
    [(1e8, 2.521, 2.33, 2.533), (1e9, 2.088, 1.96, 2.079), (1e11, 1.575, None, 1.587)],
)
def test_e6_consistency_infinite_data(model, NS, LS_star, LT_star, L_sup):
    """E.6: min over L_T of L_S(N_S, inf, L_T) ~ L(N_S, inf) (METHODS 2.6 [CALC])."""
    LT, LS = model.optimal_teacher_loss(NS, 1e25)
    assert float(LS) == pytest.approx(LS_star, abs=1.5e-3)
    if LT_star is not None:
        assert float(LT) == pytest.approx(LT_star, abs=0.01)
    assert float(model.supervised_loss(NS, 1e30)) == pytest.approx(L_sup, abs=1.5e-3)


def test_best_case_advantage_at_20_tokens_per_parameter(model):
    """METHODS [CALC]: at D_S = 20 N_S best-case distillation beats supervised by 0.16 (546M),
    0.12 (1B) and 0.06 (10B) nats."""
    NS = np.array([5.46e8, 1e9, 1e10])
    _, LS = model.optimal_teacher_loss(NS, 20 * NS)
    gain = model.supervised_loss(NS, 20 * NS) - LS
    np.testing.assert_allclose(gain, [0.16, 0.12, 0.06], atol=0.006)


def test_best_case_crossover_tokens_and_growth_with_student_size(model):
    """Finding 3: supervised eventually beats best-case distillation at a compute that grows
    with N_S; crossover tokens 4.7T, 3.0T, 4.5T, 16T, 28T (METHODS [CALC])."""
    NS = np.array([5.46e8, 1e9, 3e9, 7.75e9, 1e10])
    C = crossover_compute(model, NS, "best-case")
    assert np.all(np.isfinite(C)) and np.all(np.diff(C) > 0)
    tokens = C / (3 * F(NS))
    np.testing.assert_allclose(tokens / 1e12, [4.7, 3.0, 4.5, 16, 28], rtol=0.05)


def test_capacity_gap_is_u_shaped_in_teacher_loss(model):
    """Finding 2: for a fixed student, L_S first falls then rises as the teacher gets stronger."""
    LT = np.linspace(1.3, 3.0, 400)
    LS = model.predict(1e9, 2e10, LT)
    i = int(np.argmin(LS))
    assert 0 < i < LT.size - 1
    assert np.all(np.diff(LS[: i + 1]) <= 1e-12) and np.all(np.diff(LS[i:]) >= -1e-12)
    LT_star, LS_star = model.optimal_teacher_loss(1e9, 2e10)
    assert float(LS_star) <= LS.min() + 1e-9 and abs(float(LT_star) - LT[i]) < 0.01


def test_optimal_teacher_loss_decreases_with_student_size(model):
    """Finding 7 (Fig. 7): at fixed D_S, stronger students want stronger teachers."""
    NS = np.logspace(8, 11, 12)
    LT, LS = model.optimal_teacher_loss(NS, 1e12)
    assert np.all(np.diff(LT) < 0) and np.all(LS > LT)


def test_teacher_loss_below_E_warns(model):
    with pytest.warns(DomainWarning, match="irreducible"):
        model.predict(1e9, 2e10, 1.1)


# ---- planning (Eq. 10) ---------------------------------------------------------------------
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_plan_matches_the_papers_slsqp_and_spends_the_budget(model, scenario):
    for NS, C in [(1e9, 1e22), (1e10, 1e21)]:
        p = plan_distillation(model, NS, C, scenario)
        ref = plan_slsqp(model, NS, C, scenario, starts_per_axis=2)
        assert float(p.student_loss) <= ref["student_loss"] + 1e-5
        spent = p.flops_student_training + p.flops_teacher_inference + p.flops_teacher_pretraining
        assert float(spent) == pytest.approx(C, rel=1e-9)
        assert float(p.student_loss) == pytest.approx(
            float(model.predict(NS, p.student_tokens, p.teacher_loss)), rel=1e-12
        )


def test_supervised_at_least_as_good_when_teacher_pretraining_counts(model):
    """Finding 4: with delta_Pre = 1, supervised is at least as good (near-equal at very large
    compute) over C in [1e21, 1e26]; the 300M student is within 0.005 nats (E.6 makes its
    asymptotic distillation and supervised losses nearly equal)."""
    C = np.logspace(21, 26, 11)
    for scenario in ("teacher-pretraining", "teacher-pretraining-inference"):
        for NS in (3e8, 1e9, 3e9, 1e10):
            p = plan_distillation(model, NS, C, scenario)
            gap = p.student_loss - p.supervised_loss
            assert np.all(gap > (-0.005 if NS < 5e8 else 0.0))
            assert gap[-1] < 0.015  # near-equal at very large compute


def test_teacher_inference_overtrains_and_pretraining_teacher_is_compute_optimal(model):
    """Finding 5: teacher-inference D_T* hits the 1e17 bound; in the teacher-pretraining
    scenario the teacher is supervised-compute-optimal for its share of compute."""
    C = np.logspace(21, 23, 5)
    p = plan_distillation(model, 3e9, C, "teacher-inference")
    assert np.all(p.teacher_tokens == 1e17)
    p = plan_distillation(model, 3e9, C, "teacher-pretraining")
    opt = compute_optimal(model.supervised_.params_, p.flops_teacher_pretraining, "F(N)")
    np.testing.assert_allclose(p.teacher_params, opt.N, rtol=0.02)


def test_table3_allocation_trends(model):
    """Table 3 (pretraining + inference): small students at low compute spend most on teacher
    pretraining; at high compute they split student training / teacher inference evenly with
    little teacher pretraining; >= 10B students at high compute use all three terms."""

    def shares(NS, C):
        p = plan_distillation(model, NS, C, "teacher-pretraining-inference")
        return np.array([p.flops_student_training, p.flops_teacher_inference,
                         p.flops_teacher_pretraining]) / C  # fmt: skip

    for NS in (3e8, 1e9, 3e9):
        s = shares(NS, 1e21)
        assert s.argmax() == 2
        s = shares(NS, 1e25)
        assert s[2] < 0.1 and abs(s[0] - s[1]) < 0.15
    s = shares(1e10, 1e25)
    assert np.all(s > 0.15)
    assert shares(3e10, 1e26).min() > 0.2


def test_budget_too_small_and_unknown_scenario(model):
    with pytest.raises(InputError, match="too small"):
        plan_distillation(model, 3e9, 1e14, "best-case")
    with pytest.raises(InputError, match="unknown scenario"):
        plan_distillation(model, 3e9, 1e22, "cheap")
    with pytest.raises(InputError, match="positive"):
        plan_distillation(model, 3e9, -1.0, "best-case")


def test_choose_teacher_ranks_by_student_loss(model):
    teachers = pd.DataFrame({"N_T": [5.46e8, 1.82e9, 7.75e9, 7.75e9],
                             "D_T": [1.1e10, 3.6e10, 1.55e11, 5e12]})  # fmt: skip
    t = choose_teacher(model, teachers, 1e9, D_S=2e10, scenario="best-case")
    assert np.all(np.diff(t["L_S"]) >= 0)
    want = model.predict(1e9, 2e10, model.teacher_loss(teachers.N_T, teachers.D_T))
    assert t["L_S"].iloc[0] == pytest.approx(want.min())
    # with a compute budget and paid logits, bigger teachers leave fewer student tokens (Eq. 27)
    t = choose_teacher(model, teachers, 1e9, C=1e21, scenario="teacher-inference")
    t = t.sort_values("N_T")
    ds = 1e21 / (3 * F(1e9) + F(t["N_T"].to_numpy()))
    np.testing.assert_allclose(t["D_S"], ds)


def test_simulated_design_follows_the_protocols():
    d = distillation_design()
    assert len(d) > 697
    assert d["N_S"].min() == pytest.approx(1.434e8) and d["N_S"].max() == pytest.approx(1.261e10)
    assert d["N_T"].min() == pytest.approx(1.983e8) and d["N_T"].max() == pytest.approx(7.747e9)
    assert set(d["protocol"]) == {
        "fixed-M teacher / IsoFLOP student", "IsoFLOP teacher / fixed-M student",
        "fixed-M teacher / fixed-M student",
    }  # fmt: skip
    assert isinstance(get_law("busbridge-distillation"), DistillationLaw)


def test_plots_return_figures(model):
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure

    from lmforecast.plots.distill import (
        compute_optimal_allocations,
        isoflop_profiles,
        student_loss_contours,
    )

    C = np.logspace(20, 25, 8)
    plans = [plan_distillation(model, 1e9, C, s) for s in SCENARIOS]
    figs = [
        compute_optimal_allocations(plans),
        student_loss_contours(model, 1e12, np.linspace(1.5, 3, 20), np.logspace(8, 10, 10)),
        isoflop_profiles(model, 2.2, [1e20, 1e21]),
    ]
    assert all(isinstance(f, Figure) for f in figs)
    plt.close("all")


def test_choose_teacher_with_a_budget_compares_with_supervised_training_on_all_of_it(model):
    # the baseline was L(N_S, D_S) on the tokens left after each teacher's costs, which made
    # every teacher look better than training supervised (1e9 student at 1e21 FLOPs: supervised
    # on all of C reaches 2.221 and beats every teacher of the example table)
    from lmforecast.distill.planning import choose_teacher

    t = pd.DataFrame({"N_T": [1e9, 3e9, 7e9], "D_T": [2e10, 6e10, 1.4e11]})
    C = 1e21
    r = choose_teacher(model, t, 1e9, C=C, scenario="teacher-inference")
    full = float(model.supervised_loss(1e9, C / (3.0 * F(1e9))))
    assert np.allclose(r["supervised_loss"], full)
    assert (r["D_S"] < C / (3.0 * F(1e9))).all()  # the student's own tokens are fewer
    # with a token budget the comparison stays at equal student tokens
    r = choose_teacher(model, t, 1e9, D_S=2e10)
    assert np.allclose(r["supervised_loss"], model.supervised_loss(1e9, 2e10))


def test_plan_notes_flag_sizes_outside_the_papers_models(model):
    from lmforecast.distill import DistillationScalingLaw
    from lmforecast.distill.planning import plan_notes

    preset = DistillationScalingLaw.from_preset("busbridge2025")
    small = plan_distillation(preset, 1e9, 1e18, "teacher-pretraining-inference")
    assert float(small.teacher_params) < 1.03e8  # a tiny teacher at a tiny budget
    assert any("N_T*" in n and "extrapolates Eq. 8" in n for n in plan_notes(preset, small))
    big = plan_distillation(preset, 1e9, 1e22, "teacher-pretraining-inference")
    assert plan_notes(preset, big) == []
