"""The report opened in a real browser: headless Chromium driven by Selenium (issue 26).

Checks that every figure decodes and renders, that every summary link lands on its section,
and keeps a screenshot as a test artifact (``$LMFORECAST_TEST_ARTIFACTS``, default
``test-artifacts/`` in the repository). Skips, saying why, where Chromium, its driver or
Selenium is missing; ``.ci/run`` installs Chromium so CI always runs it.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from lmforecast.report.builder import ReportContext, build_report

REPO = Path(__file__).resolve().parents[1]
ARTIFACTS = Path(os.environ.get("LMFORECAST_TEST_ARTIFACTS", REPO / "test-artifacts"))
SECTIONS = ["trust", "salience"]  # quick ones, with figures, tables and summary rows


def _browser_binary() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


@pytest.fixture(scope="module")
def driver():
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.skip("selenium is not installed (pip install -e '.[test]')")
    binary, drv = _browser_binary(), shutil.which("chromedriver")
    if binary is None or drv is None:
        pytest.skip(
            "no Chromium and chromedriver on PATH "
            "(Debian: apt-get install chromium chromium-driver; .ci/run does this)"
        )
    opts = webdriver.ChromeOptions()
    opts.binary_location = binary
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1280,2000", "--allow-file-access-from-files"):  # fmt: skip
        opts.add_argument(arg)
    d = webdriver.Chrome(service=Service(drv), options=opts)
    d.set_page_load_timeout(60)
    yield d
    d.quit()


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    numbers = build_report(out, sections=SECTIONS, ctx=ReportContext(quick=True, progress=False))
    return out, numbers


def test_figures_render_and_summary_links_land_on_their_sections(driver, report):
    out, numbers = report
    driver.get((out / "report.html").as_uri())
    imgs = driver.execute_script(
        "return Array.from(document.images).map(i => [i.complete, i.naturalWidth, "
        "i.naturalHeight, i.getBoundingClientRect().width])"
    )
    n_fig = (out / "report.html").read_text().count("<figure>")
    assert n_fig >= 2 and len(imgs) == n_fig
    for complete, w, h, shown in imgs:
        assert complete and w > 50 and h > 50 and shown > 50, (complete, w, h, shown)

    rows = driver.execute_script(
        "return Array.from(document.querySelectorAll('#summary tbody tr')).map(r => "
        "Array.from(r.cells).map(c => c.textContent))"
    )
    assert len(rows) == len(numbers["summary"]) >= len(SECTIONS)
    for cells, r in zip(rows, numbers["summary"], strict=True):
        assert cells[0] == r["method"]
        assert cells[3] == ("—" if r["error"] is None else f"{r['error']:.4g}")

    links = driver.execute_script(
        "return Array.from(document.querySelectorAll('#summary a')).map(a => a.hash)"
    )
    assert {h[1:] for h in links} == {r["section"] for r in numbers["summary"]}
    for h in dict.fromkeys(links):
        driver.execute_script("window.scrollTo(0, 0)")
        driver.find_element("css selector", f"#summary a[href='{h}']").click()
        top = driver.execute_script(
            f"return [location.hash, document.getElementById('{h[1:]}')"
            ".getBoundingClientRect().top, window.scrollY, "
            "window.innerHeight + window.scrollY >= document.body.scrollHeight - 2]"
        )
        assert top[0] == h and top[2] > 0, (h, top)
        assert abs(top[1]) < 5 or (top[3] and top[1] > 0), (h, top)  # at it, or page end

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    driver.execute_script("window.scrollTo(0, 0)")
    shot = ARTIFACTS / "report_browser.png"
    assert driver.save_screenshot(str(shot)) and shot.stat().st_size > 10_000
    json.loads((out / "report.json").read_text())  # the numbers behind the page parse
