"""A pass as a bimachine: its decision at each position from what lies left and right.

Public API:
    PassMachine, build_pass_machine(pass_, tokens, in_tags, out_tags, features, deadline=None)
    program_machines(program, tokens, features, deadline=None) -> list[PassMachine]
    program_tables(program, alphabet, features, deadline=None) -> fstsynth.tables.Tables
    program_tokens(program, alphabet), pass_tags(program)
    lowest_rule(mask, rules), to_words(masks, rules), mask_bytes(masks, rules), mask_array(masks, rules),
    group_rows(matrix), SideMasks, TimeLimitError,
    check_deadline

Every predicate of a pass reads the pass's input at a fixed offset or along a tier, so
whether rule r fires at position p splits into three independent tests: one on what
lies left of p (offsets < 0, tiers to the left), one on the symbol at p (offset 0, the
transformation's own condition) and one on what lies right of p (offsets > 0, tiers to
the right). A pass is compiled into
- a *left automaton*, deterministic, reading the word left to right: its state at p
  (after reading the symbols before p) says which rules' left tests hold there
  (`left_mask`);
- a *right automaton*, deterministic, reading the word right to left: its state at p
  (after the symbols after p) says which rules' right tests hold (`right_mask`);
- per class of input symbols, the rules whose test at offset 0 holds (`class_mask`),
  and the same at the start position (`start_mask`).
The rule that fires at p is the first (lowest) rule in all three masks, or none: the
pass's `Else` chain, first match wins, every test reading the pass input. What each
decision writes is a `template`: constant tokens and tokens read at an offset (the
token itself at offset 0, a copied one elsewhere), each output token tagged with the
transformation for the next pass (`out_tag`). The apply tables (`fstsynth.tables`) run
exactly this; the compiler (`fstsynth.compiler`) builds the pass's transducers from it.

The automata keep only what the tests decide: per distance ahead, the rules whose
tests on the cells read so far hold there (and the same per tier and rank, and the
tokens a copy reads), never the window of cells itself; they are then minimized (Moore)
with respect to the masks and to the tokens a copy reads, so their size is what the
rules distinguish, not the alphabet's powers.

The rules are first read as decisions and their tests sorted by side
(`fstsynth.pass_decisions`); this module builds the automata and the tables from them.

Input symbols of a pass are (tag, token) pairs: the token, and which of the
transformations this pass tests (`in_tags`, index 0: none of them) produced it in the
previous pass. Symbols no test tells apart form one class; the automata read classes.
The start position (before the first token) reads as the boundary at offset 0, as in
the interpreter; it is no symbol, so the left automaton starts in the same state at the
start position and at the first token.
"""

from __future__ import annotations

import math

import functools
import io
import time
from dataclasses import dataclass
from typing import Iterable, Mapping, NamedTuple, Sequence

import numpy as np

from fstsynth.dsl import BOUNDARY, Identity, Pass, Program, Transformation
from fstsynth.rule_shape import (
    Copied,
    OutputItem,
    Written,
    referenced_tags,
    shape_of,
)
from fstsynth.errors import UserError
from fstsynth.pass_decisions import BOUNDARY_CELL, Atom, Cells, Decision, Side, decisions_of, sides_of
from fstsynth.arrays import Array
from fstsynth.table_format import CONSTANT, OFFSET, UNK, PassTables
from fstsynth.table_format import lowest_rule as lowest_rule  # (part of this module's API)
from fstsynth.tables import Tables
from fstsynth.types import Features, Token



class TimeLimitError(UserError):
    """Compilation did not finish before the deadline it was given."""


def check_deadline(deadline: float | None) -> None:
    if deadline is not None and time.monotonic() > deadline:
        raise TimeLimitError("time limit reached while compiling the rules (raise --time-limit)")


