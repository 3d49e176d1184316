"""The apply machinery: a compiled program as flat integer tables, walked fast.

Public API:
    PassTables, NumpyPass, Tables, Outputs, Error, UNK, CONSTANT, OFFSET
    lowest_rules(numpy, masks, rules)
    Tables(tokens, passes), Tables.apply(word) -> Word, Tables.apply_many(words) -> list[Word],
    Tables.outputs(words) -> Outputs, Tables.walk_ids(tok, starts) -> (tok, starts)
    Tables.arrays(prefix) -> dict[str, Array], Tables.from_arrays(tokens, arrays, count, prefix)
    Tables.compiled(seen) -> fstsynth._walk.Walker | None

Each pass is a bimachine (`fstsynth.bimachine`): a right automaton read right to left,
a left automaton read left to right, and rule masks whose lowest common rule is the
decision at each position; the decision's template writes the pass's output. Here
these are plain arrays, run two ways that give the same words:
- one word at a time from Python lists (`Tables.apply`): a few list lookups per token
  and pass, linear in the word's length whatever it is;
- a batch of words at once with numpy (`Tables.apply_many`): each automaton steps
  through position j of every word of the batch in one array operation, and masks,
  decisions and outputs are computed for all positions together. This is what makes
  `fstsynth apply` fast on many words; very long words, and batches too small to pay
  for the array set-up, go word by word.
A third way, optional: the compiled walker `fstsynth._walk` (C, built when the package
is installed if a C compiler is there) walks the same arrays word by word as `apply`
does, from UTF-8 lines to UTF-8 lines (`Tables.compiled`, used by `fstsynth.stream`);
the Python walkers stay the reference.
Nothing here needs Pynini, and numpy only for batches: a model loaded for `apply` reads
these arrays from its `tables.npz` (`fstsynth.arrays`, without numpy) and the token list
from its JSON; numpy is imported when a batch large enough for it comes, and views the
same bytes.

A token the tables do not know is read as `UNK` (`<unk>`), as by the transducers and
the interpreter.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, fields
from functools import cached_property
from itertools import chain
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

from fstsynth.arrays import Array
from fstsynth.errors import UserError
from fstsynth.types import Token, Word

if TYPE_CHECKING:
    import numpy as np

    from fstsynth import _walk

UNK = "<unk>"

#: Template item kinds (see `fstsynth.bimachine`): a constant token, or the token at an
#: offset from the position.
CONSTANT, OFFSET = 0, 1

#: Words longer than this are walked one at a time (a batch steps through positions
#: one array operation at a time, so one long word would cost an operation per token).
LONG_WORD = 4096
#: Batches of fewer words than this are walked one at a time (array set-up costs more).
SMALL_BATCH = 24


class Error(UserError):
    """The tables are damaged (a model file doctored or cut), or give no output."""


@dataclass(frozen=True, eq=False)
class PassTables:
    """One pass as arrays (`fstsynth.arrays.Array`: int32 unless said; masks uint64
    words, rule r in bit r % 64 of word r // 64; see `fstsynth.bimachine.PassMachine`,
    which documents every field)."""

    rules: int
    symbol_class: Array
    left_next: Array
    left_start: int
    left_mask: Array
    right_next: Array
    right_start: int
    right_mask: Array
    class_mask: Array
    start_mask: Array
    template_start: Array
    template_kind: Array
    template_value: Array
    out_tag: Array

    @property
    def tags(self) -> int:
        return self.symbol_class.shape[0] if self.symbol_class.shape else 0

    def numpy(self) -> "NumpyPass":
        """The same arrays as numpy views."""
        values: dict[str, Any] = {
            f.name: value.numpy() if isinstance(value, Array) else value
            for f in fields(self)
            for value in [getattr(self, f.name)]
        }
        return NumpyPass(**values)


@dataclass(frozen=True, eq=False)
class NumpyPass:
    """`PassTables` with numpy arrays (for the batch walker and the compiler)."""

    rules: int
    symbol_class: "np.ndarray"
    left_next: "np.ndarray"
    left_start: int
    left_mask: "np.ndarray"
    right_next: "np.ndarray"
    right_start: int
    right_mask: "np.ndarray"
    class_mask: "np.ndarray"
    start_mask: "np.ndarray"
    template_start: "np.ndarray"
    template_kind: "np.ndarray"
    template_value: "np.ndarray"
    out_tag: "np.ndarray"


#: Element type of each array field (the others are int32).
_DTYPES = {"left_mask": "<u8", "right_mask": "<u8", "class_mask": "<u8", "start_mask": "<u8"}
_SCALARS = ("rules", "left_start", "right_start")


class _PyPass:
    """A pass's tables as Python lists and ints, for walking one word; checked for
    range on the way (a damaged file must give an error, not a crash or a read out of
    bounds)."""

    # Set by name for both automata in __init__.
    left_next: list[list[int]]
    right_next: list[list[int]]
    left_mask: list[int]
    right_mask: list[int]
    left_start: int
    right_start: int

    def __init__(self, t: PassTables, tokens: int, next_tags: int) -> None:
        self.rules = t.rules
        words = (t.rules + 63) // 64 or 1

        def need(ok: bool, what: str) -> None:
            if not ok:
                raise Error(f"damaged tables: {what}")

        def rows(a: Array, width: int, what: str, bound: int | None = None) -> list[list[int]]:
            """The rows of a 2-d array `width` wide (values below `bound`, if given)."""
            need(len(a.shape) == 2 and a.shape[1] == width and a.shape[0] >= 1, what)
            flat = a.flat()
            if bound is not None:
                need(min(flat) >= 0 and max(flat) < bound, what)
            return [flat[k : k + width] for k in range(0, len(flat), width)]

        classes = t.class_mask.shape[0] if len(t.class_mask.shape) == 2 else 0
        need(classes >= 1, "class masks")
        self.class_mask = [_to_int(row) for row in rows(t.class_mask, words, "class masks")]
        self.symbol_class = rows(t.symbol_class, tokens, "symbol classes", classes)
        for name in ("left", "right"):
            nxt_array, mask_array = getattr(t, f"{name}_next"), getattr(t, f"{name}_mask")
            states = nxt_array.shape[0] if nxt_array.shape else 0
            nxt = rows(nxt_array, classes, f"{name} automaton", states)
            masks = rows(mask_array, words, f"{name} masks")
            start = getattr(t, f"{name}_start")
            need(len(masks) == len(nxt) and 0 <= start < len(nxt), f"{name} states")
            setattr(self, f"{name}_next", nxt)
            setattr(self, f"{name}_mask", [_to_int(row) for row in masks])
            setattr(self, f"{name}_start", start)
        need(t.start_mask.shape == (words,), "start mask")
        self.start_mask = _to_int(t.start_mask.tolist())
        self.looks_right = len(self.right_next) > 1
        count = 2 * (t.rules + 1)
        starts = t.template_start.tolist()
        need(t.template_start.shape == (count + 1,) and starts[0] == 0, "templates")
        need(all(a <= b for a, b in zip(starts, starts[1:])), "templates")
        kinds, values = t.template_kind.tolist(), t.template_value.tolist()
        need(t.template_kind.shape == t.template_value.shape == (starts[-1],), "templates")
        need(not kinds or (min(kinds) >= CONSTANT and max(kinds) <= OFFSET), "template kinds")
        need(all(0 <= v < tokens for k, v in zip(kinds, values) if k == CONSTANT), "template tokens")
        self.templates = [tuple(zip(kinds[a:b], values[a:b])) for a, b in zip(starts, starts[1:])]
        self.out_tag = t.out_tag.flat()
        tags_ok = min(self.out_tag) >= 0 and max(self.out_tag) < next_tags
        need(t.out_tag.shape == (t.rules + 1,) and tags_ok, "output tags")

    def walk(self, ids: list[int], tags: list[int]) -> tuple[list[int], list[int]]:
        """The pass's output (token indices, and their tags for the next pass) for a
        word given as token indices and tags: one right-to-left and one left-to-right
        step per token (written out flat: this runs once per token)."""
        n = len(ids)
        symbol_class = self.symbol_class
        cls = [symbol_class[g][i] for i, g in zip(ids, tags)]
        right_mask, rules = self.right_mask, self.rules
        rho = [self.right_start] * n
        state = self.right_start
        if self.looks_right:
            right_next = self.right_next
            for p in range(n - 1, -1, -1):
                rho[p] = state
                state = right_next[state][cls[p]]
        out_ids: list[int] = []
        out_tags: list[int] = []
        templates, out_tag = self.templates, self.out_tag
        state_l = self.left_start
        mask = self.left_mask[state_l] & self.start_mask & right_mask[state]
        decision = (mask & -mask).bit_length() - 1 if mask else rules
        for kind, value in templates[rules + 1 + decision]:
            if kind == CONSTANT:
                out_ids.append(value)
            elif 0 <= value - 1 < n:
                out_ids.append(ids[value - 1])
            else:
                raise Error("damaged tables: a template reads outside the word")
        out_tags.extend([out_tag[decision]] * len(out_ids))
        left_next, left_mask, class_mask = self.left_next, self.left_mask, self.class_mask
        append, extend = out_ids.append, out_tags.extend
        for p in range(n):
            c = cls[p]
            mask = left_mask[state_l] & class_mask[c] & right_mask[rho[p]]
            decision = (mask & -mask).bit_length() - 1 if mask else rules
            items = templates[decision]
            for kind, value in items:
                if kind == CONSTANT:
                    append(value)
                elif 0 <= p + value < n:
                    append(ids[p + value])
                else:
                    raise Error("damaged tables: a template reads outside the word")
            extend([out_tag[decision]] * len(items))
            state_l = left_next[state_l][c]
        return out_ids, out_tags


@dataclass(frozen=True)
class Outputs:
    """The outputs of a batch of words, flat: word k wrote `tokens[bounds[k] :
    bounds[k + 1]]`; `with_unk` lists the words whose output has UNK."""

    tokens: list[Token]
    bounds: list[int]
    with_unk: list[int]

    @classmethod
    def of(cls, words: Sequence[Word], unk: Token) -> "Outputs":
        bounds = [0]
        for w in words:
            bounds.append(bounds[-1] + len(w))
        return cls(list(chain.from_iterable(words)), bounds, [k for k, w in enumerate(words) if unk in w])

    def words(self) -> list[Word]:
        toks, bounds = self.tokens, self.bounds
        return [tuple(toks[a:b]) for a, b in zip(bounds, bounds[1:])]

    def texts(self, sep: str = " ") -> list[str]:
        """Each output as one string, its tokens joined by `sep`."""
        toks, bounds, join = self.tokens, self.bounds, sep.join
        return [join(toks[a:b]) for a, b in zip(bounds, bounds[1:])]


class _Lookup(dict):
    """Token -> index, UNK's for a token not in it."""

    def __init__(self, index: Mapping[Token, int], unk: int) -> None:
        super().__init__(index)
        self.unk = unk

    def __missing__(self, key: Token) -> int:
        return self.unk


