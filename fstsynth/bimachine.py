"""A pass as a bimachine: its decision at each position from what lies left and right.

Public API:
    PassMachine, build_pass_machine(pass_, tokens, in_tags, out_tags, features, deadline=None)
    program_machines(program, tokens, features, deadline=None) -> list[PassMachine]
    program_tables(program, alphabet, features, deadline=None) -> fstsynth.tables.Tables
    program_tokens(program, alphabet), pass_tags(program)
    lowest_rule(mask, rules), to_words(masks, rules), group_rows(matrix), TimeLimitError,
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

The automata keep only what a test reads: a window of cell signatures (per offset, the
truth of the predicates tested there) and, per tier, the signatures of the nearest tier
tokens; they are then minimized (Moore) with respect to the masks and to the tokens a
copy reads, so their size is what the rules distinguish, not the alphabet's powers.

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

import functools
import time
from dataclasses import dataclass
from typing import Hashable, Iterable, Mapping, NamedTuple, Sequence

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
    over groups of classes, see `_compact`; `left_start`, `left_mask[state]`), the
    right one read right to left (`right_next`, `right_row`, `right_column`,
    `right_start`, `right_mask`), `class_mask[class]` and
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
    out = np.zeros((len(masks), words), dtype=np.uint64)
    for w in range(words):
        shift = 64 * w
        out[:, w] = [(m >> shift) & 0xFFFFFFFFFFFFFFFF for m in masks]
    return out


def from_words(row: np.ndarray) -> int:
    return sum(int(word) << (64 * w) for w, word in enumerate(row.tolist()))


# ------------------------------------------------------------------ one side's automaton


class SideNext(NamedTuple):
    """One side's steps in compact form: from state s on class c to
    `next[row[s], column[c]]`."""

    next: np.ndarray
    row: np.ndarray
    column: np.ndarray


def _side_automaton(
    side: Side,
    cells: Cells,
    classes: list[int],
    rules: int,
    deadline: float | None,
) -> tuple["SideNext", int, list[int], np.ndarray]:
    """The deterministic automaton of one side, minimized: (its steps, start state,
    mask per state, copied token per state and copy offset).

    A state holds, per offset j+1 on this side, the signatures at offsets j+1, j+2, ...
    of the symbol there (so that it can move one step further), and per tier the
    signatures of the nearest tier tokens (None: fewer tokens than tested). Reading a
    symbol shifts it in at offset 1.
    """
    width = side.width
    tier_names = sorted(side.tier_feats)

    def signatures(v: int) -> tuple:
        sig = tuple(tuple(cells.value(a, v) for a in side.atoms[j]) for j in range(width))
        tier_sigs = []
        for tier in tier_names:
            on = cells.has(v, tier)
            tier_sigs.append((on, tuple(tuple(cells.has(v, f) for f in feats) for feats in side.tier_feats[tier])))
        return sig, tuple(tier_sigs)

    # Classes this side reads alike move it alike: steps are taken per distinct
    # signature (numbered in order of first class, so states are found in the order a
    # walk over the classes finds them) and spread to the classes.
    sig_ids: dict[tuple, int] = {}
    class_sig = np.array([sig_ids.setdefault(signatures(rep), len(sig_ids)) for rep in classes], dtype=np.int64)
    distinct_sigs = list(sig_ids)
    boundary_sig, _ = signatures(BOUNDARY_CELL)
    start = (
        tuple(boundary_sig[j:] for j in range(width)),
        tuple((None,) * len(side.tier_feats[tier]) for tier in tier_names),
    )

    def step(state: tuple, read: tuple) -> tuple:
        window, memory = state
        sig, tier_sigs = read
        new_window = (sig,) + tuple(cell[1:] for cell in window[:-1]) if width else ()
        new_memory = []
        for mem, (on, tsig) in zip(memory, tier_sigs):
            if on:
                new_memory.append((tsig,) + tuple(None if e is None else e[1:] for e in mem[:-1]))
            else:
                new_memory.append(mem)
        return new_window, tuple(new_memory)

    ids: dict[tuple, int] = {start: 0}
    states = [start]
    rows: list[list[int]] = []
    k = 0
    while k < len(states):
        if k % 256 == 0:
            check_deadline(deadline)
        row = []
        for read in distinct_sigs:
            nxt = step(states[k], read)
            found = ids.get(nxt)
            if found is None:
                found = ids[nxt] = len(states)
                states.append(nxt)
            row.append(found)
        rows.append(row)
        k += 1

    # Per state: the rules whose tests on this side hold, from per-cell and per-tier
    # masks (each a function of one signature).
    every = (1 << rules) - 1
    cell_masks: list[dict[tuple, int]] = [{} for _ in range(width)]
    tier_masks: list[list[dict[object, int]]] = [[{} for _ in side.tier_feats[t]] for t in tier_names]

    def cell_mask(j: int, sig: tuple) -> int:
        found = cell_masks[j].get(sig)
        if found is None:
            found = every
            for r, tests in side.cell_tests[j].items():
                if not all(bool(sig[i]) != neg for i, neg in tests):
                    found &= ~(1 << r)
            cell_masks[j][sig] = found
        return found

    def tier_mask(t: int, q: int, entry: tuple | None) -> int:
        found = tier_masks[t][q].get(entry)
        if found is None:
            found = every
            tier = tier_names[t]
            feats = side.tier_feats[tier][q]
            for r, tests in side.tier_tests[tier].items():
                for tq, feature, neg in tests:
                    if tq != q:
                        continue
                    if entry is None:
                        value = feature is BOUNDARY
                    else:
                        value = feature is not BOUNDARY and entry[0][feats.index(feature)]
                    if value == neg:
                        found &= ~(1 << r)
            tier_masks[t][q][entry] = found
        return found

    copy_at = []
    for offset in side.copy_offsets:
        j = abs(offset) - 1
        copy_at.append((j, side.atoms[j].index(("copy",))))
    masks = []
    copied = []
    for window, memory in states:
        mask = every
        for j in range(width):
            mask &= cell_mask(j, window[j][0])
        for t, mem in enumerate(memory):
            for q, entry in enumerate(mem):
                mask &= tier_mask(t, q, entry)
        masks.append(mask)
        copied.append([window[j][0][i] for j, i in copy_at])
    observed = [(m, tuple(c)) for m, c in zip(masks, copied)]
    # Per distinct signature: classes that share one are equal columns, which change
    # neither the minimization nor the result; spread to the classes once minimized.
    table = np.array(rows, dtype=np.int64).reshape(len(states), len(distinct_sigs))
    block = _minimize(table, observed)
    count = int(block.max()) + 1
    rep = np.zeros(count, dtype=np.int64)
    rep[block[::-1]] = np.arange(len(states) - 1, -1, -1)  # the first state of each block
    next_min = block[table[rep]]  # [state, signature]
    masks_min = [masks[s] for s in rep.tolist()]
    copy_min = np.array([copied[s] for s in rep.tolist()], dtype=np.int32).reshape(count, len(copy_at))
    return _compact(next_min, class_sig), int(block[0]), masks_min, copy_min


def _compact(next_by_sig: np.ndarray, class_sig: np.ndarray) -> SideNext:
    """A minimized automaton's steps (`next_by_sig[state, signature]`) in the tables'
    compact form (`fstsynth.table_format.PassTables`): signatures whose columns are
    equal form one column, and states whose rows are then equal share one row. A
    state mostly remembers a window its step shifts out, so French spelling's 39,755
    left states over 767 classes have 805 distinct rows over 117 columns."""
    by_column, first_columns = group_rows(next_by_sig.T)
    rows = next_by_sig[:, first_columns]
    row_of, first_rows = group_rows(rows)
    return SideNext(
        rows[first_rows].astype(np.int32), row_of.astype(np.int32), by_column[class_sig].astype(np.int32)
    )


def group_rows(matrix: np.ndarray) -> tuple[np.ndarray, list[int]]:
    """Number the distinct rows of a 2-d integer array in order of first appearance:
    (the number of each row, the first row of each number). A dictionary of the rows'
    bytes: `numpy.unique(axis=0)` sorts the rows, many times slower on wide ones."""
    matrix = np.ascontiguousarray(matrix)
    if matrix.shape[1] == 0:
        return np.zeros(matrix.shape[0], dtype=np.int64), [0] if matrix.shape[0] else []
    if matrix.shape[0] > 4096:  # many rows: numpy's sort beats a dictionary
        rows = matrix.view(np.dtype((np.void, matrix.dtype.itemsize * matrix.shape[1]))).reshape(-1)
        _, firsts, inverses = np.unique(rows, return_index=True, return_inverse=True)
        order = np.argsort(firsts, kind="stable")  # numbered in order of first appearance
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        return rank[inverses.reshape(-1)], firsts[order].tolist()
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


def _minimize(nxt: np.ndarray, observed: Sequence[Hashable]) -> np.ndarray:
    """Moore's partition refinement: the block of each state, states in one block
    having the same observation and, for every class, successors in one block."""
    keys: dict[Hashable, int] = {}
    block = np.array([keys.setdefault(o, len(keys)) for o in observed], dtype=np.int64)
    count = len(keys)
    while True:
        block, first = group_rows(np.concatenate([block[:, None], block[nxt]], axis=1))
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
    every = (1 << m) - 1

    def center_mask(v: int) -> int:
        sig = [cells.value(a, v) for a in center]
        mask = every
        for r, tests in center_tests.items():
            if not all(bool(sig[i]) != neg for i, neg in tests):
                mask &= ~(1 << r)
        return mask

    class_masks = [center_mask(rep) for rep in reps]
    start_mask = center_mask(BOUNDARY_CELL)
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
        left_mask=Array.of(to_words(left_masks, m)),
        right_next=Array.of(right_next.next, "<i4"),
        right_row=Array.of(right_next.row, "<i4"),
        right_column=Array.of(right_next.column, "<i4"),
        right_start=right_start,
        right_mask=Array.of(to_words(right_masks, m)),
        class_mask=Array.of(to_words(class_masks, m)),
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
