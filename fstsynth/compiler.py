"""The compiler: a program becomes, pass by pass, a bimachine and its transducers.

Public API:
    UNK, Error, TimeLimitError, CompositionTooLargeError
    compile_program(program, alphabet, features, *, deadline=None) -> Compiled
    Compiled: program, tokens, machines (one `PassMachine` per pass), stages (the
        transducers, or `UnbuiltTransducers` past `MAX_STAGE_ARCS` arcs a stage),
        transducers, seconds; tables() -> fstsynth.tables.Tables (the apply machinery)
    StageTooLargeError, UnbuiltTransducers, MAX_STAGE_ARCS
    program_tokens(program, alphabet)
    Transducers, compose_passes, transduce, word_acceptor, arc_count, fst_from_arcs:
        `fstsynth.transducers`'s, named here too (what holds, combines and runs the
        stages built here)

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

A program with a stage past `MAX_STAGE_ARCS` arcs (a decider has an arc per left state
and annotated symbol: tens of thousands of each in a deep orthography) gets its
bimachines, which applying it needs, and no transducers (`UnbuiltTransducers`).

A token never seen in training is read as `UNK` (`<unk>`), an ordinary symbol with no
features that matches no `IsToken`; the interpreter is run on the same mapped word, so
every backend means the same thing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Iterable, Iterator, Mapping, Sequence, TypeVar

import numpy as np
import pynini

from fstsynth.annotations import CHECK_EVERY, LeftRules, right_groups
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
from fstsynth.progress import report
from fstsynth.table_format import CONSTANT, UNK, lowest_rules
from fstsynth.tables import Tables
from fstsynth.transducers import (
    EPSILON,
    CompositionTooLargeError,
    Error,
    StageTooLargeError,
    Transducers,
    UnbuiltTransducers,
    arc_count,
    compose_passes,
    fst_from_arcs,
    transduce,
    word_acceptor,
)
from fstsynth.types import Token, Word, Features

T = TypeVar("T")

__all__ = [
    "UNK", "Error", "TimeLimitError", "CompositionTooLargeError", "StageTooLargeError", "Compiled",
    "Transducers", "UnbuiltTransducers", "MAX_STAGE_ARCS",
    "compile_program", "program_tokens", "compose_passes", "transduce", "word_acceptor",
    "arc_count", "fst_from_arcs",
]

START_SYMBOL = "<s>"

_ONE = pynini.Weight.one("tropical")


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


def _checked(items: list[T], deadline: float | None) -> Iterator[T]:
    """`items`, checking the deadline every `CHECK_EVERY` of them: a long loop would
    otherwise run far past it."""
    for start in range(0, len(items), CHECK_EVERY):
        check_deadline(deadline)
        yield from items[start:start + CHECK_EVERY]


class _Arcs:
    """Arcs collected for one stage, and its number of states."""

    def __init__(self, states: int) -> None:
        self.states = states
        self.parts: list[tuple[np.ndarray, ...]] = []

    def add(self, src: np.ndarray, ilabel: np.ndarray, olabel: np.ndarray, dst: np.ndarray) -> None:
        self.parts.append((np.asarray(src), np.asarray(ilabel), np.asarray(olabel), np.asarray(dst)))

    def fst(self, start: int, finals: Iterable[int], deadline: float | None) -> pynini.Fst:
        empty = np.zeros(0, dtype=np.int64)
        cols = [np.concatenate([p[k] for p in self.parts]) if self.parts else empty for k in range(4)]
        src, ilabel, olabel, dst = cols
        check_deadline(deadline)
        return fst_from_arcs(
            self.states, start, finals, src, ilabel, olabel, dst, check=lambda: check_deadline(deadline)
        )


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


class _TooManySymbols(Exception):
    """A decider would read more annotated symbols than allowed: at least `symbols`
    (all of them if `counted_all`)."""

    def __init__(self, symbols: int, counted_all: bool) -> None:
        super().__init__(symbols)
        self.symbols = symbols
        self.counted_all = counted_all


def _annotator(
    m: PassMachine, number: int, syms: _Symbols, deadline: float | None = None, most_symbols: int | None = None
) -> tuple[pynini.Fst, _Read, _Read]:
    """The right annotator of a pass (see the module docstring), and what its decider
    then reads: the annotated symbols, and the annotated start symbols. With more than
    `most_symbols` of those, `_TooManySymbols` before any arc or symbol is made, as
    soon as the classes annotated so far have more (a deep orthography's decider
    can be a hundred times past it: annotating every class would be wasted).

    A symbol's annotation is what its decider needs from the right: the decision it
    would take in every left state (right states that agree on that share one
    annotation, whatever their masks), and the tokens those decisions copy from the
    right."""
    t = m.tables.numpy()
    tokens = len(m.tokens)
    rights = m.tables.rights
    right_next = t.right_table()
    lefts = LeftRules(t.left_mask)
    # Right states share masks: each distinct one is annotated once per class (the
    # tables keep them once; grouped again, so that no reader relies on it).
    mask_group, mask_first = group_rows(t.right_mask)
    mask_of = mask_group[t.right_mask_of]
    right_masks = t.right_mask[mask_first]
    copy_offsets = m.right_copy_offsets
    sym_class = t.symbol_class.reshape(-1)
    src, ilab, olab, dst = [], [], [], []
    read_labels, read_token, read_tag, read_cls, read_mask, read_copies = [], [], [], [], [], []
    per_class = []
    symbols = 0
    for c in range(t.class_mask.shape[0]):
        check_deadline(deadline)
        masks = t.class_mask[c][None, :] & right_masks  # per distinct right mask
        per_class.append((masks, *right_groups(m, lefts, masks, False, deadline, mask_of)))
        symbols += int(np.count_nonzero(sym_class == c)) * len(per_class[-1][2])
        if most_symbols is not None and symbols > most_symbols and c + 1 < t.class_mask.shape[0]:
            raise _TooManySymbols(symbols, counted_all=False)
    start_masks = t.start_mask[None, :] & right_masks
    start_kinds, start_first = right_groups(
        m, LeftRules(t.left_mask[t.left_mask_of[t.left_start]][None, :]), start_masks, True, deadline, mask_of
    )
    symbols += len(start_first)
    if most_symbols is not None and symbols > most_symbols:
        raise _TooManySymbols(symbols, counted_all=True)
    for c, (masks, kinds, first) in enumerate(per_class):
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
                read_mask.append(masks[mask_of[rho]])
                read_copies.append({k: int(m.right_copy[rho, n]) for n, k in enumerate(copy_offsets)})
            # One arc per right state after the symbol: from the state before it.
            src.append(right_next[:, c].astype(np.int64) + 1)
            ilab.append(np.full(rights, in_label))
            olab.append(labels[j, kinds])
            dst.append(np.arange(rights) + 1)
    # The start: guess the right state of the start position, write its annotation.
    masks, kinds, first = start_masks, start_kinds, start_first
    s_labels = [syms.internal(("start", number, a), f"<s><p{number}:{a}>") for a in range(len(first))]
    src.append(np.zeros(rights, dtype=np.int64))
    ilab.append(np.zeros(rights, dtype=np.int64))
    olab.append(np.array(s_labels, dtype=np.int64)[kinds])
    dst.append(np.arange(rights) + 1)
    arcs = _Arcs(rights + 1)
    arcs.add(*(np.concatenate(x) for x in (src, ilab, olab, dst)))
    fst = arcs.fst(0, [t.right_start + 1], deadline)
    words = t.class_mask.shape[1]
    read = _Read(
        np.array(read_labels, dtype=np.int64), np.array(read_token, dtype=np.int64),
        np.array(read_tag, dtype=np.int64), np.array(read_cls, dtype=np.int64),
        np.array(read_mask, dtype=np.uint64).reshape(-1, words), read_copies,
    )
    start = _Read(
        np.array(s_labels, dtype=np.int64), np.zeros(len(first), dtype=np.int64),
        np.zeros(len(first), dtype=np.int64), np.zeros(len(first), dtype=np.int64),
        masks[mask_of[first]].reshape(-1, words),
        [{k: int(m.right_copy[rho, n]) for n, k in enumerate(copy_offsets)} for rho in first],
    )
    return fst, read, start


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
    mask = t.class_mask[cls] & t.right_mask[t.right_mask_of[t.right_start]]
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
    lefts, count = m.tables.lefts, len(reads.labels)
    left_next = t.left_table()
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
    # Decisions of every (left state, read symbol), a block of symbols at a time, on
    # the distinct left masks (left states with one mask decide alike).
    mask_group, left_first = group_rows(t.left_mask)
    left_group = mask_group[t.left_mask_of]
    left_masks = t.left_mask[left_first]
    block = max(1, DECIDER_BLOCK_CELLS // max(1, lefts * t.left_mask.shape[1]))
    lam = np.arange(lefts)
    for lo in range(0, count, block):
        check_deadline(deadline)
        hi = min(count, lo + block)
        decision = lowest_rules(np, left_masks[:, None, :] & reads.mask[None, lo:hi, :], t.rules)[left_group]
        width = hi - lo
        first = np.zeros((lefts, width), dtype=np.int64)
        tail = np.zeros((lefts, width), dtype=np.int64)
        plain = ~reads_left[decision]
        # Outputs that depend on the decision and the symbol only: once per pair.
        codes = decision * width + np.arange(width)[None, :]
        unique, inverse = np.unique(codes[plain], return_inverse=True)
        outs = [
            realize(int(code // width), False, int(reads.token[lo + code % width]), {}, reads.copies[lo + code % width])
            for code in _checked(unique.tolist(), deadline)
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
            check_deadline(deadline)
            outs = []
            for row in _checked(key[firsts].tolist(), deadline):
                left = {k: row[2 + n] for n, k in enumerate(m.left_copy_offsets)}
                outs.append(realize(row[0], False, int(reads.token[lo + row[1]]), left, reads.copies[lo + row[1]]))
            first[states, cells] = np.array([o[0] for o in outs], dtype=np.int64)[groups]
            tail[states, cells] = np.array([o[1] for o in outs], dtype=np.int64)[groups]
        src_parts.append(np.repeat(lam, width))
        il_parts.append(np.tile(reads.labels[lo:hi], lefts))
        ol_parts.append(first.reshape(-1))
        dst_parts.append(left_next[:, reads.cls[lo:hi]].astype(np.int64).reshape(-1))
        tail_parts.append(tail.reshape(-1))
    # The start position.
    if start_reads is None:
        at_start = t.left_mask[t.left_mask_of[t.left_start]] & t.start_mask
        d = int(lowest_rules(np, at_start & t.right_mask[t.right_mask_of[t.right_start]], t.rules))
        starts = [(0, *realize(d, True, -1, {}, {}))]
    else:
        ds = lowest_rules(np, t.left_mask[t.left_mask_of[t.left_start]][None, :] & start_reads.mask, t.rules)
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
    check_deadline(deadline)
    arcs.add(src, il, ol, dst)
    return arcs.fst(q0, range(lefts), deadline)


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


#: Most arcs a stage may have. Past it the program's transducers are not built (the
#: apply tables, which do not need them, are): a deep orthography's pass (French
#: spelling at 1,000 pairs: 25,014 left states x 4,724 annotated symbols, a decider of
#: 118M arcs) would take several GB and minutes to build.
MAX_STAGE_ARCS = 20_000_000


@dataclass(frozen=True, eq=False)
class Compiled:
    """A compiled program: per pass its bimachine (`machines`), the transducers built
    from them (`stages`; `UnbuiltTransducers` if too large), over the program's sorted
    token alphabet `tokens` (UNK included)."""

    program: Program
    tokens: tuple[Token, ...]
    machines: tuple[PassMachine, ...]
    stages: Transducers | UnbuiltTransducers
    seconds: float

    @property
    def transducers(self) -> Transducers:
        """The program's transducers; `StageTooLargeError` if they were not built."""
        if isinstance(self.stages, UnbuiltTransducers):
            return self.stages.load()
        return self.stages

    def tables(self) -> Tables:
        """The apply machinery: the machines as arrays (`fstsynth.tables`)."""
        return Tables(self.tokens, [m.tables for m in self.machines])

    # The reference path, through the transducers (kept short for tests and scripts).
    def apply(self, word: Sequence[Token]) -> Word:
        return self.transducers.apply(word)

    def map_unknown(self, word: Sequence[Token]) -> Word:
        return self.transducers.map_unknown(word)


