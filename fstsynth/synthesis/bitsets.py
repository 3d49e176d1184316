"""Bitsets over examples, as Python ints (bit k: example k).

Public API:
    bits(indices), lowest_bit(bits), bit_indices(bits), column_bits(table), distinct_rows(table),
    numbered_rows(packed), row_words(table), unpacked_words(words, width), distinct_words(words),
    rows_within(inner, outer), maximal_rows(table), LongSet, narrowed(values, rows, n)

"Where does this rule fire, and is it right there" is then a few AND/popcount
operations on ints, done in C.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np


def bits(indices: Iterable[int]) -> int:
    """A bitset with the given bits set."""
    indices = list(indices)
    if not indices:
        return 0
    buf = bytearray((max(indices) >> 3) + 1)
    for k in indices:
        buf[k >> 3] |= 1 << (k & 7)
    return int.from_bytes(buf, "little")


def lowest_bit(bits: int) -> int:
    """Index of the lowest set bit of a nonzero bitset."""
    return (bits & -bits).bit_length() - 1


def bit_indices(bits: int) -> list[int]:
    """Indices of the set bits of a bitset, ascending."""
    # The binary text is scanned in C: far cheaper than peeling bits off a long int.
    text = bin(bits)[:1:-1]  # least significant first, without the "0b"
    out = []
    k = text.find("1")
    while k >= 0:
        out.append(k)
        k = text.find("1", k + 1)
    return out


def column_bits(table: np.ndarray) -> list[int]:
    """Each column of a 0/1 table as a bitset over its rows (row k is bit k)."""
    packed = np.ascontiguousarray(np.packbits(table, axis=0, bitorder="little").T)
    return [int.from_bytes(row.tobytes(), "little") for row in packed]


def _row_keys(packed: np.ndarray) -> np.ndarray:
    """Each row of a byte table as one value, equal exactly where the rows are and
    ordered as their bytes compare: one big-endian word where a row fits in 8 bytes,
    else the row's bytes as one opaque string (`np.unique(axis=0)` compares column
    by column: 5x as slow on German danger rows of 13 bytes)."""
    width = packed.shape[1]
    if width <= 8:
        words = np.zeros((len(packed), 8), dtype=np.uint8)
        words[:, :width] = packed
        return words.view(">u8").ravel()
    return np.ascontiguousarray(packed).view(np.dtype((np.void, width))).ravel()


def distinct_rows(table: np.ndarray) -> np.ndarray:
    """Indices (ascending) of the first of each distinct row of a 0/1 table: a sort of
    the packed rows, not a product."""
    # `return_index` sorts stably: the first row of each value.
    _, first = np.unique(_row_keys(np.packbits(table.astype(bool), axis=1)), return_index=True)
    return np.sort(first)


def numbered_rows(packed: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`np.unique(packed, axis=0, return_counts=True)` of a byte table (uint8): its
    distinct rows, ascending as their bytes compare, and how often each occurs; and the
    number of each row's distinct row (`np.unique`'s inverse): a row's pattern found by
    one gather later."""
    _, first, numbers, counts = np.unique(_row_keys(packed), return_index=True, return_inverse=True,
                                          return_counts=True)
    return packed[first], counts, numbers.reshape(-1)


def row_words(table: np.ndarray) -> np.ndarray:
    """The rows of a 0/1 table packed into 64-bit words (one row of words per row, at
    least one word): tested for containment a word at a time (`rows_within`), where a
    row of some 60 atoms is one word instead of 60 floats of a product."""
    packed = np.packbits(table.astype(bool), axis=1)
    width = max(1, (packed.shape[1] + 7) >> 3)
    padded = np.zeros((len(packed), width * 8), dtype=np.uint8)
    padded[:, : packed.shape[1]] = packed
    return padded.view(np.uint64)


def unpacked_words(words: np.ndarray, width: int) -> np.ndarray:
    """The 0/1 table (bool) of `width` columns whose rows `row_words` packed."""
    return np.unpackbits(np.ascontiguousarray(words).view(np.uint8), axis=1, count=width).astype(bool)


def distinct_words(words: np.ndarray) -> np.ndarray:
    """The distinct rows of a table of `row_words`, in no promised order: its bytes'
    rows as `_row_keys` (`np.unique(axis=0)` is 5x as slow on 3,000 rows of one or two
    words)."""
    width = words.shape[1]
    # The keys hold the rows' bytes as they are (a view, in one word or one string):
    # the distinct ones, viewed back, are the distinct rows.
    keys = np.unique(_row_keys(np.ascontiguousarray(words).view(np.uint8)))
    return np.ascontiguousarray(keys).view(np.uint64).reshape(-1, width)


