"""The documentation, the README, the source and the tests read as a reference, not a work diary.

Words that date a text by how it was written (an audit, an ordinal session, sitting or round,
an issue number, a date given as the day something was measured or changed) belong in version
control and CHANGELOG.md (exempt), not in docs/, README.md, the source's comments, docstrings
and user-visible strings, the tests' docstrings and comments (this file, which lists the words,
excepted), nor in the names of test files and test functions. The patterns are narrow on
purpose: "rounding", "a round number", "an issue with X" and an example date passed as an
argument (``since="2026-01-01"``) are fine.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

ORDINAL = (
    r"(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth"
    r"|thirteenth|fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|nineteenth|twentieth"
    r"|\d+(?:st|nd|rd|th))"
)
# words of one phrase may be split over one line break, a comment's "#" or a string's quotes
GAP = r"[-\t #\"']*(?:\n[\t #\"']*)?"
PATTERNS = {
    "audit": r"\baudit(?:s|ed|ing|or|ors)?\b",
    "issue number": r"\bissues?" + GAP + r"#?\d+",
    "ordinal session": ORDINAL + GAP + r"(?:session|sitting|round|audit|zoo" + GAP + r"build)s?\b",
    "numbered session": r"\b(?:session|sitting|round)" + GAP + r"#?\d+\b",
    "relative session": r"\b(?:this|that|previous|earlier|later|next|last)"
    + GAP
    + r"(?:session|sitting|round)s?\b(?!-)",
    "history date": r"(?:\b(?:on|measured|tried|fixed|found|since|until|before|after|of)\s+"
    r"|\(|,\s*)20\d\d-\d\d-\d\d\b",
}
RX = {name: re.compile(p, re.I) for name, p in PATTERNS.items()}
SOURCE_SUFFIXES = {".py", ".html", ".js", ".css", ".txt", ".md"}


def hits(text: str) -> list[tuple[int, str, str]]:
    """(line number, pattern name, matched text) of every dating word in a text."""
    out = []
    for name, rx in RX.items():
        for m in rx.finditer(text):
            out.append((text.count("\n", 0, m.start()) + 1, name, m.group(0)))
    return sorted(out)


def _files() -> list[Path]:
    files = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    files += sorted(
        p for p in (ROOT / "src").rglob("*")
        if p.is_file() and p.suffix in SOURCE_SUFFIXES and ".egg-info" not in str(p)
    )  # fmt: skip
    # the tests, less this file: its patterns and examples are the words themselves
    files += sorted(
        p for p in (ROOT / "tests").rglob("*")
        if p.is_file() and p.suffix in SOURCE_SUFFIXES and p.resolve() != Path(__file__).resolve()
    )  # fmt: skip
    return [p for p in files if p.exists()]


@pytest.mark.parametrize(
    "text, dated",
    [
        ("fits saved before the seventh session keep it", True),
        ("Amendment (third round, 2026-11-24)", True),
        ("Within 2% (issue 7's criterion)", True),
        ("An audit found two more places", True),
        ("measured on 2026-11-25 in one run", True),
        ("since this round the stack is the default", True),
        ("on the third zoo build the CSV is worse", True),
        ("see audit 13", True),
        ("rounding to three significant digits", False),
        ("saved JSON that round-trips exactly", False),
        ("keep it under `nd` since the twelfth\nsession)", True),
        ("before the seventh  # \n    # session the value", True),
        ("issue\n27", True),
        ("the first\n\n## Session state", False),
        ("a round number of tokens", False),
        ("an issue with the tokenizer", False),
        ('L.records(since="2026-01-01")', False),
        ("expected a date like 2026-01-31 or an ISO time", False),
        ("the second term of Eq. 4; the fifth column", False),
    ],
)
def test_the_patterns_flag_dating_words_and_only_those(text, dated):
    assert bool(hits(text)) is dated, hits(text)


def test_docs_readme_source_and_tests_carry_no_dating_words():
    found = []
    for path in _files():
        for line, name, word in hits(path.read_text(errors="replace")):
            found.append(f"{path.relative_to(ROOT)}:{line}: {name}: {word!r}")
    assert not found, "dating words (history goes in git and CHANGELOG.md):\n" + "\n".join(found)


def test_test_names_carry_no_dating_words():
    name_rx = re.compile(r"audit|round_?\d|session_?\d|sitting|issue_?\d", re.I)
    found = []
    for path in sorted((ROOT / "tests").glob("test_*.py")):
        if name_rx.search(path.stem):
            found.append(path.name)
        for m in re.finditer(r"^\s*def (test_\w+)", path.read_text(), re.M):
            if name_rx.search(m.group(1)):
                found.append(f"{path.name}::{m.group(1)}")
    assert not found, "tests named after the sitting that wrote them:\n" + "\n".join(found)
