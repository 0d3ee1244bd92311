"""The teacher loss's own uncertainty in distillation intervals (docs/distill.md, "The teacher's
uncertainty"; distill/teacher_uncertainty.py): where L_T = L(N_T, D_T) is a forecast of the
supervised law (Eq. 1), each parameter draw b of Eq. 8 uses L_T exp(s_T u_b), s_T the log-sd of
that law's own 90% interval at the teacher and u_b fixed normal quantiles; a measured teacher
loss gets no teacher term. Predict, plan and choose-teacher intervals, saved fits (bit for bit;
old fits unchanged), basis lines and verdicts."""

from __future__ import annotations

import copy
import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.special import ndtri
from scipy.stats import norm

from lmforecast import examples
from lmforecast.distill import DistillationScalingLaw
from lmforecast.distill import teacher_uncertainty as tu
from lmforecast.distill.checks import verdict
from lmforecast.distill.plan_intervals import plan_interval
from lmforecast.distill.planning import choose_teacher, plan_distillation
from lmforecast.errors import InputError
from lmforecast.fitting import FitResult
from lmforecast.laws import get_law
from lmforecast.laws.distillation import DistillationLaw
from lmforecast.store import dump_json
from lmforecast.supervised import SupervisedScalingLaw

SMALL_GRID = {
    "log_A'": [7.7], "log_B'": [10.1], "alpha'": [0.32], "beta'": [0.64], "gamma'": [0.76],
    "c0": [2.5], "c1": [522.6], "f1": [0.09], "log_d1": [0.27],
}  # fmt: skip
N_S, D_S = 1e9, 2e10
# a teacher of the student's own size and tokens: L_T = L~_S, past the capacity-gap break,
# where L_S follows L_T (a near-optimal teacher barely moves L_S: dL_S/dL_T ~ 0 at L_T*)
WEAK = (1e9, 2e10)
STRONG = (7e9, 1.4e11)
LAW = get_law("busbridge-distillation")
Z90 = float(norm.ppf(0.95))
PREDICT = ["distill", "predict", "--student-params", N_S, "--student-tokens", D_S]


@pytest.fixture(scope="module")
def preset():
    return DistillationScalingLaw.from_preset("busbridge2025")


def _example_runs() -> pd.DataFrame:
    runs = pd.read_csv(examples.path("distill/distill_runs.csv"))
    sup = pd.read_csv(examples.path("supervised/runs.csv"))
    sup = sup.rename(columns={"N": "N_S", "D": "D_S", "loss": "L_S"})
    return pd.concat([runs, sup[["N_S", "D_S", "L_S"]]])  # supervised rows: L_T left empty


SUPERVISED_FITS: dict = {}


def _share_supervised_fits(mp: pytest.MonkeyPatch) -> None:
    """Distillation fits in this module of runs with the same supervised rows (the example runs:
    the `fit` fixture and the CLI fit) take one fit of Eq. 1 to those rows: `resolve_supervised`
    is deterministic (App. F.1 settings fixed by the Huber delta), so each later fit gets a copy
    of the law it would fit again."""
    from lmforecast.distill import model as distill_model

    real = distill_model.resolve_supervised

    def shared(given, sup_runs, lt_col, huber_delta):
        if given is not None:
            return real(given, sup_runs, lt_col, huber_delta)
        rows = pd.util.hash_pandas_object(sup_runs, index=False).to_numpy().tobytes()
        key = (tuple(sup_runs.columns), rows, lt_col, huber_delta)
        if key not in SUPERVISED_FITS:
            SUPERVISED_FITS[key] = real(given, sup_runs, lt_col, huber_delta)
        return copy.deepcopy(SUPERVISED_FITS[key])

    mp.setattr(distill_model, "resolve_supervised", shared)


@pytest.fixture(scope="module")
def fit():
    """The bundled example runs with their supervised rows (the supervised law is fitted to them,
    with its calibrated interval), 4 resamples; a one-start grid keeps it quick. The tests on it
    compare against by-hand rebuilds or saved copies draw by draw (teacher scores +-0.32,
    +-1.15, none zero), which hold at any resample count."""
    with warnings.catch_warnings(), pytest.MonkeyPatch.context() as mp:
        warnings.simplefilter("ignore")
        _share_supervised_fits(mp)
        return DistillationScalingLaw(
            grid=SMALL_GRID, n_polish=1, bootstrap=4, boot_polish=1, boot_grid=SMALL_GRID,
            n_jobs=1,
        ).fit(_example_runs())  # fmt: skip


