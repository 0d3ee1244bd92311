"""The default forecast is a stack of three laws weighted by the fit's own inner
backtest, with an interval scaled by that backtest's error (supervised/stack.py, docs/trust.md)."""

import json

import numpy as np
import pandas as pd
import pytest

from lmforecast.errors import InputError
from lmforecast.supervised import SupervisedScalingLaw
from lmforecast.supervised import calibration as cb
from lmforecast.supervised import forms as fm
from lmforecast.supervised import stack as st
from lmforecast.uncertainty.normal import z_of


def _runs(kind, seed=0):
    rng = np.random.default_rng(seed)
    N = np.repeat(np.geomspace(2e7, 1.6e9, 7), 4)
    D = N * np.tile([5.0, 15.0, 50.0, 150.0], 7)
    if kind == "compute":  # loss depends on compute alone: only the compute law is right
        L = 1.7 + 2.0e3 * (6 * N * D) ** -0.15
    else:  # Chinchilla (Hoffmann et al. 2022): the split of compute matters
        L = 1.69 + 406.4 / N**0.34 + 410.7 / D**0.28
    return pd.DataFrame({"N": N, "D": D, "loss": L * np.exp(rng.normal(0, 0.002, N.size))})


@pytest.fixture(scope="module")
def fits():
    return {
        k: SupervisedScalingLaw(intervals=False, n_jobs=1).fit(_runs(k))
        for k in ("compute", "chinchilla")
    }


def test_weights_follow_the_law_that_extrapolates_on_the_runs(fits):
    wc = fits["compute"].result_.meta["stack"]["weights"]
    wf = fits["chinchilla"].result_.meta["stack"]["weights"]
    assert sum(wc.values()) == pytest.approx(1.0) and sum(wf.values()) == pytest.approx(1.0)
    # loss set by compute alone: the compute law (and the over-training law, which contains
    # it) extrapolate best, the Chinchilla-type form worst; Chinchilla runs: the reverse
    assert wc["compute-law"] == max(wc.values()) and wc["form"] == min(wc.values())
    assert wf["form"] > 0.6 and wf["compute-law"] == min(wf.values())


def test_forecast_is_the_weighted_geometric_mean_of_the_three_laws(fits):
    m = fits["chinchilla"]
    stk, meta = m.result_.meta["stack"], m.result_.meta
    N, D = np.array([5e9, 2e10]), np.array([1e11, 4e11])
    single = SupervisedScalingLaw.from_result(m.result_)
    single.result_ = type(m.result_).from_dict({**m.result_.to_dict(), "meta": {
        k: v for k, v in meta.items() if k != "stack"}})  # fmt: skip
    ot = SupervisedScalingLaw("overtrain", loss="squared", intervals=False, n_jobs=1,
                              stack=False).fit(_runs("chinchilla"))  # fmt: skip
    w = stk["weights"]
    want = np.exp(
        w["form"] * np.log(single.predict(N, D))
        + w["overtrain-ls"] * np.log(ot.predict(N, D))
        + w["compute-law"] * np.log(fm.compute_law_predict(meta["compute_law"], N, D))
    )
    assert m.predict(N, D) == pytest.approx(want, rel=1e-9)
    assert not np.allclose(m.predict(N, D), single.predict(N, D), rtol=1e-6)


def test_inner_fits_start_from_scratch_not_from_the_full_fit(fits):
    # the stack is a function of the runs alone: computed without any full-data fit it is
    # the same, so no inner fit can have been warm-started from the full-data optimum
    m = fits["chinchilla"]
    fresh = SupervisedScalingLaw(intervals=False, n_jobs=1)
    again = st.fit_stack(fresh, m.form_, m.data_, noise=cb.run_scatter(m.result_, m.data_))
    assert again["weights"] == m.result_.meta["stack"]["weights"]
    assert again["s_inner"] == m.result_.meta["stack"]["s_inner"]


def test_explicit_form_or_too_few_sizes_keep_a_single_form():
    r = _runs("chinchilla")
    assert "stack" not in SupervisedScalingLaw("chinchilla", intervals=False, n_jobs=1).fit(
        r).result_.meta  # fmt: skip
    assert "stack" not in SupervisedScalingLaw(intervals=False, n_jobs=1, stack=False).fit(
        r).result_.meta  # fmt: skip
    few = r[r["N"] <= np.unique(r["N"])[2]]  # 3 sizes: no inner cut keeps 3 sizes below it
    with pytest.warns(UserWarning, match="form chinchilla"):
        m = SupervisedScalingLaw(intervals=False, n_jobs=1).fit(few)
    assert "stack" not in m.result_.meta


def test_interval_term_is_flat_where_the_suites_measured_and_grows_beyond():
    stk = {"s_inner": 0.02, "r_inner": 0.3}
    r = np.array([0.0, 1.0, 2.0, 4.0, 8.0])
    lo, hi = cb.stack_interval(np.zeros(5), np.zeros(5), 0.01, r, stk, 1.0, 0.9)
    half = (hi - lo) / 2 / z_of(0.9)
    assert half[:3] == pytest.approx([0.03] * 3)
    assert half[3:] == pytest.approx([0.01 + 0.04, 0.01 + 0.08])
    lo8, hi8 = cb.stack_interval(np.zeros(5), np.zeros(5), 0.01, r, stk, 1.0, 0.8)
    assert np.all(hi8 - lo8 < hi - lo)


