"""The report's summary table and its JSON: every number the HTML shows is in report.json."""

from __future__ import annotations

import html as _html
import json
import re

import pytest

from lmforecast.report.builder import SECTION_MODULES, ReportContext, build_report
from lmforecast.report.summary import EXTRACTORS, fmt


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("r")
    build_report(out, sections=["trust"], ctx=ReportContext(quick=True, progress=False))
    return (out / "report.html").read_text(), json.loads((out / "report.json").read_text())


def _cells(fragment: str) -> list[list[str]]:
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", fragment, flags=re.S)
    cells = [
        [_html.unescape(re.sub(r"<[^>]+>", "", c)) for c in re.findall(r"<td[^>]*>(.*?)</td>", r)]
        for r in rows
    ]
    return [c for c in cells if c]  # header rows hold <th> only


def test_every_section_has_a_summary_reader():
    assert {m.rsplit(".", 1)[1] for m in SECTION_MODULES} <= set(EXTRACTORS)


def test_summary_sits_at_the_top_and_links_to_its_sections(built):
    text, numbers = built
    assert text.index("id='summary'") < text.index("<nav>") < text.index('<section id="trust"')
    rows = numbers["summary"]
    assert rows and all(r["section"] == "trust" for r in rows)
    r = rows[0]
    sec = numbers["sections"]["trust"]
    assert r["coverage"] == sec["coverage"] and r["error"] == min(
        v for k, v in sec["median_abs_rel_error"].items() if not k.startswith("baseline")
    )
    table = text[text.index("id='summary'") : text.index("</table>", text.index("id='summary'"))]
    cells = _cells(table)
    assert len(cells) == len(rows)
    for c, r in zip(cells, rows, strict=True):
        assert c[0] == r["method"] and c[3] == fmt(r["error"]) and c[6] == fmt(r["coverage"], True)
    assert 'href="#trust"' in table


def test_every_table_cell_in_the_html_is_in_the_json(built):
    text, numbers = built
    tables = numbers["tables"]["trust"]
    assert tables
    for t in tables:
        start = text.index(f"<caption>{_html.escape(t['caption'])}</caption>")
        frag = text[start : text.index("</table>", start)]
        shown = _cells(frag)
        assert len(shown) == len(t["rows"])
        for shown_row, row in zip(shown, t["rows"], strict=True):
            want = [
                t["na_rep"] if v is None
                else t["float_format"].format(v) if isinstance(v, float) else str(v)
                for v in row
            ]  # fmt: skip
            assert shown_row == want
