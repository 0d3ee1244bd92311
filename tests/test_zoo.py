"""Unit tests of the zoo's pieces: corpus, tokenizers, model, objective, checkpoints, CLI errors."""

from __future__ import annotations

import dataclasses
import json
import math
import warnings

import numpy as np
import pytest

from lmforecast.compute.flops import forward_flops_per_token
from lmforecast.errors import DomainWarning
from lmforecast.zoo.corpus import (
    arithmetic_problem,
    arithmetic_text,
    extract_prose,
    is_validation,
    to_ascii,
)
from lmforecast.zoo.data import REFERENCE_WEIGHTS, mixture_weights
from lmforecast.zoo.model import ModelConfig, count_non_embedding, zoo_architecture
from lmforecast.zoo.presets import get_preset
from lmforecast.zoo.tasks import arith_chance, arith_items, arithmetic_table
from lmforecast.zoo.tokenizers import ByteTokenizer


def test_to_ascii_keeps_printable_ascii_and_newlines():
    assert to_ascii("caf\u00e9\tx\r\n\u2014y") == "caf    x\ny"


def test_split_is_a_stable_hash_of_the_path():
    names = [f"pkg/mod{i}.py" for i in range(400)]
    first = [is_validation(n) for n in names]
    assert first == [is_validation(n) for n in names]
    assert 0.05 < np.mean(first) < 0.15  # about one file in ten


def test_arithmetic_problems_are_correct_and_held_out_items_never_trained():
    rng = np.random.default_rng(0)
    for _ in range(500):
        prompt, answer = arithmetic_problem(rng)
        assert eval(prompt[:-1]) == int(answer)  # noqa: S307 - our own digits and + or -
        assert int(answer) >= 0
    held = arith_items(50, 3)
    text = "\n".join(arithmetic_text(50_000, 1, exclude={p for p, _ in held}))
    lines = set(text.split("\n"))
    assert not any(p + a in lines for p, a in held)


def test_arith_chance_is_the_uniform_guess_chance():
    items = [("1+2=", "3"), ("5-1=", "4")]
    assert arith_chance(items) == pytest.approx(100 * (1 / 199 + 1 / 100) / 2)


def test_single_digit_table_is_complete_correct_and_its_baseline_is_exact():
    table = arithmetic_table(1)
    assert len(table) == 100 + 55 == len({p for p, _ in table})  # all sums, all a-b with a >= b
    assert all(eval(p[:-1]) == int(a) >= 0 for p, a in table)  # noqa: S307 - our own digits
    assert arith_items(155, 0, max_digits=1) == table  # the task is the whole table
    assert len(arith_items(40, 0, max_digits=1)) == 40  # a smaller task samples it
    # sums of single digits: 19 possible answers; differences: 10 (hand-worked)
    expected = 100 * (100 / 19 + 55 / 10) / 155
    assert arith_chance(table, max_digits=1) == pytest.approx(expected)
    rng = np.random.default_rng(1)
    assert all(len(arithmetic_problem(rng, 1)[0]) == 4 for _ in range(200))  # "a+b="


def test_learning_rate_scales_as_one_over_width_and_batches_give_enough_steps():
    from lmforecast.zoo.train import plan_run

    full = get_preset("full")
    small, big = (full.run("sup-L1d16-r20"), full.run("sup-L3d64-r20"))
    # 1/width (muP simple) times sqrt(batch / min_batch) (Adam square-root rule), hand-worked:
    # the smallest run takes the minimum batch of 2; the largest 2,967,552 tokens / (64 x 2,000)
    # -> 23 sequences, so 0.08 / 64 x sqrt(23 / 2)
    assert plan_run(small, full).batch == 2 and plan_run(big, full).batch == 23
    assert full.peak_lr(small) == pytest.approx(0.08 / 16)
    assert full.peak_lr(big) == pytest.approx(0.08 / 64 * (23 / 2) ** 0.5)
    # without the batch rule, the width rule alone (the second zoo's setting)
    width_only = dataclasses.replace(full, lr_batch_sqrt=False)
    assert width_only.peak_lr(big) == pytest.approx(0.08 / 64)
    assert width_only.peak_lr(small) == full.peak_lr(small)
    plan = plan_run(full.run("sup-L1d32-r20"), full)
    assert plan.batch == full.min_batch == 2 and plan.steps >= 1900  # about 2,000 steps
    for r in full.runs:  # every run above the smallest batch takes about target_steps steps
        plan = plan_run(r, full)
        if plan.batch > full.min_batch:
            assert abs(plan.steps / full.target_steps - 1) < 0.1, r.run_id


def test_prose_extraction_finds_docstrings_and_comment_blocks():
    src = (
        'def f():\n    """Return the answer to everything, computed very carefully."""\n'
        "    # first line of a long comment that explains\n    # the second half of it\n"
        "    return 42\n"
    )
    prose = extract_prose(src)
    assert "Return the answer to everything, computed very carefully." in prose
    assert "first line of a long comment that explains the second half of it" in prose