@pytest.mark.slow  # one default fit with its cluster bootstrap (~5 s)
def test_default_fit_with_intervals_round_trips_and_says_what_it_did(tmp_path):
    m = SupervisedScalingLaw(n_jobs=1, bootstrap=6).fit(_runs("chinchilla"))
    cal = m.result_.meta["intervals"]
    assert cal["k_stack"] == pytest.approx(cb.prior_k("stack"))
    N, D = np.array([2e9, 3e10]), np.array([4e10, 6e11])
    lo, hi = m.predict_interval(N, D)
    p = m.predict(N, D)
    assert np.all(lo < p) and np.all(p < hi)
    assert np.all(np.log(hi / lo) / 2 >= z_of(0.9) * m.result_.meta["stack"]["s_inner"])
    # the other kinds keep the form's spread but are centred on the stack's forecast, the
    # point the user is given
    form_only = m.result_.predict(N=N, D=D)
    assert not np.allclose(form_only, p, rtol=1e-4)
    for kind, result_kind in (("confidence", "confidence"), ("bootstrap", "prediction")):
        lo_k, hi_k = m.predict_interval(N, D, kind=kind)
        flo, fhi = m.result_.predict_interval(kind=result_kind, N=N, D=D)
        assert np.all(lo_k < p) and np.all(p < hi_k), kind
        assert lo_k / flo == pytest.approx(p / form_only, rel=1e-9)  # moved with the point
        assert hi_k / fhi == pytest.approx(p / form_only, rel=1e-9)
    text = m.summary()
    assert "stack weighted by an inner backtest" in text and "k_stack" in text
    path = tmp_path / "fit.json"
    m.save(path)
    back = SupervisedScalingLaw.load(path)
    assert back.result_.to_json() == m.result_.to_json()
    assert np.array_equal(back.predict_interval(N, D)[1], hi)
    bad = json.loads(path.read_text())
    bad["meta"]["stack"]["weights"]["form"] = -0.5
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    with pytest.raises(InputError, match="meta.stack.weights.form"):
        SupervisedScalingLaw.load(tmp_path / "bad.json")


def test_loso_calibrates_the_stack_scale_on_stacked_rows():
    rng = np.random.default_rng(0)
    parts = []
    for suite, s_in in [("a", 0.01), ("b", 0.05), ("c", 0.02)]:
        n = 200
        truth = np.full(n, 3.0)
        parts.append(pd.DataFrame({
            "suite": suite, "sub": "x", "split": "size-1", "method": "default", "truth": truth,
            "forecast": truth * np.exp(rng.normal(0, s_in, n)), "lower": np.nan,
            "upper": np.nan, "r": 0.5, "noise": 0.0, "s_boot": 0.0, "s_inner": s_in,
            "r_inner": 0.4, "N": 1e9, "D": 2e10, "n_train": 10,
        }))  # fmt: skip
    f = pd.concat(parts, ignore_index=True)
    k = cb.calibrate_k(f)
    # errors are exactly s_inner-scaled normals: the 90% scale is ~1 (z s_inner covers 90%)
    assert k["stack"] == pytest.approx(1.0, abs=0.12)
    assert k["default"] == cb.prior_k("default")  # no single-form rows: the prior is kept
    table, pooled, _ = cb.loso_table(f)
    assert 0.8 < pooled["coverage"] < 0.97


@pytest.mark.slow  # one stacked fit with a small cluster bootstrap (~2 s)
def test_bootstrap_only_interval_of_a_stacked_fit_holds_the_stack_forecast():
    # intervals=False with a bootstrap: the interval is the form's bootstrap spread plus its
    # run scatter, moved to the stack's forecast (what predict returns), as kind="prediction"
    m = SupervisedScalingLaw(intervals=False, bootstrap=6, n_jobs=1).fit(_runs("compute"))
    assert "intervals" not in m.result_.meta and m.result_.meta.get("stack")
    N, D = np.array([2e9, 3e10]), np.array([4e10, 6e11])
    p, form_only = m.predict(N, D), m.result_.predict(N=N, D=D)
    assert not np.allclose(p, form_only, rtol=1e-3)
    lo, hi = m.predict_interval(N, D)
    flo, fhi = m.result_.predict_interval(kind="prediction", N=N, D=D)
    assert lo / flo == pytest.approx(p / form_only, rel=1e-9)
    assert hi / fhi == pytest.approx(p / form_only, rel=1e-9)
    assert np.array_equal(m.predict_interval(N, D, kind="bootstrap")[0], lo)


