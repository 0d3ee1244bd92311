"""The report opened in a real browser: headless Chromium driven by Selenium.

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
SECTIONS = ["trust", "salience", "planner"]  # quick ones: figures, tables, summary, planner


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
    assert len(rows) == len(numbers["summary"]) >= 2  # the planner states no verdict
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


def _cli_json(*argv) -> dict:
    """`lmforecast ... --json` run in-process through the console script's `main` (a new
    interpreter costs ~1 s of imports per call)."""
    import contextlib
    import io

    from cli_lines import run_main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = run_main([*map(str, argv), "--json"])
    assert code == 0, err.getvalue()
    return json.loads(out.getvalue())


def _set(driver, id_, value):
    el = driver.find_element("id", id_)
    el.clear()
    el.send_keys(value)


def _read(driver, *ids) -> list[float]:
    return [float(driver.find_element("id", i).text) for i in ids]


def _same(a: float, b: float) -> bool:
    """Equal to 4 significant digits (and to the 6 digits the page shows: 1e-5 relative)."""
    return f"{a:.4g}" == f"{b:.4g}" and abs(a - b) <= 1e-5 * abs(b)


def test_planner_numbers_equal_the_cli(driver, report, tmp_path):
    from lmforecast.supervised import SupervisedScalingLaw

    out, numbers = report
    fit = tmp_path / "fit.json"
    fit.write_text(json.dumps(numbers["sections"]["planner"]["fit"]))
    model = SupervisedScalingLaw.load(fit)
    driver.get((out / "report.html").as_uri())
    assert driver.execute_script("return document.getElementById('planner').dataset.ready") == "1"

    # a compute budget: N*, D*, L* with intervals, and the forecast at (N*, D*)
    driver.find_element("id", "plan-mode-C").click()
    _set(driver, "plan-C", "3e21")
    driver.find_element("id", "plan-run").click()
    n, d, lstar = _read(driver, "plan-Nstar", "plan-Dstar", "plan-Lstar")
    a = model.allocate(3e21)
    for shown, want in ((n, a.N), (d, a.D), (lstar, a.loss)):
        assert _same(shown, want), (shown, want)
    iv = model.allocate_interval(3e21, level=0.9)
    for key, ids in (("N", "plan-Nstar"), ("D", "plan-Dstar"), ("loss", "plan-Lstar")):
        lo, hi = _read(driver, ids + "-lo", ids + "-hi")
        assert _same(lo, float(iv[key][0])) and _same(hi, float(iv[key][1])), key
    assert iv["N"][0] < a.N < iv["N"][1]
    L, lo, hi = _read(driver, "plan-L", "plan-L-lo", "plan-L-hi")
    N_used, D_used = _read(driver, "plan-N-used", "plan-D-used")
    cli = _cli_json("supervised", "predict", "--fit", fit, "--params", repr(N_used),
                    "--tokens", repr(D_used))  # fmt: skip
    assert _same(L, cli["loss"]) and _same(lo, cli["interval"][0]) and _same(hi, cli["interval"][1])

    # N and D given, another level: the forecast with its interval, as `supervised predict`
    driver.find_element("id", "plan-mode-ND").click()
    _set(driver, "plan-N", "3e9")
    _set(driver, "plan-D", "6e10")
    from selenium.webdriver.support.ui import Select

    Select(driver.find_element("id", "plan-level")).select_by_value("0.8")
    driver.find_element("id", "plan-run").click()
    L, lo, hi = _read(driver, "plan-L", "plan-L-lo", "plan-L-hi")
    cli = _cli_json("supervised", "predict", "--fit", fit, "--params", "3e9", "--tokens", "6e10",
                    "--level", "0.8")  # fmt: skip
    assert _same(L, cli["loss"]) and _same(lo, cli["interval"][0]) and _same(hi, cli["interval"][1])
    assert lo < L < hi

    # beyond the fitted runs, where the prior's k r term counts (the page dropped it: k = 0)
    for N, D in (("3e10", "6e11"), ("2e7", "1e8")):  # above, and below the fitted runs
        _set(driver, "plan-N", N)
        _set(driver, "plan-D", D)
        driver.find_element("id", "plan-run").click()
        L, lo, hi = _read(driver, "plan-L", "plan-L-lo", "plan-L-hi")
        cli = _cli_json("supervised", "predict", "--fit", fit, "--params", N, "--tokens", D,
                        "--level", "0.8")  # fmt: skip
        assert _same(lo, cli["interval"][0]) and _same(hi, cli["interval"][1]), (N, lo, hi, cli)
    _set(driver, "plan-N", "3e9")
    _set(driver, "plan-D", "6e10")

    # distillation vs supervised at this N and D: the page's
    # student losses equal `distill predict --teacher-loss`, and its answer follows them
    for lt, helps in (("1.9", True), ("2.2", False)):
        _set(driver, "plan-LT", lt)
        driver.find_element("id", "plan-run").click()
        sup, dist = _read(driver, "plan-LS-sup", "plan-LS-dist")
        cli = _cli_json("distill", "predict", "--student-params", "3e9", "--student-tokens",
                        "6e10", "--teacher-loss", lt)  # fmt: skip
        assert _same(sup, cli["supervised_loss"]) and _same(dist, cli["student_loss"]), lt
        verdict = driver.find_element("id", "plan-distill-verdict").text
        assert (dist < sup) is helps and verdict.startswith("distilling") is helps, verdict
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    driver.find_element("id", "planner").screenshot(str(ARTIFACTS / "report_planner.png"))


def _open_planner(driver, report):
    out, numbers = report
    driver.get((out / "report.html").as_uri())
    assert driver.execute_script("return document.getElementById('planner').dataset.ready") == "1"
    return numbers


def _cells(driver, *ids) -> list[str]:
    """The cells' text whether shown or hidden (Selenium's .text is '' for a hidden cell)."""
    return driver.execute_script(
        "return arguments[0].map(i => document.getElementById(i).textContent)", list(ids)
    )


def _shown(driver, id_) -> bool:
    return driver.execute_script(
        f"return document.getElementById('{id_}').closest('tr').offsetParent !== null"
    )


OUTPUT_IDS = (
    "plan-N-used",
    "plan-D-used",
    "plan-L",
    "plan-L-lo",
    "plan-L-hi",
    "plan-Nstar",
    "plan-Nstar-lo",
    "plan-Nstar-hi",
    "plan-Lstar",
    "plan-LS-sup",
    "plan-LS-dist",
)


def _model(numbers, tmp_path):
    from lmforecast.supervised import SupervisedScalingLaw

    fit = tmp_path / "fit.json"
    fit.write_text(json.dumps(numbers["sections"]["planner"]["fit"]))
    return SupervisedScalingLaw.load(fit)


def test_planner_level_change_recomputes_without_pressing_compute(driver, report, tmp_path):
    """What the user did: pick another level and read the intervals, never pressing compute."""
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select

    numbers = _open_planner(driver, report)
    model = _model(numbers, tmp_path)
    driver.find_element("id", "plan-mode-C").click()
    _set(driver, "plan-C", "3e21")  # typing recomputes
    for level in ("0.5", "0.95"):
        Select(driver.find_element("id", "plan-level")).select_by_value(level)
        iv = model.allocate_interval(3e21, level=float(level))
        lo, hi = _read(driver, "plan-Nstar-lo", "plan-Nstar-hi")
        assert _same(lo, float(iv["N"][0])) and _same(hi, float(iv["N"][1])), (level, lo, hi)
    # from the keyboard: the focused list moved one step up, 0.95 -> 0.9
    sel = driver.find_element("id", "plan-level")
    sel.send_keys(Keys.ARROW_UP)
    assert Select(sel).first_selected_option.get_attribute("value") == "0.9"
    iv = model.allocate_interval(3e21, level=0.9)
    lo, hi = _read(driver, "plan-Nstar-lo", "plan-Nstar-hi")
    assert _same(lo, float(iv["N"][0])) and _same(hi, float(iv["N"][1]))


@pytest.mark.parametrize("typed,plain", [
    (("C", "3e21 FLOPs"), ("C", "3e21")),
    (("C", "3000 P"), ("C", "3e18")),
    (("ND", "3B", "60B tokens"), ("ND", "3e9", "6e10")),
    (("ND", "3,000M", "0.06T"), ("ND", "3e9", "6e10")),
])  # fmt: skip
def test_planner_reads_si_suffixes_and_units(driver, report, typed, plain):
    """7B, 1.4T tokens, 1e22 FLOPs: what the CLI's numeric flags read (cli.flags.expand_si)."""
    _open_planner(driver, report)

    def enter(mode, *values):
        driver.find_element("id", "plan-mode-" + mode).click()
        for id_, v in zip(("plan-C",) if mode == "C" else ("plan-N", "plan-D"), values):
            _set(driver, id_, v)
        assert driver.find_element("id", "plan-error").text == "", values
        return _cells(driver, *OUTPUT_IDS[:5])

    got = enter(*typed)
    want = enter(*plain)
    assert got == want and all(got), (got, want)
    assert float(got[0]) > 0


