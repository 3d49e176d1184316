"""`bitsets.narrowed` against reading the bits one by one; `bitsets.distinct_rows`,
`maximal_rows` and `rows_within` against comparing rows one by one."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fstsynth.synthesis.bitsets import (
    bit_indices, distinct_rows, distinct_words, maximal_rows, narrowed, numbered_rows, row_words, rows_within,
    unpacked_words,
)


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


@st.composite
def _tables(draw):
    """0/1 tables of rows drawn from a few (so rows repeat), up to past one 64-bit word
    of packed columns (either way `distinct_rows` compares them)."""
    width = draw(st.sampled_from([0, 1, 7, 8, 9, 64, 65, 130]))
    bases = draw(st.lists(st.integers(0, (1 << width) - 1), min_size=1, max_size=5))
    picks = draw(st.lists(st.integers(0, len(bases) - 1), max_size=30))
    rows = [[bases[i] >> j & 1 for j in range(width)] for i in picks]
    return np.array(rows, dtype=np.uint8).reshape(len(picks), width)


@settings(max_examples=40, deadline=None)
@given(_tables())
def test_distinct_rows_are_the_first_of_each_row(table):
    first = [i for i, row in enumerate(table) if not any((table[j] == row).all() for j in range(i))]
    assert list(distinct_rows(table)) == first


@settings(max_examples=40, deadline=None)
@given(_tables(), st.integers(1, 4))
def test_maximal_rows_of_repeated_rows_match_comparing_each_pair(table, block):
    # The first of equal rows is kept unless a larger row holds it: as before the
    # equal rows were left out first.
    cells = [set(np.flatnonzero(row)) for row in table]
    expected = [i for i, row in enumerate(cells)
                if not any(j != i and row <= other and (row < other or j < i) for j, other in enumerate(cells))]
    assert list(maximal_rows(table, block)) == expected


@settings(max_examples=40, deadline=None)
@given(_tables())
def test_numbered_rows_number_each_row_by_its_distinct_row(table):
    packed = np.packbits(table.astype(bool), axis=1)
    distinct, counts, numbers = numbered_rows(packed)
    expected, expected_counts = np.unique(packed, axis=0, return_counts=True)
    assert distinct.tolist() == expected.tolist() and counts.tolist() == expected_counts.tolist()
    assert [distinct[number].tolist() for number in numbers] == packed.tolist()


@settings(max_examples=40, deadline=None)
@given(_tables())
def test_row_words_unpack_to_the_table(table):
    words = row_words(table)
    assert words.dtype == np.uint64 and words.shape == (len(table), max(1, (table.shape[1] + 63) // 64))
    assert unpacked_words(words, table.shape[1]).tolist() == table.astype(bool).tolist()


@settings(max_examples=60, deadline=None)
@given(_tables(), _tables(), st.integers(1, 64))
def test_rows_within_match_comparing_each_pair(inner, outer, block):
    # Tables of different widths are cut to the narrower one.
    width = min(inner.shape[1], outer.shape[1])
    inner, outer = inner[:, :width], outer[:, :width]
    expected = [any(not (row & ~other).any() for other in outer.astype(bool)) for row in inner.astype(bool)]
    assert rows_within(row_words(inner), row_words(outer), block).tolist() == expected


@settings(max_examples=40, deadline=None)
@given(_tables())
def test_distinct_words_are_each_distinct_row_once(table):
    words = row_words(table)
    distinct = distinct_words(words)
    assert sorted(map(tuple, distinct.tolist())) == sorted(set(map(tuple, words.tolist())))
