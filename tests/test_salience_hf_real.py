"""Hugging Face paths against a real (tiny, randomly initialised, built offline) transformers model.

Two local model folders are built in a temporary directory, exactly as a user would have them
(`save_pretrained`): a GPT-2-style byte-level BPE without BOS, and a second, different byte-level
BPE that adds a BOS token. Everything the package does is checked against a direct torch
computation on the same ids. Nothing is downloaded.
"""

import json

import numpy as np
import pytest

from lmforecast import examples

transformers = pytest.importorskip("transformers")
torch = pytest.importorskip("torch")
tokenizers = pytest.importorskip("tokenizers")

from lmforecast.errors import InputError  # noqa: E402
from lmforecast.salience import hf  # noqa: E402
from lmforecast.salience.features import TextFeatures  # noqa: E402
from lmforecast.salience.hf import extractor_from_config  # noqa: E402
from lmforecast.salience.mapping import check_offsets, disjoint_offsets  # noqa: E402
from lmforecast.salience.records import map_records  # noqa: E402

CTX = 32  # n_positions of the tiny models: the long text below is several windows
CORPUS = [
    "The quick brown fox jumps over the lazy dog. ",
    "Scaling laws predict the loss of a language model from its compute budget. ",
    "Tokens and parameters trade off; bigger models need more data to be optimal. ",
    "naïve café résumé déjà vu, Zürich and São Paulo. ",
    # 'a' + the first byte of an accented character becomes one token, so byte-level BPE splits
    # characters between tokens and reports overlapping offsets (what `disjoint_offsets` fixes)
    "naïve Raúl Saúde maître Haïti aéroport naïve Raúl. ",
    "Numbers: 3.14, 2.72 and 1e-3 are learning rates, 4096 is a width. ",
]
TEXTS = {
    "short": "The fox.",
    "mid": "Scaling laws predict the loss of a model.",
    "accents": "A naïve façade, ça va! 東京",
}
LONG = " ".join(CORPUS) * 2


