"""A compiled program's apply tables, and which walker runs them.

Public API:
    Tables(tokens, passes), Tables.apply(word) -> Word,
    Tables.apply_many(words, walker=None) -> list[Word], Tables.outputs(words, walker=None) -> Outputs,
    Tables.walk_ids(tok, starts) -> (tok, starts), Tables.compiled(seen) -> fstsynth._walk.Walker | None
    Tables.arrays(prefix) -> dict[str, Array],
    Tables.from_arrays(tokens, arrays, count, prefix, compact=True, mask_numbers=True)
    Outputs, WALKERS, SMALL_BATCH
    (and, from `fstsynth.table_format`: UNK, CONSTANT, OFFSET, Error, PassTables, NumpyPass, lowest_rules)

The format and its validation are `fstsynth.table_format`. The walkers (`WALKERS`):
- "word": `fstsynth.word_walker`, one word at a time in plain Python: the reference,
  and what `apply(word)` uses;
- "compiled": the C walker `fstsynth._walk` (optional: built when the package is
  installed if a C compiler is there); the batch path where it is built;
- "numpy": `fstsynth.batch_walker`, the batch path otherwise.
`outputs` picks the batch path for a batch large enough to pay for it; very long words
go word by word through numpy's. tests/backends.py runs every walker (and the byte
front end over both block walkers) on the same programs.

Nothing here needs Pynini, and numpy only for the numpy walker: a model loaded for
`apply` reads these arrays from its `tables.npz` (`fstsynth.arrays`, without numpy) and
the token list from its JSON.

A token the tables do not know is read as `UNK` (`<unk>`), as by the transducers and
the interpreter.
"""

from __future__ import annotations

import os
import sys
from array import array
from functools import cached_property
from itertools import accumulate, chain
from typing import TYPE_CHECKING, Any, Iterable, Mapping, NamedTuple, Sequence

from fstsynth.arrays import Array
from fstsynth.table_format import (
    CONSTANT,
    LONG_WORD,
    OFFSET,
    UNK,
    CheckedPass,
    checked_templates,
    need,
    Error,
    NumpyPass,
    PassTables,
    compiled_fields,
    lowest_rules,
    pass_arrays,
    passes_from_arrays,
)
from fstsynth.types import Token, Word
from fstsynth.word_walker import walk_word

if TYPE_CHECKING:
    import numpy as np

    from fstsynth import _walk
    from fstsynth.batch_walker import BatchPass

__all__ = [
    "CONSTANT", "OFFSET", "UNK", "Error", "NumpyPass", "PassTables", "lowest_rules", "Outputs", "Tables",
    "WALKERS", "SMALL_BATCH", "LONG_WORD",
]

#: The walkers `Tables.outputs` can be asked for (see the module docstring).
WALKERS = ("word", "numpy", "compiled")
#: Batches of fewer words than this are walked one at a time (array set-up costs more).
SMALL_BATCH = 24
#: Tables of fewer array values than this make the reference walker's lists at load
#: (their check); larger ones are checked on the arrays, the lists made when first
#: needed (a 1,000-pair German model, ~0.3M values: checking its arrays and then making
#: the lists for one word took 45.5 ms against 34.4 ms for the lists alone).
LISTS_AT_LOAD = 1 << 20