@pytest.fixture(scope="module")
def plan_ivs(preset):
    """`plan_interval(model, N_S, 1e22, scenario)` at its defaults (90%, 100 draws) for the
    preset ("preset") and the preset with its teacher held at its point ("point"), each computed
    once: test_plans_that_train_or_run_the_teacher_get_wider, the CLI plan test and the
    benchmark's plan rows all make these same calls (plan_interval is deterministic: fixed
    draws and teacher scores). Read only: no test changes the returned intervals."""
    models = {"preset": preset, "point": _point_only(preset)}
    cache = {}

    def get(which, sc):
        if (which, sc) not in cache:
            cache[which, sc] = plan_interval(models[which], N_S, 1e22, sc)
        return cache[which, sc]

    get.models = models
    return get


def _with_supervised(model, sup):
    return DistillationScalingLaw.from_result(model.result_, supervised=sup)


def _noisier(sup: SupervisedScalingLaw, noise: float) -> SupervisedScalingLaw:
    """A copy of a supervised law whose interval has run scatter `noise` (more uncertain)."""
    s = SupervisedScalingLaw.from_result(FitResult.from_dict(copy.deepcopy(sup.result_.to_dict())))
    s.result_.meta["intervals"]["noise"] = noise
    return s


def _point_only(model):
    """The same law with the supervised law given as coefficients (no uncertainty: s_T = 0)."""
    return _with_supervised(model, dict(model.supervised_.params_))


def _sd_by_hand(model, NT, DT, kind="prediction"):
    """sd on log(L_T - E) putting the supervised 90% interval's upper end at the teacher."""
    NT, DT = np.broadcast_arrays(np.asarray(NT, float), np.asarray(DT, float))
    sup, E = model.supervised_, model.E_
    try:  # a preset has no bootstrap-only interval: its forecast one
        _, hi = sup.predict_interval(NT, DT, level=0.9, kind=kind)
    except ValueError:
        _, hi = sup.predict_interval(NT, DT, level=0.9)
    return np.log((hi - E) / (sup.predict(NT, DT) - E)) / Z90


def _shifted(model, LT, factor):
    return model.E_ + (LT - model.E_) * factor


def _scores_by_hand(B):
    return ndtri((np.arange(B) + 0.5) / B)[np.random.default_rng(tu.TEACHER_SEED).permutation(B)]


def _arr(iv):
    return np.array([np.asarray(v, float) for v in iv])


# ---- the pieces ----------------------------------------------------------------------------
def test_scores_are_fixed_normal_quantiles_in_a_fixed_order():
    u = tu.teacher_scores(1000)
    assert np.array_equal(np.sort(u), ndtri((np.arange(1000) + 0.5) / 1000))
    assert np.array_equal(u, tu.teacher_scores(1000))  # no state between calls
    assert not np.all(np.diff(u) > 0)  # permuted: draw order says nothing about the score
    assert abs(np.corrcoef(np.arange(1000), u)[0, 1]) < 0.1


@pytest.mark.parametrize("which", ["preset", "fit"])
def test_teacher_log_sd_is_the_supervised_laws_own_90pct_interval(which, preset, fit):
    m = {"preset": preset, "fit": fit}[which]
    NT, DT = np.array([[3e8, 1e9, 7e9]]), np.array([[6e9], [1.4e11]])  # broadcast to (2, 3)
    s = tu.teacher_log_sd(m, NT, DT)
    assert s.shape == (2, 3) and np.all(s > 0)
    np.testing.assert_allclose(s, _sd_by_hand(m, NT, DT), rtol=1e-12)
    # a supervised law given as coefficients carries no uncertainty
    assert np.array_equal(tu.teacher_log_sd(_point_only(m), NT, DT), np.zeros((2, 3)))


def test_teacher_far_beyond_the_supervised_runs_gets_its_extrapolation_spread(preset):
    # D_T at the planner's 1e17-token bound lies ~1e5x past the paper's runs: the supervised
    # interval's extrapolation term (docs/trust.md) makes s_T ten times the in-range one
    near, far = tu.teacher_log_sd(preset, [3e9, 3e9], [6e10, 1e17])
    assert 0.005 < near < 0.03 and far > 5 * near


