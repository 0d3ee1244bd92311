"""`evals import --metric` without `--task` skips the tasks
that do not report the metric (one summary warning) instead of refusing the whole import; a
metric that no task reports is a typo, named with the nearest metric."""

from __future__ import annotations

import json
import warnings

import pytest

from lmforecast.data import read_harness
from lmforecast.errors import InputError


def _file(path, **results):
    doc = {
        "results": results,
        "config": {"model_args": "pretrained=EleutherAI/pythia-v1.1-160m,revision=step1000",
                   "num_fewshot": 0},
    }  # fmt: skip
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return path


def _folder(tmp_path):
    _file(
        tmp_path / "in/a.json",
        piqa={"acc": 0.6, "acc_stderr": 0.01, "acc_norm": 0.61, "acc_norm_stderr": 0.01},
        lambada_openai={"ppl": 40.0, "ppl_stderr": 1.5, "acc": 0.3, "acc_stderr": 0.006},
        crows_pairs_french={"likelihood_difference": 3.1, "pct_stereotype": 0.5},
        crows_pairs_english={"likelihood_difference": 3.0, "pct_stereotype": 0.55},
    )
    return tmp_path / "in"


def test_metric_without_task_skips_tasks_lacking_it_with_one_warning(tmp_path):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        df = read_harness(_folder(tmp_path), metrics=["acc"])
    assert sorted(df.task) == ["lambada_openai", "piqa"] and set(df.metric) == {"acc"}
    msgs = [str(x.message) for x in w]
    assert len(msgs) == 1, msgs
    assert "skipped 2 of 4 task(s)" in msgs[0] and "crows_pairs_english" in msgs[0]
    assert "\n" not in msgs[0]


def test_metric_list_keeps_what_each_task_reports(tmp_path):
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        df = read_harness(_folder(tmp_path), metrics=["acc", "ppl"])
    got = sorted(zip(df.task, df.metric, strict=True))
    assert got == [("lambada_openai", "acc"), ("lambada_openai", "ppl"), ("piqa", "acc")]


def test_metric_in_no_task_is_a_typo_with_did_you_mean(tmp_path):
    with pytest.raises(InputError, match=r"--metric 'acc_nrom': no task .*did you mean 'acc_norm'"):
        read_harness(_folder(tmp_path), metrics=["acc_nrom"])
    with pytest.raises(InputError, match="'acc_nrom'"):  # one typo among good metrics too
        read_harness(_folder(tmp_path), metrics=["acc", "acc_nrom"])


def test_named_tasks_keep_the_strict_rule(tmp_path):
    with pytest.raises(InputError, match=r"results\['lambada_openai'\] has no metric 'acc_norm'"):
        read_harness(_folder(tmp_path), tasks=["piqa", "lambada_openai"], metrics=["acc_norm"])


def test_cli_import_metric_skips_and_writes(cli, tmp_path):
    src = _folder(tmp_path)
    out = tmp_path / "o.csv"
    code, _, err = cli("evals", "import", src, "--metric", "acc", "--out", out)
    assert code == 0 and out.is_file(), err
    assert err.count("warning:") == 1 and "skipped 2 of 4" in err
    code, _, err = cli("evals", "import", src, "--metric", "acc_nrom", "--out", tmp_path / "x.csv")
    assert code == 2 and "did you mean 'acc_norm'" in err and not (tmp_path / "x.csv").exists()


def test_real_pythia_70m_folder(cli, tmp_path, shared_dir):
    d = shared_dir / "data/pythia/zero-shot/pythia-70m"
    if not d.exists():
        pytest.skip(f"{d} not present")
    out = tmp_path / "o.csv"
    code, _, err = cli("evals", "import", d, "--metric", "acc", "--out", out)
    assert code == 0, err
    assert "skipped 22 of 87 task(s)" in err and "crows_pairs" in err