class Outputs(NamedTuple):
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
        # Every pass checked for shape and range: damaged tables are refused here. Small
        # tables are checked by making the Python lists one word is walked with
        # (`_checked`, as cheap as checking the arrays); larger ones on their arrays, the
        # lists made on the first such word: they are several times the arrays (German
        # spelling at 10,000 pairs: ~1 GB of lists besides the arrays).
        if sum(value.size for p in self.passes for value in p if isinstance(value, Array)) < LISTS_AT_LOAD:
            self._checked  # noqa: B018 (made now: the check)
        else:
            for k, p in enumerate(self.passes):
                check_ranges(p, len(self.tokens), self._next_tags(k))

    def _next_tags(self, k: int) -> int:
        return self.passes[k + 1].tags if k + 1 < len(self.passes) else 1

    @cached_property
    def _checked(self) -> tuple[CheckedPass, ...]:
        """Every pass as Python lists (checked again): what one word is walked with."""
        return tuple(CheckedPass(p, len(self.tokens), self._next_tags(k)) for k, p in enumerate(self.passes))

    def __getstate__(self) -> dict[str, Any]:
        # What walkers cache (the lists, numpy, the C walker) is made again where needed.
        return {
            k: v for k, v in self.__dict__.items() if k not in ("_checked", "_numpy", "_lookup", "_batch_walker")
        }

    def apply(self, word: Sequence[Token]) -> Word:
        """The program's output on `word` (unseen tokens read as UNK), by the reference walker."""
        index, unk = self.index, self.unk
        ids = [index.get(t, unk) for t in word]
        tags = [0] * len(ids)
        for p in self._checked:
            ids, tags = walk_word(p, ids, tags)
        tokens = self.tokens
        return tuple(tokens[i] for i in ids)

    # -- many words

    def apply_many(self, words: Iterable[Sequence[Token]], walker: str | None = None) -> list[Word]:
        """`apply` on each word, through the batch path (see `outputs`)."""
        return self.outputs(words, walker).words()

    def outputs(self, words: Iterable[Sequence[Token]], walker: str | None = None) -> Outputs:
        """The outputs of `apply` on each word, kept flat (see `Outputs`). `walker`: one
        of WALKERS, for every word (tests); None: the compiled walker where it is built,
        else the reference for small batches and long words and numpy's for the rest."""
        words = words if isinstance(words, list) else list(words)
        unk = self.tokens[self.unk]
        if walker not in (None, *WALKERS):
            raise ValueError(f"no walker {walker!r}; one of {', '.join(WALKERS)}")
        if walker == "word" or (walker is None and len(words) < SMALL_BATCH):
            return Outputs.of([self.apply(w) for w in words], unk)
        if walker == "compiled" or (walker is None and self._batch_walker is not None):
            return self._compiled_outputs(words)
        if walker is None and words and max(map(len, words)) > LONG_WORD:
            out: list[Word | None] = [None] * len(words)
            for k, w in enumerate(words):
                if len(w) > LONG_WORD:
                    out[k] = self.apply(w)
            rest = [k for k in range(len(words)) if out[k] is None]
            for k, got in zip(rest, self._numpy_outputs([words[k] for k in rest]).words()):
                out[k] = got
            return Outputs.of(out, unk)  # type: ignore[arg-type]
        return self._numpy_outputs(words)

    def _ids(self, words: Sequence[Sequence[Token]]) -> Iterable[int]:
        # Token -> index in C (a dict whose missing keys are UNK), not a Python loop.
        return map(self._lookup.__getitem__, chain.from_iterable(words))

    def _numpy_outputs(self, words: Sequence[Sequence[Token]]) -> Outputs:
        np, token_array, _ = self._numpy
        lens = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
        tok = np.fromiter(self._ids(words), np.int32, int(lens.sum()))
        starts = np.zeros(len(words) + 1, dtype=np.int64)
        np.cumsum(lens, out=starts[1:])
        tok, starts = self.walk_ids(tok, starts)
        unk = tok == self.unk
        with_unk = sorted(set((np.searchsorted(starts, np.nonzero(unk)[0], side="right") - 1).tolist()))
        return Outputs(token_array[tok].tolist(), starts.tolist(), with_unk)

    def _compiled_outputs(self, words: Sequence[Sequence[Token]]) -> Outputs:
        walker = self._batch_walker
        if walker is None:
            raise ValueError("the compiled walker is not built")
        bounds = array("q", [0])
        bounds.extend(accumulate(map(len, words)))
        try:
            out_ids, out_bounds = walker.walk_words(array("i", self._ids(words)), bounds)
        except ValueError as exc:  # ("damaged tables: a template reads outside the word")
            raise Error(str(exc)) from None
        ids, ends = array("i", out_ids), array("q", out_bounds)
        with_unk = []
        if self.unk in ids:
            with_unk = [k for k in range(len(words)) if self.unk in ids[ends[k] : ends[k + 1]]]
        return Outputs(list(map(self.tokens.__getitem__, ids)), ends.tolist(), with_unk)

    @cached_property
    def _batch_walker(self) -> "_walk.Walker | None":
        """The compiled walker for `outputs` (None where it is not built)."""
        return self.compiled([True] * len(self.tokens))

    @cached_property
    def _numpy(self) -> tuple[Any, Any, tuple["BatchPass", ...]]:
        """numpy, imported now, the token array and the passes ready for batches."""
        import numpy as np

        # (Imported here: its module costs a fortieth of a one-word `apply`, which the
        # compiled walker runs without it.)
        from fstsynth.batch_walker import BatchPass

        return np, np.array(self.tokens, dtype=object), tuple(BatchPass.of(np, p.numpy()) for p in self.passes)

    def walk_ids(self, tok: "np.ndarray", starts: "np.ndarray") -> tuple["np.ndarray", "np.ndarray"]:
        """The outputs of a batch given as token indices (int32, the words one after the
        other; word k is `tok[starts[k] : starts[k + 1]]`), in the same form, by the
        numpy walker (`fstsynth.batch_walker.walk_batch`)."""
        from fstsynth.batch_walker import walk_batch

        np, _, passes = self._numpy
        return walk_batch(np, passes, tok, starts)

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
        passes = compiled_fields(self.passes)
        if passes is None:
            return None
        try:
            return _walk.Walker([t.encode("utf-8") for t in self.tokens], self.unk, bytes(map(bool, seen)), passes)
        except ValueError as exc:
            raise Error(str(exc)) from None

    # -- saving and loading

    def arrays(self, prefix: str = "") -> dict[str, Array]:
        """Every pass's arrays (see `fstsynth.table_format.pass_arrays`)."""
        return pass_arrays(self.passes, prefix)

    @classmethod
    def from_arrays(
        cls, tokens: Sequence[Token], arrays: Mapping[str, Array], count: int, prefix: str = "",
        compact: bool = True, mask_numbers: bool = True,
    ) -> "Tables":
        """The tables saved by `arrays` (with `count` passes; `compact`: their steps in
        the compact form of format version 6 on; `mask_numbers`: their masks kept once,
        a number per state, version 7 on); Error if any is missing, of the wrong type
        or shape, or out of range."""
        return cls(tokens, passes_from_arrays(arrays, count, prefix, compact, mask_numbers))