def test_paired_draws_equal_a_loop_over_draws(fit):
    NS, DS, LT = np.array([3e8, 1e9, 3e9]), np.array([6e9, 2e10, 6e10]), np.array([2.1, 2.4, 2.2])
    s = np.array([0.01, 0.02, 0.0])
    T, shape = tu.shifted_log_draws(fit, NS, DS, LT, s)
    th, u = fit.parameter_draws(), tu.teacher_scores(len(fit.parameter_draws()))
    X = fit._inputs(NS, DS, LT)
    for b in range(len(th)):
        Xb = dict(X, L_T=_shifted(fit, LT, np.exp(u[b] * s)))
        np.testing.assert_array_equal(T[b], LAW.predict_target(th[b : b + 1], Xb)[0])
    assert shape == (3,)


# ---- predict_interval ----------------------------------------------------------------------
def test_forecast_teacher_is_wider_than_the_same_loss_measured_and_grows_with_the_laws_spread(
    preset,
):
    LT = float(preset.teacher_loss(*WEAK))
    meas = _arr(preset.predict_interval(N_S, D_S, LT))
    widths = []
    for noise in (0.005, 0.02, 0.05):  # 0.005: the preset's own assumed run scatter
        m = _with_supervised(preset, _noisier(preset.supervised_, noise))
        fc = _arr(m.predict_interval(N_S, D_S, N_T=WEAK[0], D_T=WEAK[1]))
        assert fc[0] < meas[0] and fc[1] > meas[1]  # wider on both sides
        assert np.array_equal(_arr(m.predict_interval(N_S, D_S, LT)), meas)  # measured: as is
        widths.append(fc[1] - fc[0])
    assert widths[0] < widths[1] < widths[2]
    assert widths[0] > 2 * (meas[1] - meas[0])  # L_S follows L_T here: the teacher term counts
    # no uncertainty in the supervised law: the forecast teacher is held at its point
    p = _point_only(preset)
    LTp = p.teacher_loss(*WEAK)
    assert np.array_equal(
        _arr(p.predict_interval(N_S, D_S, N_T=WEAK[0], D_T=WEAK[1])),
        _arr(p.predict_interval(N_S, D_S, LTp)),
    )


@pytest.mark.parametrize("which", ["preset", "fit"])
@pytest.mark.parametrize("teacher", [WEAK, STRONG])
@pytest.mark.parametrize("level, kind", [(0.9, "prediction"), (0.8, "confidence")])
def test_interval_is_the_paired_draws_computed_by_hand(which, teacher, level, kind, preset, fit):
    """Eq. 8 in natural space at every draw b with its teacher E + (L_T - E) exp(s_T u_b), the run
    noise
    on 64 normal quantile nodes (prediction), then the percentiles."""
    m = {"preset": preset, "fit": fit}[which]
    NT, DT = teacher
    th = m.parameter_draws()
    u = _scores_by_hand(len(th))
    s = float(_sd_by_hand(m, NT, DT, "forecast" if kind == "prediction" else "confidence"))
    LT, Lsup = m.supervised_.predict(NT, DT), m.supervised_.predict(N_S, D_S)
    LS = np.array([DistillationLaw.loss(LAW.to_natural(t), N_S, D_S,
                                        _shifted(m, LT, np.exp(s * ub)), Lsup)
                   for t, ub in zip(th, u)])  # fmt: skip
    logs = np.log(LS)
    sigma = m.noise_scale_ if kind == "prediction" else 0.0
    if sigma > 0:
        nodes = ndtri((np.arange(64) + 0.5) / 64)
        logs = (logs[:, None] + sigma * nodes[None, :]).ravel()
    a = (1 - level) / 2
    want = np.exp(np.quantile(logs, [a, 1 - a]))
    got = _arr(m.predict_interval(N_S, D_S, N_T=NT, D_T=DT, level=level, kind=kind))
    np.testing.assert_allclose(got, want, rtol=1e-9)


