"""The apply machinery: a compiled program as flat integer tables, walked fast.

Public API:
    PassTables, Tables, Error, UNK
    Tables(tokens, passes), Tables.apply(word) -> Word, Tables.apply_many(words) -> list[Word]
    Tables.arrays() -> dict[str, numpy array], Tables.from_arrays(tokens, arrays, count) -> Tables

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
Nothing here needs Pynini: a model loaded for `apply` reads these arrays from its
`tables.npz` and the token list from its JSON.

A token the tables do not know is read as `UNK` (`<unk>`), as by the transducers and
the interpreter.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from functools import cached_property
from typing import Iterable, Mapping, Sequence

import numpy as np

from fstsynth.errors import UserError
from fstsynth.types import Token, Word

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
    """One pass as arrays (int32 unless said; masks uint64 words, see
    `fstsynth.bimachine.PassMachine`, which documents every field)."""

    rules: int
    symbol_class: np.ndarray
    left_next: np.ndarray
    left_start: int
    left_mask: np.ndarray
    right_next: np.ndarray
    right_start: int
    right_mask: np.ndarray
    class_mask: np.ndarray
    start_mask: np.ndarray
    template_start: np.ndarray
    template_kind: np.ndarray
    template_value: np.ndarray
    out_tag: np.ndarray

    @property
    def tags(self) -> int:
        return int(self.symbol_class.shape[0])

    def check(self, tokens: int, next_tags: int) -> None:
        """Raise Error unless every index in the arrays is in range (a damaged file
        must give an error, not a crash or a read out of bounds)."""
        words = (self.rules + 63) // 64 or 1
        classes = self.class_mask.shape[0] if self.class_mask.ndim == 2 else -1

        def need(ok: bool, what: str) -> None:
            if not ok:
                raise Error(f"damaged tables: {what}")

        need(self.symbol_class.ndim == 2 and self.symbol_class.shape[1] == tokens, "symbol classes")
        need(classes >= 1 and self.class_mask.shape[1] == words, "class masks")
        for name in ("left", "right"):
            nxt, start, mask = (getattr(self, f"{name}_{k}") for k in ("next", "start", "mask"))
            need(nxt.ndim == 2 and nxt.shape[1] == classes and nxt.shape[0] >= 1, f"{name} automaton")
            need(mask.shape == (nxt.shape[0], words), f"{name} masks")
            need(0 <= start < nxt.shape[0] and _within(nxt, nxt.shape[0]), f"{name} states")
        need(self.start_mask.shape == (words,), "start mask")
        need(_within(self.symbol_class, classes), "symbol classes")
        count = 2 * (self.rules + 1)
        need(self.template_start.shape == (count + 1,) and self.template_start[0] == 0, "templates")
        need(bool(np.all(np.diff(self.template_start) >= 0)), "templates")
        items = int(self.template_start[-1])
        need(self.template_kind.shape == (items,) and self.template_value.shape == (items,), "templates")
        need(_within(self.template_kind, 2), "template kinds")
        constant = self.template_kind == CONSTANT
        need(_within(self.template_value[constant], tokens), "template tokens")
        need(self.out_tag.shape == (self.rules + 1,) and _within(self.out_tag, next_tags), "output tags")


def _within(values: np.ndarray, bound: int) -> bool:
    return values.size == 0 or (int(values.min()) >= 0 and int(values.max()) < bound)


class _PyPass:
    """A pass's tables as Python lists and ints, for walking one word."""

    def __init__(self, t: PassTables) -> None:
        self.rules = t.rules
        self.symbol_class = t.symbol_class.tolist()
        self.left_next = t.left_next.tolist()
        self.left_start = t.left_start
        self.left_mask = [_to_int(row) for row in t.left_mask]
        self.right_next = t.right_next.tolist()
        self.right_start = t.right_start
        self.right_mask = [_to_int(row) for row in t.right_mask]
        self.class_mask = [_to_int(row) for row in t.class_mask]
        self.start_mask = _to_int(t.start_mask)
        self.looks_right = len(self.right_next) > 1
        self.looks_left = len(self.left_next) > 1
        kinds, values, starts = t.template_kind.tolist(), t.template_value.tolist(), t.template_start.tolist()
        self.templates = [tuple(zip(kinds[a:b], values[a:b])) for a, b in zip(starts, starts[1:])]
        self.out_tag = t.out_tag.tolist()

    def _decide(self, mask: int) -> int:
        return (mask & -mask).bit_length() - 1 if mask else self.rules

    def walk(self, ids: list[int], tags: list[int]) -> tuple[list[int], list[int]]:
        n = len(ids)
        cls = [self.symbol_class[g][i] for i, g in zip(ids, tags)]
        right_mask = self.right_mask
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
        decision = self._decide(self.left_mask[state_l] & self.start_mask & right_mask[state])
        self._emit(templates[self.rules + 1 + decision], -1, ids, out_ids)
        out_tags.extend([out_tag[decision]] * (len(out_ids)))
        left_next, left_mask, class_mask = self.left_next, self.left_mask, self.class_mask
        for p in range(n):
            c = cls[p]
            decision = self._decide(left_mask[state_l] & class_mask[c] & right_mask[rho[p]])
            before = len(out_ids)
            self._emit(templates[decision], p, ids, out_ids)
            out_tags.extend([out_tag[decision]] * (len(out_ids) - before))
            state_l = left_next[state_l][c]
        return out_ids, out_tags

    @staticmethod
    def _emit(items: Sequence[tuple[int, int]], p: int, ids: Sequence[int], out: list[int]) -> None:
        for kind, value in items:
            if kind == CONSTANT:
                out.append(value)
            else:
                at = p + value
                if not 0 <= at < len(ids):
                    raise Error("damaged tables: a template reads outside the word")
                out.append(ids[at])