def _too_large(number: int, stage: str, states: int, symbols: int, at_least: bool = False) -> str | None:
    """Why a stage of `states` x `symbols` arcs (`at_least`: symbols counted until past
    the limit) is not built, or None if it fits."""
    if states * symbols <= MAX_STAGE_ARCS:
        return None
    more = " or more" if at_least else ""
    return (
        f"pass {number}'s {stage} would have {states * symbols:,}{more} arcs ({states:,} states x {symbols:,}"
        f"{more} symbols), more than {MAX_STAGE_ARCS:,}: the program's transducers were not built "
        f"(applying the model does not need them; its transducer file and exports do)"
    )


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
    tokens = tuple(sorted(program_tokens(program, alphabet, features)))
    syms = _Symbols(tokens)
    tags = pass_tags(program)
    total = program.rule_count
    done = 0
    machines: list[PassMachine] = []
    stages: list[pynini.Fst] = []
    stage_pass: list[int] = []
    unbuilt: str | None = None  # why the transducers are not built (None: they are)
    for k, pass_ in enumerate(program.passes):
        report("compiling rule", done, total, f"pass {k + 1}")
        m = build_pass_machine(pass_, tokens, tags[k], tags[k + 1], features, deadline=deadline)
        machines.append(m)
        done += len(pass_.rules)
        t = m.tables.numpy()
        symbols, lefts = t.symbol_class.size, m.tables.lefts
        if unbuilt is None and m.looks_right:
            unbuilt = _too_large(k + 1, "annotator", m.tables.rights + 1, symbols + 1)
        elif unbuilt is None:
            unbuilt = _too_large(k + 1, "decider", lefts + 1, symbols + 1)
        if unbuilt is not None:
            continue
        last = k == len(program.passes) - 1
        out_label = np.array(
            [[syms.symbol(tokens, tok, None if last else tags[k + 1][g]) for g in range(len(tags[k + 1]))]
             for tok in range(len(tokens))],
            dtype=np.int64,
        )
        if m.looks_right:
            try:
                annotator, reads, start_reads = _annotator(
                    m, k + 1, syms, deadline, most_symbols=MAX_STAGE_ARCS // (lefts + 1)
                )
            except _TooManySymbols as too_many:
                unbuilt = _too_large(k + 1, "decider", lefts + 1, too_many.symbols, not too_many.counted_all)
                continue
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
    report("compiling rule", total, total, "done")
    if not program.passes:  # the empty program: the identity
        labels = np.arange(1, len(tokens) + 1)
        stages.append(fst_from_arcs(1, 0, [0], np.zeros(len(tokens)), labels, labels, np.zeros(len(tokens))))
        stage_pass.append(1)
    built: Transducers | UnbuiltTransducers = UnbuiltTransducers(unbuilt or "")
    if unbuilt is None:
        for fst in stages:
            check_deadline(deadline)
            fst.arcsort("ilabel")
        built = Transducers(tuple(stages), tuple(stage_pass), syms.table, tokens)
    return Compiled(program, tokens, tuple(machines), built, time.perf_counter() - started)