def test_monte_carlo_with_random_pairing_agrees_and_tells_the_teacher_term_apart(preset):
    """Independent check: 100 random teacher scores per draw (100,000 pairs) give the same
    percentiles as the 1,000 paired quantile scores, within the Monte Carlo error of the latter;
    the measured-teacher interval is far outside that tolerance."""
    NT, DT = WEAK
    th = preset.parameter_draws()
    s = float(_sd_by_hand(preset, NT, DT))
    LT, Lsup = preset.supervised_.predict(NT, DT), preset.supervised_.predict(N_S, D_S)
    z = np.random.default_rng(0).standard_normal((len(th), 100))
    P = {q.natural_name: q.to_natural(th[:, j])[:, None] for j, q in enumerate(LAW.parameters)}
    LS = DistillationLaw.loss(P, N_S, D_S, _shifted(preset, LT, np.exp(s * z)), Lsup)
    mc = np.exp(np.quantile(np.log(LS), [0.05, 0.95]))
    got = _arr(preset.predict_interval(N_S, D_S, N_T=NT, D_T=DT))
    meas = _arr(preset.predict_interval(N_S, D_S, LT))
    tol = 1.5e-3 * float(preset.predict(N_S, D_S, LT))
    assert np.all(np.abs(got - mc) < tol), (got, mc)
    assert np.all(np.abs(meas - mc) > 3 * tol), (meas, mc)


def test_intervals_are_reproducible_and_vectorised(preset):
    NT, DT = np.array([1e9, 3e9, 7e9]), np.array([2e10, 6e10, 1.4e11])
    a = _arr(preset.predict_interval(N_S, D_S, N_T=NT, D_T=DT))
    assert np.array_equal(a, _arr(preset.predict_interval(N_S, D_S, N_T=NT, D_T=DT)))
    for i in range(3):  # each teacher as if alone: s_T per teacher, the same scores
        one = _arr(preset.predict_interval(N_S, D_S, N_T=NT[i], D_T=DT[i]))
        np.testing.assert_array_equal(one, a[:, i])


def test_a_teacher_that_said_distill_measured_can_be_too_close_to_call_forecast(preset):
    """Verdicts follow the wider interval: over student token budgets, find where the same
    teacher loss gives 'distill' measured and 'too close to call' when it is a forecast."""
    NT, DT = 3e9, 6e10
    DS = np.logspace(np.log10(2e10), 11, 80)
    LT = float(preset.teacher_loss(NT, DT))
    LS, sup = preset.predict(N_S, DS, LT), preset.supervised_loss(N_S, DS)
    meas = verdict(LS, sup, *preset.predict_interval(N_S, DS, LT))
    fc_lo, fc_hi = preset.predict_interval(N_S, DS, N_T=NT, D_T=DT)
    fc = verdict(LS, sup, fc_lo, fc_hi)
    flips = (meas == "distill") & (fc == "too close to call")
    assert flips.any(), "no budget where the teacher's uncertainty leaves the verdict open"
    assert np.all((fc_lo[flips] <= sup[flips]) & (sup[flips] <= fc_hi[flips]))
    assert np.all(LS[flips] < sup[flips])  # the point still says distill: the interval decides


# ---- plans ---------------------------------------------------------------------------------
def test_plan_interval_by_hand_with_each_draws_teacher_shifted(preset):
    """Each draw b re-plans with every teacher loss L(N_T, D_T) as E + (L - E) exp(u_b s_T), s_T
    at the point plan's (N_T*, D_T*): rebuilt here from public pieces (a per-draw model whose
    teacher_loss is overridden), then the percentiles; the plan itself is inside."""
    # 10 draws: the rebuild matches draw by draw, so its percentiles agree at any count
    sc, C, B = "teacher-pretraining-inference", 1e22, 10
    got = plan_interval(preset, N_S, C, sc, max_draws=B)
    p = plan_distillation(preset, N_S, C, sc)
    s = float(_sd_by_hand(preset, p.teacher_params, p.teacher_tokens))
    u, sup = _scores_by_hand(B), preset.supervised_
    rows = {k: [] for k in got}
    for th, ub in zip(preset.parameter_draws()[:B], u):
        m = copy.copy(preset)
        m.params_ = LAW.to_natural(th)
        f = float(np.exp(ub * s))
        m.teacher_loss = lambda NT, DT, f=f: _shifted(preset, sup.predict(NT, DT), f)
        q = plan_distillation(m, N_S, C, sc)
        np.testing.assert_allclose(  # the reported L_T* is the shifted teacher's
            q.teacher_loss, _shifted(preset, sup.predict(q.teacher_params, q.teacher_tokens), f),
            rtol=1e-12,
        )  # fmt: skip
        for k in rows:
            rows[k].append(np.log(float(getattr(q, k))))
    for k, v in rows.items():
        lo, hi = np.exp(np.quantile(v, [0.05, 0.95]))
        point = float(getattr(p, k))
        lo, hi = min(lo, point), max(hi, point)
        np.testing.assert_allclose([float(got[k][0]), float(got[k][1])], [lo, hi], rtol=1e-9)


