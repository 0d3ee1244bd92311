"""The toolbox: data-constrained law, isoFLOP approaches, effective compute between
recipes, next-run advisor. Each test recovers a known truth from simulated data."""

from __future__ import annotations

import json

import numpy as np
import pytest

from lmforecast.dataconstrained import DataConstrainedLaw
from lmforecast.dataconstrained.simulate import PAPER_PARAMS, simulate_runs
from lmforecast.isoflop import IsoFlopResult, fit_isoflop, isoflop_table, simulate_isoflops
from lmforecast.isoflop.simulate import HOFFMANN, true_exponents
from lmforecast.laws import get_law
from lmforecast.recipes import RecipeComparison, compare_recipes
from lmforecast.recipes.simulate import simulate_pair


# ---- data-constrained law (Muennighoff et al. 2023, Eq. 5-7) ---------------------------------
def test_law_reduces_to_chinchilla_for_one_epoch_and_small_models():
    law = get_law("data-constrained")
    N, D = np.array([1e7, 3e7]), np.array([1e10, 3e10])  # N far below N_opt(U = D)
    L = law.predict(PAPER_PARAMS, N=N, D=D, U=D)
    chin = {k: PAPER_PARAMS[k] for k in ("A", "B", "E", "alpha", "beta")}
    assert np.allclose(L, get_law("chinchilla").predict(chin, N=N, D=D), rtol=1e-12)


def test_effective_data_matches_eq5_by_hand():
    # 4 epochs of U: R_D = 3, D' = U + U R*_D (1 - exp(-3/R*_D)); a 1e6-param model (no excess)
    p = PAPER_PARAMS
    U, D = 1e9, 4e9
    Dp = U + U * p["RD_star"] * (1 - np.exp(-3 / p["RD_star"]))
    want = p["E"] + p["A"] / 1e6 ** p["alpha"] + p["B"] / Dp ** p["beta"]
    got = get_law("data-constrained").predict(p, N=1e6, D=D, U=U)
    assert got == pytest.approx(want, rel=1e-12)


def test_excess_parameters_decay_with_RN_star():
    # N_opt(U) = (alpha A/(beta B))^(1/alpha) U^(beta/alpha); 10x that size is worth
    # U_N (1 + R*_N (1 - exp(-9/R*_N))) effective parameters
    p = PAPER_PARAMS
    U = 1e9
    nopt = (p["alpha"] * p["A"] / (p["beta"] * p["B"])) ** (1 / p["alpha"]) * U ** (
        p["beta"] / p["alpha"]
    )
    law = get_law("data-constrained")
    Np, _ = law.effective_inputs(
        law.from_natural(p)[None],
        {"N": np.array([10 * nopt]), "D": np.array([U]), "U": np.array([U])},
    )
    assert Np[0, 0] == pytest.approx(nopt * (1 + p["RN_star"] * (1 - np.exp(-9 / p["RN_star"]))))


def test_simulated_decay_constants_recovered(tmp_path):
    # 90 runs from the paper's law (R*_D = 15.4, R*_N = 5.3), 0.3% noise
    m = DataConstrainedLaw(bootstrap=0).fit(simulate_runs(noise=0.003, seed=2))
    assert m.params_["RD_star"] == pytest.approx(15.4, rel=0.10)
    assert m.params_["RN_star"] == pytest.approx(5.3, rel=0.15)
    assert m.params_["alpha"] == pytest.approx(0.34, abs=0.02)
    m.save(tmp_path / "dc.json")
    back = DataConstrainedLaw.load(tmp_path / "dc.json")
    assert back.params_ == m.params_


def test_rows_sharing_N_D_with_different_U_are_distinct_runs():
    d = simulate_runs(N=(1e7, 3e7, 1e8), U=(1e8, 4e8), epochs=(1, 2, 4, 8), seed=0)
    d = d.assign(D=4e8)  # every run sees 4e8 tokens: (N, D) repeats, U differs
    d = d[d["U"] <= d["D"]]
    assert d.duplicated(["N", "D"]).any()
    m = DataConstrainedLaw(bootstrap=0, n_polish=4).fit(d)
    assert m.result_.n_obs == len(d)


def test_cli_fit_json_carries_decay_constants(cli, tmp_path):
    from lmforecast.examples import path

    code, out, err = cli(
        "supervised",
        "fit",
        "--form",
        "data-constrained",
        "--runs",
        path("dataconstrained/runs.csv"),
        "--no-intervals",
        "--json",
    )
    assert code == 0, err
    p = json.loads(out)["params"]
    assert p["RD_star"] == pytest.approx(15.4, rel=0.25) and "RN_star" in p


# ---- isoFLOP Approaches 1 and 2 (Hoffmann et al. 2022) ---------------------------------------
def test_approach2_recovers_N_star_exponent():
    a_true, b_true = true_exponents(HOFFMANN)  # 0.4516, 0.5484
    r = fit_isoflop(isoflop_table(simulate_isoflops(seed=3)), 2, n_boot=100, seed=0)
    assert abs(r.a - a_true) < 0.01 and abs(r.b - b_true) < 0.01  # stated tolerance
    assert r.a_interval[0] <= a_true <= r.a_interval[1]
    assert r.a + r.b == pytest.approx(1.0, abs=1e-9)  # D* = C/(6 N*)


