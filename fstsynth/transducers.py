"""A program's transducers: the stages the compiler builds, one transducer per pass
and their composition on request, and running them on a word (the reference path).

Public API:
    EPSILON, Error, CompositionTooLargeError
    Transducers: stages, stage_pass, stage_keys(prefix), symbols, labels, tokens;
        apply(word), map_unknown(word), pass_transducers(), pass_transducer(k),
        pass_states_bound(k), composed(), token_symbols()
    compose_passes(passes, symbols), transduce(fst, labels, tokens, word),
    word_acceptor(labels), arc_count(fst), fst_from_arcs(...)
    MAX_COMPOSED_STATES_BOUND, MAX_PASS_STATES_BOUND, OPTIMIZE_STATES_LIMIT

How the stages of a pass are built from its bimachine is `fstsynth.compiler`'s part;
this module only holds and combines them. A model read from disk has its stages from
the model's FAR (`fstsynth.model_file`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np
import pynini

from fstsynth.errors import UserError
from fstsynth.table_format import UNK
from fstsynth.types import Token, Word

EPSILON = "<eps>"


class Error(Exception):
    """A word cannot be transduced (internal: every stage should be total)."""


# ------------------------------------------------------------------ building FSTs


def fst_from_arcs(
    states: int,
    start: int,
    finals: Iterable[int],
    src: np.ndarray,
    ilabel: np.ndarray,
    olabel: np.ndarray,
    dst: np.ndarray,
    check: Callable[[], None] = lambda: None,
) -> pynini.Fst:
    """An unweighted FST from arc arrays, written in OpenFst's binary vector format and
    read by Pynini: about a microsecond an arc, where adding arcs one by one from
    Python costs two. `check` is called between the phases (each linear in the arcs)
    so that a caller's deadline is read while a large stage is built; Pynini's read is
    the last phase and one step (measured: 0.1 CPU µs an arc)."""
    src = np.asarray(src, dtype=np.int64)
    order = np.argsort(src, kind="stable")
    src = src[order]
    check()
    counts = np.bincount(src, minlength=states).astype(np.int64)
    head = b"".join([
        b"\xd6\xfd\xb2\x7e",  # the FST magic number
        (6).to_bytes(4, "little"), b"vector",
        (8).to_bytes(4, "little"), b"standard",
        (2).to_bytes(4, "little"),  # version
        (0).to_bytes(4, "little"),  # flags: no symbol tables
        (3).to_bytes(8, "little"),  # properties known: expanded, mutable
        int(start).to_bytes(8, "little", signed=True),
        int(states).to_bytes(8, "little"),
        (0).to_bytes(8, "little"),
    ])
    # Per state: final weight (float32), arc count (int64); per arc: ilabel, olabel
    # (int32), weight (float32), next state (int32); all 4-byte words.
    words = np.zeros(3 * states + 4 * len(src), dtype="<i4")
    offsets = np.zeros(states, dtype=np.int64)
    if states > 1:
        np.cumsum(3 + 4 * counts[:-1], out=offsets[1:])
    final = np.full(states, np.inf, dtype="<f4")
    final[np.fromiter(finals, dtype=np.int64)] = 0.0
    words[offsets] = final.view("<i4")
    words[offsets + 1] = (counts & 0xFFFFFFFF).astype("<i4")
    words[offsets + 2] = (counts >> 32).astype("<i4")
    first = np.zeros(states, dtype=np.int64)
    if states > 1:
        np.cumsum(counts[:-1], out=first[1:])
    at = offsets[src] + 3 + 4 * (np.arange(len(src)) - first[src])
    check()
    words[at] = np.asarray(ilabel, dtype=np.int64)[order]
    words[at + 1] = np.asarray(olabel, dtype=np.int64)[order]
    words[at + 3] = np.asarray(dst, dtype=np.int64)[order]
    check()
    data = head + words.tobytes()
    check()
    return pynini.Fst.read_from_string(data)


# ------------------------------------------------------------------ a program's transducers


@dataclass(frozen=True, eq=False)
class Transducers:
    """A program's transducers: `stages`, applied one after the other (each maps
    strings to strings over `symbols`), `stage_pass[k]` the pass (1-based) stage k
    belongs to. `tokens` are the word tokens among the symbols (UNK included)."""

    stages: tuple[pynini.Fst, ...]
    stage_pass: tuple[int, ...]
    symbols: pynini.SymbolTable
    tokens: tuple[Token, ...]
    # Pass transducers and the composition, once built (composing a pass with many
    # right contexts takes seconds; exports and checks ask for them more than once).
    _built: dict[object, pynini.Fst] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        for fst in self.stages:
            fst.set_input_symbols(self.symbols)
            fst.set_output_symbols(self.symbols)

    @property
    def labels(self) -> dict[Token, int]:
        """Token -> label."""
        return {tok: self.symbols.find(tok) for tok in self.tokens}

    def stage_keys(self, prefix: str) -> list[str]:
        """FAR keys of the stages: `{prefix}.pass{k}.{j}` (j-th stage of pass k)."""
        keys: list[str] = []
        seen: dict[int, int] = {}
        for k in self.stage_pass:
            seen[k] = seen.get(k, 0) + 1
            keys.append(f"{prefix}.pass{k}.{seen[k]}")
        return keys

    def map_unknown(self, word: Sequence[Token]) -> Word:
        known = set(self.tokens)
        return tuple(t if t in known else UNK for t in word)

    def apply(self, word: Sequence[Token]) -> Word:
        """The output of the stages, one after the other, on `word` (the reference)."""
        mapped = self.map_unknown(word)
        labels = [self.symbols.find(t) for t in mapped]
        for fst in self.stages:
            found = _transduce_labels(fst, labels)
            if found is None:
                raise Error(f"the transducer gives no output for {' '.join(mapped)!r}")
            labels = found
        names = {self.symbols.find(t): t for t in self.tokens}
        try:
            return tuple(names[label] for label in labels)
        except KeyError:  # a stage wrote a symbol that is no token: a damaged transducer
            raise Error(f"the transducer writes a symbol that is not a token for {' '.join(mapped)!r}") from None

    def pass_transducers(self) -> list[pynini.Fst]:
        """One transducer per pass (see `pass_transducer`)."""
        return [self.pass_transducer(k) for k in sorted(set(self.stage_pass))]

    def pass_states_bound(self, k: int) -> int:
        """At most how many states pass k's one transducer has (product of its stages')."""
        return math.prod(f.num_states() for f, p in zip(self.stages, self.stage_pass) if p == k)

    def pass_transducer(self, k: int) -> pynini.Fst:
        """Pass k (1-based) as one transducer: its stages composed (the annotator
        determinized first, then composed with the decider, then optimized). Built on
        request (once; a copy each time): for a pass with many right contexts it is far
        larger than its stages."""
        if k not in self._built:
            self._built[k] = self._build_pass(k)
        return self._built[k].copy()

    def _build_pass(self, k: int) -> pynini.Fst:
        group = [fst for fst, p in zip(self.stages, self.stage_pass) if p == k]
        if not group:
            raise Error(f"no pass {k}")
        if len(group) == 1:
            return group[0]
        fst = group[0].copy().optimize()
        bound = math.prod(f.num_states() for f in [fst, *group[1:]])
        if bound > MAX_PASS_STATES_BOUND:
            raise CompositionTooLargeError(
                f"composing pass {k}'s transducers could need up to {bound:,} states, more than "
                f"the {MAX_PASS_STATES_BOUND:,} fstsynth builds"
            )
        for later in group[1:]:
            fst = pynini.compose(fst, later)
        fst = _optimized(fst)
        fst.arcsort("ilabel")
        fst.set_input_symbols(self.symbols)
        fst.set_output_symbols(self.symbols)
        return fst

    def composed(self) -> pynini.Fst:
        """All the passes composed into one transducer (see `compose_passes`; built
        once, a copy each time)."""
        if "composed" not in self._built:
            self._built["composed"] = compose_passes(self.pass_transducers(), self.symbols)
        return self._built["composed"].copy()

    def token_symbols(self) -> pynini.SymbolTable:
        """The table of word tokens alone (and epsilon): what a user's words are written in."""
        table = pynini.SymbolTable()
        table.add_symbol(EPSILON, 0)
        for tok in self.tokens:
            table.add_symbol(tok, self.symbols.find(tok))
        return table


