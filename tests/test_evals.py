"""lm-evaluation-harness results -> tidy table (lmforecast.data.evals)."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from lmforecast import examples
from lmforecast.data import load_pythia, read_harness
from lmforecast.data.evals import (
    ALL_COLUMNS,
    BUNDLED_PYTHIA_TASKS,
    PYTHIA_ARCHITECTURES,
    PYTHIA_TOTAL_PARAMS,
    canonical_model_name,
    make_pythia_table,
    pythia_models,
    read_evals_table,
    write_evals_table,
)
from lmforecast.errors import InputError

PYTHIA_STEPS = [0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1000] + list(range(3000, 143001, 10000))


def _zero_shot(shared_dir):
    d = shared_dir / "data/pythia/zero-shot"
    if not d.exists():
        pytest.skip(f"{d} not present")
    return d


# ----------------------------------------------------------------------------- tiny files


def old_layout(pretrained="EleutherAI/pythia-v1.1-160m", revision="step1000", **results):
    args = f"use_accelerate=True,pretrained={pretrained}"
    if revision is not None:
        args += f",revision={revision}"
    return {
        "results": results
        or {
            "piqa": {"acc": 0.6, "acc_stderr": 0.01, "acc_norm": 0.61, "acc_norm_stderr": 0.011},
            "lambada_openai": {"ppl": 40.0, "ppl_stderr": 1.5, "acc": 0.3, "acc_stderr": 0.006},
        },
        "versions": {"piqa": 0, "lambada_openai": 0},
        "config": {"model": "hf-causal", "model_args": args, "num_fewshot": 0},
    }


def new_layout(model_args="pretrained=EleutherAI/pythia-410m-deduped,revision=step3000"):
    return {
        "results": {
            "arc_easy": {
                "name": "arc_easy",
                "alias": "arc_easy",
                "sample_len": 2376,  # metadata, not a metric, in the current layout
                "acc,none": 0.52,
                "acc_stderr,none": 0.0102,
                "acc_norm,none": 0.45,
                "acc_norm_stderr,none": 0.0101,
            },
            "gsm8k": {
                "alias": "gsm8k",
                "exact_match,strict-match": 0.02,
                "exact_match_stderr,strict-match": 0.004,
                "exact_match,flexible-extract": 0.03,
                "exact_match_stderr,flexible-extract": "N/A",
            },
        },
        "configs": {"arc_easy": {"task": "arc_easy", "num_fewshot": 0}, "gsm8k": {"task": "gsm8k"}},
        "versions": {"arc_easy": 1.0, "gsm8k": 3.0},
        "n-shot": {"arc_easy": 0, "gsm8k": 5},
        "config": {"model": "hf", "model_args": model_args, "batch_size": "auto"},
        "git_hash": "abc123",
    }


def write(path, doc):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc))
    return path


def test_old_layout_tiny(tmp_path):
    f = write(tmp_path / "a.json", old_layout())
    df = read_harness(f)
    assert list(df.columns) == ALL_COLUMNS
    assert len(df) == 4  # piqa acc, acc_norm; lambada acc, ppl -- stderr folded, not rows
    row = df[(df.task == "lambada_openai") & (df.metric == "ppl")].iloc[0]
    assert row.model == "pythia-160m" and row.step == 1000 and row.revision == "step1000"
    assert row.value == 40.0 and row.stderr == 1.5 and row.n_shot == 0
    assert row.source == str(f)
    assert row.params == PYTHIA_TOTAL_PARAMS["160m"]
    assert row.params_nonembedding == 85_056_000
    assert row.tokens == 1000 * 2_097_152
    assert row.flops == 6.0 * PYTHIA_TOTAL_PARAMS["160m"] * 1000 * 2_097_152


def test_new_layout_tiny(tmp_path):
    f = write(tmp_path / "b.json", new_layout())
    df = read_harness(f).set_index(["task", "metric"])
    assert set(df.index) == {
        ("arc_easy", "acc"),
        ("arc_easy", "acc_norm"),
        ("gsm8k", "exact_match,strict-match"),
        ("gsm8k", "exact_match,flexible-extract"),
    }
    assert (df.model == "pythia-410m-deduped").all() and (df.step == 3000).all()
    assert df.loc[("arc_easy", "acc"), "value"] == 0.52
    assert df.loc[("arc_easy", "acc"), "stderr"] == 0.0102
    assert df.loc[("gsm8k", "exact_match,strict-match"), "stderr"] == 0.004
    assert math.isnan(df.loc[("gsm8k", "exact_match,flexible-extract"), "stderr"])  # "N/A"
    assert df.loc[("gsm8k", "exact_match,strict-match"), "n_shot"] == 5
    assert df.loc[("arc_easy", "acc"), "n_shot"] == 0


def test_new_layout_model_args_dict_and_model_name(tmp_path):
    doc = new_layout({"pretrained": "EleutherAI/pythia-70m", "revision": "step512"})
    a = read_harness(write(tmp_path / "a/x.json", doc))
    assert set(a.model) == {"pythia-70m"} and set(a.step) == {512}
    doc = new_layout(None)
    doc["config"].pop("model_args")
    doc["config"]["model_name"] = "EleutherAI/pythia-12b"  # final model: no revision
    b = read_harness(write(tmp_path / "b/x.json", doc))
    assert set(b.model) == {"pythia-12b"} and b.step.isna().all() and b.revision.isna().all()
    assert (b.tokens == 143_000 * 2_097_152).all()


def test_both_layouts_in_one_folder(tmp_path):
    write(tmp_path / "runs/old/a.json", old_layout())
    write(tmp_path / "runs/new/b.json", new_layout())
    df = read_harness(tmp_path / "runs")
    assert set(df.model) == {"pythia-160m", "pythia-410m-deduped"}
    assert set(df.source) == {"runs/old/a.json", "runs/new/b.json"}
    assert len(df) == 8
    # the same file reached twice (folder + file) is read once, not a duplicate
    again = read_harness([tmp_path / "runs", tmp_path / "runs/old/a.json"])
    pd.testing.assert_frame_equal(again, df)


def test_task_and_metric_filters(tmp_path):
    f = write(tmp_path / "a.json", old_layout())
    df = read_harness(f, tasks=["piqa"], metrics=["acc"])
    assert list(zip(df.task, df.metric, strict=True)) == [("piqa", "acc")]
    # with the tasks named, each must report every metric (the documented strictness)
    with pytest.raises(InputError, match=r"a\.json: results\['lambada_openai'\] has no metric"):
        read_harness(f, tasks=["piqa", "lambada_openai"], metrics=["acc_norm"])


def test_canonical_names():
    assert canonical_model_name("EleutherAI/pythia-v1.1-160m") == "pythia-160m"
    assert canonical_model_name("EleutherAI/pythia-v1.1-1b-bf16") == "pythia-1b"
    assert canonical_model_name("EleutherAI/pythia-v1.1-2.8b-deduped") == "pythia-2.8b-deduped"
    assert canonical_model_name("EleutherAI/pythia-6.9b-deduped") == "pythia-6.9b-deduped"
    assert canonical_model_name("meta-llama/Llama-2-7b-hf") == "meta-llama/Llama-2-7b-hf"


# ----------------------------------------------------------------------------- registry


def test_pythia_registry_matches_architecture():
    """Table 1 non-embedding counts equal the GPT-NeoX count 12 L d^2 + 13 L d + 2 d (QKV, out,
    4d FFN with biases, two LayerNorms per layer, final LayerNorm); totals add the untied
    input/output embeddings 2 V d."""
    reg = pythia_models().set_index("model")
    assert len(reg) == 16
    assert reg.loc["pythia-70m", "params_nonembedding"] == 18_915_328
    assert reg.loc["pythia-12b-deduped", "params_nonembedding"] == 11_327_027_200
    assert reg.loc["pythia-410m", "params"] == 405_334_016
    for size, (n_layers, d, vocab, nonemb) in PYTHIA_ARCHITECTURES.items():
        assert 12 * n_layers * d * d + 13 * n_layers * d + 2 * d == nonemb, size
        assert nonemb + 2 * vocab * d == PYTHIA_TOTAL_PARAMS[size], size
        for name in (f"pythia-{size}", f"pythia-{size}-deduped"):
            assert reg.loc[name, "params"] == PYTHIA_TOTAL_PARAMS[size]
            assert reg.loc[name, "tokens"] == 299_892_736_000
            assert reg.loc[name, "tokens_per_step"] == 2_097_152


def test_models_table(tmp_path):
    f = write(
        tmp_path / "r.json", old_layout(pretrained="acme/tiny-1", revision="step10", **_one())
    )
    with pytest.raises(InputError, match=r"r\.json: model 'acme/tiny-1' is not in the built-in"):
        read_harness(f)
    models = tmp_path / "models.csv"
    models.write_text("model,params,tokens_per_step\nacme/tiny-1,1000000,500\n")
    df = read_harness(f, models=models)
    assert df.params.iloc[0] == 1e6 and df.tokens.iloc[0] == 5000 and df.flops.iloc[0] == 3e10
    assert math.isnan(df.params_nonembedding.iloc[0])
    # a user row overrides the built-in entry
    models.write_text("model,params,tokens\npythia-160m,1e8,1e9\n")
    g = write(tmp_path / "g/r.json", old_layout(revision=None))
    assert read_harness(g, models=models).params.iloc[0] == 1e8
    models.write_text("model,params\nx,1\n")
    with pytest.raises(InputError, match="'tokens' or a 'tokens_per_step'"):
        read_harness(g, models=models)
    models.write_text("model,params,tokens\nx,-1,5\n")
    with pytest.raises(InputError, match="column 'params' row 1"):
        read_harness(g, models=models)


def _one():
    return {"piqa": {"acc": 0.5, "acc_stderr": 0.01}}


# ----------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "content, message",
    [
        (b'{"hello": 1}', "no 'results' object"),
        (b"[1, 2, 3]", "no 'results' object"),
        (b"model,acc\na,0.5\n", "not JSON"),
        (bytes(range(256)), "not UTF-8"),
    ],
)
def test_not_harness_output(tmp_path, content, message):
    f = tmp_path / "bad.json"
    f.write_bytes(content)
    with pytest.raises(InputError, match=f"bad.json: not lm-evaluation-harness output.*{message}"):
        read_harness(f)


def test_bad_step_and_duplicates(tmp_path):
    f = write(tmp_path / "x.json", old_layout(revision="stepX"))
    with pytest.raises(InputError, match=r"x\.json: cannot parse a training step from revision="):
        read_harness(f)
    a = write(tmp_path / "d/a.json", old_layout())
    b = write(tmp_path / "d/b.json", old_layout())
    dup = r"duplicate result .*pythia-160m.* step 1000 .*a\.json and .*b\.json"
    with pytest.raises(InputError, match=dup):
        read_harness([a, b])
    with pytest.raises(InputError, match="no such file"):
        read_harness(tmp_path / "nope.json")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no \\*.json files"):
        read_harness(tmp_path / "empty")


# ----------------------------------------------------------------------------- real data


def test_shared_pythia_files(shared_dir):
    root = _zero_shot(shared_dir)
    df = read_harness(root)
    folders = sorted(p.name for p in root.iterdir() if p.is_dir())
    assert len(folders) == 12
    assert df.model.nunique() == 12
    assert set(df.model) == {canonical_model_name(f"EleutherAI/{f}") for f in folders}
    steps = df.groupby("model").step.apply(lambda s: sorted(s.unique()))
    assert all(list(s) == PYTHIA_STEPS for s in steps)
    tasks = set(df.task)
    assert set(BUNDLED_PYTHIA_TASKS) <= tasks
    assert sum(t.startswith("hendrycksTest-") for t in tasks) == 57
    assert sum(t.startswith("crows_pairs_") for t in tasks) == 22
    assert len(tasks) == 87
    assert (df.n_shot == 0).all() and not df.value.isna().any()
    # value by hand: the raw JSON of pythia-160m at step 143000
    raw = json.loads((root / "pythia-160m/160m_step143000.json").read_text())
    sel = df[(df.model == "pythia-160m") & (df.step == 143000) & (df.task == "piqa")]
    acc = sel.set_index("metric").loc["acc"]
    assert acc.value == raw["results"]["piqa"]["acc"] == 0.6273122959738846
    assert acc.stderr == raw["results"]["piqa"]["acc_stderr"]
    assert acc.tokens == 299_892_736_000
    assert acc.flops == 6.0 * 162_322_944 * 299_892_736_000
    # scaling sanity: at the final step, lambada accuracy rises with size (non-deduped suite)
    lam = df[(df.step == 143000) & (df.task == "lambada_openai") & (df.metric == "acc")]
    lam = lam[~lam.model.str.endswith("-deduped")].sort_values("params")
    assert np.all(np.diff(lam.value.to_numpy()) > 0)


def test_bundled_table_equals_fresh_import(shared_dir, tmp_path):
    from importlib import resources

    root = _zero_shot(shared_dir)
    fresh = read_harness(root, tasks=BUNDLED_PYTHIA_TASKS)
    pd.testing.assert_frame_equal(load_pythia(), fresh)
    pd.testing.assert_frame_equal(make_pythia_table(root), fresh)
    # byte-identical regeneration (scripts/make_pythia_table.py writes exactly this)
    out = tmp_path / "p.csv.gz"
    write_evals_table(fresh, out)
    bundled = resources.files("lmforecast") / "data/bundled/pythia/pythia_zero_shot.csv.gz"
    assert out.read_bytes() == bundled.read_bytes()


def test_load_pythia_contents():
    df = load_pythia()
    assert list(df.columns) == ALL_COLUMNS
    assert df.model.nunique() == 12 and set(df.task) == set(BUNDLED_PYTHIA_TASKS)
    assert df.groupby("model").step.nunique().eq(27).all()
    assert not df.duplicated(["model", "step", "task", "metric"]).any()
    assert set(df.metric) == {"acc", "acc_norm", "ppl"}
    lam = df[df.task == "lambada_openai"].metric.value_counts().to_dict()
    assert lam == {"acc": 324, "ppl": 324}
    acc = df[df.metric == "acc"].value
    assert acc.between(0, 1).all()
    assert not df[["value", "params", "tokens", "flops"]].isna().any().any()


@pytest.mark.parametrize("ext", [".csv", ".tsv", ".jsonl", ".csv.gz", ".parquet"])
def test_table_round_trip(tmp_path, ext):
    if ext == ".parquet":
        pytest.importorskip("pyarrow")
    doc = new_layout(None)
    doc["config"].pop("model_args")
    doc["config"]["model_name"] = "EleutherAI/pythia-12b"  # step NA, revision None, NaN stderr
    final = read_harness(write(tmp_path / "f/x.json", doc))
    df = pd.concat([load_pythia(), final], ignore_index=True)
    out = tmp_path / f"t{ext}"
    write_evals_table(df, out)
    pd.testing.assert_frame_equal(read_evals_table(out), df)


# ----------------------------------------------------------------------------- wide views


def test_to_benchmark_frame_final_and_step():
    from lmforecast.data.evals import default_family, to_benchmark_frame

    df = load_pythia()
    w = to_benchmark_frame(df)
    assert len(w) == 12 and list(w.columns[:5]) == [
        "Model",
        "Model Family",
        "Model Size (B)",
        "Pretraining Data Size (T)",
        "FLOPs (1E21)",
    ]
    assert set(w["Model Family"]) == {"pythia", "pythia-deduped"}
    assert default_family("pythia-1.4b-deduped") == "pythia-deduped"
    r = w.set_index("Model").loc["pythia-160m"]
    sel = df[(df.model == "pythia-160m") & (df.step == 143000) & (df.metric == "acc")]
    assert r["piqa"] == sel.set_index("task").loc["piqa", "value"]
    assert r["FLOPs (1E21)"] == pytest.approx(6 * 162_322_944 * 299_892_736_000 / 1e21, rel=1e-15)
    assert r["Model Size (B)"] == pytest.approx(0.162322944)
    early = to_benchmark_frame(
        df, step=1000, metric={"arc_challenge": "acc_norm"}, tasks=["arc_challenge"]
    )
    v = df[(df.model == "pythia-70m") & (df.step == 1000) & (df.task == "arc_challenge")]
    assert (
        early.set_index("Model").loc["pythia-70m", "arc_challenge"]
        == v.set_index("metric").loc["acc_norm", "value"]
    )
    assert early["Pretraining Data Size (T)"].eq(1000 * 2_097_152 / 1e12).all()
    with pytest.raises(InputError, match="task 'lambada_openai' has no metric 'acc_norm'"):
        to_benchmark_frame(df, metric="acc_norm")
    with pytest.raises(InputError, match="has no results at step 7"):
        to_benchmark_frame(df, step=7)


# ----------------------------------------------------------------------------- CLI


def test_cli_import_round_trip(cli, tmp_path):
    write(tmp_path / "runs/old/a.json", old_layout())
    write(tmp_path / "runs/new/b.json", new_layout())
    out = tmp_path / "t.csv"
    code, stdout, err = cli("evals", "import", tmp_path / "runs", "--out", out, "--json")
    assert code == 0, err
    info = json.loads(stdout)
    assert info["n_models"] == 2 and info["rows"] == 8 and info["n_tasks"] == 4
    pd.testing.assert_frame_equal(read_evals_table(out), read_harness(tmp_path / "runs"))
    code, stdout, err = cli("evals", "show", out)
    assert code == 0 and "models (2): pythia-160m, pythia-410m-deduped" in stdout
    code, stdout, _ = cli("evals", "show", "pythia", "--json")
    assert code == 0 and json.loads(stdout)["rows"] == 4536
    # filters, and a user models table for a non-Pythia model
    write(tmp_path / "x/r.json", old_layout(pretrained="acme/tiny-1", revision="step10", **_one()))
    (tmp_path / "m.csv").write_text("model,params,tokens_per_step\nacme/tiny-1,1000000,500\n")
    out2 = tmp_path / "t2.jsonl"
    code, stdout, err = cli(
        "evals", "import", tmp_path / "x", tmp_path / "runs/old", "--models", tmp_path / "m.csv",
        "--out", out2, "--task", "piqa", "--metric", "acc",
    )  # fmt: skip
    assert code == 0, err
    t = read_evals_table(out2)
    assert sorted(t.model) == ["acme/tiny-1", "pythia-160m"] and set(t.metric) == {"acc"}


def test_cli_import_shared_matches_bundled(cli, shared_dir, tmp_path):
    root = _zero_shot(shared_dir)
    out = tmp_path / "p.csv.gz"
    args = ["--task", ",".join(BUNDLED_PYTHIA_TASKS)]
    code, _, err = cli("evals", "import", root, "--out", out, *args)
    assert code == 0, err
    pd.testing.assert_frame_equal(read_evals_table(out), load_pythia())


def _bad_cli(cli, tmp_path, files, *extra):
    for name, content in files.items():
        f = tmp_path / name
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(content if isinstance(content, bytes) else json.dumps(content).encode())
    out = tmp_path / "out.csv"
    code, stdout, err = cli("evals", "import", tmp_path / "in", "--out", out, *extra)
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("lmforecast: error: ") and "Traceback" not in err
    assert not out.exists() and stdout == ""
    return err


def test_cli_bad_inputs(cli, tmp_path):
    cases = [
        ({"in/a.json": {"foo": [1, 2]}}, (), "a.json: not lm-evaluation-harness output"),
        ({"in/a.json": b"model,acc\npythia,0.5\n"}, (), "a.json: not lm-evaluation-harness"),
        ({"in/a.json": bytes(range(200, 256)) * 3}, (), "a.json: not lm-evaluation-harness"),
        ({"in/a.json": old_layout(revision="stepX")}, (), "a.json: cannot parse a training step"),
        (
            {"in/a.json": old_layout()},
            ("--metric", "acc_norm", "--task", "piqa,lambada_openai"),
            "has no metric 'acc_norm'",
        ),
        ({"in/a.json": old_layout()}, ("--metric", "acc_nrom"), "did you mean 'acc_norm'?"),
        (
            {"in/a.json": old_layout(pretrained="acme/x", **_one())},
            (),
            "a.json: model 'acme/x' is not in the built-in models table",
        ),
        (
            {"in/a.json": old_layout(), "in/sub/b.json": old_layout()},
            (),
            "duplicate result for model 'pythia-160m' step 1000",
        ),
    ]
    for i, (files, extra, message) in enumerate(cases):
        err = _bad_cli(cli, tmp_path / str(i), files, *extra)
        assert message in err, (i, err)
    # a CSV given directly, and an unknown output format / missing folder
    csv = tmp_path / "scores.csv"
    csv.write_text("model,acc\na,1\n")
    code, _, err = cli("evals", "import", csv, "--out", tmp_path / "o.csv")
    assert code == 2 and "scores.csv: not lm-evaluation-harness output" in err
    assert not (tmp_path / "o.csv").exists()
    code, _, err = cli("evals", "import", csv, "--out", tmp_path / "o.xlsx")
    assert code == 2 and "unknown table format" in err
    code, _, err = cli("evals", "import", csv, "--out", tmp_path / "nope/o.csv")
    assert code == 2 and "does not exist" in err
    code, _, err = cli("evals", "show", tmp_path / "scores.csv")
    assert code == 2 and "missing column(s)" in err


def test_cli_help_has_example(cli):
    for verb in ("import", "show"):
        code, out, _ = cli("evals", verb, "--help")
        assert code == 0 and f"lmforecast evals {verb}" in out and "examples" in out


def test_osl_pca_and_fit_from_evals(cli, tmp_path):
    from lmforecast.data.evals import to_benchmark_frame

    metrics = "arc_easy,arc_challenge,piqa,sciq,winogrande,lambada_openai"
    code, out, err = cli("osl", "pca", "--evals", "pythia", "--metrics", metrics, "--pcs", "2",
                         "--json")  # fmt: skip
    assert code == 0, err
    res = json.loads(out)
    # the same PCA from the wide table written by hand
    wide = to_benchmark_frame(load_pythia())
    wide.to_csv(tmp_path / "wide.csv", index=False)
    code, out2, err = cli("osl", "pca", "--benchmarks", tmp_path / "wide.csv", "--metrics", metrics,
                          "--pcs", "2", "--json")  # fmt: skip
    assert code == 0, err
    assert json.loads(out2)["explained_variance"] == res["explained_variance"]
    assert res["explained_variance"][0] > 0.9  # one capability axis dominates within Pythia
    code, out, err = cli("osl", "fit", "--evals", "pythia", "--target", "lambada_openai",
                         "--metrics", "arc_easy,arc_challenge,piqa,sciq,winogrande",
                         "--pcs", "1", "--holdout-top", "0.25", "--reference-family", "pythia",
                         "--json")  # fmt: skip
    assert code == 0, err
    fit = json.loads(out)
    # the holdout is the top quarter on the target (3 of 12 models), fitted on the other 9
    y = wide.set_index("Model")["lambada_openai"].dropna()
    assert set(fit["heldout"]) == set(y.nlargest(3).index) and fit["n_train"] == 9
    assert fit["explained_variance"][0] > 0.9
    # the fitted sigmoid forecasts each held-out (stronger) model within 5 points of accuracy,
    # inside its 90% interval, and test_mse is the mean squared error of those forecasts
    # (forecasts in points, the harness's fractions x 100; test_mse in points^2)
    errs = []
    for f in fit["forecasts"]:
        assert f["y"] == pytest.approx(100 * y[f["model"]], abs=1e-10)
        assert abs(f["y_pred"] - f["y"]) < 5, f
        assert f["interval"][0] <= f["y"] <= f["interval"][1], f
        errs.append(f["y_pred"] - f["y"])
    assert fit["test_mse"] == pytest.approx(np.mean(np.square(errs)), rel=1e-9)
    code, _, err = cli("osl", "pca", "--evals", "pythia", "--benchmarks", tmp_path / "wide.csv")
    assert code == 2 and "exactly one of --benchmarks and --evals" in err
    code, _, err = cli("osl", "pca", "--evals", "pythia", "--evals-metric", "ppl")
    assert code == 2 and "has no metric 'ppl'" in err
    code, out, err = cli("osl", "pca", "--evals", "pythia", "--evals-metric",
                         "acc,arc_challenge=acc_norm,lambada_openai=acc", "--json")  # fmt: skip
    assert code == 0, err
    wide = to_benchmark_frame(load_pythia(), {"*": "acc", "arc_challenge": "acc_norm"})
    res = json.loads(out)
    i = res["metrics"].index("arc_challenge")
    assert res["mean"][i] == pytest.approx(100 * wide["arc_challenge"].mean(), rel=1e-12)  # pts
    norm = load_pythia().query(
        "task == 'arc_challenge' and metric == 'acc_norm' and step == 143000"
    )
    assert res["mean"][i] == pytest.approx(100 * norm["value"].mean(), rel=1e-12)


def test_salience_fit_from_evals_equals_scores_table(cli, tmp_path):
    """An evals table carrying the example scores gives the same salience fit as scores.csv
    (split by size within family, App. A)."""

    ex = examples.path("salience/texts.jsonl").parent
    scores = pd.read_csv(ex / "scores.csv")
    # fam0-m3 -> fam0-4m: default_family strips the size token, so the family is fam0
    rename = {m: f"{m.split('-m')[0]}-{int(m.split('-m')[1]) + 1}m" for m in scores.model}
    runs = tmp_path / "runs"
    for m, s in zip(scores.model, scores.reasoning, strict=True):
        doc = new_layout({"pretrained": rename[m]})
        doc["results"] = {"reasoning": {"acc,none": float(s), "acc_stderr,none": 0.01}}
        write(runs / f"{m}.json", doc)
    models = tmp_path / "models.csv"
    models.write_text(
        "model,params,tokens\n"
        + "".join(f"{n},{int(n.split('-')[1][:-1]) * 1e6},1e9\n" for n in rename.values())
    )
    table = tmp_path / "evals.csv"
    assert cli("evals", "import", runs, "--models", models, "--out", table)[0] == 0
    losses = tmp_path / "losses.jsonl"
    with open(ex / "losses.jsonl") as fh, open(losses, "w") as out:
        for line in fh:
            rec = json.loads(line)
            rec["model"] = rename[rec["model"]]
            out.write(json.dumps(rec) + "\n")
    common = ["--texts", ex / "texts.jsonl", "--task", "reasoning", "--chance", "25",
              "--steps", "3", "--json"]  # fmt: skip
    code, out, err = cli("salience", "fit", *common, "--losses", losses, "--evals", table)
    assert code == 0, err
    ref = cli("salience", "fit", *common, "--losses", ex / "losses.jsonl", "--scores",
              ex / "scores.csv")  # fmt: skip
    a, b = json.loads(out), json.loads(ref[1])
    # same split, same scores; only the model order differs (sums reassociate: ~1e-9)
    assert (a["task"], a["gamma"], a["best_step"]) == (b["task"], b["gamma"], b["best_step"])
    for key in ("test_mse", "validation_mse", "train_mse"):
        assert a[key] == pytest.approx(b[key], rel=1e-7), key
    assert a["params"] == pytest.approx(b["params"], rel=1e-7)
    assert a["baseline_mse"] == pytest.approx(b["baseline_mse"], rel=1e-7)
    code, _, err = cli("salience", "fit", *common, "--losses", losses)
    assert code == 2 and "exactly one of --scores and --evals" in err


def test_text_values_of_known_metrics_are_warned_and_a_lone_misspelt_task_is_named(tmp_path):
    # old layout: "alias" is metadata, but "acc": "abc" is a metric that is not a number
    doc = old_layout(piqa={"acc": "abc", "acc_stderr": 0.01, "alias": "piqa"},
                     arc_easy={"acc": 0.5, "acc_stderr": 0.01})  # fmt: skip
    f = write(tmp_path / "a.json", doc)
    with pytest.warns(UserWarning, match=r"results\['piqa'\]: skipped .*'acc' = 'abc'"):
        df = read_harness(f)
    assert set(df["task"]) == {"arc_easy"}
    # one misspelt --task used to get the generic "no results found"
    with pytest.raises(InputError, match=r"'arc_eazy' \(--task\) in no results file; did you "
                                         r"mean 'arc_easy'\?"):  # fmt: skip
        read_harness(f, tasks=["arc_eazy"])


def test_import_harness_writes_and_describes_the_tidy_table(tmp_path):
    from lmforecast.data.evals.imports import (
        check_table_name,
        describe,
        filtered_keys,
        import_harness,
        metric_names,
        open_evals_table,
        split_names,
    )

    write(tmp_path / "runs/old/a.json", old_layout())
    write(tmp_path / "runs/new/b.json", new_layout())
    runs = tmp_path / "runs"
    assert split_names(["piqa, gsm8k", "arc_easy"]) == ["piqa", "gsm8k", "arc_easy"]
    assert split_names(None) is None
    with pytest.raises(InputError, match="empty list"):
        split_names([" , "])
    assert filtered_keys([runs]) == {
        "acc,none": "acc",
        "acc_norm,none": "acc_norm",
        "exact_match,strict-match": "exact_match,strict-match",
        "exact_match,flexible-extract": "exact_match,flexible-extract",
    }
    assert metric_names(["acc,exact_match,strict-match"], [runs]) == [
        "acc",
        "exact_match,strict-match",
    ]
    with pytest.raises(InputError, match=r"--out .*t\.txt: unknown table format"):
        check_table_name(tmp_path / "t.txt")
    out = tmp_path / "t.csv"
    df = import_harness([runs], out, tasks=["gsm8k"], metrics=["exact_match,strict-match"])
    assert df["metric"].tolist() == ["exact_match,strict-match"] and df["value"].tolist() == [0.02]
    back, bundled = open_evals_table(out)
    assert not bundled
    pd.testing.assert_frame_equal(back, df)
    d = describe(import_harness([runs], tmp_path / "all.jsonl"))
    assert (d["rows"], d["n_models"], d["n_tasks"], d["files"]) == (8, 2, 4, 2)
    assert d["models"] == ["pythia-160m", "pythia-410m-deduped"]
    assert d["steps_per_model"] == {"pythia-160m": 1, "pythia-410m-deduped": 1}
    assert d["metrics"]["acc"] == 3 and d["n_shot"] == [0, 5] and not d["has_final"]
    pythia, bundled = open_evals_table("pythia")
    assert bundled and describe(pythia)["rows"] == 4536


def test_read_evals_resolves_the_bundled_name_and_reads_method_tables(tmp_path):
    """`read_evals`: the word pythia is the bundled table; strict=False reads any table a
    method fits from (extra columns kept), strict=True the tidy table only."""
    from lmforecast.data.evals import load_pythia, read_evals

    pythia = read_evals("pythia")
    pd.testing.assert_frame_equal(pythia, load_pythia())
    p = tmp_path / "mine.csv"
    pythia.head(50).assign(extra=1.0).to_csv(p, index=False)
    assert "extra" in read_evals(p, strict=False).columns
    with pytest.raises(InputError):
        read_evals(tmp_path / "missing.csv")
