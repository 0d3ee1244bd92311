"""Variable projection in the fitting engine (fitting/varpro.py, docs/fitting.md)."""

from importlib import resources

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import nnls

from lmforecast.fitting import engine as eng
from lmforecast.fitting import fit_law, huber, squared
from lmforecast.fitting.engine import Objective, _polish
from lmforecast.fitting.varpro import nnls_batched, projected_starts, representatives
from lmforecast.laws import get_law
from lmforecast.uncertainty.bootstrap import bootstrap_thetas

VARPRO_LAWS = ["chinchilla", "chinchilla-gamma", "overtrain", "flp-power", "flp-gpt4"]
TRUE = {"A": 3355.0, "B": 18186.0, "E": 1.22, "alpha": 0.408, "beta": 0.431, "gamma": 0.452}


def _runs(law_name, n=120, noise=0.01, seed=0, params=None):
    rng = np.random.default_rng(seed)
    N = 10 ** rng.uniform(7.5, 10.5, n)
    D = N * 10 ** rng.uniform(0.3, 3.0, n)
    law = get_law(law_name)
    if params is None:
        if law_name == "overtrain":
            params = {"a": 900.0, "b": 4000.0, "E": 1.7, "eta": 0.05, "alpha_C": 0.16}
        else:
            params = {k: v for k, v in TRUE.items() if k in law.natural_names}
    L = law.predict(params, N=N, D=D) * np.exp(rng.normal(0, noise, n))
    return law, {"N": N, "D": D}, L


def _inputs(law, n=40, seed=0):
    rng = np.random.default_rng(seed)
    if "C" in law.inputs:
        return {"C": 10 ** rng.uniform(18, 24, n)}
    N = 10 ** rng.uniform(7.5, 10.5, n)
    return {"N": N, "D": N * 10 ** rng.uniform(0.3, 3.0, n)}


@pytest.mark.parametrize("k", [1, 2, 3])
def test_batched_nnls_equals_scipy_on_badly_scaled_columns(k):
    rng = np.random.default_rng(k)
    A = rng.normal(size=(60, 25, k)) * np.array([1.0, 1e-9, 1e6])[:k]
    A[:20] = np.abs(A[:20])  # some problems with all-positive columns: interior solutions
    b = rng.normal(size=(60, 25)) + 2.0 * (np.arange(60) < 20)[:, None]
    got = nnls_batched(A, b)
    ref = np.array([nnls(A[g], b[g])[0] for g in range(60)])
    res_got = np.linalg.norm(np.einsum("gnk,gk->gn", A, got) - b, axis=1)
    res_ref = np.linalg.norm(np.einsum("gnk,gk->gn", A, ref) - b, axis=1)
    assert np.all(got >= 0)
    np.testing.assert_allclose(res_got, res_ref, rtol=1e-9, atol=1e-12)
    assert (got[:20] > 0).any()


@pytest.mark.parametrize("name", VARPRO_LAWS)
def test_linear_block_contract(name):
    """exp(predict_target(theta(nl, c))) == basis(nl) @ c: the projection solves the law itself."""
    law = get_law(name)
    X = _inputs(law)
    rng = np.random.default_rng(1)
    for blk in law.linear_blocks(X):
        nl = blk.grid[rng.choice(len(blk.grid), 25, replace=False)]
        Phi = blk.basis(nl, X)
        # coefficients making every term O(1) at the median run, so no term is negligible
        c = rng.uniform(0.5, 2.0, (nl.shape[0], Phi.shape[2])) / np.median(Phi, axis=1)
        theta = blk.theta(nl, c, X)
        pred = np.exp(law.predict_target(theta, X))
        np.testing.assert_allclose(pred, np.einsum("gnk,gk->gn", Phi, c), rtol=1e-9)


def _both(law, X, y, loss):
    grid = fit_law(law, X, y, loss=loss, method="grid")
    vp = fit_law(law, X, y, loss=loss, method="varpro")
    return grid, vp


@pytest.mark.parametrize(
    "name,noise,seed",
    [
        ("chinchilla", 0.01, 0),
        ("chinchilla", 0.03, 1),
        ("chinchilla-gamma", 0.01, 2),
        ("overtrain", 0.02, 3),
    ],
)
def test_varpro_reaches_the_grid_objective_on_simulated_runs(name, noise, seed):
    law, X, y = _runs(name, n=150, noise=noise, seed=seed)
    grid, vp = _both(law, X, y, huber(1e-3))
    assert vp.converged
    assert vp.objective <= grid.objective * (1 + 1e-7) + 1e-15
    assert vp.n_polished <= eng.VARPRO_POLISH
    assert grid.n_polished > 4 * vp.n_polished  # the projection replaced the grid's polishes


@pytest.mark.slow
def test_varpro_reaches_the_grid_objective_on_the_bundled_example():
    path = resources.files("lmforecast.examples") / "files" / "supervised" / "runs.csv"
    df = pd.read_csv(path)
    X = {"N": df["N"].to_numpy(float), "D": df["D"].to_numpy(float)}
    y = df["loss"].to_numpy(float)
    for name in ("chinchilla", "chinchilla-gamma"):
        grid, vp = _both(get_law(name), X, y, huber(1e-3))
        assert vp.objective <= grid.objective * (1 + 1e-7) + 1e-15, name
        # the same optimum: the fitted loss curve agrees to the fit tolerance
        law = get_law(name)
        pg = law.predict(np.array(grid.theta), **X)
        pv = law.predict(np.array(vp.theta), **X)
        np.testing.assert_allclose(pv, pg, rtol=1e-5)