def test_weights_do_not_mistake_run_scatter_for_a_laws_accuracy():
    # every candidate's held-out errors carry the same run scatter (here 1%); a law biased by
    # 0.5% must not weigh like the unbiased one (0.37 vs 0.31 if the scatter counted as error)
    rng = np.random.default_rng(0)
    scatter = rng.normal(0, 0.01, 500)
    e = {"form": scatter, "overtrain-ls": scatter + 0.004, "compute-law": scatter + 0.005}
    w = st.stack_weights(e, noise=0.01)
    assert w["form"] > 0.6 and w["compute-law"] < 0.15
    # without scatter to take off, the rule is the plain inverse mean |error|^2
    w0 = st.stack_weights(e)
    mae = st.inner_mae(e)
    inv = {c: 1 / mae[c] ** 2 for c in e}
    assert w0["form"] == pytest.approx(inv["form"] / sum(inv.values()))
    # few held-out runs cannot resolve a bias below scatter / sqrt(n): weights stay moderate
    few = {c: v[:4] for c, v in e.items()}
    assert st.stack_weights(few, noise=0.01)["form"] < 0.6


def test_well_specified_runs_with_scatter_are_forecast_by_the_right_law():
    rng = np.random.default_rng(0)
    N = 10 ** rng.uniform(7, 10, 1200)
    D = N * 10 ** rng.uniform(0.5, 3, 1200)

    def truth(N, D):
        return 1.69 + 406.4 / N**0.34 + 410.7 / D**0.28

    df = pd.DataFrame({"N": N, "D": D, "loss": truth(N, D) * np.exp(rng.normal(0, 0.01, N.size))})
    m = SupervisedScalingLaw(intervals=False, n_jobs=1).fit(df)
    assert m.result_.meta["stack"]["weights"]["form"] > 0.6  # 0.42 before
    err = np.abs(m.predict(N, D) / truth(N, D) - 1)
    assert np.median(err) < 0.0015  # 0.23% before: the compute law took 0.29 of the weight


def test_allocate_reports_the_loss_predict_gives_at_the_optimum(fits):
    m = fits["chinchilla"]
    a = m.allocate(1e22)
    assert a.loss == pytest.approx(float(m.predict(a.N, a.D)), rel=1e-12)
    assert m.result_.meta.get("stack")


def test_too_few_held_out_runs_keep_the_single_form():
    # a ladder of one run per size: the inner cuts hold out 1 and 2 runs, 3 in all; their RMS
    # error is no scale (the bundled example's first cutoff: 48% of 84 forecasts covered)
    N = np.geomspace(1e8, 3e9, 9)
    D = 20 * N
    L = (1.69 + 406.4 / N**0.34 + 410.7 / D**0.28) * np.exp(
        np.random.default_rng(0).normal(0, 0.003, N.size)
    )
    m = SupervisedScalingLaw(intervals=False, n_jobs=1).fit(
        pd.DataFrame({"N": N, "D": D, "loss": L})
    )
    assert "stack" not in m.result_.meta
    assert sum(te.sum() for _, te in st.inner_cuts(m.data_)) < st.MIN_INNER


@pytest.mark.slow
def test_the_bundled_examples_rolling_origin_backtest_covers_near_nominal():
    from lmforecast import examples
    from lmforecast.backtest import rolling_origin
    from lmforecast.supervised.adapter import SupervisedAdapter

    runs = pd.read_csv(examples.path("supervised/runs.csv"))
    bt = rolling_origin(runs, [SupervisedAdapter(n_jobs=1)], n_cutoffs=3, min_train=8)
    f = bt.forecasts
    cov = float(np.mean((f["lower"] <= f["truth"]) & (f["truth"] <= f["upper"])))
    assert len(f) > 90 and cov >= 0.85  # 0.64 when 3 held-out runs set the stack's scale


def test_kept_seed_replicates_count_once_in_the_inner_backtest():
    # three seeds per run kept as rows: the held-out errors are per configuration, so the
    # stack's scale and weights are those of the averaged runs (not a halved s_inner)
    runs = _runs("chinchilla", seed=1)
    rng = np.random.default_rng(2)
    seeds = pd.concat([runs.assign(loss=runs["loss"] * np.exp(rng.normal(0, 0.002, len(runs))))
                       for _ in range(3)], ignore_index=True)  # fmt: skip
    mean = seeds.groupby(["N", "D"], as_index=False)["loss"].apply(
        lambda v: float(np.exp(np.mean(np.log(v))))
    )
    kw = {"intervals": False, "n_jobs": 1}
    keep = SupervisedScalingLaw(replicates="keep", **kw).fit(seeds).result_.meta["stack"]
    one = st.inner_backtest(SupervisedScalingLaw(**kw), "auto", mean)
    assert keep["inner_forecasts"] == one[0]["form"].size  # one per configuration, not per seed


def test_pinned_parameters_forecast_with_the_form_alone():
    runs = _runs("chinchilla")
    with pytest.warns(UserWarning, match="pinned form alone"):
        m = SupervisedScalingLaw(intervals=False, n_jobs=1, fixed={"E": 1.69}).fit(runs)
    assert not m.result_.meta.get("stack") and m.params_["E"] == 1.69
    # far out, the forecast levels off at the pinned E, not at another law's
    assert m.predict(1e15, 1e18) == pytest.approx(1.69, abs=0.01)
