"""The numpy walker: a batch of words at once through the apply tables.

Public API:
    BatchPass.of(np, p, tokens) -> BatchPass, walk_batch(np, passes, sym, starts) -> (sym, starts)
    concat_ranges(np, first, size) -> (indices, bounds)
    LONG_WORD, DECISION_TABLE_MAX, EXPANDED_STEPS_MAX

Each automaton steps through position j of every word of the batch in one array
operation (the words sorted by length: `Layout`), and decisions and outputs are
computed for all positions together. This is the batch path where the compiled walker
(`fstsynth._walk`) is not built; the reference is `fstsynth.word_walker`, whose results
this must give (tests/backends.py). Very long words are better walked one at a time
(`LONG_WORD`): a batch costs an array operation per position of its longest word.

Between passes flow *symbols*, `tag * tokens + token` (the tag: which transformation
wrote the token, for a later pass that tests it).

A new kind of template item is written in two places here: `_rows` (items that read
only the position's own token, precomputed per decision and symbol) and `_general`
(any item, expanded per position).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

from fstsynth.table_format import CONSTANT, LONG_WORD, OFFSET, Error, NumpyPass, lowest_rules

if TYPE_CHECKING:
    import numpy as np

__all__ = ["BatchPass", "walk_batch", "concat_ranges", "LONG_WORD", "DECISION_TABLE_MAX", "EXPANDED_STEPS_MAX"]

#: The decision table of a pass (left candidates x right states) is precomputed when
#: it has at most this many entries; beyond, decisions are computed from the masks.
DECISION_TABLE_MAX = 20_000_000
#: A pass whose automata's full step tables (states x classes) have at most this many
#: entries is walked through them; beyond, through the tables' compact form.
EXPANDED_STEPS_MAX = 4_000_000


def concat_ranges(np: Any, first: "np.ndarray", size: "np.ndarray") -> tuple["np.ndarray", "np.ndarray"]:
    """The indices `first[k], first[k] + 1, ..., first[k] + size[k] - 1` for every k,
    one range after the other (int32), and where each range starts among them
    (`bounds`, one longer than `first`: range k is `bounds[k] : bounds[k + 1]`)."""
    bounds = np.zeros(len(size) + 1, dtype=np.int32)
    np.cumsum(size, dtype=np.int32, out=bounds[1:])  # (without dtype: via int64, slower)
    # Index i of range k is first[k] + (i - bounds[k]): one repeat of the differences.
    shift = np.repeat((first - bounds[:-1]).astype(np.int32), size)
    shift += np.arange(int(bounds[-1]), dtype=np.int32)
    return shift, bounds


def _distinct_rows(np: Any, rows: "np.ndarray") -> tuple["np.ndarray", "np.ndarray"]:
    """The distinct rows of a 2-d array: a row index for each (`first`), and each row's
    number among them (`inverse`). (`np.unique` would do, but it imports numpy.ma, a
    twentieth of a second of start-up.)"""
    count = rows.shape[0]
    order = np.lexsort(rows.T[::-1]) if rows.shape[1] else np.arange(count)
    ranked = rows[order]
    new = np.ones(count, dtype=bool)
    if count > 1:
        new[1:] = (ranked[1:] != ranked[:-1]).any(axis=1)
    inverse = np.empty(count, dtype=np.int64)
    inverse[order] = np.cumsum(new) - 1
    return order[new], inverse


class Layout:
    """A batch's positions in *column order*: the words sorted by length (longest
    first), then position 0 of every word, position 1 of every word that long, ...
    Row j (positions j) is `row[j] : row[j] + going[j]`, the words still going at j
    being a prefix of the sorted words; `source[c]` is the flat position at place c
    of column order. An automaton steps through a row in one array operation on
    contiguous memory."""

    __slots__ = ("order", "going", "row", "source")

    def __init__(self, np: Any, starts: "np.ndarray") -> None:
        n = len(starts) - 1
        lens = np.diff(starts)
        narrow = np.int16 if n and int(lens.max()) < 32767 else np.int32
        self.order = np.argsort(-lens.astype(narrow), kind="stable")  # a radix sort for int16
        slens = lens[self.order]
        steps = int(slens[0]) if n else 0
        going = np.searchsorted(-slens, -np.arange(steps), side="left")
        row = np.zeros(steps + 1, dtype=np.int32)
        np.cumsum(going, dtype=np.int32, out=row[1:])
        self.going, self.row = going.tolist(), row.tolist()
        sorted_starts = starts[:-1].take(self.order).astype(np.int32)
        source = np.empty(int(row[-1]), dtype=np.int32)
        for j, (k, a) in enumerate(zip(self.going, self.row)):
            np.add(sorted_starts[:k], j, out=source[a : a + k])
        self.source = source


@dataclass(frozen=True, eq=False)
class _Rows:
    """What a pass whose templates read no token but the position's own, and whose
    start templates read none, writes: row `decision * symbols + symbol` is
    `items[first[row] : first[row] + size[row]]` (next-pass symbols); the start
    position's, rows `start_base + decision` (`has_start`: some start template writes
    something). `one`: where every row is one item, the items by row."""

    items: "np.ndarray"
    first: "np.ndarray"
    size: "np.ndarray"
    one: "np.ndarray | None"
    start_base: int
    has_start: bool


@dataclass(frozen=True, eq=False)
class _CompactSteps:
    """One automaton's steps as the tables keep them (`fstsynth.table_format.PassTables`):
    from state s on class c to `next[row[s] + column[c]]` (`next` flat, rows
    premultiplied)."""

    next: "np.ndarray"
    row: "np.ndarray"
    column: "np.ndarray"

    @classmethod
    def of(cls, np: Any, nxt: "np.ndarray", row: "np.ndarray", column: "np.ndarray") -> "_CompactSteps":
        return cls(nxt.reshape(-1).astype(np.int64), row.astype(np.int64) * nxt.shape[1], column.astype(np.int64))

    def step(self, cls: "np.ndarray") -> "Step":
        """Its step over the batch whose positions have classes `cls`."""
        column = self.column.take(cls)
        nxt, row = self.next, self.row
        return lambda now, a, k: nxt.take(row.take(now) + column[a : a + k])


# A step of an automaton over a column of the batch: the states of its first `k`
# words (`now`) and where the column starts (`a`) -> their next states.
Step = Callable[["np.ndarray", int, int], "np.ndarray"]


def _walk(
    np: Any, count: int, state: "np.ndarray", going: list[int], row: list[int], step: Step, backward: bool
) -> "np.ndarray":
    """The state at every position (column order) of an automaton walked over the
    batch's columns, first to last (or last to first); `state` (one start state per
    word) ends as the state after each whole word."""
    out = np.empty(count, dtype=np.int32)
    for j in range(len(going) - 1, -1, -1) if backward else range(len(going)):
        k, a = going[j], row[j]
        now = state[:k]
        out[a : a + k] = now
        state[:k] = step(now, a, k)
    return out


@dataclass(frozen=True, eq=False)
class BatchPass:
    """A pass ready for batches: its numpy arrays (`p`), and what can be computed once.

    - `right_t[cls * rights + state]`: the right automaton, class-major;
    - `left_m[state * classes + cls]`: the left automaton, its states kept multiplied
      by `classes` (one addition, one lookup a step);
    - `compact`: instead of these (both None), where an automaton's full table would
      have more than `EXPANDED_STEPS_MAX` entries, both automata's steps (left, right)
      in the tables' compact form (`_CompactSteps`); decisions are then computed from
      the masks;
    - the decision at a position is the lowest rule in left_mask[left_mask_of[left]] &
      class_mask[cls] & right_mask[right_mask_of[right]]; the left and class masks
      together take few distinct values, so `candidate_r[left * classes + cls]`
      numbers them (times `rights`) and `decide[candidate_r + right]` is the decision
      (both None where the table would be too large: computed from the masks);
    - `start_decide[right]`: the start position's decision;
    - `lookup[symbol]`: for a pass that reads no context and writes one token per
      token, the next-pass symbol each symbol becomes (else None);
    - `rows`: see `_Rows` (None: templates are expanded per position)."""

    p: NumpyPass
    tokens: int
    classes: int
    rights: int
    lefts: int
    symbols: int
    sym_class: "np.ndarray"
    right_t: "np.ndarray | None"
    left_m: "np.ndarray | None"
    left_start_m: int
    compact: "tuple[_CompactSteps, _CompactSteps] | None"
    candidate_r: "np.ndarray | None"
    decide: "np.ndarray | None"
    start_decide: "np.ndarray"
    sizes: "np.ndarray"
    lookup: "np.ndarray | None"
    rows: _Rows | None

    @classmethod
    def of(cls, np: Any, p: NumpyPass) -> "BatchPass":
        words = p.class_mask.shape[1]
        classes, rights, lefts = p.class_mask.shape[0], p.right_mask_of.shape[0], p.left_mask_of.shape[0]
        tags, tokens = p.symbol_class.shape
        candidate_r: Any = None
        decide: Any = None
        compact = None
        if max(lefts, rights) * classes > EXPANDED_STEPS_MAX:
            # Steps through the compact form (two lookups), decisions from the masks.
            compact = (_CompactSteps.of(np, p.left_next, p.left_row, p.left_column),
                       _CompactSteps.of(np, p.right_next, p.right_row, p.right_column))
        else:
            # Over the distinct left masks, then per left state (its mask's row).
            left = p.left_mask[:, None, :] & p.class_mask[None, :, :]  # [left mask, class, words]
            masks = np.ascontiguousarray(left.reshape(-1, words))
            first, inverse = _distinct_rows(np, masks)
            inverse = inverse.reshape(-1, classes)[p.left_mask_of]  # [left, class]
        if compact is None and len(first) * rights <= DECISION_TABLE_MAX:
            candidate_r = (inverse.reshape(-1) * rights).astype(np.int32)
            decide = lowest_rules(np, masks[first][:, None, :] & p.right_mask[None, :, :], p.rules)
            decide = decide[:, p.right_mask_of].reshape(-1).astype(np.int32)  # [candidate, right]
        start_masks = (p.left_mask[p.left_mask_of[p.left_start]] & p.start_mask)[None, :] & p.right_mask
        start_decide = lowest_rules(np, start_masks, p.rules)[p.right_mask_of].astype(np.int32)
        sizes = np.diff(p.template_start).astype(np.int32)
        copies = bool(((p.template_kind == OFFSET) & (p.template_value != 0)).any())
        starts, kinds = p.template_start.tolist(), p.template_kind.tolist()
        decisions = p.rules + 1
        reachable = sorted(set(start_decide.tolist()))  # the start decisions some right state takes
        start_reads = any(
            kinds[a] != CONSTANT for d in reachable for a in range(starts[decisions + d], starts[decisions + d + 1])
        )
        rows = None if copies or start_reads or decide is None else _rows(np, p, reachable)
        lookup = None
        if rows is not None and rows.one is not None and lefts == 1 and rights == 1:
            symbols = np.arange(tags * tokens, dtype=np.int32)
            candidate = candidate_r.take(p.left_start * classes + p.symbol_class.reshape(-1))
            decision = decide.take(candidate + p.right_start)
            lookup = rows.one.take(decision * (tags * tokens) + symbols)
        right_t = left_m = None
        if compact is None:
            right_t = np.ascontiguousarray(p.right_table().T).reshape(-1).astype(np.int32)
            left_m = (p.left_table().reshape(-1) * classes).astype(np.int32)
        return cls(
            p, tokens, classes, rights, lefts, tags * tokens, p.symbol_class.reshape(-1).astype(np.int32),
            right_t, left_m, int(p.left_start) * classes, compact,
            candidate_r, decide, start_decide, sizes, lookup, rows,
        )

    def run(
        self, np: Any, sym: "np.ndarray", starts: "np.ndarray", layout: Layout | None
    ) -> tuple["np.ndarray", "np.ndarray", Layout | None]:
        """The pass over a batch: symbols (int32, words one after the other) and word
        boundaries (int32) in, the same out, and the layout if the words kept their lengths."""
        n, count = len(starts) - 1, len(sym)
        if n == 0:
            return sym, starts, layout
        if self.lookup is not None:  # no context: a lookup per symbol
            return self.lookup.take(sym), starts, layout
        if layout is None:
            layout = Layout(np, starts)
        going, row, source = layout.going, layout.row, layout.source
        # Gathers are `take`s: numpy's fancy indexing with int32 indices converts them
        # to int64 first (measured 2-3 times slower on a batch's arrays).
        col = sym.take(source)
        cls = self.sym_class.take(col)
        rho: Any = None
        rho_start = np.full(n, self.p.right_start, dtype=np.int32)
        compact = self.compact
        if self.rights > 1:
            if compact is not None:
                right_step = compact[1].step(cls)
            else:
                right_t, cls_r = self.right_t, cls * self.rights
                assert right_t is not None
                right_step = lambda now, a, k: right_t.take(cls_r[a : a + k] + now)  # noqa: E731
            rho = _walk(np, count, rho_start, going, row, right_step, backward=True)
        if compact is not None:  # (`key`: the left state itself)
            start = np.full(n, self.p.left_start, dtype=np.int32)
            key = _walk(np, count, start, going, row, compact[0].step(cls), backward=False)
        elif self.lefts > 1:  # (`key`: the left state times `classes`, plus the class)
            left_m = self.left_m
            assert left_m is not None
            start = np.full(n, self.left_start_m, dtype=np.int32)
            key = _walk(np, count, start, going, row, lambda now, a, k: left_m.take(now + cls[a : a + k]), False)
            key += cls
        else:
            key = cls + self.left_start_m
        if self.candidate_r is not None and self.decide is not None:
            chosen = self.candidate_r.take(key)
            if rho is not None:
                chosen += rho
            decision = self.decide.take(chosen)
        else:
            p = self.p
            right = rho if rho is not None else np.full(count, p.right_start, dtype=np.int32)
            left_state = key if compact is not None else key // self.classes
            left_mask = p.left_mask[p.left_mask_of.take(left_state)]
            masks = left_mask & p.class_mask[cls] & p.right_mask[p.right_mask_of.take(right)]
            decision = lowest_rules(np, masks, p.rules).astype(np.int32)
        start_decision = None
        if self.rows is None or self.rows.has_start:
            start_decision = np.empty(n, dtype=np.int32)
            start_decision[layout.order] = self.start_decide.take(rho_start)
        if self.rows is not None:
            decision *= self.symbols  # (in place: the row of (decision, symbol))
            decision += col
            return self._rows_out(np, decision, start_decision, starts, layout)
        flat = np.empty(count, dtype=np.int32)
        flat[source] = decision
        assert start_decision is not None
        return (*self._general(np, sym, flat, start_decision, starts), None)

    def _rows_out(
        self, np: Any, row_id: "np.ndarray", start_decision: "np.ndarray | None", starts: "np.ndarray",
        layout: Layout,
    ) -> tuple["np.ndarray", "np.ndarray", Layout | None]:
        """The output through `rows` (`row_id`: each position's row, in column order;
        `start_decision`: each word's, where a start template writes something)."""
        rows, source, count, n = self.rows, layout.source, len(row_id), len(starts) - 1
        assert rows is not None
        if rows.one is not None:  # one symbol per position: the words keep their lengths
            out = np.empty(count, dtype=np.int32)
            out[source] = rows.one.take(row_id)
            return out, starts, layout
        ids = np.empty(count, dtype=np.int32)
        ids[source] = row_id
        if rows.has_start and start_decision is not None:
            # Every word's start position first, then its positions.
            word = np.repeat(np.arange(n, dtype=np.int32), np.diff(starts))
            word += np.arange(1, count + 1, dtype=np.int32)
            firsts = starts[:-1] + np.arange(n, dtype=np.int32)
            ids_v = np.empty(count + n, dtype=np.int32)
            ids_v[word] = ids
            ids_v[firsts] = rows.start_base + start_decision
            ids, word_bounds = ids_v, np.append(firsts, count + n).astype(np.int32)
        else:
            word_bounds = starts
        at, bounds = concat_ranges(np, rows.first.take(ids), rows.size.take(ids))
        return rows.items.take(at), bounds.take(word_bounds), None

    def _general(
        self, np: Any, sym: "np.ndarray", decision: "np.ndarray", start_decision: "np.ndarray", starts: "np.ndarray"
    ) -> tuple["np.ndarray", "np.ndarray"]:
        """The output with every template expanded item by item (any item: constants,
        and tokens at any offset, checked to be in the word). `decision`: per position,
        in word order. The positions are "virtual": every word's start, then its tokens."""
        p, tokens = self.p, self.tokens
        n, count = len(starts) - 1, len(sym)
        tok = sym % tokens
        lens = np.diff(starts)
        word = np.repeat(np.arange(n), lens)
        vstarts = starts[:-1] + np.arange(n)
        at_token = np.arange(count) + word + 1
        vtemplate = np.empty(count + n, dtype=np.int64)
        vdecision = np.empty(count + n, dtype=np.int64)
        vbase = np.empty(count + n, dtype=np.int64)  # where offset 0 reads
        vtemplate[vstarts] = p.rules + 1 + start_decision
        vtemplate[at_token] = decision
        vdecision[vstarts] = start_decision
        vdecision[at_token] = decision
        vbase[vstarts] = starts[:-1] - 1
        vbase[at_token] = np.arange(count)
        sizes = self.sizes[vtemplate]
        total = int(sizes.sum())
        item, bounds = concat_ranges(np, p.template_start[vtemplate], sizes)
        source = np.repeat(np.arange(count + n), sizes)
        kind, value = p.template_kind[item], p.template_value[item]
        offset = kind == OFFSET
        read = np.where(offset, vbase[source] + value, 0)
        if offset.any():
            owner = np.repeat(np.arange(n), lens + 1)[source]
            if (offset & ((read < starts[:-1][owner]) | (read >= starts[1:][owner]))).any():
                raise Error("damaged tables: a template reads outside the word")
        new_tok = np.where(offset, tok[read] if count else 0, value)
        new_sym = p.out_tag[vdecision[source]] * tokens + new_tok
        new_starts = bounds.take(np.append(vstarts, count + n)) if total or n else np.zeros(n + 1, np.int32)
        return new_sym.astype(np.int32), new_starts.astype(np.int32)


def _rows(np: Any, p: NumpyPass, reachable: Sequence[int]) -> _Rows:
    """`_Rows` of a pass whose templates read only the position's token (see there)."""
    decisions = p.rules + 1
    tags, tokens = p.symbol_class.shape
    symbols = tags * tokens
    starts = p.template_start.tolist()
    kinds, values, out_tag = p.template_kind.tolist(), p.template_value.tolist(), p.out_tag.tolist()
    # Rows (d, symbol): template d's items at a position holding `symbol`.
    symbol = np.arange(symbols, dtype=np.int32)
    token_of = symbol % tokens
    columns = []  # per decision: [symbols, items]
    for d in range(decisions):
        written = [token_of if kinds[a] == OFFSET else np.full(symbols, values[a], np.int32)
                   for a in range(starts[d], starts[d + 1])]
        columns.append(np.stack(written, axis=1) + out_tag[d] * tokens if written else None)
    sizes = np.array([starts[d + 1] - starts[d] for d in range(decisions)], dtype=np.int32)
    size = np.repeat(sizes, symbols)
    items = np.concatenate([c.reshape(-1) for c in columns if c is not None] or [np.zeros(0, np.int32)])
    first = np.zeros(decisions * symbols, dtype=np.int32)
    at = 0
    for d, c in enumerate(columns):
        if c is not None:
            first[d * symbols : (d + 1) * symbols] = at + symbol * sizes[d]
            at += c.size
    start_items = {d: range(starts[decisions + d], starts[decisions + d + 1]) for d in reachable}
    start_sizes = [len(start_items[d]) if d in start_items else 0 for d in range(decisions)]
    has_start = any(start_sizes)
    start_base = len(size)
    if has_start:
        written = [out_tag[d] * tokens + values[a] for d in reachable for a in start_items[d]]
        start_first = np.cumsum([0] + start_sizes[:-1]) + len(items)
        items = np.concatenate([items, np.array(written, dtype=np.int32)])
        first = np.concatenate([first, start_first.astype(np.int32)])
        size = np.concatenate([size, np.array(start_sizes, dtype=np.int32)])
    single = bool((sizes == 1).all()) and not has_start
    # One item per row: the item itself (a lookup instead of a range).
    one = items[first[:start_base]] if single else None
    return _Rows(items.astype(np.int32), first, size, one, start_base, has_start)


def walk_batch(
    np: Any, passes: Sequence[BatchPass], sym: "np.ndarray", starts: "np.ndarray"
) -> tuple["np.ndarray", "np.ndarray"]:
    """The outputs of a batch given as token indices (the words one after the other;
    word k is `sym[starts[k] : starts[k + 1]]`), in the same form (int32, int64)."""
    sym = sym.astype(np.int32, copy=False)
    starts = starts.astype(np.int32, copy=False)
    layout: Layout | None = None
    for b in passes:
        sym, starts, layout = b.run(np, sym, starts, layout)
    return sym, starts.astype(np.int64)
