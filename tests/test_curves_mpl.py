"""The multi-power law on its authors' shared curves (Luo et al. 2025): their published
parameters, their protocol. Skips when the shared data folder is absent."""

from __future__ import annotations

import numpy as np
import pytest

from bench_scripts import load
from lmforecast.curves import CurveLaw, read_curves
from lmforecast.curves.fit import RunPoints, design, run_schedule
from lmforecast.curves.laws import to_fit, value
from lmforecast.curves.mpl_data import PROTOCOL_FIT, SCHEDULES, read_mpl_size

PUBLISHED_25M = [3.040, 0.525, 0.508, 363.8, 2.066, 0.583, 0.641]  # L0, A, alpha, B, C, beta, gamma


@pytest.fixture(scope="module")
def mpl(shared_dir):
    folder = shared_dir / "data" / "curves" / "mpl"
    if not folder.exists():
        pytest.skip(f"shared data folder {folder} not present")
    return folder


def _logged(table):
    return table["loss"].notna().to_numpy() & (table["step"].to_numpy() > 2160)


def test_published_25m_parameters_reproduce_the_curves_up_to_l0(mpl):
    """The equation, S_W and the warmup reading: the published 25M parameters give every one
    of the nine curves' shape; their L0 sits 0.11 below these curves (one number, refitted)."""
    table = read_curves(read_mpl_size(mpl, "25M"))
    z = to_fit("mpl", np.array(PUBLISHED_25M))
    preds = []
    for run, rows in table.groupby("run", sort=False):
        p = value("mpl", z, design("mpl", [RunPoints(run, run_schedule(rows, run),
                                                      rows["step"].to_numpy(float))]))  # fmt: skip
        preds.append(p)
    pred = np.concatenate(preds)
    m = _logged(table)
    shift = float(np.median(table["loss"].to_numpy()[m] - pred[m]))
    assert 0.09 < shift < 0.13
    e = np.abs((pred[m] + shift) / table["loss"].to_numpy()[m] - 1)
    runs = table["run"].to_numpy()[m]
    for r in SCHEDULES:
        assert e[runs == f"25M/{r}"].mean() < 0.0025, r
    assert e.mean() < 0.0015


@pytest.mark.slow
@pytest.mark.parametrize(
    "size, paper_mean, paper_worst", [("25M", 0.00110, 0.0041), ("100M", 0.00142, 0.0058)]
)
def test_the_authors_protocol(mpl, size, paper_mean, paper_worst):
    """The authors' evaluation averages over the held-out curves each curve's mean relative
    error (PredE) and its maximum (WorstE); the pooled numbers weigh the long curves more."""
    table = read_curves(read_mpl_size(mpl, size))
    fit_runs = [f"{size}/{r}" for r in PROTOCOL_FIT]
    est = CurveLaw(n_boot=0).fit(table[table["run"].isin(fit_runs)])
    test = table[~table["run"].isin(fit_runs)]
    m = _logged(test)
    e = np.abs(est.predict(test)[m] / test["loss"].to_numpy()[m] - 1)
    runs = test["run"].to_numpy()[m]
    per_curve = np.mean([e[runs == r].mean() for r in dict.fromkeys(runs)])
    per_curve_worst = np.mean([e[runs == r].max() for r in dict.fromkeys(runs)])
    assert e.max() <= 0.010  # the worst single point is within 1.0%
    assert e.mean() < 0.0019  # pooled over every point (the 72,000-step curves weigh most)
    assert per_curve < paper_mean * 1.05  # PredE computed as the authors do, near the paper's
    assert per_curve_worst < paper_worst * 1.3  # WorstE likewise: 0.51% / 0.60% vs 0.41% / 0.58%


@pytest.mark.slow
def test_the_authors_parameters_on_these_curves_bound_the_protocol(mpl):
    """The paper's PredE was computed on curves that differ from the shared CSVs by a loss offset:
    its published parameters miss these curves by over 2%; with only L0 re-estimated on the
    three fitted curves they reach PredE 0.109% / 0.151% / 0.221%. Our fit stays within 5% of
    that at 25M and below it at 100M and 400M (benchmarks/curves_mpl_published.py)."""
    bench = load("curves_mpl_published")
    for size, slack in (("25M", 1.05), ("100M", 1.0), ("400M", 1.0)):
        table = read_curves(read_mpl_size(mpl, size))
        fit_runs = {f"{size}/{r}" for r in PROTOCOL_FIT}
        curves = bench.published_forecast(table, size)
        held = [c for c in curves if c[0] not in fit_runs]
        assert bench.pred_e(held)[0] > 2.0  # as published: not these curves
        shift = bench.l0_shift(curves, fit_runs)
        assert 0.08 < shift < 0.2
        oracle = bench.pred_e([(r, p + shift, t) for r, p, t in held])[0]
        est = CurveLaw(n_boot=0).fit(table[table["run"].isin(fit_runs)])
        ours = bench.pred_e([(r, est.predict(table[table["run"] == r])[_logged(
            table[table["run"] == r])], t) for r, _, t in held])[0]  # fmt: skip
        assert ours <= oracle * slack, (size, ours, oracle)


def test_the_reader_adds_the_warmup_and_places_the_two_stage_drop(mpl):
    t = read_curves(read_mpl_size(mpl, "100M", runs=("wsdcon_3", "cosine_24000")))
    cos = t[t["run"] == "100M/cosine_24000"]
    assert cos["step"].iloc[:2].tolist() == [0.0, 2160.0]
    assert cos["lr"].iloc[:2].tolist() == [0.0, 3e-4] and cos["loss"].iloc[:2].isna().all()
    two = t[t["run"] == "100M/wsdcon_3"].set_index("step")
    assert 7999.0 not in two.index  # the logged rows are the schedule
    exact = read_mpl_size(mpl, "100M", runs=("wsdcon_3",), exact_drop=True).set_index("step")
    assert exact.loc[7999.0, "lr"] == 3e-4 and exact.loc[8000.0, "lr"] == pytest.approx(3e-5)
    sch = run_schedule(t[t["run"] == "100M/cosine_24000"], "c")
    assert sch.s_w == pytest.approx(2160 * 3e-4 / 2) and sch.peak_step == 2160