def _to_int(row: np.ndarray) -> int:
    return sum(int(word) << (64 * w) for w, word in enumerate(row.tolist()))


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
        for k, p in enumerate(self.passes):
            next_tags = self.passes[k + 1].tags if k + 1 < len(self.passes) else 1
            p.check(len(self.tokens), next_tags)
        if self.passes and self.passes[0].tags != 1:
            raise Error("damaged tables: the first pass reads tags")

    # -- one word

    @cached_property
    def _py(self) -> tuple[_PyPass, ...]:
        return tuple(_PyPass(p) for p in self.passes)

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
    def _token_array(self) -> np.ndarray:
        return np.array(self.tokens, dtype=object)

    def apply_many(self, words: Iterable[Sequence[Token]]) -> list[Word]:
        """`apply` on each word, batched through numpy where that pays."""
        words = words if isinstance(words, list) else list(words)
        if len(words) < SMALL_BATCH:
            return [self.apply(w) for w in words]
        long = [k for k, w in enumerate(words) if len(w) > LONG_WORD]
        if long:
            out: list[Word | None] = [None] * len(words)
            for k in long:
                out[k] = self.apply(words[k])
            rest = [k for k in range(len(words)) if out[k] is None]
            for k, got in zip(rest, self._apply_batch([words[k] for k in rest])):
                out[k] = got
            return out  # type: ignore[return-value]
        return self._apply_batch(words)

    def _apply_batch(self, words: Sequence[Sequence[Token]]) -> list[Word]:
        index, unk = self.index, self.unk
        lens = np.fromiter((len(w) for w in words), dtype=np.int64, count=len(words))
        tok = np.fromiter((index.get(t, unk) for w in words for t in w), dtype=np.int64, count=int(lens.sum()))
        starts = np.zeros(len(words) + 1, dtype=np.int64)
        np.cumsum(lens, out=starts[1:])
        tag = np.zeros_like(tok)
        for p in self.passes:
            tok, tag, starts = _run_pass(p, tok, tag, starts)
        toks = self._token_array[tok].tolist()
        bounds = starts.tolist()
        return [tuple(toks[a:b]) for a, b in zip(bounds, bounds[1:])]

    # -- saving and loading

    def arrays(self, prefix: str = "") -> dict[str, np.ndarray]:
        """Every pass's arrays, named `{prefix}pass{k}.{field}` (k from 1)."""
        out = {}
        for k, p in enumerate(self.passes, start=1):
            for f in fields(PassTables):
                value = getattr(p, f.name)
                out[f"{prefix}pass{k}.{f.name}"] = np.asarray(value, dtype=_DTYPES.get(f.name, np.int32))
        return out

    @classmethod
    def from_arrays(
        cls, tokens: Sequence[Token], arrays: Mapping[str, np.ndarray], count: int, prefix: str = ""
    ) -> "Tables":
        """The tables saved by `arrays` (with `count` passes); Error if any is missing,
        of the wrong type or shape, or out of range."""
        passes = []
        for k in range(1, count + 1):
            values: dict[str, int | np.ndarray] = {}
            for f in fields(PassTables):
                key = f"{prefix}pass{k}.{f.name}"
                if key not in arrays:
                    raise Error(f"damaged tables: no array {key!r}")
                value = arrays[key]
                dtype = _DTYPES.get(f.name, np.int32)
                if value.dtype != dtype:
                    raise Error(f"damaged tables: {key!r} is {value.dtype}, not {np.dtype(dtype)}")
                if f.name in _SCALARS:
                    if value.shape != ():
                        raise Error(f"damaged tables: {key!r} is not a number")
                    values[f.name] = int(value)
                else:
                    values[f.name] = value
            passes.append(PassTables(**values))  # type: ignore[arg-type]
        return cls(tokens, passes)


