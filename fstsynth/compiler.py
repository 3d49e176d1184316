"""The compiler: a program becomes one Pynini transducer over token labels.

Public API:
    UNK, compile_program(program, alphabet, features) -> Compiled
    Compiled.fst, Compiled.symbols, Compiled.apply(word), Compiled.apply_many(words)
    transduce(fst, symbols, word), word_acceptor(labels)

Scheme (DESIGN.md section 5). The word is framed as `<s> w` (the start position is a
real symbol inside the cascade, so prefixes are ordinary insertions after it). For each
pass, with first-match-wins and simultaneous contexts:
1. every rule, in order, is a `cdrewrite` that rewrites a still-unmarked symbol into a
   *marked* symbol recording what will be output there (and, for Copy rules, split per
   copied token, which token it copies). Contexts accept a symbol whether marked or not,
   so every rule reads the pass's input;
2. one context-free map realizes each marked symbol as its output tokens, each carrying
   the tag the next pass can test with `TransformationApplied` (tags no later predicate
   tests are dropped, which cannot change any outcome).
Passes compose in order; a last map removes `<s>`. The result is optimized and
arc-sorted once. A token never seen in training is read as `UNK` (`<unk>`), an ordinary
symbol with no features that matches no `IsToken`: the interpreter is run on the same
mapped word, so the two backends mean the same thing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

import pynini

from fstsynth.errors import UserError
from fstsynth.dsl import (
    BOUNDARY,
    CopyInsert,
    CopyReplace,
    Delete,
    Identity,
    Insert,
    Is,
    IsToken,
    Not,
    Pass,
    Predicate,
    Program,
    ReplaceAnyBy,
    ReplaceBy,
    Rule,
    Transformation,
    TransformationApplied,
    referenced_tags,
)

Token = str
Word = tuple[Token, ...]
Features = Mapping[Token, Mapping[str, bool]]

UNK = "<unk>"
START_SYMBOL = "<s>"
EPSILON = "<eps>"
BOS_LABEL, EOS_LABEL = 0xF8FE, 0xF8FF  # the labels cdrewrite reserves for [BOS]/[EOS]

_ONE = pynini.Weight.one("tropical")


class Error(Exception):
    """A word cannot be transduced (internal: the cascade should be total)."""


class TimeLimitError(UserError):
    """Compilation did not finish before the deadline it was given."""


def _check_deadline(deadline: float | None) -> None:
    if deadline is not None and time.monotonic() > deadline:
        raise TimeLimitError("time limit reached while compiling the rules (raise --time-limit)")


# ------------------------------------------------------------------ FST building blocks


def _label_set(labels: Iterable[int]) -> pynini.Fst:
    """An acceptor of exactly one symbol from `labels`."""
    fst = pynini.Fst()
    start, end = fst.add_state(), fst.add_state()
    fst.set_start(start)
    fst.set_final(end)
    for label in sorted(set(labels)):
        fst.add_arc(start, pynini.Arc(label, label, _ONE, end))
    return fst


def _label_map(pairs: Iterable[tuple[int, Sequence[int]]], *, star: bool) -> pynini.Fst:
    """A transducer of one input symbol to a label sequence each (its closure if `star`)."""
    fst = pynini.Fst()
    start = fst.add_state()
    end = start if star else fst.add_state()
    fst.set_start(start)
    fst.set_final(end)
    for ilabel, outs in pairs:
        outs = list(outs)
        if len(outs) <= 1:
            fst.add_arc(start, pynini.Arc(ilabel, outs[0] if outs else 0, _ONE, end))
            continue
        state = fst.add_state()
        fst.add_arc(start, pynini.Arc(ilabel, outs[0], _ONE, state))
        for k, out in enumerate(outs[1:], start=1):
            nxt = end if k == len(outs) - 1 else fst.add_state()
            fst.add_arc(state, pynini.Arc(0, out, _ONE, nxt))
            state = nxt
    return fst


def word_acceptor(labels: Sequence[int]) -> pynini.Fst:
    fst = pynini.Fst()
    state = fst.add_state()
    fst.set_start(state)
    for label in labels:
        nxt = fst.add_state()
        fst.add_arc(state, pynini.Arc(label, label, _ONE, nxt))
        state = nxt
    fst.set_final(state)
    return fst


def _concat(parts: Sequence[pynini.Fst]) -> pynini.Fst:
    if not parts:
        return pynini.accep("")
    out = parts[0].copy()
    for part in parts[1:]:
        out.concat(part)
    return out


def _union(parts: Sequence[pynini.Fst]) -> pynini.Fst:
    if not parts:
        empty = pynini.Fst()
        empty.set_start(empty.add_state())
        return empty  # the empty language
    out = parts[0].copy()
    for part in parts[1:]:
        out.union(part)
    return out


# ------------------------------------------------------------------ symbols


class _Symbols:
    """The symbol table: plain tokens first (stable ids), then internal symbols."""

    def __init__(self, tokens: Iterable[Token]) -> None:
        self.table = pynini.SymbolTable()
        self.table.add_symbol(EPSILON, 0)
        for tok in sorted(set(tokens) | {UNK}):
            self.table.add_symbol(tok)
        self.table.add_symbol(START_SYMBOL)
        self.plain_count = self.table.num_symbols()
        self.external = self.table.copy()
        self._internal: dict[object, int] = {}

    def plain(self, token: Token) -> int:
        return self.table.find(token)

    def internal(self, key: object) -> int:
        """A label for an internal symbol (tagged or marked token) named by `key`."""
        label = self._internal.get(key)
        if label is None:
            label = self.table.available_key()
            if label in (BOS_LABEL, EOS_LABEL):
                label = EOS_LABEL + 1
            self.table.add_symbol(f"<internal:{label}>", label)
            self._internal[key] = label
        return label


# ------------------------------------------------------------------ one pass


@dataclass
class _Slot:
    """What a rule demands of the symbol at one offset: a token set, and the boundary."""

    symbols: set[int]
    boundary: bool


class _PassCompiler:
    def __init__(
        self,
        pass_: Pass,
        in_tags: Sequence[Transformation | None],
        out_tags: set[Transformation],
        tokens: Sequence[Token],
        features: Features,
        syms: _Symbols,
        last: bool,
    ) -> None:
        self.pass_ = pass_
        self.tokens = list(tokens)
        self.features = features
        self.syms = syms
        self.last = last
        self.out_tags = out_tags
        # Input symbols of this pass: (token, tag) for every tag the pass tests.
        self.in_symbol: dict[tuple[Token, Transformation | None], int] = {}
        for tag in in_tags:
            for tok in self.tokens:
                self.in_symbol[(tok, tag)] = _symbol_for(syms, tok, tag)
        self.token_of = {label: tok for (tok, _), label in self.in_symbol.items()}
        self.tag_of = {label: tag for (_, tag), label in self.in_symbol.items()}
        self.start = syms.plain(START_SYMBOL)
        self.real = set(self.in_symbol.values())
        self.marks: dict[int, list[int]] = {s: [] for s in self.real | {self.start}}
        self.realize: dict[int, list[int]] = {}

    # -- predicates -> slots

    def _slot(self, pred: Predicate) -> _Slot:
        if isinstance(pred, Not):
            inner = self._slot(pred.predicate)
            return _Slot(self.real - inner.symbols, not inner.boundary)
        if isinstance(pred, IsToken):
            if pred.token is BOUNDARY:
                return _Slot(set(), True)
            return _Slot({s for s in self.real if self.token_of[s] == pred.token}, False)
        if isinstance(pred, Is):
            return _Slot(
                {
                    s
                    for s in self.real
                    if self.features.get(self.token_of[s], {}).get(pred.feature, False)
                },
                False,
            )
        if isinstance(pred, TransformationApplied):
            return _Slot({s for s in self.real if self.tag_of[s] == pred.transformation}, False)
        raise TypeError(f"not a predicate: {pred!r}")

    def _slots(self, rule: Rule) -> dict[int, _Slot]:
        slots: dict[int, _Slot] = {}
        for pred in rule.predicates:
            inner = pred
            while isinstance(inner, Not):
                inner = inner.predicate
            slot = self._slot(pred)
            old = slots.get(inner.offset)
            if old is not None:
                slot = _Slot(old.symbols & slot.symbols, old.boundary and slot.boundary)
            slots[inner.offset] = slot
        return slots

    def _context_set(self, slot: _Slot, left: bool) -> list[int]:
        labels = [m for s in slot.symbols for m in (s, *self.marks[s])]
        if left and slot.boundary:
            labels += [self.start, *self.marks[self.start]]
        return labels

    def _contexts(self, slots: dict[int, _Slot]) -> tuple[pynini.Fst, pynini.Fst]:
        any_slot = _Slot(set(self.real), True)
        left_n = max([-o for o in slots if o < 0], default=0)
        right_n = max([o for o in slots if o > 0], default=0)
        left = [slots.get(-k, any_slot) for k in range(left_n, 0, -1)]  # far .. near
        right = [slots.get(k, any_slot) for k in range(1, right_n + 1)]  # near .. far
        bos, eos = _label_set([BOS_LABEL]), _label_set([EOS_LABEL])

        left_alts = [_concat([_label_set(self._context_set(s, True)) for s in left])]
        for j in range(left_n):  # j symbols between [BOS] and the current one
            beyond = left[: left_n - j]
            if all(s.boundary for s in beyond):
                near = left[left_n - j :]
                left_alts.append(_concat([bos] + [_label_set(self._context_set(s, True)) for s in near]))
        right_alts = [_concat([_label_set(self._context_set(s, False)) for s in right])]
        for j in range(right_n):
            beyond = right[j:]
            if all(s.boundary for s in beyond):
                near = right[:j]
                right_alts.append(_concat([_label_set(self._context_set(s, False)) for s in near] + [eos]))
        return _union(left_alts).optimize(), _union(right_alts).optimize()

    # -- marks and their realization

    def _next_symbol(self, tok: Token, tr: Transformation) -> int:
        if self.last:
            return self.syms.plain(tok)
        return _symbol_for(self.syms, tok, tr if tr in self.out_tags else None)

    def _output(self, label: int, tr: Transformation, copied: Token | None) -> list[int]:
        if label == self.start:
            out = [self.start]
            if isinstance(tr, Insert):
                out += [self._next_symbol(t, tr) for t in tr.tokens]
            elif isinstance(tr, CopyInsert):
                out.append(self._next_symbol(copied, tr))
            return out
        x = self.token_of[label]
        if isinstance(tr, Identity):
            toks: Sequence[Token] = (x,)
        elif isinstance(tr, Delete):
            toks = ()
        elif isinstance(tr, (ReplaceBy, ReplaceAnyBy)):
            toks = tr.target
        elif isinstance(tr, Insert):
            toks = (x, *tr.tokens)
        elif isinstance(tr, CopyReplace):
            toks = (copied,)
        elif isinstance(tr, CopyInsert):
            toks = (x, copied)
        else:
            raise TypeError(f"not a transformation: {tr!r}")
        return [self._next_symbol(t, tr) for t in toks]

    def _mark(self, label: int, tr: Transformation, copied: Token | None) -> int:
        key = ("mark", id(self), label, tr, copied)
        mark = self.syms.internal(key)
        if mark not in self.realize:
            self.marks[label].append(mark)
            self.realize[mark] = self._output(label, tr, copied)
        return mark

    def _rule_fsts(self, rule: Rule) -> list[tuple[list[tuple[int, int]], dict[int, _Slot]]]:
        """(tau pairs, slots) for each cdrewrite the rule needs (several for Copy rules)."""
        slots = self._slots(rule)
        here = slots.pop(0, _Slot(set(self.real), True))
        tr = rule.transformation
        targets = set(here.symbols)
        if here.boundary and not isinstance(tr, ReplaceBy):
            targets.add(self.start)
        if isinstance(tr, ReplaceBy):
            targets = {s for s in targets if self.token_of.get(s) == tr.source}
        if not isinstance(tr, (CopyReplace, CopyInsert)):
            return [([(s, self._mark(s, tr, None)) for s in sorted(targets)], slots)]
        out = []
        at = slots.get(tr.offset, _Slot(set(self.real), True))
        for tok in self.tokens:
            copied = {s for s in at.symbols if self.token_of[s] == tok}
            if not copied:
                continue
            sub = dict(slots)
            sub[tr.offset] = _Slot(copied, False)
            if tr.offset == 0:
                here_targets = targets & copied
                out.append(([(s, self._mark(s, tr, tok)) for s in sorted(here_targets)], sub))
            else:
                out.append(([(s, self._mark(s, tr, tok)) for s in sorted(targets)], sub))
        return out

    def compile(self, deadline: float | None = None) -> pynini.Fst:
        plans = []
        for rule in self.pass_.rules:
            for pairs, slots in self._rule_fsts(rule):
                if pairs:
                    plans.append((pairs, slots))
        # All marks exist now: contexts and sigma-star can list them.
        all_labels = sorted(self.real | {self.start} | set(self.realize))
        sigma_star = _label_set(all_labels).closure().optimize()
        fst = _label_set(sorted(self.real | {self.start})).closure()
        for pairs, slots in plans:
            _check_deadline(deadline)
            tau = _label_map([(a, [b]) for a, b in pairs], star=False)
            left, right = self._contexts(slots)
            rewrite = pynini.cdrewrite(tau, left, right, sigma_star, direction="sim")
            fst = pynini.compose(fst, rewrite)
        realization = [(self.start, [self.start])]
        for label in sorted(self.real):
            realization.append((label, self._output(label, Identity(), None)))
        realization.extend(sorted(self.realize.items()))
        fst = pynini.compose(fst, _label_map(realization, star=True))
        return fst.optimize()


def _symbol_for(syms: _Symbols, tok: Token, tag: Transformation | None) -> int:
    if tag is None:
        return syms.plain(tok)
    return syms.internal(("tagged", tok, tag))


# ------------------------------------------------------------------ whole programs


@dataclass
class Compiled:
    """A compiled program: `fst` maps token strings (labels of `symbols`) to outputs."""

    fst: pynini.Fst
    symbols: pynini.SymbolTable
    seconds: float = 0.0
    labels: dict[Token, int] = field(init=False, repr=False)
    tokens: dict[int, Token] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.labels = {
            tok: label
            for label, tok in self.symbols
            if tok not in (EPSILON, START_SYMBOL)
        }
        self.tokens = {label: tok for tok, label in self.labels.items()}

    @property
    def alphabet(self) -> set[Token]:
        return set(self.labels)

    def map_unknown(self, word: Sequence[Token]) -> Word:
        """The word as the model reads it: unseen tokens become `UNK`."""
        return tuple(t if t in self.labels else UNK for t in word)

    def apply(self, word: Sequence[Token]) -> Word:
        return transduce(self.fst, self.labels, self.tokens, self.map_unknown(word))


def transduce(
    fst: pynini.Fst,
    labels: Mapping[Token, int],
    tokens: Mapping[int, Token],
    word: Sequence[Token],
) -> Word:
    """Run a (functional) transducer on one word of known tokens."""
    lattice = pynini.compose(word_acceptor([labels[t] for t in word]), fst)
    if lattice.start() == pynini.NO_STATE_ID or lattice.num_states() == 0:
        raise Error(f"the transducer gives no output for {' '.join(word)!r}")
    path = pynini.shortestpath(lattice).topsort()
    out: list[Token] = []
    state = path.start()
    while True:
        arcs = list(path.arcs(state))
        if not arcs:
            break
        arc = arcs[0]
        if arc.olabel:
            out.append(tokens[arc.olabel])
        state = arc.nextstate
    return tuple(out)


def compile_program(
    program: Program,
    alphabet: Iterable[Token],
    features: Features,
    *,
    deadline: float | None = None,
) -> Compiled:
    """Compile `program` over `alphabet` (every token it may read or write, plus UNK).

    `deadline` (a `time.monotonic()` value) bounds the work: past it, the next rewrite
    rule raises `TimeLimitError` instead of being compiled.
    """
    started = time.perf_counter()
    tokens = set(alphabet) | _program_tokens(program) | {UNK}
    syms = _Symbols(tokens)
    token_list = sorted(tokens)
    start = syms.plain(START_SYMBOL)
    plain = [syms.plain(t) for t in token_list]
    # Frame: insert <s> in front of the word.
    frame = _label_map([(0, [start])], star=False)
    frame.concat(_label_set(plain).closure())
    cascade = frame
    passes = program.passes
    in_tags: list[Transformation | None] = [None]
    for k, pass_ in enumerate(passes):
        last = k == len(passes) - 1
        next_tags = referenced_tags(passes[k + 1]) if not last else set()
        compiled = _PassCompiler(pass_, in_tags, next_tags, token_list, features, syms, last).compile(
            deadline
        )
        cascade = pynini.compose(cascade, compiled)
        _check_deadline(deadline)
        in_tags = [None, *sorted(next_tags, key=str)]
    # Unframe: drop <s>.
    unframe = _label_map([(start, [])], star=False)
    unframe.concat(_label_set(plain).closure())
    cascade = pynini.compose(cascade, unframe).optimize()
    cascade.arcsort("ilabel")
    external = syms.external
    cascade.set_input_symbols(external)
    cascade.set_output_symbols(external)
    return Compiled(cascade, external, time.perf_counter() - started)


def _program_tokens(program: Program) -> set[Token]:
    tokens: set[Token] = set()
    for pass_ in program.passes:
        for rule in pass_.rules:
            tr = rule.transformation
            if isinstance(tr, ReplaceBy):
                tokens |= {tr.source, *tr.target}
            elif isinstance(tr, ReplaceAnyBy):
                tokens |= set(tr.target)
            elif isinstance(tr, Insert):
                tokens |= set(tr.tokens)
    return tokens
