"""lmforecast.curves: the table, the O(T) evaluation, parameter recovery, intervals, persistence."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from lmforecast.curves import CurveLaw, read_curves, read_schedule, simulate_curves
from lmforecast.curves.evaluate import build_schedule, direct_drop, drop_items, momentum_area
from lmforecast.curves.prior import BUNDLED, CurvePrior
from lmforecast.errors import InputError, NotFittedError
from lmforecast.uncertainty.resample import stationary_indices

TRUE = {"L0": 3.0, "A": 0.5, "alpha": 0.5, "B": 400.0, "C": 2.0, "beta": 0.6, "gamma": 0.6}
PEAK, FLOOR, WARM = 3e-4, 3e-5, 500


def schedule(run: str, steps: int, kind: str, every: int = 100) -> pd.DataFrame:
    s = np.arange(0, steps + 1, every, dtype=float)
    lr = np.where(s < WARM, PEAK * s / WARM, PEAK)
    if kind == "cosine":
        phase = np.pi * (s - WARM) / (steps - WARM)
        lr = np.where(s < WARM, lr, FLOOR + 0.5 * (PEAK - FLOOR) * (1 + np.cos(phase)))
    elif kind == "wsd":
        lr = np.where(
            s < 0.8 * steps, lr, PEAK - (PEAK - FLOOR) * (s - 0.8 * steps) / (0.2 * steps)
        )
    elif kind == "step":
        lr = np.where(s < 0.5 * steps, lr, PEAK / 3)
    return pd.DataFrame({"run": run, "step": s, "lr": lr})


@pytest.fixture(scope="module")
def sim():
    sched = pd.concat([schedule("cos", 20000, "cosine"), schedule("const", 20000, "constant"),
                       schedule("stp", 20000, "step")])  # fmt: skip
    table = simulate_curves(sched, TRUE, noise=0.001, seed=1)
    return table, CurveLaw(n_boot=100).fit(table)


# ---- the table -------------------------------------------------------------------------------
def good():
    return pd.DataFrame({"run": ["a", "a", "a", "b", "b"], "step": [0, 100, 200, 0, 100],
                         "lr": [1e-3, 1e-3, 5e-4, 1e-3, 1e-3],
                         "loss": [np.nan, 3.0, 2.9, np.nan, 3.1]})  # fmt: skip


CASES = [  # (change to a good table, words the one-line error must hold)
    (dict(step=[0, 200, 100, 0, 100]), ["run 'a'", "row 3", "'step'", "increase"]),
    (dict(lr=[1e-3, -1e-3, 5e-4, 1e-3, 1e-3]), ["run 'a'", "row 2", "'lr'", "negative"]),
    (dict(lr=[1e-3, np.inf, 5e-4, 1e-3, 1e-3]), ["run 'a'", "row 2", "'lr'", "finite"]),
    (dict(lr=[1e-3, 1e-3, 5e-4, np.nan, np.nan]), ["run 'b'", "row 4", "'lr'", "no learning"]),
    (dict(step=[0, 100, 100, 0, 100]), ["run 'a'", "row 3", "'step'", "duplicates row 2"]),
    (dict(N=[1e6, 1e6, 1e6, np.nan, np.nan]), ["run 'b'", "row 4", "'N'", "other runs"]),
    (dict(step=[0, 100, 200, np.nan, 100]), ["run 'b'", "row 4", "'step'", "no step"]),
    (dict(loss=[np.nan, 3.0, -1.0, np.nan, 3.1]), ["run 'a'", "row 3", "'loss'"]),
]


@pytest.mark.parametrize("edit, words", CASES)  # fmt: skip
def test_bad_tables_name_run_row_and_column(edit, words):
    with pytest.raises(InputError) as e:
        read_curves(good().assign(**edit))
    msg = str(e.value)
    assert "\n" not in msg
    for w in words:
        assert w in msg, (w, msg)


def test_schedule_needs_no_loss_and_sparse_lr_is_interpolated():
    s = read_schedule(pd.DataFrame({"run": "x", "step": [0, 50, 100], "lr": [0.0, np.nan, 1e-3]}))
    assert s["loss"].isna().all()
    sch = build_schedule(s["step"], s["lr"])
    assert sch.peak_step == 100 and sch.s_w == pytest.approx(0.05)  # area of the linear warmup


# ---- evaluation --------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["cosine", "wsd", "step"])
def test_blocked_drop_equals_the_direct_double_sum(kind):
    s = schedule("r", 30000, kind, every=1000)
    sch = build_schedule(s["step"], s["lr"])
    steps = np.arange(1000, 30001, 700, dtype=float)
    B, C, beta, gamma = 400.0, 2.0, 0.6, 0.6
    it = drop_items(sch, steps)
    x = np.exp(-gamma * it.lg) * it.s
    fast = B * np.bincount(it.j, it.w * (1 - (C * x + 1) ** -beta), minlength=steps.size)
    slow = direct_drop(sch, steps, B, C, beta, gamma)
    loss = 3.0 + 0.5 * (sch.s1(steps) + sch.s_w) ** -0.5 - slow
    assert np.max(np.abs(fast - slow) / loss) < 1e-6
    big = slow > 1e-3
    assert np.max(np.abs(fast - slow)[big] / slow[big]) < 1e-4


def test_momentum_area_equals_the_recursion():
    sch = build_schedule([0, 100, 5000, 20000], [0, 1e-3, 5e-4, 1e-5])
    d = np.r_[0, sch.eta[:-1] - sch.eta[1:]]
    m = np.zeros_like(d)
    for i in range(1, d.size):
        m[i] = 0.999 * m[i - 1] + d[i]
    assert np.allclose(momentum_area(sch, 0.999), np.cumsum(m), rtol=0, atol=1e-13)


# ---- fitting -----------------------------------------------------------------------------------
def test_simulated_mpl_curves_are_recovered(sim):
    table, est = sim
    p = est.params_["all"]
    for k in ("L0", "A", "alpha"):
        assert p[k] == pytest.approx(TRUE[k], rel=0.03), k
    for kind in ("wsd", "cosine"):  # schedules and a length never fitted
        new = schedule("new", 30000, kind)
        truth = simulate_curves(new, TRUE)["loss"].to_numpy()
        got = est.predict(new)
        ok = np.isfinite(truth)
        assert np.max(np.abs(got[ok] / truth[ok] - 1)) < 1e-3, kind


@pytest.mark.parametrize("law", ["annealing", "power"])
def test_other_laws_fit_their_own_curves(law):
    params = {"annealing": {"L0": 3.0, "A": 0.5, "alpha": 0.5, "C": 0.5},
              "power": {"L0": 3.0, "A": 20.0, "alpha": 0.5}}[law]  # fmt: skip
    sched = pd.concat([schedule("cos", 20000, "cosine"), schedule("const", 20000, "constant")])
    table = simulate_curves(sched, params, law=law, noise=0.0005, seed=2)
    est = CurveLaw(law, n_boot=0).fit(table)
    for k, v in params.items():
        assert est.params_["all"][k] == pytest.approx(v, rel=0.05), k


def test_a_fitted_run_is_continued_from_its_own_offset(sim):
    table, est = sim
    shifted = table.assign(
        loss=np.where(table["run"] == "cos", table["loss"] * 1.01, table["loss"])
    )
    fit = CurveLaw(n_boot=0).fit(shifted)
    off = fit.runs_["cos"]["offset"]
    cont = fit.predict(schedule("cos", 20000, "cosine"))[-1]
    fresh = fit.predict(schedule("other", 20000, "cosine"))[-1]
    assert cont / fresh == pytest.approx(np.exp(off))
    last = shifted.loc[shifted["run"] == "cos", "loss"].iloc[-1]
    assert abs(cont / last - 1) < abs(fresh / last - 1)  # the offset moves it toward its own run


# ---- intervals ---------------------------------------------------------------------------------
def test_resampled_indices_come_in_contiguous_blocks():
    idx = stationary_indices(400, 40.0, np.random.default_rng(0))
    jumps = np.sum(np.diff(idx) != 1)
    assert jumps < 30  # about 400 / 40 block starts, not 400 independent points


def test_autocorrelated_noise_gets_wider_intervals_than_point_resampling():
    sched = pd.concat([schedule("cos", 20000, "cosine"), schedule("const", 20000, "constant")])
    table = simulate_curves(sched, TRUE, noise=0.003, rho=0.97, seed=3)
    new = schedule("new", 20000, "wsd")
    width = {}
    for name, block in (("blocks", None), ("points", 1.0)):
        est = CurveLaw(n_boot=200, seed=4, block=block).fit(table)
        lo, hi = est.predict_interval(new, kind="confidence")
        width[name] = hi[-1] - lo[-1]
    assert width["blocks"] > 2 * width["points"]


def test_every_point_inside_its_interval_and_notes(sim):
    _, est = sim
    fc = est.forecast(schedule("long", 60000, "cosine"), level=0.9)
    t = fc.table
    ok = t["lo"].notna()
    assert ok.any()
    assert np.all((t["lo"][ok] <= t["loss"][ok]) & (t["loss"][ok] <= t["hi"][ok]))
    assert any("3.0x the model's last fitted step" in n for n in fc.notes)
    low = schedule("low", 20000, "cosine").assign(lr=lambda d: d["lr"] / 10)
    assert any("below the lowest fitted learning rate" in n for n in est.forecast(low).notes)
    d = fc.to_dict()
    assert len(d["forecasts"]) == len(t) and set(d) == {"forecasts", "notes"}


def test_a_constant_lr_fit_cannot_say_what_a_decay_gives():
    table = simulate_curves(schedule("const", 20000, "constant"), TRUE, noise=0.001, seed=5)
    est = CurveLaw(n_boot=50, prior=None).fit(table)
    fc = est.forecast(schedule("cos", 20000, "cosine"), final=True)
    assert fc.table["lo"].isna().all()
    assert any("not identified" in n for n in fc.notes)
    assert fc.to_dict()["forecasts"][0]["interval"] is None
    same = est.forecast(schedule("const2", 20000, "constant"), final=True).table
    assert same["lo"].notna().all()  # the constant schedule itself is identified


def wsd_prefix(keep: float = 0.4, seed: int = 7):
    """One WSD run logged over its first `keep` (all at the peak lr), its schedule planned."""
    plan = schedule("run", 20000, "wsd")
    table = simulate_curves(plan, TRUE, noise=0.001, seed=seed)
    truth = simulate_curves(plan, TRUE)["loss"].iloc[-1]
    table.loc[table["step"] > keep * 20000, "loss"] = np.nan
    return table, plan, truth


def test_a_constant_lr_prefix_with_the_true_prior_recovers_the_final_loss():
    table, plan, truth = wsd_prefix()
    decay = {k: TRUE[k] for k in ("B", "C", "beta", "gamma")}
    right = CurvePrior(decay, {"B": 0.1}, "the simulation's own decay parameters")
    wrong = CurvePrior(dict(decay, B=TRUE["B"] / 2), {"B": 0.1})
    fc = CurveLaw(n_boot=100, prior=right).fit(table).forecast(plan, final=True)
    row = fc.table.iloc[-1]
    assert abs(row["loss"] / truth - 1) < 0.002
    assert row["lo"] <= truth <= row["hi"] and row["lo"] <= row["loss"] <= row["hi"]
    assert any("comes from the prior (the simulation's" in n for n in fc.notes)
    off = CurveLaw(n_boot=0, prior=wrong).fit(table).predict(plan)[-1]
    assert abs(off / truth - 1) > 3 * abs(row["loss"] / truth - 1)  # the prior is what decays
    alone = CurveLaw(n_boot=100, prior=None).fit(table).forecast(plan, final=True)
    assert alone.table["lo"].isna().all() and any("not identified" in n for n in alone.notes)


def test_the_prior_spread_widens_the_interval_and_auto_takes_the_bundled_prior():
    table, plan, _ = wsd_prefix()
    decay = {k: TRUE[k] for k in ("B", "C", "beta", "gamma")}
    width = []
    for sd in (0.0, 0.3):
        iv = CurveLaw(n_boot=100, prior=CurvePrior(decay, {"B": sd})).fit(table)
        lo, hi = iv.predict_interval(plan)
        width.append(hi[-1] - lo[-1])
    assert width[1] > 2 * width[0]
    auto = CurveLaw(n_boot=20).fit(table)
    assert auto.models_["all"]["prior"] == BUNDLED["mpl-25m"].to_dict()
    assert auto.params_["all"]["B"] == pytest.approx(BUNDLED["mpl-25m"].values["B"])
    two = CurveLaw(n_boot=0).fit(pd.concat([table, table.assign(run="b")]))
    assert two.models_["all"]["prior"] is None  # "auto" holds nothing for two or more runs


def test_a_prior_fit_saves_and_reloads_and_bad_priors_are_refused(tmp_path):
    table, plan, truth = wsd_prefix(seed=8)
    prior = CurvePrior.from_fit(CurveLaw(n_boot=0, prior=None).fit(
        simulate_curves(pd.concat([schedule("c", 20000, "cosine"),
                                   schedule("k", 20000, "constant")]), TRUE, noise=0.0005)),
        {"B": 0.2}, "two simulated runs")  # fmt: skip
    est = CurveLaw(n_boot=30, prior=prior).fit(table)
    assert abs(est.predict(plan)[-1] / truth - 1) < 0.006  # the other runs' decay response
    back = CurveLaw.load(est.save(tmp_path / "fit.json"))
    assert back.to_json() == est.to_json()
    assert np.array_equal(
        np.column_stack(back.predict_interval(plan)),
        np.column_stack(est.predict_interval(plan)),
        equal_nan=True,
    )
    plain = json.loads(CurveLaw(n_boot=0, prior=None).fit(table).to_json())
    del plain["params"]["prior"], plain["models"]["all"]["prior"]  # a fit saved without them
    assert CurveLaw.from_dict(plain).prior is None
    for bad, words in (
        ("mpl-1b", "not one of mpl-25m"),
        ({"values": {"B": 1.0}}, "values must"),
        ({"values": dict(prior.values), "spread": {"L0": 1.0}}, "'L0'"),
    ):
        with pytest.raises(InputError, match=words):
            CurveLaw(prior=bad)
    with pytest.raises(InputError, match="law 'mpl' only"):
        CurveLaw("power", prior="mpl-25m")


def test_cli_fit_prior_from_a_name_none_or_a_fit_of_other_runs(cli, tmp_path):
    table, plan, truth = wsd_prefix(seed=9)
    table.to_csv(tmp_path / "one.csv", index=False)
    plan.to_csv(tmp_path / "plan.csv", index=False)
    others = simulate_curves(
        pd.concat([schedule("c", 20000, "cosine"), schedule("k", 20000, "constant")]),
        TRUE,
        noise=5e-4,
    )
    others.to_csv(tmp_path / "others.csv", index=False)
    assert cli("curves", "fit", "--runs", tmp_path / "others.csv", "--out",
               tmp_path / "others.json", "--bootstrap", "0")[0] == 0  # fmt: skip
    finals = {}
    for prior in ("none", "auto", tmp_path / "others.json"):
        code, out, _ = cli("curves", "fit", "--runs", tmp_path / "one.csv", "--prior", prior,
                           "--out", tmp_path / "fit.json", "--json")  # fmt: skip
        assert code == 0
        held = json.loads(out)["models"]["all"]["prior"]
        assert (held is None) == (prior == "none")
        code, out, err = cli("curves", "predict", "--fit", tmp_path / "fit.json", "--schedule",
                             tmp_path / "plan.csv", "--final", "--json")  # fmt: skip
        fc = json.loads(out)
        finals[str(prior)] = fc["forecasts"][-1]
        assert ("comes from the prior" in " ".join(fc["notes"])) == (prior != "none")
    assert finals["none"]["interval"] is None
    near = finals[str(tmp_path / "others.json")]
    assert abs(near["loss"] / truth - 1) < 0.006 and near["interval"] is not None
    code, out, err = cli("curves", "fit", "--runs", tmp_path / "one.csv", "--prior", "mpl-1b",
                         "--out", tmp_path / "bad.json")  # fmt: skip
    assert code == 2 and out == "" and "--prior mpl-1b" in err
    assert not (tmp_path / "bad.json").exists()


# ---- estimator contract ------------------------------------------------------------------------
def test_save_load_bit_for_bit_and_params(sim, tmp_path):
    _, est = sim
    path = est.save(tmp_path / "fit.json")
    back = CurveLaw.load(path)
    assert back.to_json() == est.to_json()
    new = schedule("new", 25000, "wsd")
    assert np.array_equal(back.predict(new), est.predict(new))
    assert np.array_equal(
        np.column_stack(back.predict_interval(new)),
        np.column_stack(est.predict_interval(new)),
        equal_nan=True,
    )
    clone = CurveLaw(**est.get_params())
    assert clone.get_params() == est.get_params()
    with pytest.raises(NotFittedError):
        clone.predict(new)
    d = json.loads(path.read_text())
    d["models"]["all"]["theta"] = [1.0]
    with pytest.raises(InputError, match="theta"):
        CurveLaw.from_dict(d)
    assert "model all" in est.summary()


def test_models_by_n_and_across_sizes():
    runs = []
    for n, scale in ((1e8, 1.0), (4e8, 0.9), (1.6e9, 0.81)):
        p = dict(TRUE, L0=TRUE["L0"] * scale)
        s = pd.concat(
            [schedule(f"c{n:g}", 20000, "cosine"), schedule(f"k{n:g}", 20000, "constant")]
        )
        runs.append(simulate_curves(s.assign(N=n), p, noise=0.0005, seed=6).assign(N=n))
    est = CurveLaw(n_boot=20).fit(pd.concat(runs))
    assert len(est.params_) == 3
    l0 = [est.params_[repr(n)]["L0"] for n in (1e8, 4e8, 1.6e9)]
    assert l0 == pytest.approx([3.0, 2.7, 2.43], rel=0.02)
    fc = est.forecast(schedule("mid", 20000, "cosine").assign(N=8e8), final=True)
    assert fc.table["loss"].iloc[0] < est.predict(schedule("m", 20000, "cosine").assign(N=4e8))[-1]
    assert any("not a fitted size" in n for n in fc.notes)
    with pytest.raises(InputError, match="give the run's N"):
        est.predict(schedule("noN", 20000, "cosine"))


def test_contract_mistakes_and_not_fitted(sim):
    with pytest.raises(NotFittedError, match="this CurveLaw is not fitted yet"):
        _ = CurveLaw().params_
    assert not hasattr(CurveLaw(), "models_")
    with pytest.raises(InputError, match="law 'mpll'"):
        CurveLaw("mpll")
    with pytest.raises(InputError, match="n_boot must be a whole number >= 0, got 2.5"):
        CurveLaw(n_boot=2.5)
    with pytest.raises(InputError, match="at least 4 are needed"):
        CurveLaw().fit(good())
    _, est = sim
    with pytest.raises(InputError, match="credible"):
        est.predict_interval(good(), kind="credible")
