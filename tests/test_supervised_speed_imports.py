"""A forecast from a saved supervised fit loads only what it needs (benchmarks/
supervised_cli_speed.py times the calls): no pandas or pyarrow from Python, and from the command
line no evals reader, backtest, isoflop, optimiser or bootstrap modules. Checked by module in a
fresh interpreter, not by the clock; the forecast itself is checked against the full import
path, so a lean path that changed the numbers fails too.

The saved fit is a small default fit (stack, calibrated intervals) with 4 cluster-bootstrap
refits instead of 20 and the bundled example's 80 runs: the same modules run at forecast time,
at a fraction of the fitting cost."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import numpy as np
import pytest

from lmforecast import examples
from lmforecast.data.io import read_table
from lmforecast.supervised import SupervisedScalingLaw

#: modules the CLI forecast must not load (pandas itself comes with the shared flag policy's
#: row limit, `cli.flags` -> `data.validate`, on every verb)
CLI_UNUSED = (
    "lmforecast.data.evals",
    "lmforecast.backtest",
    "lmforecast.backtest.suites",
    "lmforecast.isoflop",
    "lmforecast.fitting.engine",
    "lmforecast.fitting.bootstrap",
    "lmforecast.fitting.varpro",
    "scipy.optimize",
    "scipy.stats",
)
#: and the Python forecast none of these either
PY_UNUSED = (*CLI_UNUSED, "pandas", "pyarrow", "lmforecast.parallel")


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


def test_python_forecast_from_a_saved_fit_loads_no_pandas(saved_fit):
    path, want = saved_fit
    out, mods = _run(
        "import json, sys\n"
        "from lmforecast.supervised import SupervisedScalingLaw\n"
        f"m = SupervisedScalingLaw.load({str(path)!r})\n"
        "lo, hi = m.predict_interval(7e9, 1.4e11)\n"
        "out = [float(m.predict(7e9, 1.4e11)), float(lo), float(hi)]"
    )
    assert sorted(mods & set(PY_UNUSED)) == []
    assert "lmforecast.supervised.calibration" in mods  # the interval's own code did run
    np.testing.assert_allclose(out, want, rtol=1e-12)


def test_cli_forecast_loads_no_fitting_or_backtest_module(saved_fit):
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
    assert fitting.bootstrap.bootstrap_fit is fitting.bootstrap_fit
    with pytest.raises(AttributeError):
        data.no_such_name  # noqa: B018