def _to_int(row: Sequence[int]) -> int:
    """A mask's uint64 words as one Python int."""
    if len(row) == 1:
        return row[0]
    return sum(int(word) << (64 * w) for w, word in enumerate(row))


class Tables:
    """A compiled program's passes as tables over one token alphabet (`tokens`, whose
    index is a token's label here; `UNK` among them). Immutable once built."""

    def __init__(self, tokens: Sequence[Token], passes: Sequence[PassTables]) -> None:
        self.tokens: tuple[Token, ...] = tuple(tokens)
        self.passes: tuple[PassTables, ...] = tuple(passes)
        self.index: dict[Token, int] = {t: i for i, t in enumerate(self.tokens)}
        if UNK not in self.index:
            raise Error(f"damaged tables: no {UNK} token")
        self.unk = self.index[UNK]
        if self.passes and self.passes[0].tags != 1:
            raise Error("damaged tables: the first pass reads tags")
        # The Python form of every pass, checked for range: what one word is walked with.
        self._py = tuple(
            _PyPass(p, len(self.tokens), self.passes[k + 1].tags if k + 1 < len(self.passes) else 1)
            for k, p in enumerate(self.passes)
        )

    def __getstate__(self) -> dict[str, Any]:
        # What batches cache (numpy itself among it) is made again where needed.
        return {k: v for k, v in self.__dict__.items() if k not in ("_numpy", "_lookup")}

    def apply(self, word: Sequence[Token]) -> Word:
        """The program's output on `word` (unseen tokens read as UNK)."""
        index, unk = self.index, self.unk
        ids = [index.get(t, unk) for t in word]
        tags = [0] * len(ids)
        for p in self._py:
            ids, tags = p.walk(ids, tags)
        tokens = self.tokens
        return tuple(tokens[i] for i in ids)

    # -- many words

    @cached_property
    def _numpy(self) -> tuple[Any, Any, tuple["_Batched", ...]]:
        """numpy, imported now, the token array and the passes ready for batches."""
        import numpy as np

        return np, np.array(self.tokens, dtype=object), tuple(_Batched.of(np, p.numpy()) for p in self.passes)

    def apply_many(self, words: Iterable[Sequence[Token]]) -> list[Word]:
        """`apply` on each word, batched through numpy where that pays."""
        return self.outputs(words).words()

    def outputs(self, words: Iterable[Sequence[Token]]) -> "Outputs":
        """The outputs of `apply` on each word, kept flat (see `Outputs`)."""
        words = words if isinstance(words, list) else list(words)
        if len(words) < SMALL_BATCH:
            return Outputs.of([self.apply(w) for w in words], self.tokens[self.unk])
        if max(map(len, words)) > LONG_WORD:
            out: list[Word | None] = [None] * len(words)
            for k, w in enumerate(words):
                if len(w) > LONG_WORD:
                    out[k] = self.apply(w)
            rest = [k for k in range(len(words)) if out[k] is None]
            for k, got in zip(rest, self._apply_batch([words[k] for k in rest]).words()):
                out[k] = got
            return Outputs.of(out, self.tokens[self.unk])  # type: ignore[arg-type]
        return self._apply_batch(words)

    def _apply_batch(self, words: Sequence[Sequence[Token]]) -> "Outputs":
        np, token_array, passes = self._numpy
        lens = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
        # Token -> index in C (a dict whose missing keys are UNK), not a Python loop.
        tok = np.fromiter(map(self._lookup.__getitem__, chain.from_iterable(words)), np.int32, int(lens.sum()))
        starts = np.zeros(len(words) + 1, dtype=np.int64)
        np.cumsum(lens, out=starts[1:])
        tok, starts = self.walk_ids(tok, starts)
        unk = tok == self.unk
        with_unk = sorted(set((np.searchsorted(starts, np.nonzero(unk)[0], side="right") - 1).tolist()))
        return Outputs(token_array[tok].tolist(), starts.tolist(), with_unk)

    def walk_ids(self, tok: "np.ndarray", starts: "np.ndarray") -> tuple["np.ndarray", "np.ndarray"]:
        """The outputs of a batch given as token indices (int32, the words one after the
        other; word k is `tok[starts[k] : starts[k + 1]]`), in the same form. Every pass
        steps through the longest word one position at a time: words longer than
        LONG_WORD are better walked by `apply`.

        Between passes flow *symbols*, `tag * len(tokens) + token` (the tag: which
        transformation wrote the token, for a later pass that tests it)."""
        np, _, passes = self._numpy
        tokens = len(self.tokens)
        sym = tok.astype(np.int32, copy=False)
        starts = starts.astype(np.int32, copy=False)
        layout: _Layout | None = None
        for b in passes:
            if b.direct_symbol is not None:  # no context: a lookup per symbol
                sym = b.direct_symbol[sym]
            elif b.fast is not None:
                sym, starts, layout = b.fast.run(np, sym, starts, layout)
            else:  # templates that copy tokens from elsewhere
                tag, tok = (x.astype(np.int32) for x in np.divmod(sym, tokens))
                tok, tag, wide = _run_pass(np, b, tok, tag, starts.astype(np.int64))
                sym = (tag.astype(np.int32) * tokens + tok).astype(np.int32)
                starts, layout = wide.astype(np.int32), None
        return sym, starts.astype(np.int64)

    @cached_property
    def _lookup(self) -> "_Lookup":
        return _Lookup(self.index, self.unk)

    def compiled(self, seen: Sequence[bool]) -> "_walk.Walker | None":
        """The compiled walker of these tables (`fstsynth._walk.Walker`; `seen[i]`: token
        i is in the model's alphabet), or None where it is not built, or cannot read
        these arrays as they are (not little-endian int32 and uint64)."""
        try:
            from fstsynth import _walk
        except ImportError:
            return None
        if sys.byteorder != "little" or built_before_its_source(_walk.__file__, _WALK_SOURCE):
            return None
        passes: list[dict[str, int | bytes]] = []
        for k, p in enumerate(self.passes):
            arrays = {f.name: getattr(p, f.name) for f in fields(PassTables) if f.name not in _SCALARS}
            if any(a.dtype != _DTYPES.get(name, "<i4") for name, a in arrays.items()):
                return None
            passes.append({
                **{name: a.data for name, a in arrays.items()},
                "rules": p.rules, "left_start": p.left_start, "right_start": p.right_start,
                "tags": p.tags, "classes": p.class_mask.shape[0], "lefts": p.left_next.shape[0],
                "rights": p.right_next.shape[0],
                "next_tags": self.passes[k + 1].tags if k + 1 < len(self.passes) else 1,
            })
        try:
            return _walk.Walker([t.encode("utf-8") for t in self.tokens], self.unk, bytes(map(bool, seen)), passes)
        except ValueError as exc:
            raise Error(str(exc)) from None

    # -- saving and loading

    def arrays(self, prefix: str = "") -> dict[str, Array]:
        """Every pass's arrays, named `{prefix}pass{k}.{field}` (k from 1); the numbers
        (rules, start states) as 0-d int32 arrays."""
        out = {}
        for k, p in enumerate(self.passes, start=1):
            for f in fields(PassTables):
                value = getattr(p, f.name)
                if not isinstance(value, Array):
                    value = Array("<i4", (), int(value).to_bytes(4, "little", signed=True))
                out[f"{prefix}pass{k}.{f.name}"] = value
        return out

    @classmethod
    def from_arrays(
        cls, tokens: Sequence[Token], arrays: Mapping[str, Array], count: int, prefix: str = ""
    ) -> "Tables":
        """The tables saved by `arrays` (with `count` passes); Error if any is missing,
        of the wrong type or shape, or out of range."""
        passes = []
        for k in range(1, count + 1):
            values: dict[str, Any] = {}
            for f in fields(PassTables):
                key = f"{prefix}pass{k}.{f.name}"
                if key not in arrays:
                    raise Error(f"damaged tables: no array {key!r}")
                value = arrays[key]
                dtype = _DTYPES.get(f.name, "<i4")
                if value.dtype != dtype:
                    raise Error(f"damaged tables: {key!r} is {value.dtype}, not {dtype}")
                if f.name in _SCALARS:
                    if value.shape != ():
                        raise Error(f"damaged tables: {key!r} is not a number")
                    values[f.name] = value.tolist()
                else:
                    values[f.name] = value
            passes.append(PassTables(**values))
        return cls(tokens, passes)


