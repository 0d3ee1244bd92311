import numpy as np
import pytest

from lmforecast.report.builder import ReportContext


@pytest.mark.slow
def test_distill_report_section_quick():
    from lmforecast.report.sections.distill import build_section

    sec = build_section(ReportContext(quick=True, progress=False))
    n = sec.numbers
    assert n["n_runs"] == 697
    assert n["refit_median_rel_error"] < 1e-3 and n["refit_max_rel_error"] < 1e-2
    assert n["extrapolation_mean_rel_error"] < 1e-2
    best = np.array(n["crossover_flops"]["best-case"])
    assert np.all(np.isfinite(best[1:])) and np.all(np.diff(best[1:]) > 0)
    assert any("<img" in b or "<svg" in b for b in sec.blocks)