def test_noiseless_chinchilla_recovered_by_projection_alone():
    law, X, y = _runs("chinchilla", n=60, noise=0.0, seed=4)
    res = fit_law(law, X, y, loss=huber(1e-4))
    assert res.converged and res.objective < 1e-12
    for k in ("A", "B", "E", "alpha", "beta"):
        assert res.params[k] == pytest.approx(TRUE[k], rel=1e-4), k


def test_power_law_projection_is_exact_least_squares():
    """flp-power by squared loss on log y: the projected start polished equals closed-form OLS."""
    law = get_law("flp-power")
    rng = np.random.default_rng(5)
    C = 10 ** rng.uniform(18, 23, 30)
    y = 2.5 * (C / 1e19) ** -0.07 * np.exp(rng.normal(0, 0.01, 30))
    res = fit_law(law, {"C": C}, y, loss=squared())
    a, b = np.polyfit(np.log(C), np.log(y), 1)
    assert res.params["alpha"] == pytest.approx(a, rel=1e-7)
    assert -a * np.log(res.params["C_N"]) == pytest.approx(b, rel=1e-7)


def test_representatives_are_distinct_local_minima():
    keys = np.array([[0, i, 0] for i in range(6)])
    scores = np.array([3.0, 1.0, 2.0, 5.0, 0.5, 4.0])  # local minima at i = 1 and i = 4
    assert representatives(keys, scores, 5).tolist() == [4, 1]


def test_projected_starts_respect_bounds_and_score_finitely():
    law, X, y = _runs("chinchilla-gamma", n=80, seed=6)
    starts, keys = projected_starts(law, X, np.log(y), huber(1e-3))
    b = np.array(law.bounds)
    assert np.all(starts >= b[:, 0]) and np.all(starts <= b[:, 1])
    assert len(starts) == len(keys) == sum(len(k.grid) for k in law.linear_blocks(X))
    scores = Objective(law, X, np.log(y), huber(1e-3)).batch(starts)
    assert np.isfinite(scores).mean() > 0.9


def test_preconditioned_polish_reaches_the_plain_polish_objective(monkeypatch):
    law, X, y = _runs("chinchilla", n=100, noise=0.02, seed=7)
    obj = Objective(law, X, np.log(y), huber(1e-3))
    th0 = law.from_natural({"A": 1000.0, "B": 5000.0, "E": 1.5, "alpha": 0.5, "beta": 0.5})
    _, f_pre, ok_pre, _ = _polish(obj, th0, law.bounds, 2000)
    monkeypatch.setattr(eng, "PRECONDITION", False)
    _, f_plain, ok_plain, _ = _polish(obj, th0, law.bounds, 2000)
    assert ok_pre and ok_plain
    assert f_pre <= f_plain * (1 + 1e-9)


def test_method_argument():
    law, X, y = _runs("chinchilla", n=40, seed=8)
    with pytest.raises(ValueError, match="unknown method"):
        fit_law(law, X, y, method="newton")
    flm = get_law("flp-linear")
    with pytest.raises(ValueError, match="linear_blocks"):
        fit_law(flm, {"L": np.linspace(2, 3, 10)}, np.linspace(10, 20, 10), method="varpro")


def test_varpro_bootstrap_is_deterministic_across_workers_and_matches_grid_path():
    law, X, y = _runs("chinchilla", n=80, noise=0.02, seed=9)
    res = fit_law(law, X, y, loss=huber(1e-3))
    kw = dict(n_boot=4, seed=3, n_polish=1, maxiter=300)
    a, _ = bootstrap_thetas(law, X, y, res, n_jobs=1, **kw)
    b, _ = bootstrap_thetas(law, X, y, res, n_jobs=2, **kw)
    np.testing.assert_array_equal(a, b)
    g, _ = bootstrap_thetas(law, X, y, res, n_jobs=1, method="grid", **kw)
    # each resample reaches (at least) the grid path's optimum: compare objectives per resample
    from lmforecast.uncertainty.resample import resample_indices

    root = np.random.SeedSequence(3)
    for i in range(4):
        idx = resample_indices(
            np.random.SeedSequence(root.entropy, spawn_key=(*root.spawn_key, i)), y.size
        )
        obj = Objective(law, {k: v[idx] for k, v in X.items()}, np.log(y[idx]), huber(1e-3))
        fa, fg = obj.batch(a[i : i + 1])[0], obj.batch(g[i : i + 1])[0]
        assert fa <= fg * (1 + 1e-6), i


@pytest.mark.parametrize("alpha", [-0.05, -0.002, 0.0003])
def test_power_law_varpro_never_worse_than_grid_even_on_flat_curves(alpha):
    """Nearly flat FLOPs -> loss curves put log C_N near its bound (C_N^-alpha ~ constant):
    the projected starts (alphas down to 1e-4) reach at least the grid's objective."""
    import warnings

    law = get_law("flp-power")
    rng = np.random.default_rng(11)
    C = 10 ** rng.uniform(18, 22, 12)
    y = 3.0 * (C / 1e20) ** alpha * np.exp(rng.normal(0, 0.01, 12))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        grid = fit_law(law, {"C": C}, y, loss=squared(), n_polish=16, method="grid")
        vp = fit_law(law, {"C": C}, y, loss=squared(), n_polish=16)
    assert vp.objective <= grid.objective * (1 + 1e-7)