def test_mixture_weights_two_sources():
    assert REFERENCE_WEIGHTS == pytest.approx({"prose": 0.3, "code": 0.4, "arith": 0.3})
    w = mixture_weights(0.1)
    assert sum(w.values()) == pytest.approx(1.0)
    assert w["code"] == 0.1 and w["prose"] == pytest.approx(w["arith"])


def test_byte_tokenizer_offsets_are_characters():
    tok = ByteTokenizer()
    ids, off = tok.encode_with_offsets("ab\n1")
    assert ids.tolist() == [97, 98, 10, 49]
    assert off.tolist() == [[0, 1], [1, 2], [2, 3], [3, 4]]


def test_bpe_splits_digits_and_offsets_tile_the_text():
    pytest.importorskip("tokenizers")
    from lmforecast.zoo.tokenizers import BPETokenizer

    docs = ["def add(a, b):\n    return a + b\n", "12+35=47\n8-3=5\n"] * 200
    tok = BPETokenizer.train(docs, 300)
    again = BPETokenizer.train(docs, 300)
    assert tok.to_json() == again.to_json()  # deterministic training
    text = "def add(a, b):\n    return 123+45\n"
    ids, off = tok.encode_with_offsets(text)
    assert off[0, 0] == 0 and off[-1, 1] == len(text)
    assert np.all(off[1:, 0] == off[:-1, 1])  # contiguous, no gaps or overlaps
    pieces = [text[a:b] for a, b in off]
    assert "1" in pieces and "2" in pieces and "123" not in pieces
    assert len(ids) < len(text)  # merges happened
    assert tok.bos_id == 0 and 257 < tok.vocab_size <= 300


def test_non_embedding_count_and_flops_accounting_match_the_architecture():
    cfg = ModelConfig(n_layers=3, d_model=64, n_heads=4, vocab_size=512, n_ctx=64)
    N = count_non_embedding(cfg)
    assert N == 3 * (12 * 64 * 64 + 4 * 64) + 2 * 64
    arch = zoo_architecture(64 / 3, 64, 512)
    assert arch.omega == pytest.approx(12.0)  # 2 + 2 + 2 x 4
    # App. H.1 Eq. 72: forward FLOPs = 2 L d^2 omega + 2 L n_ctx d + 2 V d; F(N) of Eq. 69
    # rebuilds it from N alone (exact up to the LayerNorm gains N also counts).
    direct = 2 * 3 * 64**2 * 12 + 2 * 3 * 64 * 64 + 2 * 512 * 64
    assert float(forward_flops_per_token(N, arch)) == pytest.approx(direct, rel=0.01)


def test_presets_cover_the_protocols():
    full = get_preset("full")
    kinds = {r.kind for r in full.runs}
    assert kinds == {"supervised", "mixture", "byte", "student-supervised", "distilled"}
    sup = [r for r in full.runs if r.kind == "supervised"]
    n = sorted({r.N for r in sup})
    assert math.log10(n[-1] / n[0]) >= 1.5  # 1.5 decades of non-embedding parameters
    assert {round(r.tokens / r.N) for r in sup} >= {5, 20, 80}  # fixed ratio + over-trained
    shares = {r.code_share for r in full.runs if r.kind in ("mixture", "supervised")}
    assert len(shares) >= 4
    for r in full.runs:
        if r.teacher:
            assert full.run(r.teacher).kind == "supervised"
            assert full.runs.index(full.run(r.teacher)) < full.runs.index(r)  # teachers first
    assert full.config_hash() == get_preset("full").config_hash()
    assert full.config_hash() != get_preset("mini").config_hash()


# ---- torch-dependent pieces ------------------------------------------------------------------


def test_distillation_loss_is_cross_entropy_against_teacher_probabilities():
    torch = pytest.importorskip("torch")
    from lmforecast.zoo.train import distillation_loss, z_loss

    g = torch.Generator().manual_seed(0)
    zs, zt = torch.randn(5, 7, generator=g), torch.randn(5, 7, generator=g)
    pt = torch.softmax(zt, -1)
    expected = -(pt * torch.log_softmax(zs, -1)).sum(-1).mean()
    assert float(distillation_loss(zs, zt, 1.0)) == pytest.approx(float(expected), rel=1e-6)
    # KL >= 0: the loss is smallest when the student matches the teacher (forward KL + H(p_T)).
    ent = -(pt * torch.log(pt)).sum(-1).mean()
    assert float(distillation_loss(zt, zt, 1.0)) == pytest.approx(float(ent), rel=1e-6)
    assert float(distillation_loss(zs, zt, 1.0)) > float(ent)
    # tau^2 scaling of Eq. 6
    t2 = -(4.0) * (torch.softmax(zt / 2, -1) * torch.log_softmax(zs / 2, -1)).sum(-1).mean()
    assert float(distillation_loss(zs, zt, 2.0)) == pytest.approx(float(t2), rel=1e-6)
    assert float(z_loss(torch.zeros(2, 4))) == pytest.approx(math.log(4) ** 2)


