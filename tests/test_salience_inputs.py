"""The CSV method's inputs in the library (`salience.inputs`): what `salience map-losses|fit|
features|plot` read and refuse, the same for a notebook user."""

import json
from types import SimpleNamespace

import numpy as np
import pytest

from lmforecast import examples
from lmforecast.errors import InputError
from lmforecast.salience.features import HashedNgramFeatures, char_offsets, word_offsets
from lmforecast.salience.hf import HuggingFaceFeatures, check_window
from lmforecast.salience.inputs import (
    feature_source,
    inline_texts,
    map_loss_file,
    read_task_scores,
    target_offsets,
    weights_text,
)
from lmforecast.salience.records import read_texts

TEXTS = examples.path("salience/texts.jsonl")
LOSSES = examples.path("salience/losses.jsonl")
SCORES = examples.path("salience/scores.csv")


def test_target_offsets_built_in_or_refused():
    assert target_offsets("words") is word_offsets
    assert target_offsets("chars") is char_offsets
    with pytest.raises(InputError, match=r"--target-tokenizer: 'nosuchdir' is neither"):
        target_offsets("nosuchdir")


def test_inline_texts_and_their_conflicts():
    recs = [
        {"_line": 1, "text_id": "a", "text": "one two"},
        {"_line": 2, "text_id": 7, "text": "three"},
        {"_line": 3, "text_id": "a", "text": "one two"},
    ]
    assert inline_texts(recs, "m.jsonl") == {"a": "one two", "7": "three"}
    with pytest.raises(InputError, match=r"m.jsonl line 2: text 'a' differs"):
        inline_texts([recs[0], {"_line": 2, "text_id": "a", "text": "other"}], "m.jsonl")
    with pytest.raises(InputError, match=r"m.jsonl line 4: no 'text' field; pass --texts"):
        inline_texts([{"_line": 4, "text_id": "a"}], "m.jsonl")


def test_map_loss_file_onto_characters_keeps_each_model_total(tmp_path):
    mapped = map_loss_file(LOSSES, "chars", TEXTS)
    texts = read_texts(TEXTS)
    first = mapped[0]
    assert len(first["offsets"]) == len(first["losses"]) == len(texts[first["text_id"]])
    raw = [json.loads(line) for line in LOSSES.read_text().splitlines()]
    orig = next(r for r in raw if (r["model"], r["text_id"]) == (first["model"], first["text_id"]))
    assert sum(first["losses"]) == pytest.approx(sum(orig["losses"]))  # Algorithm 1 keeps mass
    # the same records with each text inline give the same mapping
    inline = tmp_path / "inline.jsonl"
    inline.write_text("".join(json.dumps({**r, "text": texts[r["text_id"]]}) + "\n" for r in raw))
    assert map_loss_file(inline, "chars") == mapped
    with pytest.raises(InputError, match="no 'text' field"):
        map_loss_file(LOSSES, "words")


def test_read_task_scores_from_a_table_or_evals():
    s = read_task_scores("reasoning", scores=SCORES)
    assert list(s.columns[:2]) == ["model", "split"] and s.loc[0, "model"] == "fam0-m0"
    for kw, msg in [
        ({}, "exactly one of --scores and --evals"),
        ({"scores": SCORES, "evals": "pythia"}, "exactly one of --scores and --evals"),
        ({"scores": SCORES, "step": 1000}, "--step applies to --evals only"),
    ]:
        with pytest.raises(InputError, match=msg):
            read_task_scores("reasoning", **kw)
    e = read_task_scores("arc_easy", evals="pythia")
    assert list(e.columns) == ["model", "split", "score"]
    assert ((e["score"] >= 0) & (e["score"] <= 1)).all()
    assert set(e["split"]) == {"train", "validation", "test"}  # App. A, by size within family


def test_feature_source_picks_one_source():
    ext, cached = feature_source(feature_dim=64)
    assert isinstance(ext, HashedNgramFeatures) and ext.dim == 64 and cached is None
    with pytest.raises(InputError, match="at most one of --model and --features"):
        feature_source(model="m", features="f.npz")
    with pytest.raises(InputError, match=r"--model: 'nosuch' is not a local model folder"):
        feature_source(model="nosuch")
    with pytest.raises(InputError, match=r"--max-length \(max_length=\) must be >= 2"):
        feature_source(model="nosuch", max_length=1)


def test_check_window_in_the_hf_constructor():
    check_window(1, None)
    check_window(8, 2)
    with pytest.raises(InputError, match=r"--batch-size \(batch_size=\) must be >= 1, got 0"):
        HuggingFaceFeatures("any", batch_size=0)
    with pytest.raises(InputError, match=r"--max-length \(max_length=\) must be >= 2 tokens"):
        HuggingFaceFeatures("any", max_length=1)


def test_weights_text_checks_the_fit_and_the_text(tmp_path):
    texts = read_texts(TEXTS)
    tid = next(iter(texts))
    w = np.linspace(0, 1, 3)
    fit = SimpleNamespace(
        text_ids=[tid],
        text_lengths=[len(texts[tid])],
        weights_of=lambda t: (np.array([[0, 1], [1, 2], [2, 3]]), w),
    )
    got = weights_text([fit], TEXTS, None)
    assert got[:2] == (tid, texts[tid]) and got[3] is w
    with pytest.raises(InputError, match="give a single --fit"):
        weights_text([fit, fit], TEXTS, None)
    with pytest.raises(InputError, match="--kind weights needs --texts"):
        weights_text([fit], None, None)
    with pytest.raises(InputError, match=r"--text-id: text 'nope'"):
        weights_text([fit], TEXTS, "nope")
    changed = tmp_path / "t.jsonl"
    changed.write_text(json.dumps({"text_id": tid, "text": texts[tid] + " more"}) + "\n")
    with pytest.raises(InputError, match="differs from the text the fit was trained on"):
        weights_text([fit], changed, None)


def test_features_contract():
    texts = read_texts(TEXTS)
    feats = HashedNgramFeatures(64).extract(texts)
    c = feats.contract()
    assert c == {"texts": len(texts), "tokens": feats.n_tokens, "dim": 64}
    assert c["tokens"] == sum(len(word_offsets(t)) for t in texts.values())