def test_planner_error_clears_the_previous_numbers(driver, report):
    """A budget that cannot be read: an error naming it, and no earlier number left showing."""
    _open_planner(driver, report)
    driver.find_element("id", "plan-mode-C").click()
    _set(driver, "plan-C", "3e21")
    assert all(_cells(driver, *OUTPUT_IDS))
    _set(driver, "plan-C", "3e21 FLOPz")
    err = driver.find_element("id", "plan-error").text
    assert "C" in err and "FLOPz" in err, err
    assert _cells(driver, *OUTPUT_IDS) == [""] * len(OUTPUT_IDS)
    _set(driver, "plan-C", "-1e21")
    assert "positive" in driver.find_element("id", "plan-error").text
    assert _cells(driver, *OUTPUT_IDS) == [""] * len(OUTPUT_IDS)
    _set(driver, "plan-C", "3e21")  # back: numbers again, no error
    assert driver.find_element("id", "plan-error").text == "" and all(_cells(driver, *OUTPUT_IDS))


def test_planner_nd_mode_hides_the_budget_rows(driver, report):
    """Switching to N and D: the N*, D*, L* rows of the last budget are hidden and emptied."""
    _open_planner(driver, report)
    driver.find_element("id", "plan-mode-C").click()
    _set(driver, "plan-C", "3e21")
    budget = ("plan-Nstar", "plan-Dstar", "plan-Lstar")
    assert all(_cells(driver, *budget)) and all(_shown(driver, i) for i in budget)
    driver.find_element("id", "plan-mode-ND").click()
    _set(driver, "plan-N", "3e9")
    assert not any(_shown(driver, i) for i in budget)
    assert _cells(driver, *budget) == ["", "", ""]
    assert _read(driver, "plan-N-used") == [3e9]
    driver.find_element("id", "plan-mode-C").click()  # and back
    assert all(_cells(driver, *budget)) and all(_shown(driver, i) for i in budget)