def rows_within(inner: np.ndarray, outer: np.ndarray, block: int = 1 << 20) -> np.ndarray:
    """For each row of `inner` (words of `row_words`), whether some row of `outer`
    holds every bit of it: no bit of the inner row outside the outer one. In blocks of
    at most `block` row pairs, a word at a time: numpy's reduction over a last axis of
    one or two words made rows of two words 7x as slow as a float product (German
    10,000 pairs), a loop over the words with `|=` is not."""
    within = np.zeros(len(inner), dtype=bool)
    if not len(inner) or not len(outer):
        return within
    step = max(1, block // len(outer))
    lacking = ~outer
    for start in range(0, len(inner), step):
        part = inner[start : start + step]
        # Whether the inner row has bits outside each outer row.
        outside = (part[:, None, 0] & lacking[None, :, 0]) != 0
        for word in range(1, outer.shape[1]):
            outside |= (part[:, None, word] & lacking[None, :, word]) != 0
        within[start : start + step] = ~outside.all(axis=1)
    return within


def maximal_rows(table: np.ndarray, block: int = 256) -> np.ndarray:
    """Indices (ascending) of the rows of a 0/1 table that no other row holds every
    true cell of: of equal rows, the first. A set of columns lies within some row
    exactly when it lies within one of these.

    Rows are taken by count of true cells, most first: a row can only lie within one
    taken before it, and, if it does, within a kept one. Each block of rows is tested
    against the kept rows and its own earlier rows by a product (common cells: a row
    lies within another where they share all of its cells). Equal rows are left out
    first (`distinct_rows`): a table of a few atoms repeats its rows many times over."""
    distinct = distinct_rows(table)
    table = table[distinct]
    sizes = table.sum(axis=1, dtype=np.int64)  # signed: negated below
    order = np.argsort(-sizes, kind="stable")
    rows = table[order].astype(np.float32)
    sizes = sizes[order]
    kept: list[np.ndarray] = []
    kept_rows = np.zeros((0, table.shape[1]), dtype=np.float32)
    for start in range(0, len(rows), block):
        part = rows[start : start + block]
        full = sizes[start : start + block, None]
        within = np.tril(part @ part.T == full, -1).any(axis=1)
        if len(kept_rows):
            within |= (part @ kept_rows.T == full).any(axis=1)
        new = np.flatnonzero(~within)
        kept.append(start + new)
        kept_rows = np.vstack([kept_rows, part[new]])
    return distinct[np.sort(order[np.concatenate(kept)])] if kept else np.zeros(0, dtype=np.intp)


_LOW_BITS = (1 << 64) - 1


class LongSet:
    """A long bitset as a dict key, hashed from a few facts about it that cost a few
    machine words each, whatever its length: where it holds among the positive
    examples (`gainable`), its highest example, the 64 examples below that, and the
    first 64 examples. Hashing the int itself was the search's largest cost on large
    inputs."""

    __slots__ = ("bits", "hash")

    def __init__(self, bits: int, gainable: int) -> None:
        length = bits.bit_length()
        self.bits = bits
        self.hash = hash((gainable, length, bits >> max(length - 64, 0), bits & _LOW_BITS))

    def __hash__(self) -> int:
        return self.hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LongSet) and self.bits == other.bits


def narrowed(values: Iterable[int], rows: np.ndarray, n: int, block: int = 256) -> list[int]:
    """Each bitset of `values` (over `n` examples) read on `rows` alone: bit j of a
    result is bit `rows[j]` of the value. A bijection between the subsets of `rows`
    and the bitsets of `len(rows)` bits that keeps AND, equality and bit counts.

    Only the bytes holding `rows` are read (a block of values at a time, one byte
    string each): the cost is in the rows kept, not in `n`."""
    width = (n + 7) >> 3
    at_byte = rows >> 3
    shift = (rows & 7).astype(np.uint8)
    values = list(values)
    out: list[int] = []
    for start in range(0, len(values), block):
        part = values[start : start + block]
        raw = np.frombuffer(b"".join(v.to_bytes(width, "little") for v in part), dtype=np.uint8)
        picked = (raw.reshape(len(part), width)[:, at_byte] >> shift) & 1
        packed = np.packbits(picked, axis=1, bitorder="little")
        out.extend(int.from_bytes(row.tobytes(), "little") for row in packed)
    return out