def _build(folder, *, vocab_size: int, bos: bool, seed: int):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tk = Tokenizer(models.BPE())
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=["<|endoftext|>", "<pad>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tk.train_from_iterator(CORPUS * 3, trainer)
    if bos:
        bos_id = tk.token_to_id("<|endoftext|>")
        tk.post_processor = processors.TemplateProcessing(
            single="<|endoftext|> $A", special_tokens=[("<|endoftext|>", bos_id)]
        )
    else:
        tk.post_processor = processors.ByteLevel(trim_offsets=False)
    tok = transformers.PreTrainedTokenizerFast(
        tokenizer_object=tk, bos_token="<|endoftext|>", eos_token="<|endoftext|>"
    )
    cfg = transformers.GPT2Config(
        n_layer=2,
        n_embd=32,
        n_head=2,
        vocab_size=len(tok),
        n_positions=CTX,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
    )
    torch.manual_seed(seed)
    model = transformers.GPT2LMHeadModel(cfg)
    with torch.no_grad():  # larger weights than the default init: losses far from uniform
        for p in model.parameters():
            p.mul_(8.0) if p.ndim == 2 else None
    tok.save_pretrained(folder)
    model.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread():
    """Tiny models: one thread avoids OpenMP spin contention on the shared 2-core machine."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("hf-models")
    a = _build(root / "tiny-a", vocab_size=300, bos=False, seed=0)
    b = _build(root / "tiny-b", vocab_size=280, bos=True, seed=1)
    return a, b


def _direct(folder):
    tok = transformers.AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    model = transformers.AutoModelForCausalLM.from_pretrained(str(folder), local_files_only=True)
    return tok, model.eval()


def _ce(model, ids):
    """Direct torch cross-entropy of tokens 1.. of `ids`, one unpadded sequence."""
    x = torch.tensor([ids])
    with torch.no_grad():
        logits = model(input_ids=x).logits[0]
    return torch.nn.functional.cross_entropy(logits[:-1], x[0, 1:], reduction="none").numpy()


def _losses(folder, texts, **kw):
    return hf.hf_token_losses(folder, texts, progress=False, **kw)


def test_tokenizer_offsets_are_as_expected_for_these_tokenizers(models):
    """Guard on the fixture: a split multi-byte character gives overlapping raw offsets."""
    tok, _ = _direct(models[0])
    raw = np.asarray(tok(TEXTS["accents"], return_offsets_mapping=True)["offset_mapping"])
    with pytest.raises(InputError, match="overlap"):
        check_offsets(raw, len(TEXTS["accents"]))


@pytest.mark.parametrize("which", [0, 1])
def test_losses_equal_direct_cross_entropy_and_offsets(models, which):
    folder = models[which]
    tok, model = _direct(folder)
    recs = _losses(folder, TEXTS, batch_size=3, model_name="m")
    assert [r["text_id"] for r in recs] == list(TEXTS)
    for r in recs:
        text = TEXTS[r["text_id"]]
        enc = tok(text, return_offsets_mapping=True, return_special_tokens_mask=True)
        ids, special = enc["input_ids"], np.asarray(enc["special_tokens_mask"], bool)
        assert len(ids) <= CTX  # one window: the direct computation is the whole sequence
        assert special[0] == (which == 1) and not special[1:].any()  # b adds a BOS, a does not
        np.testing.assert_allclose(r["losses"], _ce(model, ids), rtol=1e-5, atol=1e-5)
        # token 0 (a: first text token, nothing predicts it; b: BOS) has no loss
        raw = np.asarray(enc["offset_mapping"], np.int64)[1:]
        off = np.asarray(r["offsets"])
        kept = np.asarray(enc["offset_mapping"], np.int64)[~special]
        expected = disjoint_offsets(kept)[1:] if which == 0 else disjoint_offsets(kept)
        np.testing.assert_array_equal(off, expected)
        assert off.shape == raw.shape and np.all(off[:, 0] == raw[:, 0])
        overlap = (raw[1:, 0] < raw[:-1, 1]) & np.any(raw[1:] != raw[:-1], axis=1)
        if not overlap.any():
            np.testing.assert_array_equal(off, raw)
        else:  # the shared character goes to the later token: only the earlier end is clipped
            clipped = np.flatnonzero(off[:, 1] < raw[:, 1])
            np.testing.assert_array_equal(off[clipped, 1], raw[clipped + 1, 0])
            assert not text.isascii()
        check_offsets(off, len(text))
        assert np.all(np.asarray(r["losses"]) > 0)


def test_offsets_cover_each_text_exactly(models):
    """trim_offsets=False byte-level BPE: the kept tokens tile [0, len) without gaps."""
    feats = hf.HuggingFaceFeatures(models[0], progress=False)
    tok_fn = hf.hf_tokenizer_offsets(models[0])
    for text in [*TEXTS.values(), LONG]:
        off = feats.tokenize(text)
        np.testing.assert_array_equal(off, tok_fn(text))
        check_offsets(off, len(text))
        assert off[0, 0] == 0 and off[-1, 1] == len(text)
        same = np.all(off[1:] == off[:-1], axis=1)
        assert np.all((off[1:, 0] == off[:-1, 1]) | same)
        covered = np.zeros(len(text), int)
        for s, e in np.unique(off, axis=0):
            covered[s:e] += 1
        assert np.all(covered == 1)


def test_batching_and_padding_do_not_change_losses(models):
    texts = {"long": LONG[:400], **TEXTS}
    for folder in models:
        one = _losses(folder, texts, batch_size=1)
        three = _losses(folder, texts, batch_size=3)
        for r1, r3 in zip(one, three):
            assert r1["offsets"] == r3["offsets"]
            np.testing.assert_allclose(r1["losses"], r3["losses"], rtol=1e-5, atol=1e-5)


def _window_expected(model, ids, length, tokens):
    """Losses of `tokens` with the documented sliding windows (length L, stride L // 2): token
    t >= L is scored in the window starting at the largest multiple of the stride with
    begin + L > t, i.e. with at least L // 2 tokens of context."""
    stride = length // 2
    out = []
    for t in tokens:
        begin = 0 if t < length else stride * ((t - length) // stride + 1)
        assert t - begin >= stride or begin == 0
        out.append(_ce(model, ids[begin : t + 1])[-1])
    return np.array(out)


@pytest.mark.parametrize("max_length", [None, 10])
def test_texts_longer_than_the_context_use_sliding_windows(models, max_length):
    folder = models[0]
    tok, model = _direct(folder)
    ids = tok(LONG)["input_ids"]
    assert len(ids) > 3 * CTX
    (rec,) = _losses(folder, {"long": LONG}, max_length=max_length, batch_size=2)
    length = CTX if max_length is None else max_length
    assert len(rec["losses"]) == len(ids) - 1  # every token but the first is scored
    # every token of the first window, and the first, middle and last of each later stride
    stride = length // 2
    edges = np.arange(length, len(ids), stride)
    tokens = np.unique(np.r_[1:length, edges, edges + stride // 2, edges - 1, len(ids) - 1])
    tokens = tokens[(tokens >= 1) & (tokens < len(ids))]
    np.testing.assert_allclose(
        np.asarray(rec["losses"])[tokens - 1],
        _window_expected(model, ids, length, tokens),
        rtol=1e-5,
        atol=1e-5,
    )
    assert rec["offsets"][-1][1] == len(LONG)
    # a larger max_length than the context is capped at the context, not an error
    (capped,) = _losses(folder, {"long": LONG}, max_length=10 * CTX)
    if max_length is None:
        np.testing.assert_allclose(capped["losses"], rec["losses"], rtol=1e-6)
    with pytest.raises(InputError, match="max_length"):
        _losses(folder, {"long": LONG}, max_length=1)


def test_mapping_onto_another_tokenizer_conserves_total_loss(models):
    a, b = models
    texts = {**TEXTS, "long": LONG[:300]}
    recs = _losses(a, texts, model_name="a") + _losses(b, texts, model_name="b")
    targets = {"b": hf.hf_tokenizer_offsets(b), "a": hf.hf_tokenizer_offsets(a)}
    for tname, target in targets.items():
        mapped = map_records(recs, texts, target)
        for src in recs:
            (m,) = [
                r for r in mapped if (r["model"], r["text_id"]) == (src["model"], src["text_id"])
            ]
            text = texts[src["text_id"]]
            np.testing.assert_array_equal(m["offsets"], target(text))
            assert abs(sum(m["losses"]) - sum(src["losses"])) < 1e-9 * max(1, sum(src["losses"]))
            if tname == src["model"]:
                # onto its own tokenizer: the identity up to the documented even split inside a
                # group of identical spans (byte pieces of one character); the unscored first
                # token of model a (no BOS) gets 0
                own = np.asarray(m["losses"])
                shift = len(own) - len(src["losses"])
                assert shift == (1 if src["model"] == "a" else 0)
                assert np.all(own[:shift] == 0)
                off = np.asarray(src["offsets"])
                _, group = np.unique(off, axis=0, return_inverse=True)
                want = np.bincount(group, weights=src["losses"])[group] / np.bincount(group)[group]
                np.testing.assert_allclose(own[shift:], want, rtol=1e-9, atol=1e-12)
                assert (np.bincount(group) > 1).any() or src["text_id"] != "accents"


def test_features_shapes_values_and_cache(models, tmp_path):
    folder = models[1]  # with BOS: the BOS row is dropped
    tok, model = _direct(folder)
    texts = {**TEXTS, "long": LONG[:300]}
    ext = hf.HuggingFaceFeatures(folder, batch_size=3, progress=False)
    feats = ext.extract(texts)
    n_tok = [len(tok(t)["input_ids"]) - 1 for t in texts.values()]
    assert feats.text_ids == list(texts)
    assert [len(o) for o in feats.offsets] == n_tok
    assert feats.H.shape == (sum(n_tok), 32) and feats.H.dtype == np.float32
    assert feats.text_lengths.tolist() == [len(t) for t in texts.values()]
    ptr = feats.ptr
    for i, text in enumerate(texts.values()):
        np.testing.assert_array_equal(feats.offsets[i], ext.tokenize(text))
        ids = tok(text)["input_ids"]
        if len(ids) <= CTX:  # one window: exactly the model's last hidden states, BOS dropped
            with torch.no_grad():
                h = model(torch.tensor([ids]), output_hidden_states=True).hidden_states[-1][0]
            np.testing.assert_allclose(feats.H[ptr[i] : ptr[i + 1]], h[1:].numpy(), atol=1e-5)
        else:  # tokens past the first window: hidden state of their window
            t = len(ids) - 1
            begin = (CTX // 2) * ((t - CTX) // (CTX // 2) + 1)
            with torch.no_grad():
                x = torch.tensor([ids[begin : t + 1]])
                h = model(x, output_hidden_states=True).hidden_states[-1][0, -1]
            np.testing.assert_allclose(feats.H[ptr[i + 1] - 1], h.numpy(), atol=1e-5)
    feats.save(tmp_path / "f.npz")
    back = TextFeatures.load(tmp_path / "f.npz")
    np.testing.assert_array_equal(back.H, feats.H)
    rebuilt = extractor_from_config(back.extractor)
    assert isinstance(rebuilt, hf.HuggingFaceFeatures) and rebuilt.config() == ext.config()


def _write_texts(path, texts):
    path.write_text("".join(json.dumps({"text_id": k, "text": v}) + "\n" for k, v in texts.items()))


def test_cli_token_losses_features_and_map_losses(models, cli, tmp_path):
    a, b = models
    _write_texts(tmp_path / "T.jsonl", TEXTS)
    out = tmp_path / "L.jsonl"
    code, _, err = cli(
        "salience",
        "token-losses",
        "--model",
        a,
        "--texts",
        tmp_path / "T.jsonl",
        "--out",
        out,
        "--quiet",
        "--batch-size",
        "2",
    )
    assert code == 0, err
    recs = [json.loads(line) for line in out.read_text().splitlines()]
    direct = _losses(a, TEXTS)
    assert [r["model"] for r in recs] == ["tiny-a"] * len(TEXTS)
    for r, d in zip(recs, direct):
        assert r["offsets"] == d["offsets"]
        np.testing.assert_allclose(r["losses"], d["losses"], rtol=1e-6)
    code, stdout, err = cli(
        "salience",
        "features",
        "--model",
        b,
        "--texts",
        tmp_path / "T.jsonl",
        "--out",
        tmp_path / "F.npz",
        "--quiet",
    )
    assert code == 0, err
    info = json.loads(stdout)
    assert info["dim"] == 32 and info["texts"] == len(TEXTS)
    assert TextFeatures.load(tmp_path / "F.npz").n_tokens == info["tokens"]
    code, stdout, err = cli(
        "salience",
        "map-losses",
        "--losses",
        out,
        "--texts",
        tmp_path / "T.jsonl",
        "--target-tokenizer",
        b,
    )
    assert code == 0, err
    mapped = [json.loads(line) for line in stdout.splitlines()]
    for m, r in zip(mapped, recs):
        assert abs(sum(m["losses"]) - sum(r["losses"])) < 1e-9


@pytest.mark.parametrize("verb", ["token-losses", "features"])
def test_cli_missing_or_invalid_model_folder(models, cli, tmp_path, verb):
    _write_texts(tmp_path / "T.jsonl", TEXTS)
    tok_only = tmp_path / "tokenizer-only"
    transformers.AutoTokenizer.from_pretrained(
        str(models[0]), local_files_only=True
    ).save_pretrained(tok_only)
    junk = tmp_path / "junk"
    junk.mkdir()
    (junk / "config.json").write_text("{not json")
    for bad in [tmp_path / "nope", junk, tmp_path / "empty", tok_only]:
        (tmp_path / "empty").mkdir(exist_ok=True)
        out = tmp_path / "out.file"
        code, stdout, err = cli(
            "salience",
            verb,
            "--model",
            bad,
            "--texts",
            tmp_path / "T.jsonl",
            "--out",
            out,
            "--quiet",
        )
        assert code == 2, (bad, err)
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("lmforecast: error: ") and str(bad) in err
        assert not out.exists() and not list(tmp_path.glob("*.tmp*"))
    (tmp_path / "L.jsonl").write_text(
        "".join(
            json.dumps({"model": "m", "text_id": k, "offsets": [[0, len(v)]], "losses": [1.0]})
            + "\n"
            for k, v in TEXTS.items()
        )
    )
    code, _, err = cli(
        "salience",
        "map-losses",
        "--losses",
        tmp_path / "L.jsonl",
        "--texts",
        tmp_path / "T.jsonl",
        "--target-tokenizer",
        junk,
    )
    assert code == 2 and len(err.strip().splitlines()) == 1


def test_without_transformers_the_error_names_the_extra(monkeypatch, cli, tmp_path):
    """CI installs transformers, so simulate its absence (import of None raises ImportError)."""
    import sys

    from lmforecast.errors import OptionalDependencyError

    monkeypatch.setitem(sys.modules, "transformers", None)
    with pytest.raises(OptionalDependencyError, match=r"lmforecast\[hf\]"):
        hf.hf_token_losses(tmp_path, {"a": "x"})
    _write_texts(tmp_path / "T.jsonl", TEXTS)
    out = tmp_path / "f.npz"
    code, _, err = cli("salience", "features", "--texts", tmp_path / "T.jsonl", "--model",
                       tmp_path, "--out", out)  # fmt: skip
    assert code == 2 and "lmforecast[hf]" in err and not out.exists()


def test_cli_max_length_matches_the_api_and_bad_values_exit_2(models, cli, tmp_path):
    _write_texts(tmp_path / "T.jsonl", {"long": LONG[:300], **TEXTS})
    out = tmp_path / "L.jsonl"
    argv = ["salience", "token-losses", "--model", models[0], "--texts", tmp_path / "T.jsonl"]
    code, _, err = cli(*argv, "--out", out, "--quiet", "--max-length", "12")
    assert code == 0, err
    recs = [json.loads(line) for line in out.read_text().splitlines()]
    direct = _losses(models[0], {"long": LONG[:300], **TEXTS}, max_length=12)
    unwindowed = _losses(models[0], {"long": LONG[:300]})
    np.testing.assert_allclose(recs[0]["losses"], direct[0]["losses"], rtol=1e-6)
    assert not np.allclose(recs[0]["losses"], unwindowed[0]["losses"])  # the flag is used
    out.unlink()
    # --quiet silences transformers' own "Loading weights" bar too: stderr is empty on success
    code, _, err = cli(*argv, "--out", out, "--quiet")
    assert code == 0 and err == ""
    out.unlink()
    for flag, value in [("--max-length", "1"), ("--batch-size", "0")]:
        code, _, err = cli(*argv, "--out", out, "--quiet", flag, value)
        assert code == 2 and flag in err and len(err.strip().splitlines()) == 1
        assert not out.exists()


EXAMPLES = examples.path("salience/texts.jsonl").parent


def test_cli_fit_and_predict_on_hf_features(models, cli, tmp_path):
    """The documented workflow with real hidden states: `features --model` then `fit --features`
    on the example files (losses from four other tokenizers, mapped onto the HF tokens)."""
    from lmforecast.salience.records import read_loss_records, read_texts
    from lmforecast.salience.result import SalienceFit

    texts = read_texts(EXAMPLES / "texts.jsonl")
    ex = ["--texts", EXAMPLES / "texts.jsonl"]
    feats = tmp_path / "F.npz"
    code, _, err = cli("salience", "features", "--model", models[0], *ex, "--out", feats, "--quiet")
    assert code == 0, err
    F = TextFeatures.load(feats)
    assert (
        F.H.shape[1] == 32
        and F.offsets[0].tolist() == hf.hf_tokenizer_offsets(models[0])(texts["t000"]).tolist()
    )
    fit_args = ["salience", "fit", *ex, "--losses", EXAMPLES / "losses.jsonl", "--scores",
                EXAMPLES / "scores.csv", "--task", "reasoning", "--chance", "25",
                "--features", feats, "--bootstrap", "0"]  # fmt: skip
    code, _, err = cli(*fit_args, "--steps", "0", "--out", tmp_path / "fit0.json", "--json")
    assert code == 0, err
    fit0 = SalienceFit.from_json(tmp_path / "fit0.json")
    assert fit0.offsets == [o.tolist() for o in F.offsets]
    # step 0: every weight is init_weight 0.5, so Eq. 1 is half the all-token loss, and Algorithm 1
    # onto the HF tokens conserves every model's total loss
    total = {}
    for r in read_loss_records(EXAMPLES / "losses.jsonl"):
        total[r["model"]] = total.get(r["model"], 0.0) + float(np.sum(r["losses"]))
    n_chars = sum(len(t) for t in texts.values())
    want = [0.5 * total[m] / n_chars for m in fit0.models]
    np.testing.assert_allclose(fit0.capability, want, rtol=1e-9)
    code, _, err = cli(*fit_args, "--steps", "20", "--lr", "3e-2", "--out", tmp_path / "fit.json")
    assert code == 0, err
    fit = SalienceFit.from_json(tmp_path / "fit.json")
    # points^2 (1e-12 of a squared fraction is 1e-8 of a squared point)
    assert fit.metrics["validation_mse"] <= fit0.metrics["validation_mse"] + 1e-8
    code, stdout, err = cli("salience", "predict", "--fit", tmp_path / "fit.json", "--losses",
                            EXAMPLES / "new_losses.jsonl", "--json")  # fmt: skip
    assert code == 0, err
    pred = json.loads(stdout)["predictions"]
    assert pred and all(25 <= p["predicted"] <= 100 for p in pred)  # points, above chance
