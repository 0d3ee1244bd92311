"""`osl fit` (and OSLResult.summary) prints the holdout as a readable line,
not a raw dict like `holdout: {'kind': 'cutoff', 'cutoff_flops': 8.4e+22}`."""

from __future__ import annotations

import warnings

import pytest

from lmforecast.osl import ObservationalScalingLaw
from lmforecast.osl.data import _bundled

B1 = str(_bundled("table_b1_base_models.csv"))


def test_osl_fit_prints_a_readable_holdout(cli):
    code, out, err = cli("osl", "fit", "--benchmarks", B1, "--target", "HumanEval")
    assert code == 0, err
    line = next(s for s in out.splitlines() if s.startswith("holdout:"))
    assert line == "holdout: models above 8.4e22 FLOPs (and models without FLOPs)"
    assert "{" not in out.split("-" * 64)[0]


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"holdout": "top", "holdout_top": 0.1}, "holdout: the best 10% of models on the target"),
        (
            {"holdout": "list", "heldout": ["Llama-2-70b-hf"]},
            "holdout: the named models: Llama-2-70b-hf",
        ),
        ({"holdout": "none"}, "holdout: none (every model with the target is fitted)"),
    ],
)
def test_summary_holdout_line_per_kind(kwargs, expected):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = ObservationalScalingLaw(2, **kwargs).fit(B1, "HumanEval").result_
    assert expected in res.summary().splitlines()