def lowest_rules(np: Any, masks: "np.ndarray", rules: int) -> "np.ndarray":
    """Per row of uint64 words (any leading shape), the lowest set bit's index (`rules`
    where none)."""
    flat = masks.reshape(-1, masks.shape[-1])
    out = np.full(flat.shape[0], rules, dtype=np.int64)
    open_ = np.ones(flat.shape[0], dtype=bool)
    one = np.uint64(1)
    for w in range(flat.shape[1]):
        word = flat[:, w]
        hit = open_ & (word != 0)
        if hit.any():
            x = word[hit]
            low = x & (~x + one)
            out[hit] = 64 * w + np.log2(low.astype(np.float64)).astype(np.int64)
            open_ &= ~hit
    return out.reshape(masks.shape[:-1])


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


#: The decision table of a pass (left candidates x right states) is precomputed when
#: it has at most this many entries; beyond, decisions are computed from the masks.
DECISION_TABLE_MAX = 20_000_000


@dataclass(frozen=True, eq=False)
class _Batched:
    """A pass ready for batches: its numpy arrays, and what can be computed once.

    The automata are read as flat arrays (`right_flat[state * classes + cls]`). The
    decision at a token is the lowest rule in left_mask[lam] & class_mask[cls] &
    right_mask[rho]; the left and class masks together take few distinct values, so
    `candidates[lam * classes + cls]` numbers them and `decide[candidate * rights +
    rho]` is the decision (None: too large, computed from the masks)."""

    p: NumpyPass
    classes: int
    rights: int
    left_flat: "np.ndarray"
    right_flat: "np.ndarray"
    candidates: "np.ndarray | None"
    decide: "np.ndarray | None"
    start_decide: "np.ndarray"
    sizes: "np.ndarray"  # items per template
    single: bool  # every token template writes exactly one token, every start one none
    kind1: "np.ndarray"  # of a one-item token template: its item's kind and value
    value1: "np.ndarray"
    copies: bool  # some template reads a token at an offset other than 0
    # A pass that reads no context (one state each side), writes one token per token
    # and copies nothing: per symbol, the token it writes and its tag (else None).
    direct: "tuple[np.ndarray, np.ndarray] | None"
    direct_symbol: "np.ndarray | None"  # the same as next-pass symbols (see `Tables.walk_ids`)
    # The same pass for `_Fast.run` (None if its templates copy tokens from elsewhere).
    fast: "_Fast | None"

    @classmethod
    def of(cls, np: Any, p: NumpyPass) -> "_Batched":
        words = p.class_mask.shape[1]
        classes, rights = p.class_mask.shape[0], p.right_mask.shape[0]
        left = p.left_mask[:, None, :] & p.class_mask[None, :, :]  # [left, class, words]
        rows = np.ascontiguousarray(left.reshape(-1, words))
        first, inverse = _distinct_rows(np, rows)
        candidates: Any = None
        decide: Any = None
        if len(first) * rights <= DECISION_TABLE_MAX:
            candidates = inverse.reshape(-1).astype(np.int32)
            decide = lowest_rules(np, rows[first][:, None, :] & p.right_mask[None, :, :], p.rules).reshape(-1)
            decide = decide.astype(np.int32)
        start_decide = lowest_rules(np, (p.left_mask[p.left_start] & p.start_mask)[None, :] & p.right_mask, p.rules)
        sizes = np.diff(p.template_start).astype(np.int64)
        head = np.minimum(p.template_start[: p.rules + 1], max(len(p.template_kind) - 1, 0))
        kind1 = p.template_kind[head] if len(p.template_kind) else np.zeros(p.rules + 1, np.int32)
        value1 = p.template_value[head] if len(p.template_value) else np.zeros(p.rules + 1, np.int32)
        copies = bool(((p.template_kind == OFFSET) & (p.template_value != 0)).any())
        single = bool((sizes[: p.rules + 1] == 1).all() and (sizes[p.rules + 1 :] == 0).all())
        direct = None
        if single and not copies and p.left_next.shape[0] == 1 and rights == 1 and decide is not None:
            tags, tokens = p.symbol_class.shape
            by_class = decide[candidates[p.left_start * classes + np.arange(classes)] * rights + p.right_start]
            decision = by_class[p.symbol_class]  # [tag, token]
            written = np.where(kind1[decision] == OFFSET, np.arange(tokens)[None, :], value1[decision])
            direct = (written.astype(np.int32).reshape(-1), p.out_tag[decision].reshape(-1))
        start_decide = start_decide.astype(np.int32)
        direct_symbol = None
        if direct is not None:
            direct_symbol = (direct[1] * p.symbol_class.shape[1] + direct[0]).astype(np.int32)
        fast = None if copies or decide is None else _Fast.of(np, p, candidates, decide, start_decide)
        return cls(
            p, classes, rights, p.left_next.reshape(-1), p.right_next.reshape(-1), candidates, decide,
            start_decide, sizes, single, kind1, value1, copies, direct, direct_symbol, fast,
        )


