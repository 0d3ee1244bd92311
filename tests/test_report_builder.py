"""The report builder: sections built in worker processes give the serial report's numbers."""

from __future__ import annotations

import json
import os

import pytest

from lmforecast.report.builder import ReportContext, build_report


@pytest.mark.slow
def test_parallel_sections_equal_serial(tmp_path, monkeypatch):
    from lmforecast.report import builder

    # a spy on the parent's section builder: called for every section when serial; with
    # jobs=2 the sections must be built by the worker processes (which import their own,
    # unspied copy), so the parent's builder is never called
    calls = []
    real = builder._build_one

    def spy(module, ctx):
        calls.append(os.getpid())
        return real(module, ctx)

    monkeypatch.setattr(builder, "_build_one", spy)
    # two sections with seeded bootstraps, figures and tables that build in about a second
    # each in quick mode, in the report's own order of sections
    secs = ["isoflop", "nextrun"]
    a = build_report(tmp_path / "a", sections=secs, ctx=ReportContext(quick=True, progress=False))
    assert calls == [os.getpid()] * 2
    calls.clear()
    b = build_report(
        tmp_path / "b", sections=secs, ctx=ReportContext(quick=True, progress=False, jobs=2)
    )
    assert calls == []  # --jobs 2 was not silently serial (nor run in threads of this process)
    assert list(b["sections"]) == secs  # listed order kept whatever finishes first
    assert json.dumps(a["sections"], sort_keys=True) == json.dumps(b["sections"], sort_keys=True)
    html = (tmp_path / "b" / "report.html").read_text()
    assert html.index('id="isoflop"') < html.index('id="nextrun"')


def test_report_jobs_zero_is_refused(cli, tmp_path):
    code, _, err = cli("report", "--out", tmp_path / "r", "--jobs", "0", "--quiet")
    assert code == 2 and "--jobs" in err and not (tmp_path / "r").exists()


def test_section_warnings_go_into_the_section_not_the_terminal(tmp_path, monkeypatch):
    import warnings

    from lmforecast.report import builder

    (tmp_path / "warny_section.py").write_text(
        "import warnings\n"
        "from lmforecast.report.builder import Section\n"
        "def build_section(ctx):\n"
        "    for _ in range(3):\n"
        "        warnings.warn('fit is not identified: E on its bound')\n"
        "    warnings.warn('3 forecast(s) clipped', RuntimeWarning)\n"
        "    sec = Section('warny', 'Warny')\n"
        "    sec.text('body')\n"
        "    return sec\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with warnings.catch_warnings(record=True) as escaped:
        warnings.simplefilter("always")
        sec = builder._build_one("warny_section", ReportContext(progress=False))
    assert escaped == []  # nothing reaches the terminal
    assert sec.numbers["warnings"] == [
        "UserWarning: fit is not identified: E on its bound",  # once, not three times
        "RuntimeWarning: 3 forecast(s) clipped",
    ]
    assert "fit is not identified" in sec.blocks[-1] and sec.blocks[0] == "<p>body</p>"