# ------------------------------------------------------------------ using transducers


def arc_count(fst: pynini.Fst) -> int:
    """The number of arcs of `fst` (pynini counts them per state only)."""
    return sum(fst.num_arcs(state) for state in fst.states())


def word_acceptor(labels: Sequence[int]) -> pynini.Fst:
    n = len(labels)
    return fst_from_arcs(n + 1, 0, [n], np.arange(n), np.array(labels), np.array(labels), np.arange(1, n + 1))


#: The passes are not composed when the product of their states (which bounds the
#: composition's) exceeds this: a default-settings benchmark program with passes of
#: 61,867 and 286 states ran out of memory composing.
MAX_COMPOSED_STATES_BOUND = 5_000_000
#: The same for the stages of one pass (its annotator determinized, and its decider).
MAX_PASS_STATES_BOUND = 5_000_000

#: Compositions with more states than this are not optimized: determinizing over label
#: pairs is exponential in the worst case, and passes with right contexts reach it (a
#: 27k-state composition of a default-settings benchmark program passed 14 GB).
OPTIMIZE_STATES_LIMIT = 100_000


class CompositionTooLargeError(UserError):
    """The stages' composition could be too large to build (see `compose_passes`)."""


class StageTooLargeError(UserError):
    """A program's transducers were not built: one of its stages is too large."""


