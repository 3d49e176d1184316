"""The compiler: a program becomes, pass by pass, a bimachine and its transducers.

Public API:
    UNK, Error, TimeLimitError, CompositionTooLargeError
    compile_program(program, alphabet, features, *, deadline=None) -> Compiled
    Compiled: program, tokens, machines (one `PassMachine` per pass), transducers,
        seconds; tables() -> fstsynth.tables.Tables (the apply machinery)
    Transducers: stages, stage_pass, stage_keys(prefix), symbols, labels, tokens;
        apply(word), map_unknown(word), pass_transducers(), composed(), token_symbols()
    program_tokens(program, alphabet), compose_passes(stages, symbols),
    transduce(fst, labels, tokens, word), word_acceptor(labels), arc_count(fst),
    fst_from_arcs(...)

Each pass is first compiled into a bimachine (`fstsynth.bimachine`): a left automaton,
a right automaton and rule masks, whose first common rule is the decision at each
position. The apply tables are that bimachine as arrays. The pass's transducers are
built from it, arc by arc with numpy (OpenFst's binary format, read by Pynini), in
*stages* applied one after the other:
- a pass that looks right of the position (a rule tests an offset > 0 or a tier to the
  right) has two: an *annotator* reading the pass input and writing each symbol
  annotated with what lies right of it (which rules' right tests hold there, and the
  tokens copies read there), preceded by an annotation of the start position; and a
  *decider*, deterministic, reading the annotated symbols left to right and writing the
  pass output. The annotator guesses, at each symbol, the state of the right automaton
  after it and checks the guess on the next symbol (it is the right automaton read
  backwards), so exactly one of its paths accepts a word;
- a pass that does not look right has the decider alone, reading the pass input.
Every stage maps strings to strings; between passes flow tokens tagged with the
transformation that made them (`a<Delete(x)>`) where a later pass tests it. Two stages
rather than one transducer: the single transducer of a pass with many right contexts
is, minimal and deterministic over symbol pairs, the product of what is remembered
about the left and what is guessed about the right (a 53-rule benchmark pass: 26,689
states and 1.1M arcs, 13-40 s to build through rewrite rules; its stages have 1,428
and 801 states, built in about a second) and the stages keep them apart. Stages are
not always smaller than one transducer per pass: a decider has an arc per left state
and annotated symbol, a dense product, where a minimal transducer may merge much.
`Transducers.pass_transducers()` and `composed()` build one transducer per pass, and
for the whole program, on request (exports): the annotator determinized, composed with
its decider, optimized.

A token never seen in training is read as `UNK` (`<unk>`), an ordinary symbol with no
features that matches no `IsToken`; the interpreter is run on the same mapped word, so
every backend means the same thing.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

import numpy as np
import pynini

from fstsynth.bimachine import (
    PassMachine,
    TimeLimitError,
    build_pass_machine,
    check_deadline,
    group_rows,
    pass_tags,
    program_tokens,
)
from fstsynth.dsl import Program, Transformation
from fstsynth.errors import UserError
from fstsynth.progress import report
from fstsynth.table_format import CONSTANT, UNK, lowest_rules
from fstsynth.tables import Tables
from fstsynth.types import Token, Word, Features

__all__ = [
    "UNK", "Error", "TimeLimitError", "CompositionTooLargeError", "Compiled", "Transducers",
    "compile_program", "program_tokens", "compose_passes", "transduce", "word_acceptor",
    "arc_count", "fst_from_arcs",
]

EPSILON = "<eps>"
START_SYMBOL = "<s>"

_ONE = pynini.Weight.one("tropical")


class Error(Exception):
    """A word cannot be transduced (internal: every stage should be total)."""


# ------------------------------------------------------------------ symbols


class _Symbols:
    """The symbol table: epsilon, then the tokens (label = token index + 1), then the
    symbols between stages (tagged and annotated tokens), named for printing."""

    def __init__(self, tokens: Sequence[Token]) -> None:
        self.table = pynini.SymbolTable()
        self.table.add_symbol(EPSILON, 0)
        for tok in tokens:
            self.table.add_symbol(tok)
        self._internal: dict[object, int] = {}

    def token(self, index: int) -> int:
        return index + 1

    def internal(self, key: object, name: str) -> int:
        """A label for the internal symbol `key`, printed `name` (made unique)."""
        label = self._internal.get(key)
        if label is None:
            label = self.table.available_key()
            text = "".join(name.split())  # AT&T text and symbol files split on spaces
            while self.table.find(text) != -1:
                text += "'"
            self.table.add_symbol(text, label)
            self._internal[key] = label
        return label

    def symbol(self, tokens: Sequence[Token], token: int, tag: Transformation | None) -> int:
        """A token as it flows into a pass: plain, or tagged with the transformation
        that made it (which that pass tests)."""
        if tag is None:
            return self.token(token)
        return self.internal(("tagged", tokens[token], tag), f"{tokens[token]}<{tag}>")


# ------------------------------------------------------------------ building FSTs


def fst_from_arcs(
    states: int,
    start: int,
    finals: Iterable[int],
    src: np.ndarray,
    ilabel: np.ndarray,
    olabel: np.ndarray,
    dst: np.ndarray,
) -> pynini.Fst:
    """An unweighted FST from arc arrays, written in OpenFst's binary vector format and
    read by Pynini: about a microsecond an arc, where adding arcs one by one from
    Python costs two."""
    src = np.asarray(src, dtype=np.int64)
    order = np.argsort(src, kind="stable")
    src = src[order]
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
    words[at] = np.asarray(ilabel, dtype=np.int64)[order]
    words[at + 1] = np.asarray(olabel, dtype=np.int64)[order]
    words[at + 3] = np.asarray(dst, dtype=np.int64)[order]
    return pynini.Fst.read_from_string(head + words.tobytes())


class _Arcs:
    """Arcs collected for one stage, and its number of states."""

    def __init__(self, states: int) -> None:
        self.states = states
        self.parts: list[tuple[np.ndarray, ...]] = []

    def add(self, src: np.ndarray, ilabel: np.ndarray, olabel: np.ndarray, dst: np.ndarray) -> None:
        self.parts.append((np.asarray(src), np.asarray(ilabel), np.asarray(olabel), np.asarray(dst)))

    def fst(self, start: int, finals: Iterable[int]) -> pynini.Fst:
        empty = np.zeros(0, dtype=np.int64)
        cols = [np.concatenate([p[k] for p in self.parts]) if self.parts else empty for k in range(4)]
        return fst_from_arcs(self.states, start, finals, *cols)


# ------------------------------------------------------------------ the stages of a pass


@dataclass(frozen=True)
class _Read:
    """What a decider reads: input labels, and per label the symbol (tag, token), its
    class, the right-side mask (rules whose right test holds, and whose test at
    offset 0 holds for the class) and the tokens copies read to the right."""

    labels: np.ndarray
    token: np.ndarray
    tag: np.ndarray
    cls: np.ndarray
    mask: np.ndarray  # uint64 words per label
    copies: list[dict[int, int]]


def _annotator(m: PassMachine, number: int, syms: _Symbols) -> tuple[pynini.Fst, _Read, _Read]:
    """The right annotator of a pass (see the module docstring), and what its decider
    then reads: the annotated symbols, and the annotated start symbols.

    A symbol's annotation is what its decider needs from the right: the decision it
    would take in every left state (right states that agree on that share one
    annotation, whatever their masks), and the tokens those decisions copy from the
    right."""
    t = m.tables.numpy()
    tokens = len(m.tokens)
    rights = t.right_next.shape[0]
    copy_offsets = m.right_copy_offsets
    sym_class = t.symbol_class.reshape(-1)
    src, ilab, olab, dst = [], [], [], []
    read_labels, read_token, read_tag, read_cls, read_mask, read_copies = [], [], [], [], [], []
    for c in range(t.class_mask.shape[0]):
        masks = t.class_mask[c][None, :] & t.right_mask  # per right state
        kinds, first = _annotations(m, lowest_rules(np, t.left_mask[:, None, :] & masks[None, :, :], t.rules), False)
        members = np.nonzero(sym_class == c)[0]
        labels = np.zeros((len(members), len(first)), dtype=np.int64)
        for j, v in enumerate(members.tolist()):
            tag, tok = divmod(v, tokens)
            in_label = syms.symbol(m.tokens, tok, m.in_tags[tag])
            name = syms.table.find(in_label)
            for a, rho in enumerate(first):
                label = syms.internal(("annotated", number, v, c, a), f"{name}<p{number}:{c}.{a}>")
                labels[j, a] = label
                read_labels.append(label)
                read_token.append(tok)
                read_tag.append(tag)
                read_cls.append(c)
                read_mask.append(masks[rho])
                read_copies.append({k: int(m.right_copy[rho, n]) for n, k in enumerate(copy_offsets)})
            # One arc per right state after the symbol: from the state before it.
            src.append(t.right_next[:, c].astype(np.int64) + 1)
            ilab.append(np.full(rights, in_label))
            olab.append(labels[j, kinds])
            dst.append(np.arange(rights) + 1)
    # The start: guess the right state of the start position, write its annotation.
    masks = t.start_mask[None, :] & t.right_mask
    decisions = lowest_rules(np, t.left_mask[t.left_start][None, None, :] & masks[None, :, :], t.rules)
    kinds, first = _annotations(m, decisions, True)
    s_labels = [syms.internal(("start", number, a), f"<s><p{number}:{a}>") for a in range(len(first))]
    src.append(np.zeros(rights, dtype=np.int64))
    ilab.append(np.zeros(rights, dtype=np.int64))
    olab.append(np.array(s_labels, dtype=np.int64)[kinds])
    dst.append(np.arange(rights) + 1)
    arcs = _Arcs(rights + 1)
    arcs.add(*(np.concatenate(x) for x in (src, ilab, olab, dst)))
    fst = arcs.fst(0, [t.right_start + 1])
    words = t.class_mask.shape[1]
    read = _Read(
        np.array(read_labels, dtype=np.int64), np.array(read_token, dtype=np.int64),
        np.array(read_tag, dtype=np.int64), np.array(read_cls, dtype=np.int64),
        np.array(read_mask, dtype=np.uint64).reshape(-1, words), read_copies,
    )
    start = _Read(
        np.array(s_labels, dtype=np.int64), np.zeros(len(first), dtype=np.int64),
        np.zeros(len(first), dtype=np.int64), np.zeros(len(first), dtype=np.int64),
        masks[first].reshape(-1, words),
        [{k: int(m.right_copy[rho, n]) for n, k in enumerate(copy_offsets)} for rho in first],
    )
    return fst, read, start


def _annotations(m: PassMachine, decisions: np.ndarray, at_start: bool) -> tuple[np.ndarray, list[int]]:
    """Group right states by what a decider needs of them: `decisions[left, right]`
    and the tokens at the right offsets those decisions copy. Returns the group of
    each right state and a representative right state per group."""
    t = m.tables.numpy()
    columns = [decisions.T]
    for n, offset in enumerate(m.right_copy_offsets):
        reads = np.array([
            any(kind != CONSTANT and value == offset for kind, value in m.template(d, at_start))
            for d in range(t.rules + 1)
        ])
        needed = reads[decisions].any(axis=0)
        columns.append(np.where(needed, m.right_copy[:, n], -2)[:, None])
    return group_rows(np.concatenate(columns, axis=1))


def _plain_decider(m: PassMachine, syms: _Symbols, out_label: np.ndarray, deadline: float | None) -> pynini.Fst:
    """The decider of a pass that does not look right: the pass in one transducer."""
    return _decider(m, _plain_reads(m, syms), None, out_label, deadline)


def _plain_reads(m: PassMachine, syms: _Symbols) -> _Read:
    """What the decider of a pass that does not look right reads: the pass input."""
    t = m.tables.numpy()
    tokens, tags = len(m.tokens), len(m.in_tags)
    tag, tok = np.divmod(np.arange(tokens * tags), tokens)
    cls = t.symbol_class.reshape(-1).astype(np.int64)
    labels = np.array([syms.symbol(m.tokens, int(k), m.in_tags[int(g)]) for g, k in zip(tag, tok)], dtype=np.int64)
    mask = t.class_mask[cls] & t.right_mask[t.right_start]
    return _Read(labels, tok, tag, cls, mask, [{} for _ in range(len(labels))])


#: Mask words a pass's decider works on at once (left states x read symbols x mask
#: words): bounds its memory (4,000,000 words, 32 MB, per array); a bigger pass is
#: decided a block of read symbols at a time, with the same transducer.
DECIDER_BLOCK_CELLS = 4_000_000


def _decider(
    m: PassMachine,
    reads: _Read,
    start_reads: _Read | None,
    out_label: np.ndarray,
    deadline: float | None,
) -> pynini.Fst:
    """The deterministic decider of a pass: state = left automaton state; reading a
    symbol (annotated or not), it writes the decision's output and moves on.

    `out_label[token, tag]`: the label a token written with a tag has for the next pass
    (the token itself after the last pass). `start_reads`: the annotated start symbols
    (None: the pass does not look right; the start position's output is then written
    first, on epsilon-input arcs)."""
    t = m.tables.numpy()
    lefts, count = t.left_next.shape[0], len(reads.labels)
    q0 = lefts  # the start state, before the start position
    arcs = _Arcs(lefts + 1)
    tails: dict[tuple[int, ...], int] = {(): -1}
    tail_list: list[tuple[int, ...]] = []

    def realize(
        d: int, at_start: bool, token: int, left: Mapping[int, int], right: Mapping[int, int]
    ) -> tuple[int, int]:
        """The decision's output as (first label or 0, tail id or -1)."""
        tag = int(t.out_tag[d])
        out = []
        for kind, value in m.template(d, at_start):
            if kind == CONSTANT:
                tok = value
            elif value == 0:
                tok = token
            else:
                tok = left[value] if value < 0 else right[value]
            out.append(int(out_label[tok, tag]))
        tail = tuple(out[1:])
        if tail not in tails:
            tails[tail] = len(tail_list)
            tail_list.append(tail)
        return (out[0] if out else 0), tails[tail]

    reads_left = np.array(
        [any(kind != CONSTANT and value < 0 for kind, value in m.template(d, False)) for d in range(t.rules + 1)]
    )
    src_parts, il_parts, ol_parts, dst_parts, tail_parts = [], [], [], [], []
    # Decisions of every (left state, read symbol), a block of symbols at a time.
    block = max(1, DECIDER_BLOCK_CELLS // max(1, lefts * t.left_mask.shape[1]))
    lam = np.arange(lefts)
    for lo in range(0, count, block):
        check_deadline(deadline)
        hi = min(count, lo + block)
        decision = lowest_rules(np, t.left_mask[:, None, :] & reads.mask[None, lo:hi, :], t.rules)  # [left, read]
        width = hi - lo
        first = np.zeros((lefts, width), dtype=np.int64)
        tail = np.zeros((lefts, width), dtype=np.int64)
        plain = ~reads_left[decision]
        # Outputs that depend on the decision and the symbol only: once per pair.
        codes = decision * width + np.arange(width)[None, :]
        unique, inverse = np.unique(codes[plain], return_inverse=True)
        outs = [
            realize(int(code // width), False, int(reads.token[lo + code % width]), {}, reads.copies[lo + code % width])
            for code in unique.tolist()
        ]
        if outs:
            first[plain] = np.array([o[0] for o in outs], dtype=np.int64)[inverse]
            tail[plain] = np.array([o[1] for o in outs], dtype=np.int64)[inverse]
        # Outputs copying from the left depend on the tokens the left state holds too:
        # once per (decision, symbol, those tokens).
        states, cells = np.nonzero(~plain)
        if len(states):
            check_deadline(deadline)
            key = np.concatenate(
                [decision[states, cells][:, None], cells[:, None], m.left_copy[states].astype(np.int64)], axis=1
            )
            groups, firsts = group_rows(key)
            outs = []
            for row in key[firsts].tolist():
                left = {k: row[2 + n] for n, k in enumerate(m.left_copy_offsets)}
                outs.append(realize(row[0], False, int(reads.token[lo + row[1]]), left, reads.copies[lo + row[1]]))
            first[states, cells] = np.array([o[0] for o in outs], dtype=np.int64)[groups]
            tail[states, cells] = np.array([o[1] for o in outs], dtype=np.int64)[groups]
        src_parts.append(np.repeat(lam, width))
        il_parts.append(np.tile(reads.labels[lo:hi], lefts))
        ol_parts.append(first.reshape(-1))
        dst_parts.append(t.left_next[:, reads.cls[lo:hi]].astype(np.int64).reshape(-1))
        tail_parts.append(tail.reshape(-1))
    # The start position.
    if start_reads is None:
        d = int(lowest_rules(np, t.left_mask[t.left_start] & t.start_mask & t.right_mask[t.right_start], t.rules))
        starts = [(0, *realize(d, True, -1, {}, {}))]
    else:
        ds = lowest_rules(np, t.left_mask[t.left_start][None, :] & start_reads.mask, t.rules)
        starts = [
            (int(start_reads.labels[k]), *realize(d, True, -1, {}, start_reads.copies[k]))
            for k, d in enumerate(ds.tolist())
        ]
    src_parts.append(np.full(len(starts), q0))
    il_parts.append(np.array([s[0] for s in starts], dtype=np.int64))
    ol_parts.append(np.array([s[1] for s in starts], dtype=np.int64))
    dst_parts.append(np.full(len(starts), t.left_start))
    tail_parts.append(np.array([s[2] for s in starts], dtype=np.int64))
    src, il, ol, dst, tail_id = (np.concatenate(x) for x in (src_parts, il_parts, ol_parts, dst_parts, tail_parts))
    check_deadline(deadline)
    _chains(arcs, tail_list, tail_id, dst)
    arcs.add(src, il, ol, dst)
    return arcs.fst(q0, range(lefts))


def _chains(arcs: _Arcs, tails: Sequence[tuple[int, ...]], tail_id: np.ndarray, dst: np.ndarray) -> None:
    """Give every arc with a tail (more output labels) a chain of epsilon-input arcs
    writing them on the way to its target; arcs with the same tail and target share
    one. `dst` is updated in place to the chains' first states."""
    has = tail_id >= 0
    if not has.any():
        return
    pairs, inverse = np.unique(np.stack([tail_id[has], dst[has]], axis=1), axis=0, return_inverse=True)
    lengths = np.array([len(tails[k]) for k in pairs[:, 0].tolist()], dtype=np.int64)
    base = arcs.states + np.cumsum(lengths) - lengths
    arcs.states += int(lengths.sum())
    dst[has] = base[inverse.reshape(-1)]
    labels = np.concatenate([np.array(tails[k], dtype=np.int64) for k in pairs[:, 0].tolist()])
    step = np.arange(int(lengths.sum())) - np.repeat(base - base[0], lengths)
    chain_src = np.repeat(base, lengths) + step
    last = step == np.repeat(lengths, lengths) - 1
    chain_dst = np.where(last, np.repeat(pairs[:, 1], lengths), chain_src + 1)
    arcs.add(chain_src, np.zeros_like(chain_src), labels, chain_dst)


# ------------------------------------------------------------------ whole programs


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


@dataclass(frozen=True, eq=False)
class Compiled:
    """A compiled program: per pass its bimachine (`machines`), the transducers built
    from them, over the program's sorted token alphabet `tokens` (UNK included)."""

    program: Program
    tokens: tuple[Token, ...]
    machines: tuple[PassMachine, ...]
    transducers: Transducers
    seconds: float

    def tables(self) -> Tables:
        """The apply machinery: the machines as arrays (`fstsynth.tables`)."""
        return Tables(self.tokens, [m.tables for m in self.machines])

    # The reference path, through the transducers (kept short for tests and scripts).
    def apply(self, word: Sequence[Token]) -> Word:
        return self.transducers.apply(word)

    def map_unknown(self, word: Sequence[Token]) -> Word:
        return self.transducers.map_unknown(word)


def compile_program(
    program: Program,
    alphabet: Iterable[Token],
    features: Features,
    *,
    deadline: float | None = None,
) -> Compiled:
    """Compile `program` over `alphabet` (every token it may read or write, plus UNK).

    `deadline` (a `time.monotonic()` value) bounds the work: past it, the compiler
    raises `TimeLimitError`. Progress is reported as stage "compiling rule" (rules done
    of the program's rules, as each pass is finished; `fstsynth.progress`).
    """
    started = time.perf_counter()
    tokens = tuple(sorted(program_tokens(program, alphabet)))
    syms = _Symbols(tokens)
    tags = pass_tags(program)
    total = program.rule_count
    done = 0
    machines: list[PassMachine] = []
    stages: list[pynini.Fst] = []
    stage_pass: list[int] = []
    for k, pass_ in enumerate(program.passes):
        report("compiling rule", done, total, f"pass {k + 1}")
        m = build_pass_machine(pass_, tokens, tags[k], tags[k + 1], features, deadline=deadline)
        last = k == len(program.passes) - 1
        out_label = np.array(
            [[syms.symbol(tokens, tok, None if last else tags[k + 1][g]) for g in range(len(tags[k + 1]))]
             for tok in range(len(tokens))],
            dtype=np.int64,
        )
        if m.looks_right:
            annotator, reads, start_reads = _annotator(m, k + 1, syms)
            check_deadline(deadline)
            # Two stages, not their composition: composing and optimizing even a small
            # pass's stages costs more compile time than the arcs it saves (measured
            # on the dev programs: up to 1.5 s more per pass, 0-30% fewer arcs).
            found = [annotator, _decider(m, reads, start_reads, out_label, deadline)]
        else:
            check_deadline(deadline)
            found = [_plain_decider(m, syms, out_label, deadline)]
        stages += found
        stage_pass += [k + 1] * len(found)
        machines.append(m)
        done += len(pass_.rules)
    report("compiling rule", total, total, "done")
    if not stages:  # the empty program: the identity
        labels = np.arange(1, len(tokens) + 1)
        stages.append(fst_from_arcs(1, 0, [0], np.zeros(len(tokens)), labels, labels, np.zeros(len(tokens))))
        stage_pass.append(1)
    for fst in stages:
        fst.arcsort("ilabel")
    transducers = Transducers(tuple(stages), tuple(stage_pass), syms.table, tokens)
    return Compiled(program, tokens, tuple(machines), transducers, time.perf_counter() - started)


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
