"""The package's layering, read from the source: docs/architecture.md's layer table is the one
source of truth (this test parses it), imports are read with `ast` (function-local ones included,
so a lazy import cannot hide a loop), and the checks fail on an import running back up the
layers, on any loop between packages or between modules, on a package missing from the table,
and on a module over 500 lines."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "lmforecast"
DOC = ROOT / "docs" / "architecture.md"
MAX_LINES = 500

#: Packages whose modules may import package code lazily (inside a function): the command line
#: and the report load each command's / section's code only when it runs; they sit at the top,
#: so a lazy import there cannot hide a loop. Everywhere else a function-local import is for an
#: optional heavy extra (torch, transformers, distributed, pyarrow, ...), never package code.
LAZY_OK = {"cli", "report", "__main__"}


# ---- the layer table -------------------------------------------------------------------------
def layer_table(text: str) -> dict[str, int]:
    """package -> rank, from the ``| rank | layer | packages |`` table of the doc."""
    ranks: dict[str, int] = {}
    rows = re.findall(r"^\|\s*(\d+)\s*\|[^|\n]*\|([^|\n]*)\|\s*$", text, flags=re.M)
    for rank, packages in rows:
        for name in re.findall(r"`([\w.]+)`", packages):
            ranks[name] = int(rank)
    return ranks


# ---- imports read from the source ------------------------------------------------------------
def module_name(path: Path, src: Path = SRC) -> str:
    parts = list(path.relative_to(src.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def imports_of(source: str, module: str, is_package: bool, known: set[str]):
    """(target module, line, function-local?) for each import of an ``lmforecast`` module."""
    package = module if is_package else module.rpartition(".")[0]
    tree = ast.parse(source)
    local_lines: set[int] = set()
    for fn in ast.walk(tree):
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            local_lines |= {
                n.lineno for n in ast.walk(fn) if isinstance(n, ast.Import | ast.ImportFrom)
            }
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            # `from . import x` / `from .pkg import mod`: the submodule when it is one
            targets = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in known else mod for a in node.names]
        else:
            continue
        for t in targets:
            if t == "lmforecast" or t.startswith("lmforecast."):
                out.append((t, node.lineno, node.lineno in local_lines))
    return out


def package_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def import_graph(sources: dict[str, tuple[str, bool]]):
    """module -> [(target module, line, local)] for sources {module: (text, is_package)}."""
    known = set(sources)
    return {m: imports_of(text, m, is_pkg, known) for m, (text, is_pkg) in sources.items()}


def read_sources(src: Path = SRC) -> dict[str, tuple[str, bool]]:
    return {
        module_name(p, src): (p.read_text(encoding="utf-8"), p.name == "__init__.py")
        for p in sorted(src.rglob("*.py"))
    }


# ---- the checks ------------------------------------------------------------------------------
def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def check(graph, ranks: dict[str, int]) -> list[str]:
    """Every violation of the layering, one line each (empty: the house reads one way)."""
    problems = []
    packages: dict[str, set[str]] = {}
    modules: dict[str, set[str]] = {}
    for mod, imports in sorted(graph.items()):
        src = package_of(mod)
        if src not in ranks:
            problems.append(f"package {src} is not in the layer table of docs/architecture.md")
            continue
        for target, line, local in imports:
            dst = package_of(target)
            if dst not in ranks:
                problems.append(f"package {dst} is not in the layer table of docs/architecture.md")
                continue
            if local and src not in LAZY_OK:
                problems.append(
                    f"{mod}:{line}: function-local import of {target}: import package code at "
                    "the top (lazy imports are for optional heavy extras)"
                )
            modules.setdefault(mod, set()).add(target)
            if src == dst:
                continue
            packages.setdefault(src, set()).add(dst)
            if ranks[dst] > ranks[src]:
                how = "function-local import" if local else "import"
                problems.append(
                    f"{mod}:{line}: {how} of {target} runs back up the layers "
                    f"({src} is rank {ranks[src]}, {dst} is rank {ranks[dst]})"
                )
    for comp in _cycles(packages):
        problems.append(f"packages import each other in a loop: {' <-> '.join(comp)}")
    for comp in _cycles(modules):
        problems.append(f"modules import each other in a loop: {' <-> '.join(comp)}")
    return sorted(set(problems))


@pytest.fixture(scope="module")
def ranks():
    r = layer_table(DOC.read_text(encoding="utf-8"))
    assert r, "docs/architecture.md has no layer table"
    return r


def test_the_source_follows_the_layer_table(ranks):
    problems = check(import_graph(read_sources()), ranks)
    assert not problems, "\n".join(problems)


def test_every_package_has_a_row(ranks):
    on_disk = {p.name for p in SRC.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    on_disk |= {p.stem for p in SRC.glob("*.py") if p.name != "__init__.py"}
    missing = sorted(on_disk - set(ranks))
    assert not missing, f"not in the layer table of docs/architecture.md: {missing}"


# ---- the checker can fail ----------------------------------------------------------------------
def _synthetic(**modules: str):
    return import_graph({m: (text, False) for m, text in modules.items()})


def test_a_planted_upward_import_fails(ranks):
    graph = _synthetic(
        **{
            "lmforecast.fitting.engine": "from ..laws import get_law\n",
            # the data layer reaching up into a method, hidden in a function
            "lmforecast.data.io": "def f():\n    from ..flp.model import FLP\n",
            "lmforecast.flp.model": "from ..fitting.engine import fit_law\n",
        }
    )
    problems = check(graph, ranks)
    assert problems == [
        "lmforecast.data.io:2: function-local import of lmforecast.flp.model runs back up the "
        "layers (data is rank 3, flp is rank 5)",
        "lmforecast.data.io:2: function-local import of lmforecast.flp.model: import package "
        "code at the top (lazy imports are for optional heavy extras)",
    ]
    # the same graph without the planted line passes
    del graph["lmforecast.data.io"]
    assert check(graph, ranks) == []


def test_a_planted_loop_fails_even_within_one_layer(ranks):
    graph = _synthetic(
        **{
            "lmforecast.osl.model": "from .holdout import cutoff_split\n",
            "lmforecast.osl.holdout": "def f():\n    from .model import ObservationalScalingLaw\n",
            "lmforecast.distill.model": "from ..supervised import SupervisedScalingLaw\n",
            "lmforecast.supervised.model": "def g():\n    from ..distill import model\n",
        }
    )
    problems = check(graph, ranks)
    assert "packages import each other in a loop: distill <-> supervised" in problems
    assert (
        "modules import each other in a loop: lmforecast.osl.holdout <-> lmforecast.osl.model"
        in problems
    )


def test_an_unknown_package_is_named(ranks):
    graph = _synthetic(**{"lmforecast.newmethod.fit": "from ..fitting import fit_law\n"})
    assert check(graph, ranks) == [
        "package newmethod is not in the layer table of docs/architecture.md"
    ]


def test_the_doc_table_is_parsed():
    ranks = layer_table(
        "| rank | layer | packages |\n|---|---|---|\n| 0 | base | `errors`, `store` |\n"
    )
    assert ranks == {"errors": 0, "store": 0}


# ---- room sizes --------------------------------------------------------------------------------
def test_no_module_over_500_lines():
    over = {
        str(p.relative_to(SRC)): n
        for p in SRC.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not over, f"modules over {MAX_LINES} lines (split by concept): {over}"


def test_a_planted_lazy_import_of_package_code_fails(ranks):
    text = "import numpy\n\n\ndef f():\n    import torch\n    from ..fitting import fit_law\n"
    problems = check(_synthetic(**{"lmforecast.flp.model": text}), ranks)
    assert problems == [
        "lmforecast.flp.model:6: function-local import of lmforecast.fitting: import package "
        "code at the top (lazy imports are for optional heavy extras)"
    ]  # torch, an optional extra, may be imported lazily
    cli = _synthetic(**{"lmforecast.cli.flp": "def f():\n    from ..flp import FLP\n"})
    assert check(cli, ranks) == []


# ---- the command line parses and formats -------------------------------------------------------
#: Packages the command line may not import: fitting, optimisation and statistics live in the
#: library, which the CLI calls.
CLI_BANNED_IMPORTS = ("scipy", "sklearn", "statsmodels", "torch")
#: numpy submodules and routines that fit, resample or summarise numbers; the CLI may use numpy
#: only to hold, check and index arrays (asarray, isfinite, ravel, nonzero, ...).
CLI_BANNED_NUMPY = {"linalg", "random", "polynomial", "fft", "polyfit", "polyval", "lstsq",
                    "percentile", "quantile", "nanpercentile", "nanquantile", "std", "var",
                    "cov", "corrcoef", "histogram", "interp", "gradient", "diff", "cumsum",
                    "log", "log10", "exp", "sqrt", "power"}  # fmt: skip


def numerical_code(source: str, module: str) -> list[str]:
    """`module:line: what` for each banned import or numpy routine in `source`."""
    found, tree = [], ast.parse(source)
    numpy_names = {"numpy"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "numpy":
                    numpy_names.add(a.asname or a.name)
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] in CLI_BANNED_IMPORTS or (
                parts[0] == "numpy" and set(parts[1:]) & CLI_BANNED_NUMPY
            ):
                found.append(f"{module}:{node.lineno}: imports {name}")
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.value.id in numpy_names and node.attr in CLI_BANNED_NUMPY):  # fmt: skip
            found.append(f"{module}:{node.lineno}: numpy.{node.attr}")
    return found


def test_the_cli_holds_no_numerical_code():
    found = []
    for p in sorted((SRC / "cli").rglob("*.py")):
        found += numerical_code(p.read_text(encoding="utf-8"), module_name(p))
    assert not found, "numerical code in cli/ (move it to the library):\n" + "\n".join(found)


def test_planted_numerical_code_in_the_cli_is_found():
    text = ("import numpy as np\nfrom scipy.optimize import minimize\n"
            "from numpy.linalg import lstsq\n\n\ndef f(x):\n    import torch\n"
            "    return np.polyfit(x, x, 1), np.asarray(x)\n")  # fmt: skip
    assert numerical_code(text, "lmforecast.cli.x") == [
        "lmforecast.cli.x:2: imports scipy.optimize",
        "lmforecast.cli.x:2: imports scipy.optimize.minimize",
        "lmforecast.cli.x:3: imports numpy.linalg",
        "lmforecast.cli.x:3: imports numpy.linalg.lstsq",
        "lmforecast.cli.x:7: imports torch",
        "lmforecast.cli.x:8: numpy.polyfit",
    ]