def test_approach1_is_the_best_run_per_budget_and_round_trips(tmp_path):
    # sizes off-centre (a 0.3-decade shift): Approach 1 is stuck on the grid, Approach 2 is not
    t = isoflop_table(simulate_isoflops(seed=4, n_sizes=5, span=0.8))
    r1 = fit_isoflop(t, 1, n_boot=50)
    for (_, g), row in zip(t.groupby("budget"), r1.budgets):
        assert row[1] == g.loc[g["loss"].idxmin(), "N"]
    r1.to_json(tmp_path / "iso.json")
    assert IsoFlopResult.from_json(tmp_path / "iso.json") == r1


def test_saved_isoflop_validated_on_load(tmp_path):
    r = fit_isoflop(isoflop_table(simulate_isoflops()), 2, n_boot=10)
    d = json.loads(r.to_json())
    d["a_interval"] = [0.4]
    (tmp_path / "bad.json").write_text(json.dumps(d))
    with pytest.raises(Exception, match="a_interval"):
        IsoFlopResult.from_json(tmp_path / "bad.json")


# ---- effective compute between recipes -------------------------------------------------------
@pytest.mark.slow
def test_known_multiplier_recovered_within_interval():
    covered, points = 0, []
    for seed in range(10, 15):
        base, new = simulate_pair(k=2.5, seed=seed)
        r = compare_recipes(base, new, 1e18, n_boot=100, seed=seed)
        covered += r.interval[0] <= 2.5 <= r.interval[1]
        points.append(r.multiplier)
    assert covered >= 4  # 90% intervals, 5 simulated pairs
    assert np.allclose(points, 2.5, rtol=0.1)


def test_recipe_comparison_round_trips(tmp_path):
    base, new = simulate_pair(k=2.0, seed=0)
    r = compare_recipes(base, new, 3e17, n_boot=20)
    assert r.multiplier == pytest.approx(2.0, rel=0.15) and not r.extrapolated
    r.to_json(tmp_path / "r.json")
    assert RecipeComparison.from_json(tmp_path / "r.json") == r


# ---- width and depth ---------------------------------------------------------------------------
def test_shape_test_finds_a_planted_shape_term_and_not_a_missing_one():
    from lmforecast.shape import shape_test
    from lmforecast.shape.simulate import simulate_shapes

    planted = shape_test(simulate_shapes(curvature=0.004, seed=0), model_col="model", n_perm=300)
    assert planted.shape_matters and planted.p_value < 0.01
    assert planted.coef[2] == pytest.approx(0.004, rel=0.15)  # the quadratic curvature
    assert planted.worst["model"] == "768x3"  # the most extreme aspect ratio
    none = shape_test(simulate_shapes(curvature=0.0, seed=0), model_col="model", n_perm=300)
    assert not none.shape_matters and none.p_value > 0.05


# ---- next run ----------------------------------------------------------------------------------
def test_next_run_ranks_by_shrinkage_per_flop_and_respects_budget():
    import pandas as pd

    from lmforecast.laws.chinchilla import ChinchillaGamma
    from lmforecast.nextrun import advise

    rng = np.random.default_rng(0)
    N = np.array([1e7, 2e7, 4e7, 8e7, 1.6e8] * 2)
    D = np.r_[20 * N[:5], 60 * N[5:]]
    L = ChinchillaGamma.loss(HOFFMANN, N, D) * np.exp(rng.normal(0, 0.005, N.size))
    a = advise(pd.DataFrame({"N": N, "D": D, "loss": L}), 7e9, 1.4e11, budget=1e18, n_boot=20)
    g = [c["shrink_per_flop"] for c in a.candidates]
    assert g == sorted(g, reverse=True)
    assert all(c["flops"] <= 1e18 for c in a.candidates)
    assert all(
        0 <= c["shrink"] < 1 and c["expected_width"] <= a.current_width for c in a.candidates
    )
    # a run that costs more but is further out along the extrapolation shrinks more in total
    assert max(c["shrink"] for c in a.candidates) > a.candidates[-1]["shrink"]


@pytest.mark.slow
def test_report_sections_build_on_bundled_examples():
    from lmforecast.report.builder import ReportContext
    from lmforecast.report.sections import dataconstrained, isoflop, recipes

    ctx = ReportContext(quick=True, progress=False)
    iso = isoflop.build_section(ctx).numbers
    assert abs(iso["approach2"]["a"] - iso["truth"]["a"]) < 0.02
    rec = recipes.build_section(ctx).numbers
    assert rec["multiplier"] == pytest.approx(2.5, rel=0.2)
    dc = dataconstrained.build_section(ctx).numbers
    assert dc["params"]["RD_star"] == pytest.approx(15.4, rel=0.25)