def test_planner_explains_its_two_loss_intervals(driver, report, tmp_path):
    """At a budget the forecast and L* are one number with two intervals: each row says what
    it is, a note tells them apart, and the run forecast's interval holds L*'s (run scatter)."""
    numbers = _open_planner(driver, report)
    model = _model(numbers, tmp_path)
    driver.find_element("id", "plan-mode-C").click()
    _set(driver, "plan-C", "3e21")
    L, lo, hi = _read(driver, "plan-L", "plan-L-lo", "plan-L-hi")
    Ls, slo, shi = _read(driver, "plan-Lstar", "plan-Lstar-lo", "plan-Lstar-hi")
    assert _same(L, Ls) and _same(Ls, float(model.allocate(3e21).loss))
    assert lo <= slo < Ls < shi <= hi, (lo, slo, shi, hi)
    heads = driver.execute_script(
        "return ['plan-L', 'plan-Lstar'].map(i => document.getElementById(i)"
        ".closest('tr').querySelector('th').textContent)"
    )
    assert "run" in heads[0] and "optimum" in heads[1], heads
    note = driver.find_element("id", "plan-L-note")
    assert note.is_displayed() and "supervised predict" in note.text and "allocate" in note.text
    driver.find_element("id", "plan-mode-ND").click()
    assert not note.is_displayed()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    driver.find_element("id", "plan-mode-C").click()
    driver.find_element("id", "planner").screenshot(str(ARTIFACTS / "report_planner_budget.png"))


