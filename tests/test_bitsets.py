"""`bitsets.narrowed` against reading the bits one by one."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fstsynth.synthesis.bitsets import bit_indices, narrowed


@st.composite
def _bitsets_and_rows(draw):
    n = draw(st.integers(0, 300))
    values = draw(st.lists(st.integers(0, (1 << n) - 1), max_size=6))
    rows = bit_indices(draw(st.integers(0, (1 << n) - 1)))  # a random subset, in order
    block = draw(st.integers(1, 4))
    return values, np.array(rows, dtype=np.intp), n, block


@settings(max_examples=40, deadline=None)
@given(_bitsets_and_rows())
def test_narrowed_reads_each_row_in_order(case):
    values, rows, n, block = case
    out = narrowed(values, rows, n, block)
    assert out == [sum(1 << j for j, row in enumerate(rows) if value >> int(row) & 1) for value in values]


@settings(max_examples=40, deadline=None)
@given(_bitsets_and_rows())
def test_narrowed_keeps_and_equality_and_counts_within_the_rows(case):
    values, rows, n, block = case
    within = sum(1 << int(row) for row in rows)
    narrow = narrowed(values, rows, n, block)
    for a, na in zip(values, narrow):
        assert na.bit_count() == (a & within).bit_count()
        assert [int(rows[j]) for j in bit_indices(na)] == bit_indices(a & within)
        for b, nb in zip(values, narrow):
            assert narrowed([a & b], rows, n)[0] == na & nb
            assert (na == nb) == (a & within == b & within)