@pytest.mark.parametrize("sc", ["teacher-inference", "teacher-pretraining",
                                "teacher-pretraining-inference"])  # fmt: skip
def test_plans_that_train_or_run_the_teacher_get_wider(plan_ivs, sc):
    # "point": the same plan, teacher held at its point (_point_only)
    a = plan_ivs("preset", sc)  # the default 100 draws: with few, the paired
    b = plan_ivs("point", sc)  # teacher scores are too rough to compare widths
    assert a["teacher_params"] != b["teacher_params"]  # each draw re-plans its teacher

    def width(iv, k):
        return float(iv[k][1] - iv[k][0])

    assert width(a, "teacher_loss") > 1.5 * width(b, "teacher_loss")
    assert width(a, "student_loss") > width(b, "student_loss")


def test_best_case_plan_interval_is_unchanged_by_the_teachers_uncertainty(preset):
    point = _point_only(preset)
    # 4 draws (teacher scores +-0.32, +-1.15): a teacher term drawn here would move every draw
    best_a = plan_interval(preset, N_S, 1e22, "best-case", max_draws=4)
    best_b = plan_interval(point, N_S, 1e22, "best-case", max_draws=4)
    for k in best_a:  # the best case chooses L_T freely: no teacher forecast, no term
        np.testing.assert_allclose(_arr(best_a[k]), _arr(best_b[k]), rtol=1e-12)


def test_plan_interval_broadcasts_with_a_teacher_term_per_plan_point(preset):
    sc = "teacher-pretraining"
    NS, C = np.array([[1e9], [3e9]]), np.array([1e21, 1e22])
    iv = plan_interval(preset, NS, C, sc, max_draws=4)  # per point, draw by draw: any count
    assert all(lo.shape == hi.shape == (2, 2) for lo, hi in iv.values())
    for i in range(2):
        for j in range(2):
            one = plan_interval(preset, NS[i, 0], C[j], sc, max_draws=4)
            for k in iv:
                np.testing.assert_allclose(
                    [iv[k][0][i, j], iv[k][1][i, j]], _arr(one[k]), rtol=1e-12
                )


# ---- choose-teacher ------------------------------------------------------------------------
@pytest.mark.parametrize("budget", [{"D_S": D_S}, {"C": 1e22, "scenario": "teacher-inference"}])
def test_choose_teacher_forecast_teachers_get_their_own_sd_measured_ones_none(preset, budget):
    t = pd.read_csv(examples.path("distill/teachers.csv"))
    by_size = choose_teacher(preset, t, N_S, **budget)
    tm = t.assign(L_T=preset.teacher_loss(t["N_T"].to_numpy(), t["D_T"].to_numpy()))
    meas = choose_teacher(preset, tm, N_S, **budget)
    assert np.array_equal(by_size["N_T"], meas["N_T"])  # same ranking (same point L_S)
    ok = by_size["L_S"].notna().to_numpy()
    w_size = (by_size["L_S_hi"] - by_size["L_S_lo"]).to_numpy()[ok]
    w_meas = (meas["L_S_hi"] - meas["L_S_lo"]).to_numpy()[ok]
    # the weak teacher (L_T = L~_S, where L_S follows L_T) widens most; near the capacity-gap
    # optimum L_S hardly depends on L_T and the paired scores leave the width within a few %
    assert w_size.sum() > w_meas.sum() and np.max(w_size / w_meas) > 2
    assert np.min(w_size / w_meas) > 0.95
    r = by_size[ok]
    lo, hi = preset.predict_interval(N_S, r["D_S"].to_numpy(), N_T=r["N_T"], D_T=r["D_T"])
    assert np.array_equal(r["L_S_lo"], lo) and np.array_equal(r["L_S_hi"], hi)
    r = meas[ok]
    lo, hi = preset.predict_interval(N_S, r["D_S"].to_numpy(), r["L_T"].to_numpy())
    assert np.array_equal(r["L_S_lo"], lo) and np.array_equal(r["L_S_hi"], hi)