def test_isoflop_optimum_outside_its_sampled_sizes_warns():
    import warnings

    runs = simulate_isoflops(seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # both sides of every optimum sampled: no warning
        fit_isoflop(isoflop_table(runs), 2, n_boot=10, seed=0)
    C = sorted(runs["C"].unique())[-2]
    at = runs[runs["C"] == C]
    keep = ~((runs["C"] == C) & (runs["N"] > at["N"].sort_values().iloc[2]))
    with pytest.warns(UserWarning, match="optimum outside the sampled sizes"):
        fit_isoflop(isoflop_table(runs[keep]), 2, n_boot=10, seed=0)


def test_recipe_comparison_says_why_it_has_no_interval_and_checks_c_against_6nd(tmp_path):
    import warnings

    import pandas as pd

    from lmforecast.errors import DomainWarning
    from lmforecast.examples import path

    base, new = pd.read_csv(path("recipes/base.csv")), pd.read_csv(path("recipes/new.csv"))
    none = compare_recipes(base, new, 1e20, n_boot=0)
    assert "not computed (--bootstrap 0)" in none.summary()  # was "unbounded (failed)"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no raw numpy warning far outside the budgets
        far = compare_recipes(base, new, 1e25, n_boot=50)
    assert far.interval is None or far.interval[0] <= far.multiplier <= far.interval[1]
    c = base["C"] if "C" in base else 6 * base["N"] * base["D"]
    with pytest.warns(DomainWarning, match="10x 6 N D"):
        compare_recipes(base.assign(C=10 * c), new, 1e20, n_boot=0)


def test_best_next_run_shrinks_by_at_least_min_gain():
    import re

    import pandas as pd

    from lmforecast.examples import path
    from lmforecast.nextrun import advise, fit_with_bootstrap

    runs = pd.read_csv(path("nextrun/runs.csv"))
    # min_gain only ranks the candidates: both advices read the one fit that n_boot=20 gives
    fitted = fit_with_bootstrap(runs, 20, 0)
    top = advise(runs, 7e9, 1.4e11, fitted=fitted).candidates[0]["shrink"]
    a = advise(runs, 7e9, 1.4e11, fitted=fitted, min_gain=top + 0.01)
    if not a.stop:  # the top-ranked run no longer qualifies: a costlier one is named
        m = re.search(r"best next run: N=([\d.e+]+), D=([\d.e+]+)", a.message)
        best = next(c for c in a.candidates if f"{c['N']:.3g}" == m.group(1)
                    and f"{c['D']:.3g}" == m.group(2))  # fmt: skip
        assert best["shrink"] >= top + 0.01 and "shrinks it by only" in a.message


def test_isoflop_reads_n_star_at_a_new_budget_with_its_interval(cli, tmp_path):
    from lmforecast.examples import path

    it = isoflop_table(__import__("pandas").read_csv(path("isoflop/runs.csv")))
    res = fit_isoflop(it, n_boot=100, at_flops=[1e21, 1e23])
    for r in res.meta["at_flops"]:
        N, D = res.optimal(r["C"])
        assert r["N_star"] == pytest.approx(N) and r["D_star"] == pytest.approx(D)
        assert r["N_interval"][0] <= r["N_star"] <= r["N_interval"][1]
        assert r["D_interval"][0] <= r["D_star"] <= r["D_interval"][1]
        assert 6 * r["N_star"] * r["D_star"] == pytest.approx(r["C"], rel=0.05)
    far, near = res.meta["at_flops"][1], res.meta["at_flops"][0]
    rel = lambda r: r["N_interval"][1] / r["N_interval"][0]  # noqa: E731
    assert rel(far) > rel(near)  # wider further out
    # the CLI's budget reading and its saved file, not the interval: 10 resamples suffice
    code, out, err = cli("isoflop", "fit", "--runs", path("isoflop/runs.csv"), "--flops", "1e21",
                         "--bootstrap", "10", "--json", "--out", tmp_path / "iso.json")  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["at_flops"][0]["C"] == 1e21
    back = IsoFlopResult.from_json(tmp_path / "iso.json")
    assert back.to_json() == (tmp_path / "iso.json").read_text()


def test_isoflop_table_refuses_a_named_column_it_lacks():
    """A compute or token column named away from its default and absent is refused by the
    library (the flag and the argument named), never silently replaced by 6ND or C/6N."""
    import pandas as pd

    from lmforecast import examples
    from lmforecast.errors import InputError

    runs = pd.read_csv(examples.path("isoflop/runs.csv"))
    with pytest.raises(InputError, match=r"^--c-col 'FLOPs' \(c_col=\): no such column in runs"):
        isoflop_table(runs, c_col="FLOPs")
    with pytest.raises(InputError, match=r"^--d-col 'tokens' \(d_col=\): no such column"):
        isoflop_table(runs, d_col="tokens")
    assert len(isoflop_table(runs)) == len(runs)
