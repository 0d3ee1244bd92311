"""A forecast from a saved supervised fit loads only what it needs (benchmarks/
supervised_cli_speed.py times the calls): from the command line no evals reader, table reader,
optimiser or scipy.stats; checked by module in a fresh interpreter, not by the clock, and the
forecast itself is checked against the one made in this process, so a lean path that changed
the numbers fails too. The fitting engine's shared evaluations and one-pass Huber loss give the
same numbers as evaluating afresh and as the two-branch formula.

The saved fit is a small default fit (stack, calibrated intervals) with 4 cluster-bootstrap
refits instead of 20 and the bundled example's 80 runs: the same modules run at forecast time,
at a fraction of the fitting cost.

Neither pandas (with pyarrow) nor scipy loads on this path: the modules below the supervised
package (`data.validate`, `backtest.suites`, `isoflop`, the laws registered by `laws`) import
them inside the functions that use them."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import numpy as np
import pytest

from lmforecast import examples
from lmforecast.data.io import read_table
from lmforecast.fitting.engine import Objective
from lmforecast.fitting.losses import huber, squared
from lmforecast.laws import get_law
from lmforecast.supervised import SupervisedScalingLaw

#: modules a CLI forecast must not load
CLI_UNUSED = (
    "lmforecast.data.evals",
    "lmforecast.data.evals.harness",
    "lmforecast.data.io",
    "pandas",
    "pyarrow",
    "scipy",
    "scipy.special",
    "scipy.optimize",
    "scipy.stats",
)


@pytest.fixture(scope="module")
def saved_fit(tmp_path_factory):
    runs = read_table(examples.path("supervised/runs.csv"))
    with warnings.catch_warnings():  # 4 refits: the identification check warns, as it should
        warnings.simplefilter("ignore")
        m = SupervisedScalingLaw(bootstrap=4).fit(runs)
    path = tmp_path_factory.mktemp("fit") / "fit.json"
    m.save(path)
    N, D = 7e9, 1.4e11
    lo, hi = m.predict_interval(N, D)
    return path, [float(m.predict(N, D)), float(lo), float(hi)]


def _run(code: str) -> tuple[list, set[str]]:
    code += "\nprint(json.dumps([out, sorted(sys.modules)]))"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    out, mods = json.loads(r.stdout.strip().splitlines()[-1])
    return out, set(mods)


def test_cli_forecast_loads_no_reader_or_optimiser(saved_fit):
    path, want = saved_fit
    argv = ["supervised", "predict", "--fit", str(path), "--params", "7e9", "--tokens", "1.4e11",
            "--json"]  # fmt: skip
    out, mods = _run(
        "import io, json, sys, contextlib\n"
        "from lmforecast.cli.main import main\n"
        "buf = io.StringIO()\n"
        "with contextlib.redirect_stdout(buf):\n"
        f"    rc = main({argv!r})\n"
        "assert rc == 0\n"
        "out = json.loads(buf.getvalue())"
    )
    assert sorted(mods & set(CLI_UNUSED)) == []
    np.testing.assert_allclose([out["loss"], *out["interval"]], want, rtol=1e-12)


def test_lazy_package_names_still_import():
    # the packages that now load their names on first use still give every public name
    import lmforecast.data as data
    import lmforecast.fitting as fitting

    for pkg in (data, fitting):
        for name in pkg.__all__:
            assert callable(getattr(pkg, name)) or isinstance(getattr(pkg, name), type), name
    with pytest.raises(AttributeError):
        data.no_such_name  # noqa: B018


def test_one_pass_huber_is_the_two_branch_formula_bit_for_bit():
    rng = np.random.default_rng(0)
    for delta in (1e-3, 0.1, 0.37):
        edges = np.array([delta, -delta, 0.0, -0.0, np.inf, -np.inf, 1e300])
        r = np.concatenate([rng.normal(0, s, 20_000) for s in (1e-4, 1e-3, 1e-2, 1.0, 1e3)])
        r = np.concatenate([r, edges])
        a = np.abs(r)
        with np.errstate(all="ignore"):
            two_branch = np.where(a <= delta, 0.5 * r * r, delta * (a - 0.5 * delta))
        v, d = huber(delta).value_and_derivative(r)
        assert np.array_equal(v, two_branch)
        assert np.array_equal(d, np.clip(r, -delta, delta))
        assert np.array_equal(huber(delta).value(r), two_branch)
    r = rng.normal(0, 1, 100)
    v, d = squared().value_and_derivative(r)
    assert np.array_equal(v, 0.5 * r * r) and np.array_equal(d, r)


def test_objective_remembers_one_point_and_gives_what_a_fresh_evaluation_gives():
    law = get_law("chinchilla-gamma")
    rng = np.random.default_rng(1)
    N = 10 ** rng.uniform(7.5, 10, 60)
    X = {"N": N, "D": N * 10 ** rng.uniform(0.5, 2.5, 60)}
    t = law.target_of(3.0 * np.exp(rng.normal(0, 0.01, 60)))
    obj = Objective(law, X, t, huber(1e-3), w=rng.integers(1, 3, 60))
    a, b = np.array([6.0, 7.0, 0.5, 0.35, 0.3, 0.9]), np.array([5.0, 6.0, 0.4, 0.3, 0.25, 1.1])
    for theta in (a, b, a, a.copy(), b):
        f, g = obj.value_and_grad(theta)
        fresh = Objective(law, X, t, huber(1e-3), w=obj.w)
        f1, g1 = fresh.value_and_grad(theta)
        assert f == f1 and np.array_equal(g, g1)
    f_b, _ = obj.value_and_grad(b)
    assert obj.value_and_grad(a)[0] != f_b  # a new point is evaluated, not the remembered one