@dataclass(frozen=True)
class UnbuiltTransducers:
    """In place of a program's transducers when a stage would have more than
    `compiler.MAX_STAGE_ARCS` arcs; `reason` says which. Loading them (`fstsynth.model`'s
    `StoredTransducers`) raises `StageTooLargeError`."""

    reason: str

    def load(self) -> Transducers:
        raise StageTooLargeError(self.reason)


def compose_passes(passes: Sequence[pynini.Fst], symbols: pynini.SymbolTable) -> pynini.Fst:
    """The cascade: `passes` composed in order, optimized (determinized and minimized
    over label pairs, so that no state has two arcs with one label pair, which tools
    comparing transducers such as fstisomorphic need) unless it is larger than
    OPTIMIZE_STATES_LIMIT (then only epsilon-free), and arc-sorted.

    Refused (CompositionTooLargeError) when the product of the passes' states exceeds
    MAX_COMPOSED_STATES_BOUND: the passes themselves are the program, and can be used
    one after the other instead."""
    sizes = [fst.num_states() for fst in passes]
    bound = math.prod(max(size, 1) for size in sizes)
    if bound > MAX_COMPOSED_STATES_BOUND:
        raise CompositionTooLargeError(
            f"composing the {len(passes)} pass transducers ({' x '.join(f'{n:,}' for n in sizes)} "
            f"states) could need up to {bound:,} states, more than the {MAX_COMPOSED_STATES_BOUND:,} "
            "fstsynth builds"
        )
    cascade = passes[0]
    for fst in passes[1:]:
        cascade = pynini.compose(cascade, fst)
    cascade = _optimized(cascade)
    cascade.arcsort("ilabel")
    cascade.set_input_symbols(symbols)
    cascade.set_output_symbols(symbols)
    return cascade


def _optimized(fst: pynini.Fst) -> pynini.Fst:
    """`fst` optimized, or only epsilon-free when larger than OPTIMIZE_STATES_LIMIT."""
    if fst.num_states() <= OPTIMIZE_STATES_LIMIT:
        return fst.optimize()
    return fst.rmepsilon().connect()


def transduce(
    fst: pynini.Fst,
    labels: Mapping[Token, int],
    tokens: Mapping[int, Token],
    word: Sequence[Token],
) -> Word:
    """Run a (functional) transducer on one word of known tokens."""
    out = _transduce_labels(fst, [labels[t] for t in word])
    if out is None:
        raise Error(f"the transducer gives no output for {' '.join(word)!r}")
    return tuple(tokens[label] for label in out)


def _transduce_labels(fst: pynini.Fst, labels: Sequence[int]) -> list[int] | None:
    """The output labels of a functional transducer on `labels` (None: no output)."""
    lattice = pynini.compose(word_acceptor(labels), fst)
    if lattice.start() == pynini.NO_STATE_ID or lattice.num_states() == 0:
        return None
    path = pynini.shortestpath(lattice).topsort()
    if path.start() == pynini.NO_STATE_ID:
        return None
    out: list[int] = []
    state = path.start()
    while True:
        arcs = list(path.arcs(state))
        if not arcs:
            break
        arc = arcs[0]
        if arc.olabel:
            out.append(arc.olabel)
        state = arc.nextstate
    return out
