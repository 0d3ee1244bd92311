import copy

import numpy as np
import pytest

from lmforecast.report.builder import ReportContext


@pytest.fixture(scope="module")
def zoo_part():
    """The quick report's zoo subsection (`_zoo_part` into an empty Section), built once: the
    quick section's `build_section` ends with this same call (same context), and the zoo test
    below checks it. `_zoo_part` only appends to the section's blocks/tables/verdicts and sets
    `numbers["zoo"]`, so replaying its output is what the call itself does. Read only."""
    from lmforecast.report.builder import Section
    from lmforecast.report.sections.distill import _zoo_part

    sec = Section("distill", "t")
    _zoo_part(sec, ReportContext(quick=True, progress=False))
    return sec


@pytest.mark.slow
def test_distill_report_section_quick(monkeypatch, zoo_part):
    from lmforecast.report.sections import distill

    def replay_zoo_part(sec, ctx):  # the shared zoo subsection, as `_zoo_part` would add it
        assert ctx.quick
        sec.blocks.extend(zoo_part.blocks)
        sec.tables.extend(copy.deepcopy(zoo_part.tables))
        sec.verdicts.extend(copy.deepcopy(zoo_part.verdicts))
        sec.numbers.update(copy.deepcopy(zoo_part.numbers))

    monkeypatch.setattr(distill, "_zoo_part", replay_zoo_part)
    sec = distill.build_section(ReportContext(quick=True, progress=False))
    n = sec.numbers
    assert n["n_runs"] == 697
    assert n["refit_median_rel_error"] < 1e-3 and n["refit_max_rel_error"] < 1e-2
    assert n["extrapolation_mean_rel_error"] < 1e-2
    best = np.array(n["crossover_flops"]["best-case"])
    assert np.all(np.isfinite(best[1:])) and np.all(np.diff(best[1:]) > 0)
    assert any("<img" in b or "<svg" in b for b in sec.blocks)


@pytest.mark.slow
def test_distill_report_zoo_subsection_states_held_out_errors(zoo_part):
    """Eq. 8 on the bundled zoo: finite held-out errors, no held-out miss above 25%, held out no
    better than in-sample, and the subsection renders."""
    from lmforecast.report.sections.distill import zoo_distillation_summary
    from lmforecast.zoo import load_zoo

    sec = zoo_part  # `_zoo_part` of the quick report into an empty Section
    z = sec.numbers["zoo"]
    assert set(z["free"]) == {"A'", "B'", "c0", "d1"} and len(z["fixed"]) == 5
    assert z["fixed"]["gamma'"] == pytest.approx(0.764)
    assert z["loo_max_rel_error"] is None  # quick mode
    for k in ("max_rel_error", "strongest_teacher_mean_rel_error"):
        assert np.isfinite(z[k]) and 0 < z[k] < 0.25, k
    assert np.all(np.isfinite(z["strongest_teacher_rel_errors"]))
    assert z["n_students"] >= 2 and 0 <= z["capacity_gap_students_fit"] <= z["n_students"]
    html = "".join(sec.blocks)
    assert "On the small-model zoo" in html and "<img" in html

    full = zoo_distillation_summary(load_zoo(), n_polish=2, leave_one_out=True)
    assert np.isfinite(full["runs"]["loo"]).all()
    assert 0 < full["loo_max_rel_error"] < 0.25
    assert full["mean_rel_error"] <= full["loo_mean_rel_error"]


def test_fixed_coefficients_do_not_count_against_the_run_count():
    """With coefficients held fixed, the estimator asks for as many runs as *free*
    coefficients and says so; the zoo adapter fixes all but A', B', c0, d1."""
    from lmforecast.distill import DistillationScalingLaw
    from lmforecast.distill.zoo_data import zoo_distillation_runs, zoo_fixed_coefficients
    from lmforecast.errors import InputError
    from lmforecast.zoo import load_zoo

    runs = zoo_distillation_runs(load_zoo().distillation)
    assert list(runs.columns[:4]) == ["model", "teacher", "N_S", "D_S"] and runs["L_S"].gt(0).all()
    fixed = zoo_fixed_coefficients()
    assert set(fixed) == {"alpha'", "beta'", "gamma'", "c1", "f1"}
    with pytest.raises(InputError, match="3 rows but Eq. 8 has 4 free coefficients \\(5 fixed\\)"):
        DistillationScalingLaw("busbridge2025", fixed=fixed).fit(runs.head(3))
    with pytest.raises(InputError, match="has 9 free coefficients"):
        DistillationScalingLaw("busbridge2025").fit(runs.head(3))
    with pytest.raises(InputError, match="unknown coefficient"):
        zoo_fixed_coefficients(free=("A'", "nope"))