# ---- saved fits ----------------------------------------------------------------------------
def _same_intervals(a, b):
    NT, DT = np.array([1e9, 7e9]), np.array([2e10, 1.4e11])
    ia = _arr(a.predict_interval([N_S, 3e9], D_S, N_T=NT, D_T=DT))
    ib = _arr(b.predict_interval([N_S, 3e9], D_S, N_T=NT, D_T=DT))
    assert np.array_equal(ia, ib)
    pa = plan_interval(a, N_S, 1e21, "teacher-pretraining-inference", max_draws=8)
    pb = plan_interval(b, N_S, 1e21, "teacher-pretraining-inference", max_draws=8)
    for k in pa:
        assert np.array_equal(_arr(pa[k]), _arr(pb[k])), k
    t = pd.DataFrame({"N_T": NT, "D_T": DT})
    pd.testing.assert_frame_equal(
        choose_teacher(a, t, N_S, D_S=D_S), choose_teacher(b, t, N_S, D_S=D_S), check_exact=True
    )


@pytest.mark.parametrize("which", ["preset", "fit"])
def test_saved_fit_gives_the_same_intervals_bit_for_bit(which, preset, fit, tmp_path):
    m = {"preset": preset, "fit": fit}[which]
    assert "supervised_fit" in m.result_.meta
    text = m.to_json()
    back = DistillationScalingLaw.from_json(text)
    path = tmp_path / "fit.json"
    m.save(path)
    loaded = DistillationScalingLaw.load(path)
    assert back.to_json() == loaded.to_json() == text
    assert np.array_equal(tu.teacher_log_sd(loaded, 7e9, 1.4e11), tu.teacher_log_sd(m, 7e9, 1.4e11))
    _same_intervals(m, back)
    _same_intervals(m, loaded)


def test_a_saved_fit_without_its_supervised_law_is_refused(fit, tmp_path, cli):
    d = fit.to_dict()
    del d["meta"]["supervised_fit"]
    p = tmp_path / "nosup.json"
    dump_json(d, p)
    with pytest.raises(InputError, match="field 'meta.supervised_fit': is missing") as ei:
        DistillationScalingLaw.load(p)
    assert "\n" not in str(ei.value)
    code, out, err = cli(*PREDICT, "--teacher-loss", 2.2, "--coefficients", p)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "'meta.supervised_fit': is missing" in err


@pytest.mark.parametrize(
    "edit, needle",
    [
        (lambda d: d["meta"].__setitem__("supervised", {**d["meta"]["supervised"], "E": 1.0}),
         "'meta.supervised.E': differs from meta.supervised_fit.params"),
        (lambda d: d["meta"]["supervised_fit"].__setitem__("theta", [1.0, 2.0]),
         "'meta.supervised_fit.theta': must have 6 entries"),
        (lambda d: d["meta"]["supervised_fit"]["meta"]["intervals"].__setitem__("noise", -1.0),
         "'meta.intervals.noise'"),
    ],
)  # fmt: skip
def test_hand_edited_supervised_fit_is_refused_naming_the_field(fit, tmp_path, cli, edit, needle):
    d = fit.to_dict()
    edit(d)
    p = tmp_path / "bad.json"
    dump_json(d, p)
    with pytest.raises(InputError, match=r"meta\.(supervised|intervals)") as ei:
        DistillationScalingLaw.load(p)
    assert needle in str(ei.value) and str(p) in str(ei.value)
    code, out, err = cli(*PREDICT, "--teacher-loss", 2.2, "--coefficients", p)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    # from JSON text too (it skipped the distillation checks: the edit loaded silently)
    with pytest.raises(InputError, match=r"meta\.(supervised|intervals)") as ei:
        DistillationScalingLaw.from_json(p.read_text())
    assert needle in str(ei.value)


