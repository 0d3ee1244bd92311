"""Offline, shippable text for the zoo: three domains built deterministically on this machine.

- ``prose``: English docstrings (``ast``) and comments of the Python standard library;
- ``code``: the standard library's Python source;
- ``arith``: synthetic arithmetic lines ``a+b=c`` / ``a-b=c`` generated from a seed.

Files are split into train/validation by a stable hash of their relative path, so the same
interpreter always yields the same splits. Text is reduced to printable ASCII so that byte-level
tokens and characters coincide (one byte = one character), which keeps character offsets exact.
"""

from __future__ import annotations

import ast
import re
import sysconfig
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

DOMAINS = ("prose", "code", "arith")
_SKIP_DIRS = {"test", "tests", "idlelib", "site-packages", "lib2to3", "turtledemo", "__pycache__"}
_COMMENT = re.compile(r"^[ \t]*#[ \t]?(.*)$", re.M)
_NON_ASCII = re.compile(r"[^\x20-\x7e\n]")


def to_ascii(text: str) -> str:
    """Printable ASCII plus newline; tabs become four spaces, other characters are dropped."""
    return _NON_ASCII.sub("", text.replace("\t", "    ").replace("\r", ""))


def stdlib_files(max_files: int | None = None) -> list[Path]:
    """The standard library's ``.py`` files (tests, IDLE, demos excluded), sorted by path."""
    root = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(
        p for p in root.rglob("*.py") if not (_SKIP_DIRS & set(p.relative_to(root).parts[:-1]))
    )
    return files[:max_files] if max_files else files


def is_validation(relpath: str, every: int = 10) -> bool:
    """Deterministic split: a file is validation when crc32(path) % every == 0."""
    return zlib.crc32(relpath.encode()) % every == 0


def extract_prose(source: str) -> list[str]:
    """Docstrings (module, class, function) and comment blocks of one source file."""
    out: list[str] = []
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        tree = None
    if tree is not None:
        for node in ast.walk(tree):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                doc = ast.get_docstring(node, clean=True)
                if doc and len(doc) >= 40:
                    out.append(doc.strip())
    block: list[str] = []
    for m in _COMMENT.finditer(source):
        line = m.group(1).strip()
        if line and not line.startswith(("!", "-*-", "type:", "noqa", "pragma")):
            block.append(line)
        elif block:
            out.append(" ".join(block))
            block = []
    if block:
        out.append(" ".join(block))
    return [t for t in (to_ascii(x) for x in out) if len(t) >= 40]


@dataclass
class Corpus:
    """Per-domain documents for the train and validation splits."""

    train: dict[str, list[str]] = field(default_factory=dict)
    valid: dict[str, list[str]] = field(default_factory=dict)

    def chars(self, split: str = "train") -> dict[str, int]:
        docs = self.train if split == "train" else self.valid
        return {k: sum(len(d) + 1 for d in v) for k, v in docs.items()}


def arithmetic_problem(rng: np.random.Generator, max_digits: int = 2) -> tuple[str, str]:
    """One problem: (prompt ``a+b=`` or ``a-b=``, answer ``c``); operands have 1 to
    ``max_digits`` digits (differences are never negative)."""
    digits = rng.integers(1, max_digits + 1, size=2)
    a, b = (int(rng.integers(0, 10**k)) for k in digits)
    if rng.random() < 0.5:
        return f"{a}+{b}=", str(a + b)
    a, b = max(a, b), min(a, b)
    return f"{a}-{b}=", str(a - b)


def arithmetic_text(
    n_chars: int,
    seed: int,
    exclude: set[str] = frozenset(),
    line_chars: int = 2000,
    max_digits: int = 2,
) -> list[str]:
    """Documents of newline-separated problems (about ``n_chars`` characters in all)."""
    rng = np.random.default_rng(seed)
    docs, cur, size, total = [], [], 0, 0
    while total < n_chars:
        p, a = arithmetic_problem(rng, max_digits)
        if p in exclude:
            continue
        line = p + a
        cur.append(line)
        size += len(line) + 1
        if size >= line_chars:
            docs.append("\n".join(cur))
            total += size
            cur, size = [], 0
    if cur:
        docs.append("\n".join(cur))
    return docs


def build_corpus(
    max_chars: dict[str, int],
    seed: int,
    max_files: int | None = None,
    exclude_arith=(),
    arith_digits: int = 2,
) -> Corpus:
    """Build the corpus: at most ``max_chars[domain]`` training characters per domain, and
    validation text of a tenth of that (files from the validation split; a fresh arithmetic seed).
    """
    root = Path(sysconfig.get_paths()["stdlib"])
    corpus = Corpus({d: [] for d in DOMAINS}, {d: [] for d in DOMAINS})
    budget = {("train", d): max_chars[d] for d in ("prose", "code")} | {
        ("valid", d): max(max_chars[d] // 10, 20_000) for d in ("prose", "code")
    }
    used = dict.fromkeys(budget, 0)
    for path in stdlib_files(max_files):
        rel = str(path.relative_to(root))
        split = "valid" if is_validation(rel) else "train"
        if used[(split, "code")] >= budget[(split, "code")] and (
            used[(split, "prose")] >= budget[(split, "prose")]
        ):
            continue
        try:
            source = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        docs = corpus.train if split == "train" else corpus.valid
        if used[(split, "code")] < budget[(split, "code")]:
            code = to_ascii(source).strip()
            if code:
                docs["code"].append(code)
                used[(split, "code")] += len(code) + 1
        if used[(split, "prose")] < budget[(split, "prose")]:
            for t in extract_prose(source):
                docs["prose"].append(t)
                used[(split, "prose")] += len(t) + 1
    exclude = set(exclude_arith)
    corpus.train["arith"] = arithmetic_text(
        max_chars["arith"], seed, exclude, max_digits=arith_digits
    )
    corpus.valid["arith"] = arithmetic_text(
        max(max_chars["arith"] // 10, 20_000), seed + 1, exclude, max_digits=arith_digits
    )
    return corpus