def _run_pass(
    np: Any, b: _Batched, tok: "np.ndarray", tag: "np.ndarray", starts: "np.ndarray"
) -> tuple["np.ndarray", "np.ndarray", "np.ndarray"]:
    """One pass over a batch: flat token and tag indices (int32), word boundaries `starts`."""
    p, classes = b.p, b.classes
    if b.direct is not None:  # no context: a lookup per symbol
        symbol = tag * p.symbol_class.shape[1] + tok
        return b.direct[0][symbol], b.direct[1][symbol], starts
    n, count = len(starts) - 1, len(tok)
    lens = np.diff(starts)
    cls = p.symbol_class[tag, tok]
    # Both automata step through position j of every word at once; with the words
    # sorted by length (a radix sort: lengths are small), the words still going at
    # step j are a prefix.
    order = np.argsort(-lens.astype(np.int16), kind="stable")
    slens, sstarts = lens[order], starts[:-1][order]
    steps = int(slens[0]) if n else 0
    going = np.searchsorted(-slens, -np.arange(steps), side="left")
    rho = np.full(count, p.right_start, dtype=np.int32)
    state = np.full(n, p.right_start, dtype=np.int32)
    if b.rights > 1:
        ends = sstarts + slens - 1
        table = b.right_flat
        for j in range(steps):
            k = going[j]
            at = ends[:k] - j
            now = state[:k]
            rho[at] = now
            state[:k] = table[now * classes + cls[at]]
    rho_start = np.empty(n, dtype=np.int32)
    rho_start[order] = state
    lam = np.full(count, p.left_start, dtype=np.int32)
    if p.left_next.shape[0] > 1:
        state = np.full(n, p.left_start, dtype=np.int32)
        table = b.left_flat
        for j in range(steps):
            k = going[j]
            at = sstarts[:k] + j
            now = state[:k]
            lam[at] = now
            state[:k] = table[now * classes + cls[at]]
    if b.decide is not None and b.candidates is not None:
        decision = b.decide[b.candidates[lam * classes + cls] * b.rights + rho]
    else:
        decision = lowest_rules(np, p.left_mask[lam] & p.class_mask[cls] & p.right_mask[rho], p.rules)
    start_decision = b.start_decide[rho_start]
    if b.single:
        # Every token writes one token and no start position any (replacements, as in
        # transliteration): the words keep their lengths.
        kind, value = b.kind1[decision], b.value1[decision]
        if b.copies:
            word = np.repeat(np.arange(n), lens)
            offset = kind == OFFSET
            read = np.where(offset, np.arange(count) + value, 0)
            _check_reads(np, offset, read, starts[:-1][word], starts[1:][word])
            new_tok = np.where(offset, tok[read] if count else 0, value)
        else:
            new_tok = np.where(kind == OFFSET, tok, value)
        return new_tok.astype(np.int32), p.out_tag[decision], starts
    # Every word's start position, then its tokens: "virtual positions" in word order.
    word = np.repeat(np.arange(n), lens)
    vstarts = starts[:-1] + np.arange(n)
    total_v = count + n
    vtemplate = np.empty(total_v, dtype=np.int64)
    vdecision = np.empty(total_v, dtype=np.int64)
    vbase = np.empty(total_v, dtype=np.int64)
    at_token = np.arange(count) + word + 1
    vtemplate[vstarts] = p.rules + 1 + start_decision
    vtemplate[at_token] = decision
    vdecision[vstarts] = start_decision
    vdecision[at_token] = decision
    vbase[vstarts] = starts[:-1] - 1
    vbase[at_token] = np.arange(count)
    sizes = b.sizes[vtemplate]
    total = int(sizes.sum())
    first = np.cumsum(sizes) - sizes
    source = np.repeat(np.arange(total_v), sizes)
    item = p.template_start[vtemplate][source] + (np.arange(total) - first[source])
    kind, value = p.template_kind[item], p.template_value[item]
    offset = kind == OFFSET
    read = np.where(offset, vbase[source] + value, 0)
    if b.copies and offset.any():
        owner = np.repeat(np.arange(n), lens + 1)[source]
        _check_reads(np, offset, read, starts[:-1][owner], starts[1:][owner])
    new_tok = np.where(offset, tok[read] if count else 0, value)
    new_tag = p.out_tag[vdecision[source]]
    new_lens = np.add.reduceat(sizes, vstarts) if n else np.zeros(0, dtype=np.int64)
    new_starts = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(new_lens, out=new_starts[1:])
    return new_tok.astype(np.int32), new_tag, new_starts


