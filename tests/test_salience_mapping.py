"""Algorithm 1 (loss mapping between tokenizers): hand-worked examples and properties."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lmforecast.errors import InputError
from lmforecast.salience.features import char_offsets, word_offsets
from lmforecast.salience.mapping import char_losses, check_offsets, map_losses, map_losses_many


def test_hand_worked_multichar_unicode():
    text = "héllo wörld!"  # 12 characters; the space (5) is covered by no source token
    src = [[0, 3], [3, 5], [6, 9], [9, 12]]  # "hél" "lo" "wör" "ld!"
    losses = [3.0, 2.0, 3.0, 6.0]  # per character: 1, 1, 1, 2
    np.testing.assert_allclose(
        char_losses(np.array(src), np.array(losses), len(text)),
        [1, 1, 1, 1, 1, 0, 1, 1, 1, 2, 2, 2],
    )
    tgt = [[0, 5], [6, 8], [8, 12]]  # "héllo" "wö" "rld!"
    np.testing.assert_allclose(map_losses(src, losses, tgt, len(text)), [5.0, 2.0, 7.0])


def test_byte_pieces_zero_width_and_gaps():
    # two byte-level pieces of one character (identical spans) are one group: losses add up;
    # a zero-width token (e.g. BOS) puts its loss on the character at its position
    src = [[0, 1], [0, 1], [1, 1], [2, 5]]
    out = map_losses(src, [1.0, 1.0, 4.0, 3.0], [[0, 2], [2, 3], [3, 5]], 5)
    np.testing.assert_allclose(out, [6.0, 1.0, 2.0])
    # target side: identical spans split the group's loss evenly; uncovered characters go to
    # the next target token, trailing ones to the last; zero-width target tokens get nothing
    out = map_losses([[0, 6]], [6.0], [[1, 2], [1, 2], [2, 2], [4, 5]], 6)
    np.testing.assert_allclose(out, [1.0, 1.0, 0.0, 4.0])
    assert out.sum() == pytest.approx(6.0)


def test_word_to_char_and_back_is_identity_on_unicode():
    text = "Größe: 3 × 4 = 12; naïve café — ok."
    w = word_offsets(text)
    rng = np.random.default_rng(0)
    losses = rng.uniform(0.1, 5.0, len(w))
    chars = map_losses(w, losses, char_offsets(text), len(text))
    back = map_losses(char_offsets(text), chars, w, len(text))
    np.testing.assert_allclose(back, losses, rtol=1e-12)


@st.composite
def tokenization(draw, n, allow_quirks=True):
    """Sorted, non-overlapping spans over [0, n) with gaps; optionally repeats and zero-width."""
    cuts = sorted(set(draw(st.lists(st.integers(0, n), min_size=1, max_size=12))) | {0, n})
    spans = []
    for a, b in zip(cuts[:-1], cuts[1:]):
        kind = draw(
            st.sampled_from(
                ["tok", "tok", "gap", "dup", "zero"] if allow_quirks else ["tok", "tok", "gap"]
            )
        )
        if kind == "gap":
            continue
        spans.append([a, b])
        if kind == "dup":
            spans.append([a, b])
        elif kind == "zero":
            spans.append([b, b])
    if not spans:
        spans = [[0, n]]
    return spans


@settings(max_examples=150, deadline=None)
@given(st.data(), st.integers(1, 40))
def test_total_loss_conserved(data, n):
    src = data.draw(tokenization(n))
    tgt = data.draw(tokenization(n))
    if all(s == e for s, e in tgt):
        tgt = [[0, n]]
    losses = data.draw(
        st.lists(
            st.floats(0, 20, allow_nan=False, allow_subnormal=False),
            min_size=len(src),
            max_size=len(src),
        )
    )
    out = map_losses(src, losses, tgt, n)
    assert out.shape == (len(tgt),)
    assert out.sum() == pytest.approx(sum(losses), rel=1e-9, abs=1e-9)
    assert np.all(out >= 0)


@settings(max_examples=100, deadline=None)
@given(st.data(), st.integers(1, 40))
def test_identity_when_tokenizers_coincide(data, n):
    spans = data.draw(tokenization(n, allow_quirks=False))
    losses = data.draw(
        st.lists(
            st.floats(0, 20, allow_nan=False, allow_subnormal=False),
            min_size=len(spans),
            max_size=len(spans),
        )
    )
    np.testing.assert_allclose(map_losses(spans, losses, spans, n), losses, rtol=1e-12, atol=0)


@pytest.mark.parametrize(
    "offsets, losses, match",
    [
        ([[0, 3], [2, 5]], [1, 1], "token 1: offsets \\[2, 5\\] overlap"),
        ([[0, 3], [3, 9]], [1, 1], "token 1: offsets \\[3, 9\\] run past the text"),
        ([[0, 3], [3, 5]], [1, float("nan")], "token 1: loss nan is NaN or infinite"),
        ([[0, 3], [3, 5]], [1], "1 losses for 2 tokens"),
        ([[3, 5], [0, 3]], [1, 1], "token 1: .* overlap"),
    ],
)
def test_bad_offsets_and_losses_name_the_token(offsets, losses, match):
    with pytest.raises(InputError, match=match):
        map_losses(offsets, losses, [[0, 5]], 5, where="model 'm' text 't'")


def test_check_offsets_accepts_byte_repeats():
    off = check_offsets([[0, 1], [0, 1], [1, 2]], 2)
    assert off.dtype == np.int64 and off.shape == (3, 2)


@settings(max_examples=60, deadline=None)
@given(st.data(), st.integers(1, 30), st.integers(1, 5))
def test_batched_mapping_equals_one_record_at_a_time(data, n, R):
    tgt = data.draw(tokenization(n))
    if all(s == e for s, e in tgt):
        tgt = [[0, n]]
    sources = []
    for _ in range(R):
        src = data.draw(tokenization(n))
        sources.append((src, np.linspace(0.5, 3.0, len(src))))
    batched = map_losses_many(sources, tgt, n)
    single = np.array([map_losses(o, lv, tgt, n) for o, lv in sources])
    np.testing.assert_allclose(batched, single, rtol=1e-12, atol=1e-15)


def test_any_tokenizer_plugs_in():
    from types import SimpleNamespace

    from lmforecast.salience.mapping import offsets_function
    from lmforecast.salience.records import map_records

    text = "ab cd"

    class FastTok:  # transformers-style: call with return_offsets_mapping
        is_fast = True

        def __call__(self, t, return_offsets_mapping, return_special_tokens_mask):
            return {"offset_mapping": [(0, 0), (0, 2), (2, 5)], "special_tokens_mask": [1, 0, 0]}

    class RustTok:  # tokenizers-style: encode(text).offsets
        def encode(self, t):
            return SimpleNamespace(offsets=[(0, 2), (2, 5)], special_tokens_mask=[0, 0])

    for tok in (FastTok(), RustTok(), lambda t: [[0, 2], [2, 5]]):
        assert offsets_function(tok)(text).tolist() == [[0, 2], [2, 5]]
    recs = [{"model": "m", "text_id": "x", "offsets": [[0, 1], [1, 5]], "losses": [1.0, 4.0]}]
    out = map_records(recs, {"x": text}, RustTok())
    assert out[0]["offsets"] == [[0, 2], [2, 5]]
    np.testing.assert_allclose(out[0]["losses"], [2.0, 3.0])  # "b" carries 1 of "b cd"'s 4