@dataclass(frozen=True, eq=False)
class PassMachine:
    """One pass, compiled (see the module docstring).

    `tables` are what applying the pass needs (`fstsynth.tables.PassTables`): the
    class of each symbol (`symbol_class[tag, token]`), the left automaton (from state
    s on class c to `left_next[left_row[s], left_column[c]]`: distinct rows of steps
    over groups of classes, see `_compact`; `left_start`; the mask of state s is
    `left_mask[left_mask_of[s]]`, each distinct mask kept once), the right one read
    right to left (`right_next`, `right_row`, `right_column`, `right_start`,
    `right_mask`, `right_mask_of`), `class_mask[class]` and
    `start_mask` (the rules whose offset-0 test holds at a token of the class, at the
    start position), and the templates. Masks are rows of uint64 words, rule r in bit
    r % 64 of word r // 64. Decisions are rule indices 0..rules-1, and `rules` for "no
    rule fired"; decision d writes the items `template_kind/template_value[
    template_start[t] : template_start[t + 1]]` with t = d at a token and
    t = rules + 1 + d at the start position, its tokens tagged `out_tag[d]` (an index
    into the next pass's `in_tags`).

    Besides, for the transducers: `tokens` (the program's alphabet: a token index is
    its position here), `in_tags` (the tags this pass reads; index 0 is none), and the
    tokens copies read: `left_copy[state, k]` / `right_copy[state, k]` is the token
    index (-1: the boundary) at offset `left_copy_offsets[k]` / `right_copy_offsets[k]`
    in that state.
    """

    tables: PassTables
    tokens: tuple[Token, ...]
    in_tags: tuple[Transformation | None, ...]
    left_copy_offsets: tuple[int, ...]
    left_copy: np.ndarray
    right_copy_offsets: tuple[int, ...]
    right_copy: np.ndarray

    @property
    def rules(self) -> int:
        return self.tables.rules

    @property
    def classes(self) -> int:
        return int(self.tables.class_mask.shape[0])

    @property
    def looks_right(self) -> bool:
        """Whether a decision depends on what lies right of the position at all."""
        return self.tables.rights > 1

    def template(self, decision: int, at_start: bool) -> list[tuple[int, int]]:
        """The (kind, value) items decision `decision` writes."""
        return self._templates[decision + (self.rules + 1 if at_start else 0)]

    @functools.cached_property
    def _templates(self) -> list[list[tuple[int, int]]]:
        t = self.tables
        starts, kinds, values = t.template_start.tolist(), t.template_kind.tolist(), t.template_value.tolist()
        return [list(zip(kinds[a:b], values[a:b])) for a, b in zip(starts, starts[1:])]