def _check_reads(np: Any, offset: "np.ndarray", read: "np.ndarray", lo: "np.ndarray", hi: "np.ndarray") -> None:
    """Templates read tokens of their own word only (else the tables are damaged)."""
    if offset.any() and (offset & ((read < lo) | (read >= hi))).any():
        raise Error("damaged tables: a template reads outside the word")


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


class _Layout:
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


class _Fast:
    """A pass whose templates copy no token but the one at the position, run over a
    batch in column order (`_Layout`) with precomputed tables:
    - `right_t[cls * rights + state]`: the right automaton, class-major (its states
      are kept plain for the decision table);
    - `left_m[state * classes + cls]`: the left automaton, its states kept multiplied
      by `classes` (one addition, one lookup a step);
    - `candidate_r[left * classes + cls]`: the left candidate, times `rights`, so that
      `decide[candidate_r + right]` is the decision;
    - what a position writes: row `decision * symbols + symbol` of the rows
      `items[first[row] : first[row] + size[row]]` (next-pass symbols); the start
      position's, rows `start_base + decision` (`has_start`: some start template
      writes something)."""

    __slots__ = (
        "classes", "rights", "lefts", "symbols", "sym_class", "right_t", "right_start", "left_m", "left_start_m",
        "candidate_r", "decide", "start_decide", "items", "first", "size", "one", "start_base", "has_start", "single",
    )
    classes: int
    rights: int
    lefts: int
    symbols: int
    sym_class: "np.ndarray"
    right_t: "np.ndarray"
    right_start: int
    left_m: "np.ndarray"
    left_start_m: int
    candidate_r: "np.ndarray"
    decide: "np.ndarray"
    start_decide: "np.ndarray"
    items: "np.ndarray"
    first: "np.ndarray"
    size: "np.ndarray"
    one: "np.ndarray | None"
    start_base: int
    has_start: bool
    single: bool

    @classmethod
    def of(
        cls, np: Any, p: NumpyPass, candidates: "np.ndarray", decide: "np.ndarray", start_decide: "np.ndarray"
    ) -> "_Fast | None":
        f = cls()
        f.classes, f.rights, f.lefts = p.class_mask.shape[0], p.right_next.shape[0], p.left_next.shape[0]
        tags, tokens = p.symbol_class.shape
        f.symbols = tags * tokens
        f.sym_class = p.symbol_class.reshape(-1).astype(np.int32)
        f.right_t = np.ascontiguousarray(p.right_next.T).reshape(-1).astype(np.int32)
        f.right_start = int(p.right_start)
        f.left_m = (p.left_next.reshape(-1) * f.classes).astype(np.int32)
        f.left_start_m = int(p.left_start) * f.classes
        f.candidate_r = (candidates * f.rights).astype(np.int32)
        f.decide, f.start_decide = decide.astype(np.int32), start_decide.astype(np.int32)
        decisions = p.rules + 1
        starts = p.template_start.tolist()
        kinds, values, out_tag = p.template_kind.tolist(), p.template_value.tolist(), p.out_tag.tolist()
        reachable = set(start_decide.tolist())  # the start decisions some right state takes
        start_items = {d: range(starts[decisions + d], starts[decisions + d + 1]) for d in reachable}
        if any(kinds[a] != CONSTANT for d in reachable for a in start_items[d]):
            return None  # a start template that reads the word: the general walker
        # Rows (d, symbol): template d's items at a position holding `symbol`.
        symbol = np.arange(f.symbols, dtype=np.int32)
        token_of = symbol % tokens
        columns = []  # per decision: [symbols, items]
        for d in range(decisions):
            written = [token_of if kinds[a] == OFFSET else np.full(f.symbols, values[a], np.int32)
                       for a in range(starts[d], starts[d + 1])]
            columns.append(np.stack(written, axis=1) + out_tag[d] * tokens if written else None)
        sizes = np.array([starts[d + 1] - starts[d] for d in range(decisions)], dtype=np.int32)
        f.size = np.repeat(sizes, f.symbols)
        f.items = np.concatenate([c.reshape(-1) for c in columns if c is not None] or [np.zeros(0, np.int32)])
        f.first = np.zeros(decisions * f.symbols, dtype=np.int32)
        at = 0
        for d, c in enumerate(columns):
            if c is not None:
                f.first[d * f.symbols : (d + 1) * f.symbols] = at + symbol * sizes[d]
                at += c.size
        start_sizes = [len(start_items[d]) if d in reachable else 0 for d in range(decisions)]
        reachable_sorted = sorted(reachable)
        f.has_start = any(start_sizes)
        f.start_base = len(f.size)
        if f.has_start:
            written = [out_tag[d] * tokens + values[a] for d in reachable_sorted for a in start_items[d]]
            start_first = np.cumsum([0] + start_sizes[:-1]) + len(f.items)
            f.items = np.concatenate([f.items, np.array(written, dtype=np.int32)])
            f.first = np.concatenate([f.first, start_first.astype(np.int32)])
            f.size = np.concatenate([f.size, np.array(start_sizes, dtype=np.int32)])
        f.single = bool((sizes == 1).all()) and not f.has_start
        # One item per row: the item itself (a lookup instead of a range).
        f.one = f.items[f.first[: f.start_base]] if f.single else None
        return f

    def run(
        self, np: Any, sym: "np.ndarray", starts: "np.ndarray", layout: "_Layout | None"
    ) -> tuple["np.ndarray", "np.ndarray", "_Layout | None"]:
        """The pass over a batch: symbols (int32, words one after the other) and word
        boundaries (int32) in, the same out, and the layout if the words kept their lengths."""
        n, count = len(starts) - 1, len(sym)
        if n == 0:
            return sym, starts, layout
        if layout is None:
            layout = _Layout(np, starts)
        going, row, source = layout.going, layout.row, layout.source
        # Gathers are `take`s: numpy's fancy indexing with int32 indices converts them
        # to int64 first (measured 2-3 times slower on a batch's arrays).
        col = sym.take(source)
        cls = self.sym_class.take(col)
        rho: Any = None
        rho_start = np.full(n, self.right_start, dtype=np.int32)
        if self.rights > 1:
            cls_r = cls * self.rights
            right_t = self.right_t
            rho = np.empty(count, dtype=np.int32)
            state = rho_start
            for j in range(len(going) - 1, -1, -1):
                k, a = going[j], row[j]
                now = state[:k]
                rho[a : a + k] = now
                state[:k] = right_t.take(cls_r[a : a + k] + now)
        if self.lefts > 1:
            left_m = self.left_m
            key = np.empty(count, dtype=np.int32)
            state = np.full(n, self.left_start_m, dtype=np.int32)
            for j in range(len(going)):
                k, a = going[j], row[j]
                here = state[:k] + cls[a : a + k]
                key[a : a + k] = here
                state[:k] = left_m.take(here)
        else:
            key = cls + self.left_start_m
        chosen = self.candidate_r.take(key)
        if rho is not None:
            chosen += rho
        row_id = self.decide.take(chosen)
        row_id *= self.symbols
        row_id += col
        if self.one is not None:  # one symbol per position: the words keep their lengths
            out = np.empty(count, dtype=np.int32)
            out[source] = self.one.take(row_id)
            return out, starts, layout
        ids = np.empty(count, dtype=np.int32)
        ids[source] = row_id
        if self.has_start:
            start_decision = np.empty(n, dtype=np.int32)
            start_decision[layout.order] = self.start_decide.take(rho_start)
            # Every word's start position first, then its positions.
            word = np.repeat(np.arange(n, dtype=np.int32), np.diff(starts))
            word += np.arange(1, count + 1, dtype=np.int32)
            firsts = starts[:-1] + np.arange(n, dtype=np.int32)
            ids_v = np.empty(count + n, dtype=np.int32)
            ids_v[word] = ids
            ids_v[firsts] = self.start_base + start_decision
            ids, word_bounds = ids_v, np.append(firsts, count + n).astype(np.int32)
        else:
            word_bounds = starts
        at, bounds = concat_ranges(np, self.first.take(ids), self.size.take(ids))
        return self.items.take(at), bounds.take(word_bounds), None


#: The compiled walker's source, where a checkout has it (an installed package does not).
_WALK_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_walk.c")


def built_before_its_source(built: str, source: str) -> bool:
    """Whether the compiled walker `built` is older than its `source`: in a checkout
    where `fstsynth/_walk.c` changed and `pip install -e .` was not run again, the
    module is the old code, and `apply` takes numpy's walker instead. False where
    either file is missing."""
    try:
        return os.stat(source).st_mtime > os.stat(built).st_mtime
    except OSError:
        return False