def test_model_is_deterministic_and_causal():
    torch = pytest.importorskip("torch")
    from lmforecast.zoo.model import build_model

    cfg = ModelConfig(2, 32, 2, 50, 16)
    a, b = build_model(cfg, 3), build_model(cfg, 3)
    x = torch.randint(0, 50, (2, 16), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        ya, yb = a(x), b(x)
        assert torch.equal(ya, yb)
        x2 = x.clone()
        x2[:, 10:] = (x2[:, 10:] + 1) % 50  # changing the future must not change the past
        assert torch.equal(a(x2)[:, :10], ya[:, :10])


def test_lr_schedule_warms_up_then_decays_to_a_tenth():
    from lmforecast.zoo.train import lr_at

    lrs = [lr_at(s, 1000, 1.0) for s in range(1000)]
    assert lrs[0] == pytest.approx(1 / 50) and max(lrs) == pytest.approx(1.0)
    assert lrs[-1] == pytest.approx(0.1, abs=1e-3) and np.all(np.diff(lrs[50:]) <= 0)


def test_corrupt_checkpoint_is_detected_not_reused(tmp_path):
    pytest.importorskip("torch")
    from lmforecast.zoo.train import load_verified, save_verified

    path = tmp_path / "state.pt"
    save_verified({"step": 3, "w": [1.0, 2.0]}, path)
    assert load_verified(path)["step"] == 3
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.warns(DomainWarning, match="SHA-256"):
        assert load_verified(path) is None
    path.with_suffix(".pt.sha256").unlink()  # a torn write: no sidecar
    with pytest.warns(DomainWarning):
        assert load_verified(path) is None


# ---- CLI: errors before any training ---------------------------------------------------------


def test_cli_rejects_unknown_preset(cli, tmp_path):
    code, _, err = cli("zoo", "build", "--preset", "huge", "--out", tmp_path / "z")
    assert code == 2 and "unknown zoo preset 'huge'" in err
    assert not (tmp_path / "z").exists()


def test_cli_rejects_bad_output_folders(cli, tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    code, _, err = cli("zoo", "build", "--preset", "mini", "--out", f)
    assert code == 2 and "not a folder" in err
    code, _, err = cli("zoo", "build", "--preset", "mini", "--out", tmp_path / "no" / "z")
    assert code == 2 and "does not exist" in err
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    code, _, err = cli("zoo", "build", "--preset", "mini", "--out", other)
    assert code == 2 and "not empty" in err
    diff = tmp_path / "diff"
    diff.mkdir()
    (diff / "build.json").write_text(json.dumps({"preset": "full", "config_hash": "abc"}))
    code, _, err = cli("zoo", "build", "--preset", "mini", "--out", diff)
    assert code == 2 and "different zoo build" in err
    assert sorted(p.name for p in diff.iterdir()) == ["build.json"]


def test_cli_rejects_too_little_disk(cli, tmp_path, monkeypatch):
    import shutil
    from collections import namedtuple

    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda p: usage(10**9, 10**9 - 1000, 1000))
    code, _, err = cli("zoo", "build", "--preset", "mini", "--out", tmp_path / "z")
    assert code == 2 and "free disk" in err
    assert not (tmp_path / "z").exists()


def test_warning_category_for_corruption_is_domain_warning():
    with warnings.catch_warnings(record=True):
        assert issubclass(DomainWarning, UserWarning)


def test_cli_without_torch_fails_cleanly_and_creates_nothing(cli, tmp_path, monkeypatch):
    from lmforecast.errors import OptionalDependencyError
    from lmforecast.zoo import build as build_mod

    def missing(module, extra):
        raise OptionalDependencyError(f"{module!r} is not installed; install the optional extra")

    monkeypatch.setattr(build_mod, "require", missing)
    code, _, err = cli("zoo", "build", "--preset", "mini", "--out", tmp_path / "z")
    assert code == 2 and "'torch' is not installed" in err
    assert not (tmp_path / "z").exists()


class _Payload:
    """A harmless pickle payload: unpickling it would create a marker file."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_checkpoint_with_pickled_code_is_refused_never_executed(tmp_path):
    # the SHA-256 sidecar proves integrity, not origin; a crafted state with a
    # matching sidecar must be refused by torch.load(weights_only=True), not run
    pytest.importorskip("torch")
    from lmforecast.errors import InputError
    from lmforecast.zoo.train import load_verified, save_verified

    marker = tmp_path / "PWNED"
    path = tmp_path / "state.pt"
    save_verified({"run_id": "x", "step": 1, "evil": _Payload(marker)}, path)  # valid sidecar
    with pytest.raises(InputError, match=r"state\.pt: refused to load.*delete it"):
        load_verified(path)
    assert not marker.exists()
    # a real state (tensors, dicts, lists, tuples, floats) still loads with weights_only=True
    import torch

    save_verified({"run_id": "x", "model": {"w": torch.ones(2)}, "loss_acc": (1.5, 2)}, path)
    assert load_verified(path)["loss_acc"] == (1.5, 2)