def check_ranges(t: PassTables, tokens: int, next_tags: int) -> None:
    """Error if a pass's arrays are not of the shapes, or not in the ranges, that
    `fstsynth.table_format.CheckedPass` checks (the same checks, on the arrays' bytes:
    no list of their values is made, nor numpy imported)."""
    rules = t.rules
    words = (rules + 63) // 64 or 1

    def within(a: Array, bound: int, what: str) -> None:
        values = _values(a)
        need(len(values) > 0 and min(values) >= 0 and max(values) < bound, what)

    def two_d(a: Array) -> tuple[int, int]:
        return (a.shape[0], a.shape[1]) if len(a.shape) == 2 else (0, 0)

    classes, class_words = two_d(t.class_mask)
    need(classes >= 1 and class_words == words, "class masks")
    tags, symbols = two_d(t.symbol_class)
    need(tags >= 1 and symbols == tokens, "symbol classes")
    within(t.symbol_class, classes, "symbol classes")
    for name in ("left", "right"):
        nxt, mask = getattr(t, f"{name}_next"), getattr(t, f"{name}_mask")
        row, column = getattr(t, f"{name}_row"), getattr(t, f"{name}_column")
        states = row.shape[0] if len(row.shape) == 1 else 0
        rows, groups = two_d(nxt)
        need(states >= 1 and groups >= 1 and rows >= 1, f"{name} automaton")
        within(nxt, states, f"{name} automaton")
        need(row.shape == (states,), f"{name} automaton")
        within(row, rows, f"{name} automaton")
        need(column.shape == (classes,), f"{name} automaton")
        within(column, groups, f"{name} automaton")
        masks, mask_words = two_d(mask)
        need(masks >= 1 and mask_words == words, f"{name} masks")
        mask_of = getattr(t, f"{name}_mask_of")
        need(mask_of.shape == (states,), f"{name} masks")
        within(mask_of, masks, f"{name} masks")
        start = getattr(t, f"{name}_start")
        need(0 <= start < states, f"{name} states")
    need(t.start_mask.shape == (words,), "start mask")
    checked_templates(t, tokens)
    need(t.out_tag.shape == (rules + 1,), "output tags")
    within(t.out_tag, next_tags, "output tags")


def _values(a: Array) -> "memoryview | list[int]":
    """The values of an int32 array, without a list of them where the bytes are in
    this machine's order."""
    if sys.byteorder == "little" and a.dtype == "<i4":
        return memoryview(a.data).cast("i")
    return a.flat()


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