_SCALARS = {"rules", "left_start", "right_start"}
_DTYPES = {"left_mask": np.uint64, "right_mask": np.uint64, "class_mask": np.uint64, "start_mask": np.uint64}


def _lowest(masks: np.ndarray, rules: int) -> np.ndarray:
    """Per row of uint64 words, the lowest set bit's index (`rules` where none)."""
    out = np.full(masks.shape[0], rules, dtype=np.int64)
    open_ = np.ones(masks.shape[0], dtype=bool)
    one = np.uint64(1)
    for w in range(masks.shape[1]):
        word = masks[:, w]
        hit = open_ & (word != 0)
        if hit.any():
            x = word[hit]
            low = x & (~x + one)
            out[hit] = 64 * w + np.log2(low.astype(np.float64)).astype(np.int64)
            open_ &= ~hit
    return out


def _run_pass(
    p: PassTables, tok: np.ndarray, tag: np.ndarray, starts: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One pass over a batch: flat token and tag indices, word boundaries `starts`."""
    n = len(starts) - 1
    lens = np.diff(starts)
    cls = p.symbol_class[tag, tok]
    # Both automata step through position j of every word at once; with the words
    # sorted by length, the words still going at step j are a prefix.
    order = np.argsort(-lens, kind="stable")
    slens, sstarts = lens[order], starts[:-1][order]
    steps = int(slens[0]) if n else 0
    going = np.searchsorted(-slens, -np.arange(steps), side="left")
    rho = np.full(len(tok), p.right_start, dtype=np.int64)
    state = np.full(n, p.right_start, dtype=np.int64)
    if p.right_next.shape[0] > 1:
        for j in range(steps):
            k = going[j]
            at = sstarts[:k] + slens[:k] - 1 - j
            rho[at] = state[:k]
            state[:k] = p.right_next[state[:k], cls[at]]
    rho_start = np.empty(n, dtype=np.int64)
    rho_start[order] = state
    lam = np.full(len(tok), p.left_start, dtype=np.int64)
    if p.left_next.shape[0] > 1:
        state = np.full(n, p.left_start, dtype=np.int64)
        for j in range(steps):
            k = going[j]
            at = sstarts[:k] + j
            lam[at] = state[:k]
            state[:k] = p.left_next[state[:k], cls[at]]
    decision = _lowest(p.left_mask[lam] & p.class_mask[cls] & p.right_mask[rho], p.rules)
    start_decision = _lowest(p.left_mask[p.left_start] & p.start_mask & p.right_mask[rho_start], p.rules)
    # Every word's start position, then its tokens: "virtual positions" in word order.
    word = np.repeat(np.arange(n), lens)
    vstarts = starts[:-1] + np.arange(n)
    count = len(tok) + n
    vtemplate = np.empty(count, dtype=np.int64)
    vdecision = np.empty(count, dtype=np.int64)
    vbase = np.empty(count, dtype=np.int64)
    at_token = np.arange(len(tok)) + word + 1
    vtemplate[vstarts] = p.rules + 1 + start_decision
    vtemplate[at_token] = decision
    vdecision[vstarts] = start_decision
    vdecision[at_token] = decision
    vbase[vstarts] = starts[:-1] - 1
    vbase[at_token] = np.arange(len(tok))
    sizes = np.diff(p.template_start)[vtemplate]
    total = int(sizes.sum())
    first = np.cumsum(sizes) - sizes
    source = np.repeat(np.arange(count), sizes)
    item = p.template_start[vtemplate][source] + (np.arange(total) - first[source])
    kind, value = p.template_kind[item], p.template_value[item]
    offset = kind == OFFSET
    read = np.where(offset, vbase[source] + value, 0)
    if offset.any():
        owner = np.repeat(np.arange(n), lens + 1)[source]
        bad = offset & ((read < starts[:-1][owner]) | (read >= starts[1:][owner]))
        if bad.any():
            raise Error("damaged tables: a template reads outside the word")
    new_tok = np.where(offset, tok[read] if len(tok) else 0, value)
    new_tag = p.out_tag[vdecision[source]].astype(np.int64)
    new_lens = np.add.reduceat(sizes, vstarts) if n else np.zeros(0, dtype=np.int64)
    new_starts = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(new_lens, out=new_starts[1:])
    return new_tok.astype(np.int64), new_tag, new_starts
