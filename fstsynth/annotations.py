"""What a pass's annotator tells apart of the right states (`fstsynth.compiler`'s
right annotator): right states grouped by the decisions they lead to in every left
state and the tokens those decisions copy, without building the left x right table.

Public API:
    LeftRules(left_masks): per rule, the distinct left masks that hold it
    right_groups(m, lefts, masks, at_start, deadline, mask_of=None) -> (group per right state, first of each)
"""

from __future__ import annotations

import numpy as np

from fstsynth.bimachine import PassMachine, check_deadline, group_rows
from fstsynth.table_format import CONSTANT, lowest_rules

#: Items of a Python loop between two deadline checks (each item costs microseconds).
CHECK_EVERY = 1024


class LeftRules:
    """Left states as their decisions need them: per rule, the set of distinct left
    masks that hold it (a Python int, bit k for the k-th distinct mask), and the rules
    every left mask holds."""

    def __init__(self, left_masks: np.ndarray) -> None:
        distinct = np.ascontiguousarray(left_masks[group_rows(left_masks)[1]])
        self.count = len(distinct)
        self.every = np.bitwise_and.reduce(distinct, axis=0)
        self.holders: list[int] = []
        for w in range(distinct.shape[1]):
            bits = np.unpackbits(distinct[:, w : w + 1].view(np.uint8), axis=1, bitorder="little")  # [left, bit]
            packed = np.packbits(np.ascontiguousarray(bits.T), axis=1, bitorder="little")  # [bit, left bytes]
            self.holders += [int.from_bytes(row.tobytes(), "little") for row in packed]


def right_groups(
    m: PassMachine,
    lefts: LeftRules,
    masks: np.ndarray,
    at_start: bool,
    deadline: float | None,
    mask_of: np.ndarray | None = None,
) -> tuple[np.ndarray, list[int]]:
    """Group right states by what a decider needs of them: the decision in every left
    state (the lowest rule of `left_mask & masks[mask_of[right]]`; `mask_of` None: a
    row of `masks` per right state) and the tokens at the right offsets those
    decisions copy. Returns the group of each right state and a
    representative right state per group (the first), numbered in order of first
    appearance.

    The left x right table of decisions is never built. A right mask's column of
    decisions over the left states is told by the rules that decide somewhere in it
    (its *deciding* rules: going through the mask's rules in order, each one that
    holds in a left mask no earlier one of them holds in): the decision in a left
    state is then the first deciding rule it holds, or none. So right masks are
    grouped by their deciding rules, found with a set of left masks per rule, a few
    integer operations per rule of the mask."""
    t = m.tables.numpy()
    offsets = m.right_copy_offsets
    reads = np.array(
        [[any(kind != CONSTANT and value == offset for kind, value in m.template(d, at_start)) for offset in offsets]
         for d in range(t.rules + 1)],
        dtype=bool,
    ).reshape(t.rules + 1, len(offsets))
    readers = [sum(1 << d for d in np.nonzero(reads[: t.rules, n])[0].tolist()) for n in range(len(offsets))]
    # A rule every left mask holds decides, in a right mask that has it, for every
    # left state: the right mask's later rules never matter. Cut them, then number
    # the distinct masks.
    rights = _through(masks, lowest_rules(np, masks & lefts.every, t.rules))
    right_group, right_first = group_rows(rights)
    holders, every_left = lefts.holders, (1 << lefts.count) - 1
    column_ids: dict[int, int] = {}
    column = np.empty(len(right_first), dtype=np.int64)
    needed = np.zeros((len(right_first), len(offsets)), dtype=bool)
    for k, row in enumerate(np.ascontiguousarray(rights[right_first])):
        if k % CHECK_EVERY == 0:
            check_deadline(deadline)
        rest, covered, deciding = int.from_bytes(row.tobytes(), "little"), 0, 0
        while rest and covered != every_left:
            low = rest & -rest
            rest ^= low
            held = holders[low.bit_length() - 1]
            if held & ~covered:
                deciding |= low
                covered |= held
        column[k] = column_ids.setdefault(deciding, len(column_ids))
        for n in range(len(offsets)):
            needed[k, n] = bool(deciding & readers[n]) or (covered != every_left and reads[t.rules, n])
    group = right_group if mask_of is None else right_group[mask_of]  # per right state
    columns = [column[group][:, None]]
    for n in range(len(offsets)):
        columns.append(np.where(needed[group, n], m.right_copy[:, n], -2)[:, None])
    return group_rows(np.concatenate(columns, axis=1))


def _through(masks: np.ndarray, last: np.ndarray) -> np.ndarray:
    """`masks` with the bits past `last` (a rule index per row) cleared."""
    first_bit = 64 * np.arange(masks.shape[1], dtype=np.int64)[None, :]
    kept = np.clip(last[:, None] + 1 - first_bit, 0, 64).astype(np.uint64)  # low bits kept per word
    full = np.uint64(0xFFFFFFFFFFFFFFFF)
    # (1 << 64) overflows: whole words are kept as all ones.
    partial = (np.uint64(1) << np.minimum(kept, np.uint64(63))) - np.uint64(1)
    return masks & np.where(kept == 64, full, partial)