def mask_words(rules: int) -> int:
    return max(1, (rules + 63) // 64)


def to_words(masks: Sequence[int], rules: int) -> np.ndarray:
    """Python-int masks as rows of uint64 words."""
    words = mask_words(rules)
    return np.frombuffer(mask_bytes(masks, rules), dtype="<u8").astype(np.uint64).reshape(len(masks), words)


def mask_bytes(masks: Sequence[int], rules: int) -> bytes:
    """`to_words`' rows as little-endian bytes (the tables' `<u8`): each mask cut into
    its words once, into one buffer (a `BytesIO`'s value is its buffer, not a copy,
    where nothing else views it)."""
    size = 8 * mask_words(rules)
    out = io.BytesIO()
    for mask in masks:
        out.write(mask.to_bytes(size, "little"))
    return out.getvalue()


def mask_array(masks: Sequence[int], rules: int) -> Array:
    """Python-int masks as the tables' array of uint64 words (`mask_bytes`)."""
    return Array("<u8", (len(masks), mask_words(rules)), mask_bytes(masks, rules))


def from_words(row: np.ndarray) -> int:
    return sum(int(word) << (64 * w) for w, word in enumerate(row.tolist()))


# ------------------------------------------------------------------ one side's automaton


class SideNext(NamedTuple):
    """One side's steps in compact form: from state s on class c to
    `next[row[s], column[c]]`."""

    next: np.ndarray
    row: np.ndarray
    column: np.ndarray


class SideMasks(NamedTuple):
    """One side's masks: each distinct one once (`distinct`, Python ints), and the
    number of each state's (`of`, int32)."""

    distinct: list[int]
    of: np.ndarray

    def per_state(self) -> list[int]:
        """The mask of each state (for tests and small automata)."""
        return [self.distinct[k] for k in self.of.tolist()]


class _TierSlots(NamedTuple):
    """Where one tier sits in a side automaton's state (`first`: its masks per rank,
    `ranks` of them) and in a symbol as read (`on`: whether the symbol is on the tier,
    then its masks per rank)."""

    first: int
    on: int
    ranks: int


@dataclass(frozen=True)
class _StateLayout:
    """The components of a side automaton's state and of a symbol as read, by position.
    A state: what lies ahead per distance 0 .. width-1, each tier's masks per rank, the
    tokens held for copies (newest first). A read: the cell mask per distance, per tier
    whether the symbol is on it and its masks per rank, the token (where copies read
    one)."""

    width: int
    tiers: tuple[_TierSlots, ...]
    held: int

    @classmethod
    def of(cls, width: int, ranks: Sequence[int], held: int) -> "_StateLayout":
        tiers, first, on = [], width, width
        for count in ranks:
            tiers.append(_TierSlots(first, on, count))
            first, on = first + count, on + 1 + count
        return cls(width, tuple(tiers), held)

    @property
    def held_at(self) -> int:
        return self.width + sum(t.ranks for t in self.tiers)

    @property
    def size(self) -> int:
        return self.held_at + self.held

    @property
    def rest(self) -> list[int]:
        """What a step reads of a state: all but what lies at distance 0 on the cells
        and the farthest held token."""
        return list(range(1, self.width)) + list(range(self.width, self.size - 1 if self.held else self.size))

    @property
    def observed(self) -> list[int]:
        """What lies at distance 0: on the cells and at rank 0 of each tier."""
        return ([0] if self.width else []) + [t.first for t in self.tiers]


#: Cells (frontier states x symbols x state components) one step of the breadth-first
#: walk builds at once: bounds its memory (32 MB) whatever the side's size.
STEP_BLOCK_CELLS = 4_000_000


def _side_automaton(
    side: Side,
    cells: Cells,
    classes: list[int],
    rules: int,
    deadline: float | None,
) -> tuple["SideNext", int, SideMasks, np.ndarray]:
    """The deterministic automaton of one side, minimized: (its steps, start state,
    its masks and the mask of each state, copied token per state and copy offset).

    A state holds what the symbols already read decide about this position and the
    ones to come, as masks: per distance t = 0 .. width-1, the rules whose tests hold
    on the cells read, once the state has moved t more steps (`ahead[t]`; a symbol
    read shifts in at offset 1: `ahead'[t] = cell_mask(t, symbol) & ahead[t + 1]`);
    per tier and rank q the same for the tier tokens read (they shift a rank on each
    tier token); and the tokens copies read. The mask of a state is what lies ahead at
    distance 0, on the cells and on every tier. This is all a window of the cells'
    signatures determines that a test reads, so states that such a window tells apart
    for nothing are never built (a German spelling pass has the product of the
    signatures of every offset); minimization (Moore) then merges what only later
    steps tell apart. States are numbered in the order a breadth-first walk over the
    symbols finds them; the walk steps what a step reads of the states (their rests),
    a block at a time with numpy.
    """
    width = side.width
    tier_names = sorted(side.tier_feats)
    ranks = [len(side.tier_feats[tier]) for tier in tier_names]
    every = (1 << rules) - 1
    copy_at = [abs(offset) - 1 for offset in side.copy_offsets]
    held = max(copy_at, default=-1) + 1  # tokens kept for copies: offsets 1..held
    masks = _Masks(every)

    # Per offset, the cell mask of every class and of the boundary (last).
    cell_masks = [cell_test_masks(cells, side.atoms[j], side.cell_tests[j], [*classes, BOUNDARY_CELL], rules)
                  for j in range(width)]
    class_index = {v: k for k, v in enumerate(classes)}

    def cell_mask(j: int, v: int) -> int:
        return cell_masks[j][-1 if v == BOUNDARY_CELL else class_index[v]]

    def tier_mask(tier: str, q: int, v: int | None) -> int:
        """The rules whose tests of the (q+1)-th nearest tier token hold if it is
        symbol v (None: there are fewer tier tokens)."""
        mask = every
        for r, tests in side.tier_tests[tier].items():
            for tq, feature, neg in tests:
                if tq == q:
                    value = feature is BOUNDARY if v is None else feature is not BOUNDARY and cells.has(v, feature)
                    if value == neg:
                        mask &= ~(1 << r)
        return mask

    # A symbol as read: per distance its cell mask; per tier whether it is on the
    # tier, and its masks per rank; its token, where copies read one. Classes read
    # alike move the automaton alike: one column each (numbered in order of first
    # class), spread to the classes once minimized.
    def reading(v: int) -> tuple[int, ...]:
        key = [masks.id(cell_mask(j, v)) for j in range(width)]
        for tier, count in zip(tier_names, ranks):
            on = cells.has(v, tier)
            key += [int(on)] + [masks.id(tier_mask(tier, q, v)) if on else 0 for q in range(count)]
        return tuple(key + [cells.value(("copy",), v)] * min(held, 1))

    read_ids: dict[tuple[int, ...], int] = {}
    class_read = np.array([read_ids.setdefault(reading(rep), len(read_ids)) for rep in classes], dtype=np.int64)
    reads = np.array(list(read_ids), dtype=np.int64).reshape(len(read_ids), len(next(iter(read_ids))))

    def ahead_of(per_distance: list[int]) -> list[int]:
        """Masks per distance as what lies ahead: ahead[t] = the masks from t on."""
        out, acc = [], every
        for mask in reversed(per_distance):
            acc &= mask
            out.append(masks.id(acc))
        return out[::-1]

    layout = _StateLayout.of(width, ranks, held)
    start = ahead_of([cell_mask(j, BOUNDARY_CELL) for j in range(width)])
    for tier, count in zip(tier_names, ranks):
        start += ahead_of([tier_mask(tier, q, None) for q in range(count)])
    start += [-1] * held
    held_at, size = layout.held_at, layout.size
    assert len(start) == size

    def step(states: np.ndarray) -> np.ndarray:
        """The successor of every state on every read: [state, read, component]."""
        n, k = len(states), len(reads)
        out = np.empty((n, k, size), dtype=np.int64)
        for t in range(width):
            out[:, :, t] = masks.meet(reads[:, t], states[:, t + 1]) if t + 1 < width else reads[None, :, t]
        for first, on_at, count in layout.tiers:
            on = reads[None, :, on_at].astype(bool)
            for q in range(count):
                shifted = reads[None, :, on_at + 1 + q]
                if q + 1 < count:
                    shifted = masks.meet(reads[:, on_at + 1 + q], states[:, first + q + 1])
                out[:, :, first + q] = np.where(on, shifted, states[:, None, first + q])
        if held:
            out[:, :, held_at] = reads[None, :, -1]
            out[:, :, held_at + 1 :] = states[:, None, held_at : size - 1]
        return out

    # A step reads only a state's *rest* (`_StateLayout.rest`): what the state holds
    # besides (what lies at distance 0, the farthest held token: its *own* components)
    # is observed there and shifted out. So the walk steps rests, not states, and keeps
    # per rest and read the successor's rest and own components, never the states
    # themselves (German spelling at 10,000 pairs: 20,809 rests, 9.2M states, whose
    # dictionary of bytes and arrays were 3.4 GB). The states are numbered after the
    # walk, in the order the breadth-first walk meets them.
    rest_at = layout.rest
    own_at = [j for j in range(size) if j not in set(rest_at)]
    rest_ids: dict[bytes, int] = {}
    rest_blocks: list[np.ndarray] = []  # the rests in order of number, a block at a time

    def rest_numbers(rests: np.ndarray) -> np.ndarray:
        """The number of each row of `rests` (int32), new ones numbered in order."""
        number, firsts = group_rows(rests)
        ids = np.empty(len(firsts), dtype=np.int32)
        fresh = []
        for g, f in enumerate(firsts):
            key = rests[f].tobytes()
            found = rest_ids.get(key)
            if found is None:
                found = rest_ids[key] = len(rest_ids)
                fresh.append(f)
            ids[g] = found
        if fresh:
            rest_blocks.append(rests[fresh])
        return ids[number]

    start_state = np.array([start], dtype=np.int64)
    rest_numbers(start_state[:, rest_at].astype(np.int32))
    next_rest: list[np.ndarray] = []  # per rest and read: the successor's rest
    next_own: list[np.ndarray] = []  # ... and its own components
    block = max(1, STEP_BLOCK_CELLS // max(1, len(reads) * size))
    k = 0  # rest_blocks[k] is the next block of rests to step from
    while k < len(rest_blocks):
        for lo in range(0, len(rest_blocks[k]), block):
            check_deadline(deadline)
            rests = rest_blocks[k][lo : lo + block]
            frontier = np.zeros((len(rests), size), dtype=np.int64)  # own components: not read
            frontier[:, rest_at] = rests
            succ = step(frontier).reshape(len(rests) * len(reads), size)
            next_rest.append(rest_numbers(succ[:, rest_at].astype(np.int32)).reshape(len(rests), len(reads)))
            next_own.append(succ[:, own_at].astype(np.int32).reshape(len(rests), len(reads), len(own_at)))
            del succ, frontier
        k += 1
    rest_states = np.concatenate(rest_blocks)
    rest_ids.clear()
    rest_blocks.clear()
    # Every successor met, as (rest, own components), after the start state: the states
    # are the distinct ones, numbered in order of first appearance.
    met_rest = np.concatenate([np.zeros(1, dtype=np.int32), *(a.reshape(-1) for a in next_rest)])
    met_own = np.concatenate([start_state[:, own_at].astype(np.int32),
                              *(a.reshape(a.shape[0] * a.shape[1], len(own_at)) for a in next_own)])
    del next_rest, next_own
    state_of, firsts = _first_appearance(_column_codes([met_rest, *met_own.T], len(met_rest)))
    table = _small_ints(state_of[1:]).reshape(len(rest_states), len(reads))  # [rest, read]
    del state_of
    rest_of = met_rest[firsts].astype(np.int64)
    own_of = met_own[firsts]
    del met_rest, met_own, firsts
    rest_position = {j: i for i, j in enumerate(rest_at)}
    own_position = {j: i for i, j in enumerate(own_at)}

    def component(j: int, states: np.ndarray | slice = slice(None)) -> np.ndarray:
        """Component j of the states (all, or those numbered)."""
        if j in own_position:
            return own_of[states, own_position[j]]
        return rest_states[rest_of[states], rest_position[j]]

    # Observed in each state: its mask and the tokens copies read.
    mask_at = layout.observed
    combination, combination_first = _first_appearance(_column_codes([component(j) for j in mask_at], len(rest_of)))
    # Each distinct mask is kept once, as one int: combinations are many, and many
    # meet to equal masks (German spelling at 10,000 pairs: 4.9M combinations, an int
    # of 1,138 bits, 157 bytes, for each was 0.7 GB).
    observed_ids = [component(j, combination_first).tolist() for j in mask_at]
    mask_number: dict[int, int] = {}
    numbers = np.fromiter(
        (mask_number.setdefault(masks.meet_all([ids[k] for ids in observed_ids]), len(mask_number))
         for k in range(len(combination_first))),
        dtype=np.int64, count=len(combination_first),
    )
    del observed_ids
    state_masks = list(mask_number)
    del mask_number
    copied = np.zeros((len(rest_of), len(copy_at)), dtype=np.int32)
    for k, j in enumerate(copy_at):
        copied[:, k] = component(held_at + j)
    block_of = _minimize(table, rest_of, np.concatenate([numbers[combination][:, None], copied], axis=1))
    count = int(block_of.max()) + 1
    rep = np.zeros(count, dtype=np.int64)
    rep[block_of[::-1]] = np.arange(len(block_of) - 1, -1, -1)  # the first state of each block
    # A minimized state steps as its rest does: the rests' rows, not one row per state
    # (French spelling at 3,000 pairs: 507,901 states over 437 reads, 1.7 GB as int64,
    # but 7,514 rests).
    rests_used, rest_index = np.unique(rest_of[rep], return_inverse=True)
    next_by_rest = block_of[table[rests_used]]  # [rest used, read]
    # The masks are kept once, and a mask number per state: every distinct mask is some
    # block's (a block's states observe one mask), so `state_masks` are the distinct
    # masks of the minimized states (German spelling at 10,000 pairs: 11.5M left states,
    # 1.66 GB of mask words had each state its row).
    mask_of = numbers[combination[rep]].astype(np.int32)
    copy_min = copied[rep].astype(np.int32).reshape(count, len(copy_at))
    steps = _compact(next_by_rest, rest_index.reshape(-1), class_read)
    return steps, int(block_of[0]), SideMasks(state_masks, mask_of), copy_min


def cell_test_masks(
    cells: Cells, atoms: Sequence[Atom], tests: Mapping[int, list[tuple[int, bool]]], symbols: Sequence[int], rules: int
) -> list[int]:
    """Per symbol, the rules all of whose `tests` (atom index, negated) of one cell
    hold if the cell is that symbol: a column of truth per rule over the symbols."""
    values = np.array([[bool(cells.value(a, v)) for a in atoms] for v in symbols], dtype=bool)
    holds = np.ones((len(symbols), max(rules, 1)), dtype=bool)
    for r, found in tests.items():
        for i, negated in found:
            holds[:, r] &= values[:, i] != negated
    packed = np.packbits(holds[:, :rules], axis=1, bitorder="little")
    return [int.from_bytes(row.tobytes(), "little") for row in packed]


class _Masks:
    """Rule masks (Python ints) numbered as they are met (0: every rule), and their
    intersections by number, each pair computed once."""

    def __init__(self, every: int) -> None:
        self.every = every
        self.ids: dict[int, int] = {every: 0}
        self.masks = [every]
        self._meets: dict[int, int] = {}

    def id(self, mask: int) -> int:
        found = self.ids.get(mask)
        if found is None:
            found = self.ids[mask] = len(self.masks)
            self.masks.append(mask)
        return found

    def meet(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """The number of masks[a] & masks[b] for every a of a row and b of a column:
        [len(b), len(a)]. Each distinct pair is met once (the columns of a step repeat
        few masks many times)."""
        a_values, a_index = np.unique(a, return_inverse=True)
        b_values, b_index = np.unique(b, return_inverse=True)
        meets, masks, out = self._meets, self.masks, []
        for y in b_values.tolist():
            for x in a_values.tolist():
                pair = (x << 32) | y
                found = meets.get(pair)
                if found is None:
                    found = meets[pair] = self.id(masks[x] & masks[y])
                out.append(found)
        table = np.array(out, dtype=np.int64).reshape(len(b_values), len(a_values))
        return table[b_index.reshape(-1)][:, a_index.reshape(-1)]

    def meet_all(self, ids: list[int]) -> int:
        mask = self.every
        for i in ids:
            mask &= self.masks[i]
        return mask


def _compact(next_by_rest: np.ndarray, rest_of: np.ndarray, class_sig: np.ndarray) -> SideNext:
    """A minimized automaton's steps (state s steps on signature g to
    `next_by_rest[rest_of[s], g]`) in the tables' compact form
    (`fstsynth.table_format.PassTables`): signatures whose columns are equal form one
    column, and states whose rows are then equal share one row, numbered in order of
    first appearance. A state mostly remembers a window its step shifts out, so French
    spelling's 39,755 left states over 767 classes have 805 distinct rows over 117
    columns. Two columns are equal over the states exactly where they are over the
    rests the states use, which are far fewer: the states' whole table is never made."""
    by_column, first_columns = group_rows(next_by_rest.T)
    rows = next_by_rest[:, first_columns]
    rest_row, _ = group_rows(rows)  # per rest: its row, in some order
    row_of, first_states = group_rows(rest_row[rest_of][:, None])  # renumbered over the states
    return SideNext(
        rows[rest_of[first_states]].astype(np.int32), row_of.astype(np.int32), by_column[class_sig].astype(np.int32)
    )


def _row_codes(matrix: np.ndarray) -> np.ndarray:
    """One sortable value per row, equal for equal rows: the row as one integer in mixed
    radix where its columns' ranges allow (sorting int64 is several times faster than
    sorting the rows' bytes: measured 0.39 -> 0.05 CPU s on 547,515 rows of 3), else
    the row's bytes."""
    if matrix.dtype.kind in "iu":
        low = matrix.min(axis=0)
        spans = [int(high) - int(lowest) + 1 for high, lowest in zip(matrix.max(axis=0).tolist(), low.tolist())]
        if math.prod(spans) < 2**62:
            radix = np.array([math.prod(spans[k + 1:]) for k in range(len(spans))], dtype=np.int64)
            shifted = (matrix - low).astype(np.int64)  # in 0..span-1: fits int64 whatever the dtype
            return shifted @ radix
    return matrix.view(np.dtype((np.void, matrix.dtype.itemsize * matrix.shape[1]))).reshape(-1)


def group_rows(matrix: np.ndarray) -> tuple[np.ndarray, list[int]]:
    """Number the distinct rows of a 2-d integer array in order of first appearance:
    (the number of each row, the first row of each number). A dictionary of the rows'
    bytes: `numpy.unique(axis=0)` sorts the rows, many times slower on wide ones."""
    matrix = np.ascontiguousarray(matrix)
    if matrix.shape[1] == 0:
        return np.zeros(matrix.shape[0], dtype=np.int64), [0] if matrix.shape[0] else []
    if matrix.shape[0] > 4096:  # many rows: numpy's sort beats a dictionary
        number, firsts = _first_appearance(_row_codes(matrix))
        return number, firsts.tolist()
    ids: dict[bytes, int] = {}
    first: list[int] = []
    inverse = np.empty(matrix.shape[0], dtype=np.int64)
    for k, row in enumerate(matrix):
        key = row.tobytes()
        found = ids.get(key)
        if found is None:
            found = ids[key] = len(first)
            first.append(k)
        inverse[k] = found
    return inverse, first


def _small_ints(values: np.ndarray) -> np.ndarray:
    """`values` (non-negative) as int32 where they fit: half the memory of int64."""
    return values.astype(np.int32) if len(values) == 0 or int(values.max()) < 2**31 else values


def _column_codes(columns: Sequence[np.ndarray], rows: int) -> np.ndarray:
    """One int64 per row of the integer `columns` (each `rows` long), equal exactly for
    equal rows: mixed radix over the columns' ranges, the rows numbered afresh
    (`_first_appearance`) where the radix would pass 2**62. Column by column, so no
    2-d copy of the rows is made (German spelling at 10,000 pairs: 19.3M rows)."""
    codes = np.zeros(rows, dtype=np.int64)
    span = 1
    for column in columns:
        if rows == 0:
            break
        low, high = int(column.min()), int(column.max())
        width = high - low + 1
        if span * width >= 2**62:
            codes = _first_appearance(codes)[0]
            span = int(codes.max()) + 1
        codes *= width
        codes += column
        codes -= low
        span *= width
    return codes


def _first_appearance(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Number the distinct values of `codes` (integers, or rows' bytes from `_row_codes`)
    in order of first appearance: (the number of each value, int64; the index of the
    first of each number). `group_rows` for one column, without its list of firsts (a
    Python int each: 9.2M of them at German spelling's 10,000 pairs)."""
    n = len(codes)
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    perm = np.argsort(codes, kind="stable")
    ordered = codes[perm]
    new = np.empty(n, dtype=bool)
    new[0] = True
    new[1:] = ordered[1:] != ordered[:-1]  # `!=`, not `np.not_equal`: codes may be bytes
    del ordered
    group = np.cumsum(new) - 1  # per sorted position, its value's rank in sorted order
    firsts = perm[new]  # the first index of each value (stable sort), in sorted order
    del new
    order = np.argsort(firsts)
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    number = np.empty(n, dtype=np.int64)
    number[perm] = rank[group]
    return number, firsts[order]


def _minimize(table: np.ndarray, rest_of: np.ndarray, observed: np.ndarray) -> np.ndarray:
    """Moore's partition refinement: the block of each state (numbered in order of first
    state), states in one block having the same observation (a row of `observed`) and,
    for every read, successors in one block. State s steps to `table[rest_of[s]]`: the
    successors' blocks are compared once per rest."""
    block, first = _first_appearance(_column_codes(list(observed.T), len(observed)))
    count = len(first)
    while True:
        successors = group_rows(block[table])[0]  # per rest
        block, first = _first_appearance(_column_codes([block, successors[rest_of]], len(block)))
        if len(first) == count:
            return block
        count = len(first)


# ------------------------------------------------------------------ the whole pass


def _classes(cells: Cells, left: Side, center: list[Atom], right: Side) -> tuple[np.ndarray, list[int]]:
    """Partition the symbols by everything either automaton or the centre reads of
    them: class of each symbol, and a representative symbol per class."""
    tiers = sorted(set(left.tier_feats) | set(right.tier_feats))
    features = sorted(
        {f for side in (left, right) for feats in side.tier_feats.values() for q in feats for f in q}
    )
    atoms = sorted({a for side in (left, right) for js in side.atoms for a in js} | set(center), key=repr)

    def read(v: int) -> list[int | bool]:
        values = [cells.value(a, v) for a in atoms]
        return values + [cells.has(v, t) for t in tiers] + [cells.has(v, f) for f in features]

    values = np.array([read(v) for v in range(cells.count)], dtype=np.int64).reshape(cells.count, -1)
    cls, reps = group_rows(values)
    return cls.astype(np.int32), reps


def _items(items: Sequence[OutputItem], index: Mapping[Token, int]) -> list[tuple[int, int]]:
    out = []
    for item in items:
        if isinstance(item, Written):
            out.append((CONSTANT, index[item.token]))
        elif isinstance(item, Copied):
            out.append((OFFSET, item.offset))
        else:
            raise TypeError(f"a recoded token is written per case, not as {item!r}")
    return out


def _templates(
    decisions: Sequence[Decision], index: Mapping[Token, int]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Template items of every decision at a token, then at the start position (no
    rule: the token is kept, nothing is written at the start)."""
    at_token = [_items(d.at_token, index) for d in decisions] + [[(OFFSET, 0)]]
    at_start = [_items(d.at_start, index) for d in decisions] + [[]]
    items = at_token + at_start
    start = np.zeros(len(items) + 1, dtype=np.int32)
    start[1:] = np.cumsum([len(t) for t in items])
    kind = np.array([k for t in items for k, _ in t], dtype=np.int32)
    value = np.array([v for t in items for _, v in t], dtype=np.int32)
    return start, kind, value


def build_pass_machine(
    pass_: Pass,
    tokens: Sequence[Token],
    in_tags: Sequence[Transformation | None],
    out_tags: Sequence[Transformation | None],
    features: Features,
    *,
    deadline: float | None = None,
) -> PassMachine:
    """Compile one pass over `tokens` (the program's sorted token alphabet).

    `in_tags`: the transformations this pass tests with `TransformationApplied`, after
    None (index 0); `out_tags`: the same for the next pass (its tokens are tagged with
    the index of the transformation that made them there, 0 if it tests no such tag).
    """
    decisions = decisions_of(pass_.rules, tokens, features)
    cells = Cells(tokens, in_tags, features)
    left, center, center_tests, right = sides_of(decisions)
    symbol_class, reps = _classes(cells, left, center, right)
    m = len(decisions)
    *class_masks, start_mask = cell_test_masks(cells, center, center_tests, [*reps, BOUNDARY_CELL], m)
    check_deadline(deadline)
    left_next, left_start, left_masks, left_copy = _side_automaton(left, cells, reps, m, deadline)
    check_deadline(deadline)
    right_next, right_start, right_masks, right_copy = _side_automaton(right, cells, reps, m, deadline)
    index = {t: i for i, t in enumerate(tokens)}
    template_start, template_kind, template_value = _templates(decisions, index)
    out_index = {t: i for i, t in enumerate(out_tags)}
    out_tag = np.array(
        [out_index.get(d.rule.transformation, 0) for d in decisions] + [out_index.get(Identity(), 0)],
        dtype=np.int32,
    )
    tables = PassTables(
        rules=m,
        symbol_class=Array.of(symbol_class.reshape(len(in_tags), len(tokens)), "<i4"),
        left_next=Array.of(left_next.next, "<i4"),
        left_row=Array.of(left_next.row, "<i4"),
        left_column=Array.of(left_next.column, "<i4"),
        left_start=left_start,
        left_mask=mask_array(left_masks.distinct, m),
        left_mask_of=Array.of(left_masks.of, "<i4"),
        right_next=Array.of(right_next.next, "<i4"),
        right_row=Array.of(right_next.row, "<i4"),
        right_column=Array.of(right_next.column, "<i4"),
        right_start=right_start,
        right_mask=mask_array(right_masks.distinct, m),
        right_mask_of=Array.of(right_masks.of, "<i4"),
        class_mask=mask_array(class_masks, m),
        start_mask=Array.of(to_words([start_mask], m)[0]),
        template_start=Array.of(template_start, "<i4"),
        template_kind=Array.of(template_kind, "<i4"),
        template_value=Array.of(template_value, "<i4"),
        out_tag=Array.of(out_tag, "<i4"),
    )
    return PassMachine(
        tables=tables,
        tokens=tuple(tokens),
        in_tags=tuple(in_tags),
        left_copy_offsets=tuple(left.copy_offsets),
        left_copy=left_copy,
        right_copy_offsets=tuple(right.copy_offsets),
        right_copy=right_copy,
    )


# ------------------------------------------------------------------ whole programs


def program_tokens(program: Program, alphabet: Iterable[Token], features: Features | None = None) -> set[Token]:
    """Every token a program compiled over `alphabet` reads or writes, and `UNK`; with
    a feature transformation, every token of `features` (the inventory it writes)."""
    tokens: set[Token] = set(alphabet) | {UNK}
    for pass_ in program.passes:
        for rule in pass_.rules:
            writes = shape_of(rule).writes
            tokens |= set(writes.tokens)
            if writes.source is not None:
                tokens.add(writes.source)
            if writes.recodes is not None and features:
                tokens |= set(features)
    return tokens


def pass_tags(program: Program) -> list[list[Transformation | None]]:
    """Per pass, the tags it reads: None, then the transformations it tests with
    `TransformationApplied` (the first pass reads none); after the last, [None]."""
    tags: list[list[Transformation | None]] = [[None]]
    for pass_ in program.passes[1:]:
        tags.append([None, *sorted(referenced_tags(pass_), key=str)])
    tags.append([None])
    return tags


def program_machines(
    program: Program, tokens: Sequence[Token], features: Features, *, deadline: float | None = None
) -> list[PassMachine]:
    """Every pass of `program` compiled over `tokens` (sorted, UNK among them)."""
    tags = pass_tags(program)
    return [
        build_pass_machine(pass_, tokens, tags[k], tags[k + 1], features, deadline=deadline)
        for k, pass_ in enumerate(program.passes)
    ]


def program_tables(
    program: Program, alphabet: Iterable[Token], features: Features, *, deadline: float | None = None
) -> Tables:
    """The apply tables of `program` over `alphabet` (see `fstsynth.tables`)."""
    tokens = tuple(sorted(program_tokens(program, alphabet, features)))
    machines = program_machines(program, tokens, features, deadline=deadline)
    return Tables(tokens, [m.tables for m in machines])