@pytest.fixture(scope="module")
def fit_report(tmp_path_factory):
    """A report on a user's saved fit (a published preset saved as a fit: no fitting here)."""
    from lmforecast.supervised import SupervisedScalingLaw

    d = tmp_path_factory.mktemp("fit_report")
    SupervisedScalingLaw.from_preset("busbridge2025").save(d / "fit.json")
    ctx = ReportContext(quick=True, progress=False, inputs={"fit": str(d / "fit.json")})
    build_report(d / "out", sections=["yours"], ctx=ctx)
    return d / "out"


def test_fit_summary_wraps_and_nothing_runs_off_the_right_edge(driver, fit_report, report):
    """The fit summary's long lines wrap inside the page (they ran past its right edge), and
    no element of either report makes the page scroll sideways."""
    driver.get((fit_report / "report.html").as_uri())
    pres = driver.execute_script(
        "return Array.from(document.querySelectorAll('pre')).map(p => [p.scrollWidth, "
        "p.clientWidth, p.textContent.split('\\n').reduce((a, l) => Math.max(a, l.length), 0)])"
    )
    assert pres and max(p[2] for p in pres) > 120  # a summary with a long line is shown
    for scroll, client, _ in pres:
        assert scroll <= client + 1, pres
    for page in (fit_report, report[0]):
        driver.get((page / "report.html").as_uri())
        wide = driver.execute_script(
            "return [document.documentElement.scrollWidth, window.innerWidth]"
        )
        assert wide[0] <= wide[1], (page, wide)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    driver.get((fit_report / "report.html").as_uri())
    driver.save_screenshot(str(ARTIFACTS / "report_fit_summary.png"))


def test_headline_sits_above_a_summary_split_into_real_and_simulated(driver, report):
    out, numbers = report
    driver.get((out / "report.html").as_uri())
    tops = driver.execute_script(
        "return ['headline', 'summary'].map(i => document.getElementById(i)"
        ".getBoundingClientRect().top)"
    )
    assert tops[0] < tops[1], tops
    caps = driver.execute_script(
        "return Array.from(document.querySelectorAll('#summary caption')).map(c => c.textContent)"
    )
    assert len(caps) == 2 and caps[0].startswith("On real data") and "SIMULATED" in caps[1]
    rows = driver.execute_script(
        "return ['real', 'simulated'].map(k => Array.from(document.querySelectorAll("
        "'#summary .summary-' + k + ' tbody tr')).map(r => r.dataset.section))"
    )
    assert rows[0] == [r["section"] for r in numbers["summary"] if not r["simulated"]]
    assert rows[1] == [r["section"] for r in numbers["summary"] if r["simulated"]]
    assert "trust" in rows[0] and "salience" in rows[1]  # zoo backtest real, salience simulated
    items = driver.execute_script(
        "return Array.from(document.querySelectorAll('#headline li[data-section]'))"
        ".map(li => [li.dataset.section, li.dataset.trust])"
    )
    assert items == [[e["section"], e["trust"]] for e in numbers["headline"]["entries"]]
    assert items and all(s != "salience" for s, _ in items)  # a simulated study: no headline
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    driver.execute_script("window.scrollTo(0, 0)")
    driver.save_screenshot(str(ARTIFACTS / "report_headline.png"))
