"""The report's "Forecast record" section: present with --ledger, absent without."""

from __future__ import annotations

import json

import pytest

from lmforecast.ledger import Ledger


def _ledger(path):
    with Ledger(path, create=True) as L:
        for m, p, lo, hi, y in [("supervised", 2.0, 1.9, 2.1, 2.05), ("supervised", 3.0, 2.9,
                                3.1, 3.3), ("downstream", 60.0, 55.0, 65.0, 58.0)]:  # fmt: skip
            L.resolve(L.add(method=m, point=p, lo=lo, hi=hi, level=0.9), y)
        L.add(method="downstream", point=70.0)


def test_report_section_from_a_ledger(cli, tmp_path):
    _ledger(tmp_path / "L.db")
    code, _, err = cli("report", "--out", tmp_path / "r", "--sections", "ledger", "--ledger",
                       tmp_path / "L.db", "--quiet", "--jobs", "1")  # fmt: skip
    assert code == 0, err
    rep = json.loads((tmp_path / "r" / "report.json").read_text())
    s = rep["sections"]["ledger"]["scores"]
    assert s["groups"]["supervised"]["coverage"] == pytest.approx(0.5)
    assert s["groups"]["downstream"]["mean_abs_error"] == pytest.approx(2.0)
    assert s["overall"]["n_open"] == 1
    html = (tmp_path / "r" / "report.html").read_text()
    assert "Forecast record" in html and "<img" in html


def test_no_ledger_no_section_and_bad_ledger_refused(cli, tmp_path):
    from lmforecast.report.builder import ReportContext
    from lmforecast.report.sections.ledger import build_section

    assert build_section(ReportContext()) is None
    (tmp_path / "x.db").write_text("not sqlite")
    code, _, err = cli("report", "--out", tmp_path / "r", "--sections", "ledger", "--ledger",
                       tmp_path / "x.db", "--quiet")  # fmt: skip
    assert code == 2 and "not an lmforecast ledger" in err and not (tmp_path / "r").exists()