# ---- the CLI -------------------------------------------------------------------------------
def test_cli_predict_by_size_prints_the_drawn_teacher_line(cli, preset):
    args = [*PREDICT, "--teacher-params", STRONG[0], "--teacher-tokens", STRONG[1]]
    sd = f"{float(tu.teacher_log_sd(preset, *STRONG)):.2g}"
    line = tu.TEACHER_DRAWN.format(sd=sd)
    assert line.startswith("teacher loss L_T drawn from the supervised law's 90% prediction")
    code, out, _ = cli(*args)
    assert code == 0 and line in out and f"sd {sd} on log(L_T - E)" in out
    code, out, _ = cli(*args, "--json")
    d = json.loads(out)
    assert code == 0 and d["interval_basis"].endswith("; " + line)
    lo, hi = preset.predict_interval(N_S, D_S, N_T=STRONG[0], D_T=STRONG[1])
    assert d["interval"] == [float(lo), float(hi)]
    code, out, _ = cli(*PREDICT, "--teacher-loss", d["teacher_loss"], "--json")
    assert "teacher loss" not in json.loads(out)["interval_basis"]  # measured: no teacher line


def test_cli_plan_and_choose_teacher_say_the_sd_they_used(cli, preset, plan_ivs, tmp_path):
    args = ["distill", "plan", "--student-params", N_S, "--flops", 1e22, "--json"]
    d = json.loads(cli(*args, "--scenario", "teacher-pretraining-inference")[1])
    sd = tu.teacher_log_sd(preset, d["teacher_params"], d["teacher_tokens"])
    assert d["interval_basis"].endswith("; " + tu.TEACHER_DRAWN.format(sd=f"{float(sd):.2g}"))
    iv = plan_ivs("preset", "teacher-pretraining-inference")  # plan_interval at its defaults
    assert d["intervals"] == {k: [float(lo), float(hi)] for k, (lo, hi) in iv.items()}
    best = json.loads(cli(*args)[1])  # best case: L_T* chosen freely, no teacher forecast
    assert "teacher loss" not in best["interval_basis"]
    t = pd.read_csv(examples.path("distill/teachers.csv"))
    p = tmp_path / "t.csv"
    t.to_csv(p, index=False)
    ch = ["distill", "choose-teacher", "--student-params", N_S, "--student-tokens", D_S]
    code, out, _ = cli(*ch, "--teachers", p, "--json")
    s = tu.teacher_log_sd(preset, t["N_T"].to_numpy(), t["D_T"].to_numpy())
    rng = f"{s.min():.2g} to {s.max():.2g}"
    assert (
        code == 0
        and f"(log-normal above the law's E, sd {rng} on log(L_T - E))"
        in json.loads(out)["interval_basis"]
    )
    t.assign(L_T=preset.teacher_loss(t["N_T"].to_numpy(), t["D_T"].to_numpy())).to_csv(
        p, index=False
    )
    code, out, _ = cli(*ch, "--teachers", p, "--json")
    assert code == 0 and "teacher loss" not in json.loads(out)["interval_basis"]


@pytest.mark.slow
def test_cli_fit_of_the_example_runs_keeps_the_teachers_uncertainty(cli, tmp_path, monkeypatch):
    """docs/distill.md's example fit (bundled runs, supervised rows) through the CLI, with 2
    resamples (the teacher's sd is the fitted supervised law's, whatever their number): the saved
    fit forecasts the teacher with that sd, exactly as the same fit in memory. The in-memory fit
    is the estimator the CLI fitted (kept by a wrapper of `fit`), checked to have the library's
    settings for these flags and the file's rows, so the one fit is not repeated. Its supervised
    law is fitted to the same rows as the `fit` fixture's, once (`_share_supervised_fits`)."""
    runs = tmp_path / "both.csv"
    _example_runs().to_csv(runs, index=False, float_format="%.17g")
    out_path = tmp_path / "fit.json"
    fitted, real_fit = [], DistillationScalingLaw.fit

    def keep(self, data=None, **kw):
        fitted.append((self, data.copy()))
        return real_fit(self, data, **kw)

    monkeypatch.setattr(DistillationScalingLaw, "fit", keep)
    _share_supervised_fits(monkeypatch)
    code, _, err = cli("distill", "fit", "--runs", runs, "--bootstrap", 2, "--jobs", 1,
                       "--out", out_path, "--quiet", "--json")  # fmt: skip
    assert code == 0, err
    monkeypatch.undo()
    [(mem, data)] = fitted
    want = DistillationScalingLaw(bootstrap=2, n_jobs=1).get_params()
    got = mem.get_params()
    assert {**got, "fixed": got["fixed"] or None} == want
    pd.testing.assert_frame_equal(data, pd.read_csv(runs), check_exact=True)
    m = DistillationScalingLaw.load(out_path)
    sd = float(tu.teacher_log_sd(m, *STRONG))
    assert 0 < sd < 0.05
    args = [*PREDICT, "--teacher-params", STRONG[0], "--teacher-tokens", STRONG[1]]
    d = json.loads(cli(*args, "--coefficients", out_path, "--json")[1])
    assert d["interval_basis"].endswith(tu.TEACHER_DRAWN.format(sd=f"{sd:.2g}"))
    lo, hi = mem.predict_interval(N_S, D_S, N_T=STRONG[0], D_T=STRONG[1])
    assert d["interval"] == [float(lo), float(hi)]


