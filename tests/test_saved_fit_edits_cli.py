"""A hand-edited saved fit never crashes the command that reads it (brief: bad input).

Every saved fit a CLI verb reads back (`--fit`) is produced by its documented `fit` line, then
edited in two ways, one key at a time and exhaustively (no random draw): the key dropped, and
its value replaced by a string. The reading verb must either work (exit 0) or refuse the file
with a one-line error (exit 2); an internal error (exit 1) names the key that caused it.
"""

from __future__ import annotations

import json

import pytest

from cli_lines import run_main
from lmforecast.examples import copy as copy_examples

pytestmark = pytest.mark.slow

PYTHIA4 = "pythia-70m,pythia-160m,pythia-410m,pythia-1b"

# (saved file, the line that writes it, the line that reads it with FILE for the edited copy)
CASES = {
    "downstream": (
        "down.json",
        f"downstream fit --evals pythia --task piqa --models {PYTHIA4} --bootstrap 5 --quiet "
        "--out down.json",
        "downstream predict --fit FILE --params 2.8e9 --tokens 3e11 --json",
    ),
    "osl": (
        "osl.json",
        "osl fit --benchmarks osl/base_models.csv --target HumanEval --quiet --out osl.json",
        "osl predict --fit FILE --benchmarks osl/base_models.csv --json",
    ),
    "osl-flops": (
        "oslf.json",
        "osl fit --benchmarks osl/base_models.csv --target HumanEval --x flops --quiet "
        "--out oslf.json",
        "osl predict --fit FILE --benchmarks osl/base_models.csv --json",
    ),
    "data-constrained": (
        "dc.json",
        "supervised fit --runs dataconstrained/runs.csv --form data-constrained --bootstrap 4 "
        "--jobs 1 --quiet --out dc.json",
        "data-constrained epochs --fit FILE --params 6e8 --unique-tokens 1e9",
    ),
    "supervised": (
        "sup.json",
        "supervised fit --runs supervised/runs.csv --bootstrap 4 --jobs 1 --quiet --out sup.json",
        "supervised predict --fit FILE --params 7e9 --tokens 1.4e11 --json",
    ),
    "flp": (
        "flp.json",
        f"flp fit --evals pythia --task piqa --models {PYTHIA4} --method flp --bootstrap 5 "
        "--quiet --out flp.json",
        "flp predict --fit FILE --flops 5e22 --json",
    ),
}


def _dict_keys(obj, prefix=()):
    """Paths of every dict key (lists: their first element only)."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield prefix + (k,)
            yield from _dict_keys(v, prefix + (k,))
    elif isinstance(obj, list) and obj:
        yield from _dict_keys(obj[0], prefix + (0,))


def _single_key_edits(original: dict, out):
    """(label, path of the edited copy) for every dict key: dropped, then set to a string."""
    for path in _dict_keys(original):
        for how in ("drop", "string"):
            d = json.loads(json.dumps(original))
            parent = d
            for k in path[:-1]:
                parent = parent[k]
            if how == "drop":
                del parent[path[-1]]
            else:
                parent[path[-1]] = "x"
            out.write_text(json.dumps(d))
            yield f"{how} {'.'.join(map(str, path))}", out


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    d = tmp_path_factory.mktemp("edits")
    copy_examples(d)
    return d


def _write(made, monkeypatch, capsys, fname, write) -> dict:
    """Run the writing verb in `made` and return the saved file as JSON."""
    monkeypatch.chdir(made)
    assert run_main(write.split()) == 0, capsys.readouterr().err
    return json.loads((made / fname).read_text())


@pytest.mark.parametrize("name", list(CASES))
def test_every_single_key_edit_is_used_or_refused(made, monkeypatch, capsys, name):
    fname, write, read = CASES[name]
    original = _write(made, monkeypatch, capsys, fname, write)
    assert run_main(read.replace("FILE", fname).split()) == 0, capsys.readouterr().err
    bad, refused, n = [], 0, 0
    for where, edited in _single_key_edits(original, made / f"edited-{fname}"):
        n += 1
        capsys.readouterr()
        code = run_main(read.replace("FILE", edited.name).split())
        err = capsys.readouterr().err.strip()
        if code == 2:
            refused += 1
            errors = [ln for ln in err.splitlines() if ln.startswith("lmforecast: error:")]
            if len(errors) != 1 or not err.splitlines()[-1].startswith("lmforecast: error:"):
                bad.append(f"{where}: not one error line: {err!r}")
        elif code != 0:
            bad.append(f"{where}: exit {code}: {err[-200:]}")
    assert n > 10
    assert not bad, f"{name}: " + "; ".join(bad[:20])
    assert refused > n // 4  # the edits are checked, not silently ignored


def _isoflop(p):
    from lmforecast.isoflop.result import IsoFlopResult

    return IsoFlopResult.from_json(p).summary()


def _nextrun(p):
    from lmforecast.nextrun.advisor import NextRunAdvice

    return NextRunAdvice.from_json(p).summary()


def _recipes(p):
    from lmforecast.recipes.effective import RecipeComparison

    return RecipeComparison.from_json(p).summary()


def _shape(p):
    from lmforecast.shape.residual import ShapeTest

    return ShapeTest.from_json(p).summary()


# results read back only from Python (`<Result>.from_json(path).summary()`)
LIBRARY_CASES = {
    "isoflop": ("iso.json", "isoflop fit --runs isoflop/runs.csv --quiet --out iso.json", _isoflop),
    "next-run": (
        "next.json",
        "next-run --runs nextrun/runs.csv --target-params 7e9 --target-tokens 1.4e11 "
        "--budget 1e18 --bootstrap 5 --quiet --out next.json",
        _nextrun,
    ),
    "recipes": (
        "rec.json",
        "compare-recipes --base recipes/base.csv --new recipes/new.csv --flops 1e18 "
        "--bootstrap 5 --quiet --out rec.json",
        _recipes,
    ),
    "shape": (
        "shape.json",
        "shape test --runs shape/runs.csv --model-col model --permutations 20 --quiet "
        "--out shape.json",
        _shape,
    ),
}


@pytest.mark.parametrize("name", list(LIBRARY_CASES))
def test_every_single_key_edit_of_a_library_result(made, monkeypatch, capsys, name):
    from lmforecast.errors import InputError

    fname, write, read = LIBRARY_CASES[name]
    original = _write(made, monkeypatch, capsys, fname, write)
    assert read(made / fname)
    bad = []
    for where, edited in _single_key_edits(original, made / f"edited-{fname}"):
        try:
            read(edited)
        except InputError as exc:
            if "\n" in str(exc).strip():
                bad.append(f"{where}: not one line")
        except Exception as exc:  # noqa: BLE001 - name every key that fails
            bad.append(f"{where}: {exc!r}")
    assert not bad, f"{name}: " + "; ".join(bad[:20])
