"""V-optimal model-subset selection (Ruan et al. 2024, Sec. 5, Eq. 9, Table 1)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from lmforecast.errors import InputError
from lmforecast.osl import SubsetSelector, paper_base_models, read_benchmarks
from lmforecast.osl.selection import n_family_combinations

# Table 1 (L281), with Llama-2 included; model names as in the authors' table
TABLE_1 = {
    8: {
        "Llama-2": ["7b", "13b", "70b"],
        "Mixtral": ["8x7B"],
        "Phi": ["phi-1_5", "phi-2"],
        "MPT": ["7b", "30b"],
    },
    12: {
        "Llama-2": ["7b", "13b", "70b"],
        "Llama-3": ["8B", "70B"],
        "DeepSeek-Coder": ["1.3b", "6.7b", "33b"],
        "Falcon": ["rw-1b", "7b", "40b", "180B"],
    },
    20: {
        "Llama-2": ["7b", "13b", "70b"],
        "Mixtral": ["8x7B"],
        "Qwen": ["7B", "14B", "72B"],
        "DeepSeek-Coder": ["1.3b", "6.7b", "33b"],
        "CodeLlama": ["7b", "13b", "34b", "70b"],
        "MPT": ["7b", "30b"],
        "Falcon": ["rw-1b", "7b", "40b", "180B"],
    },
}
SUB_7B = {
    8: {"Llama-2", "Llama", "Qwen", "DeepSeek-Coder", "Phi", "MPT"},
    12: {"Llama-2", "Llama", "Qwen", "DeepSeek-Coder", "Phi", "MPT", "Gemma", "Falcon"},
}


@pytest.fixture(scope="module")
def paper77(shared_dir):
    return paper_base_models(
        read_benchmarks(shared_dir / "data/obsscaling/base_llm_benchmark_eval.csv")
    )


@pytest.fixture(scope="module")
def selector(paper77):
    return SubsetSelector(3, include=["Llama-2"], max_families=10).fit(paper77)


@pytest.mark.parametrize("budget", [8, 12, 20])
def test_reproduces_table_1(selector, budget):
    sel = selector.search(budget)
    expected = TABLE_1[budget]
    assert set(sel.families) == set(expected)
    assert len(sel.models) == budget
    for fam, sizes in expected.items():
        models = selector.table_.loc[selector.table_["Model Family"] == fam, "Model"]
        assert len(models) == len(sizes)
        for s in sizes:
            assert any(s in m for m in models), (fam, s)
    # the reported objective is the Eq. 9 trace of the chosen subset
    assert sel.objective == pytest.approx(selector.objective_of(sel.families), rel=1e-10)


@pytest.mark.parametrize("budget", [8, 12])
def test_reproduces_table_1_sub_7b(paper77, budget):
    sel = SubsetSelector(3, include=["Llama-2"], max_size=7.0).fit(paper77).search(budget)
    assert set(sel.families) == SUB_7B[budget]
    assert len(sel.models) == budget


def test_intercept_reading_does_not_reproduce_table_1(paper77):
    """METHODS 4.7 item 6: augmenting S with ones changes the 8-model choice, so we don't."""
    sel = SubsetSelector(3, include=["Llama-2"], intercept=True).fit(paper77).search(8)
    assert set(sel.families) != set(TABLE_1[8])


def test_exact_search_equals_itertools_brute_force(selector):
    """Every admissible subset scored one at a time (the authors' loop) gives the same optimum."""
    fams = [f for f in selector.families_ if f != "Llama-2"]
    budget, best, best_fams = 12, np.inf, None
    n_fam = dict(zip(selector.families_, selector.n_fam_))
    for r in range(1, 10):
        for combo in itertools.combinations(fams, r):
            if n_fam["Llama-2"] + sum(n_fam[f] for f in combo) > budget:
                continue
            v = selector.objective_of(["Llama-2", *combo])
            if v < best:
                best, best_fams = v, {"Llama-2", *combo}
    sel = selector.search(budget)
    assert set(sel.families) == best_fams
    assert sel.objective == pytest.approx(best, rel=1e-10)


def test_random_baseline_is_worse_and_within_budget(selector):
    best = selector.search(12)
    rand = selector.random_baseline(12, n_samples=20, seed=0)
    assert len(rand) == 20
    for r in rand:
        assert 10 <= len(r.models) <= 12 and "Llama-2" in r.families
        assert r.objective >= best.objective - 1e-9
        assert r.objective == pytest.approx(selector.objective_of(r.families), rel=1e-9)
    assert np.median([r.objective for r in rand]) > 1.5 * best.objective


def test_authors_combination_count():
    assert n_family_combinations(20, 9) == 431_909  # issue: 431,909 family combinations


def test_selection_errors(paper77):
    with pytest.raises(InputError, match="'Nope' is not in the table"):
        SubsetSelector(include=["Nope"]).fit(paper77)
    sel = SubsetSelector(include=["Pythia"]).fit(paper77)
    with pytest.raises(InputError, match="over the budget"):
        sel.search(5)


def test_search_size_is_bounded(paper77, monkeypatch):
    import lmforecast.osl.selection as selection

    monkeypatch.setattr(selection, "MAX_SUBSETS", 1000)
    sel = SubsetSelector().fit(paper77)
    with pytest.raises(InputError, match="admissible family subsets"):
        sel.search(77)
    assert set(sel.search(5).families)  # small searches still run
