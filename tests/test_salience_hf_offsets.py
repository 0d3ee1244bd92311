"""`mapping.disjoint_offsets`: hand-worked byte-level BPE cases (no torch/transformers needed)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lmforecast.errors import InputError
from lmforecast.salience.mapping import check_offsets, disjoint_offsets, map_losses


@pytest.mark.parametrize(
    ("raw", "want"),
    [
        # "naç" as n | aÃ | § : the shared "ç" goes to the later token
        ([[0, 1], [1, 3], [2, 3]], [[0, 1], [1, 2], [2, 3]]),
        # a group of identical spans (3-byte character) overlapped by the next token: every
        # member is clipped, so the group stays one group
        ([[0, 1], [1, 3], [1, 3], [2, 3], [3, 4]], [[0, 1], [1, 2], [1, 2], [2, 3], [3, 4]]),
        # first byte alone, then "rest of the character + next letter": zero-width first piece
        ([[2, 3], [2, 4]], [[2, 2], [2, 4]]),
        # already disjoint (with gaps, repeats and a zero-width token): unchanged
        ([[0, 0], [0, 2], [3, 4], [3, 4], [5, 7]], [[0, 0], [0, 2], [3, 4], [3, 4], [5, 7]]),
        ([], []),
    ],
)
def test_hand_worked_cases(raw, want):
    out = disjoint_offsets(raw)
    assert out.tolist() == want
    check_offsets(out, 10)


def test_raw_overlap_is_rejected_and_the_fixed_one_conserves_loss():
    raw = [[0, 1], [1, 3], [2, 3], [3, 5]]
    with pytest.raises(InputError, match="overlap"):
        map_losses(raw, [1.0, 2.0, 3.0, 4.0], [[0, 5]], 5)
    fixed = disjoint_offsets(raw)
    # target = the characters: "a" (char 1) gets the 2.0 of [1, 2]; char 2 the 3.0 of [2, 3]
    chars = [[i, i + 1] for i in range(5)]
    np.testing.assert_allclose(
        map_losses(fixed, [1.0, 2.0, 3.0, 4.0], chars, 5), [1.0, 2.0, 3.0, 2.0, 2.0]
    )


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3), st.booleans()), max_size=12))
def test_sorted_overlapping_spans_become_valid_and_keep_their_starts(steps):
    """Build byte-level-like offsets: starts non-decreasing, ends possibly past the next start
    (a repeat of the previous span when the flag is set); the result passes `check_offsets`."""
    off, start = [], 0
    for gap, width, repeat in steps:
        if repeat and off:
            off.append(list(off[-1]))
            continue
        start += gap
        off.append([start, start + width])
    n = max([e for _, e in off], default=0)
    out = disjoint_offsets(off)
    check_offsets(out, n)
    assert out.shape == (len(off), 2) and out[:, 0].tolist() == [s for s, _ in off]
    if off:
        assert np.all(out[:, 1] <= np.array([e for _, e in off]))
    for i in range(1, len(off)):  # identical spans (one character's byte pieces) stay identical
        if off[i] == off[i - 1]:
            assert out[i].tolist() == out[i - 1].tolist()