def test_drawn_teachers_stay_above_E_even_where_the_supervised_interval_is_wide(preset):
    """Teacher draws stay above the supervised law's E: the reducible part L_T - E is drawn, as
    a log-normal on L_T itself would put draws below E where the interval is wide (a plan's
    teacher at the 1e17-token bound: L_T* lower end 1.346 under E = 1.539 with a user's
    chinchilla fit)."""
    E = preset.E_
    s = tu.teacher_log_sd(preset, 3e9, 1e17)
    assert s > 0.1  # far out: wide
    u = tu.teacher_scores(1000)
    LT = float(preset.teacher_loss(3e9, 1e17))
    draws = tu.shift_teacher(LT, np.exp(u * s), E)
    assert draws.min() > E and np.isclose(np.median(draws), LT)
    # the upper end matches the supervised 90% interval's
    _, hi = preset.supervised_.predict_interval(3e9, 1e17, level=0.9)
    np.testing.assert_allclose(np.quantile(draws, 0.95), hi, rtol=2e-3)
    iv = plan_interval(preset, N_S, 1e22, "teacher-inference", max_draws=40)
    assert iv["teacher_loss"][0] > E


def test_confidence_intervals_draw_the_teacher_from_the_laws_bootstrap_spread(fit):
    """kind="confidence" (the laws' own uncertainty): the teacher from the supervised law's
    bootstrap-only interval, narrower than its forecast interval (which adds run scatter and
    the extrapolation term); prediction intervals use the forecast one."""
    conf = tu.teacher_log_sd(fit, *WEAK, kind="confidence")
    pred = tu.teacher_log_sd(fit, *WEAK)
    assert 0 < conf < pred
    np.testing.assert_allclose(conf, _sd_by_hand(fit, *WEAK, kind="confidence"), rtol=1e-12)


def test_the_teacher_term_benchmark_runs_and_prints_the_docs_rows(capsys, monkeypatch, plan_ivs):
    """benchmarks/distill_teacher_term.py prints the table of docs/distill.md (preset rows:
    the same numbers as the committed doc). Its plan rows call plan_interval(preset or its
    point-only copy, 1e9, 1e22, scenario) at the defaults, which test_plans_that_train_or_run_
    the_teacher_get_wider already computed: those calls (same model, by its JSON, and the same
    arguments) take the shared result; any other call runs plan_interval itself."""
    from bench_scripts import load

    bench = load("distill_teacher_term")
    keys = {m.to_json(): which for which, m in plan_ivs.models.items()}

    def shared_plan_interval(model, n_s, c, scenario="best-case", level=0.9, max_draws=100):
        which = keys.get(model.to_json())
        if which is not None and (n_s, c, level, max_draws) == (N_S, 1e22, 0.9, 100):
            return plan_ivs(which, scenario)
        return plan_interval(model, n_s, c, scenario, level, max_draws)

    monkeypatch.setattr(bench, "plan_interval", shared_plan_interval)
    assert bench.main(["--no-fit"]) == 0
    out = capsys.readouterr().out
    doc = (Path(__file__).resolve().parents[1] / "docs/distill_validation.md").read_text()
    rows = [ln for ln in out.splitlines() if ln.startswith("| preset") or ln.startswith("| `plan")]
    assert len(rows) == 4 and all(r in doc for r in rows)
    assert "distill -> too close to call at D_S" in out
