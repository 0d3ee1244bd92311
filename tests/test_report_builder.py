"""The report builder: sections built in worker processes give the serial report's numbers."""

from __future__ import annotations

import json

import pytest

from lmforecast.report.builder import ReportContext, build_report


@pytest.mark.slow
def test_parallel_sections_equal_serial(tmp_path):
    secs = ["salience", "supervised"]
    a = build_report(tmp_path / "a", sections=secs, ctx=ReportContext(quick=True, progress=False))
    b = build_report(
        tmp_path / "b", sections=secs, ctx=ReportContext(quick=True, progress=False, jobs=2)
    )
    assert list(b["sections"]) == secs  # listed order kept whatever finishes first
    assert json.dumps(a["sections"], sort_keys=True) == json.dumps(b["sections"], sort_keys=True)
    html = (tmp_path / "b" / "report.html").read_text()
    assert html.index('id="salience"') < html.index('id="supervised"')


def test_report_jobs_zero_is_refused(cli, tmp_path):
    code, _, err = cli("report", "--out", tmp_path / "r", "--jobs", "0", "--quiet")
    assert code == 2 and "--jobs" in err and not (tmp_path / "r").exists()
