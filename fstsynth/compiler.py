"""The compiler: a program becomes one Pynini transducer per pass over token labels.

Public API:
    UNK, compile_program(program, alphabet, features) -> Compiled, program_tokens
    Compiled.passes, Compiled.fst (their composition, built on first use),
    Compiled.symbols, Compiled.apply(word), Compiled.apply_many(words)
    compose_passes(passes, symbols), transduce(fst, labels, tokens, word), word_acceptor(labels),
    arc_count(fst)

Scheme (DESIGN.md section 5). The word is framed as `<s> w` (the start position is a
real symbol inside a pass, so prefixes are ordinary insertions after it). For each
pass, with first-match-wins and simultaneous contexts:
0. the pass's input symbols are partitioned into classes that no predicate of the pass
   tells apart (and, for a Copy rule reading another position, by the copied token);
   steps 1-2 run over class labels, a few dozen at most, instead of every token;
1. every rule, in order, is a `cdrewrite` that rewrites a still-unmarked class into a
   *marked* class recording the rule (and, for Copy rules reading another position,
   split per copied token, which token it copies). Contexts accept a class whether
   marked or not, so every rule reads the pass's input;
2. the marked strings, as an acceptor (a mark names its class, so the output side says
   everything), are minimized once: the pass's *decisions*;
3. each decision arc is realized as one arc per member symbol of its class, from the
   symbol to its output tokens (as one chunk label when they are not exactly one),
   each carrying the tag the next pass can test with `TransformationApplied` (tags no
   later predicate tests are dropped, which cannot change any outcome).
Each pass is then framed on its own (`<s>` inserted before, removed after, chunks
spelled out), so that it maps strings to strings, and optimized. The passes are kept
apart: applied one after the other they are the program, and their composition, which
`Compiled.fst` builds only when asked (exports), can be far larger than they are
together when a pass looks right (a 3,000-pair learning-curve program: 38.5M arcs
composed). Tags between passes are symbols named after the token and the
transformation that made it (`a<Delete(x)>`). A token never seen in training is read
as `UNK` (`<unk>`), an ordinary symbol with no features that matches no `IsToken`: the
interpreter is run on the same mapped word, so the two backends mean the same thing.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
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
    TierIs,
    Transformation,
    TransformationApplied,
    looks_unboundedly_right,
    pass_looks_unboundedly_right,
    referenced_tags,
)
from fstsynth.types import Token, Word, Features


UNK = "<unk>"
START_SYMBOL = "<s>"
EPSILON = "<eps>"
BOS_LABEL, EOS_LABEL = 0xF8FE, 0xF8FF  # the labels cdrewrite reserves for [BOS]/[EOS]

_ONE = pynini.Weight.one("tropical")

#: Optimize the chain of a pass's rewrites when it has grown this many times past its
#: last optimized size (plus 1000 states): unoptimized, a chain of rules with
#: lookahead contexts multiplies (a copy rule split per copied token, each with a tier
#: context, reached 2.7M states after 15 rewrites where the optimized chain has 2k),
#: while optimizing after every rewrite costs more than it saves on plain chains.
#: 2 rather than 4: the slowest dev-split passes compiled 5-25% faster (best of 3
#: runs), as the largest intermediate composition no longer reached 95k states.
GROWTH_BEFORE_OPTIMIZE = 2

#: How large a group of a pass's rewrites, composed together before they are composed
#: with the rest of the chain, may grow (`_compose_chain`). On the four slowest
#: benchmark programs 100 did best; 300 and up made passes with tier rewrites (75 states
#: each) slower than no grouping.
GROUP_STATES_LIMIT = 100

#: Temporary labels for (member, decision) pairs while a pass is realized: far above
#: any symbol-table label, below 2^31 (OpenFst labels are 32-bit).
PAIR_LABEL_BASE = 1 << 29


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


def arc_count(fst: pynini.Fst) -> int:
    """The number of arcs of `fst` (pynini counts them per state only)."""
    return sum(fst.num_arcs(state) for state in fst.states())


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

    def internal(self, key: object, name: str | None = None) -> int:
        """A label for an internal symbol (tagged, marked or chunked token) named by
        `key`; `name` (made unique) is how it prints, else `<internal:LABEL>`."""
        label = self._internal.get(key)
        if label is None:
            label = self.table.available_key()
            if label in (BOS_LABEL, EOS_LABEL):
                label = EOS_LABEL + 1
            text = name or f"<internal:{label}>"
            while self.table.find(text) != -1:
                text += "'"
            self.table.add_symbol(text, label)
            self._internal[key] = label
        return label

    def public(self) -> pynini.SymbolTable:
        """The symbols a pass transducer may read or write: tokens, `<s>` and tagged
        tokens (marks and chunks live only inside the compiler)."""
        table = self.external.copy()
        for key, label in sorted(self._internal.items(), key=lambda item: item[1]):
            if isinstance(key, tuple) and key[0] == "tagged":
                table.add_symbol(self.table.find(label), label)
        return table


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
        # The rules are compiled over classes of input symbols, not the symbols
        # themselves: symbols no predicate of the pass tells apart are one class.
        self.real = set(self.in_symbol.values())
        self.members: dict[int, list[int]] = {self.start: [self.start]}
        self.real = self._classes()
        self.marks: dict[int, list[int]] = {s: [] for s in self.real | {self.start}}
        # mark -> (class or start, transformation, copied token)
        self.mark_info: dict[int, tuple[int, Transformation, Token | None]] = {}
        # chunk label -> the output labels it stands for (see `_realized`)
        self.chunks: dict[int, tuple[int, ...]] = {}
        self._chunked: pynini.Fst | None = None
        # marks of the rules compiled so far: what the next rule's input may hold
        self._seen_marks: set[int] = set()

    def _classes(self) -> set[int]:
        """Partition the input symbols by what every predicate, transformation source
        and copied token of the pass says of them; one label per class.

        A class stands in for its members while the rules are compiled (a predicate is
        evaluated on its first member, which answers for all); the members come back
        when the decisions are realized (`_realized`). Fewer symbols make every
        rewrite and composition smaller: this is what keeps compilation fast.
        """
        atoms: set[frozenset[int]] = set()
        for rule in self.pass_.rules:
            slots = self._slots(rule)
            atoms.update(frozenset(slot.symbols) for slot in slots.values())
            atoms.update(frozenset(slot.symbols) for slot in self._tier_slots(rule).values())
            for pred in rule.predicates:
                inner = pred
                while isinstance(inner, Not):
                    inner = inner.predicate
                if isinstance(inner, TierIs):
                    atoms.add(frozenset(self._tier(inner.tier)))
            tr = rule.transformation
            if isinstance(tr, ReplaceBy):
                atoms.add(frozenset(s for s in self.real if self.token_of[s] == tr.source))
            if isinstance(tr, (CopyReplace, CopyInsert)) and tr.offset != 0:
                at = slots.get(tr.offset, _Slot(set(self.real), True))
                for tok in self.tokens:
                    atoms.add(frozenset(s for s in at.symbols if self.token_of[s] == tok))
        ordered = sorted(atoms, key=sorted)
        groups: dict[tuple[bool, ...], list[int]] = {}
        for label in sorted(self.real):
            groups.setdefault(tuple(label in atom for atom in ordered), []).append(label)
        classes = set()
        for k, members in enumerate(groups.values()):
            label = self.syms.internal(("class", id(self), k))
            self.members[label] = members
            self.token_of[label] = self.token_of[members[0]]
            self.tag_of[label] = self.tag_of[members[0]]
            classes.add(label)
        return classes

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
        if isinstance(pred, TierIs):
            # The slot is the tier token found |index| steps away: which symbols it may
            # be, or (boundary) that there is none. Negation complements it on the tier.
            if pred.feature is BOUNDARY:
                return _Slot(set(), True)
            return _Slot({s for s in self._tier(pred.tier) if self._has(s, pred.feature)}, False)
        raise TypeError(f"not a predicate: {pred!r}")

    def _has(self, label: int, feature: str) -> bool:
        return bool(self.features.get(self.token_of[label], {}).get(feature, False))

    def _tier(self, tier: str) -> set[int]:
        return {s for s in self.real if self._has(s, tier)}

    def _tier_slots(self, rule: Rule) -> dict[tuple[str, int], _Slot]:
        """What the rule's tier predicates demand of each (tier, index)."""
        slots: dict[tuple[str, int], _Slot] = {}
        for pred in rule.predicates:
            inner, negated = pred, False
            while isinstance(inner, Not):
                inner, negated = inner.predicate, not negated
            if not isinstance(inner, TierIs):
                continue
            slot = self._slot(inner)
            if negated:
                slot = _Slot(self._tier(inner.tier) - slot.symbols, not slot.boundary)
            key = (inner.tier, inner.index)
            old = slots.get(key)
            if old is not None:
                slot = _Slot(old.symbols & slot.symbols, old.boundary and slot.boundary)
            slots[key] = slot
        return slots

    def _tier_context(self, tier: str, index: int, slot: _Slot, left: bool) -> pynini.Fst:
        """The context language, read toward the current symbol from the far side.

        Right (index > 0): (off)* (on (off)*)^(k-1) slot, or fewer than k tier symbols
        then [EOS]. Left: the mirror image, starting at slot or at [BOS]. Marked
        symbols count like the symbols they mark; `<s>` is off every tier.
        """
        on_real = self._tier(tier)
        on = _label_set(self._context_set(_Slot(on_real, False), left))
        everything = set(self._context_set(_Slot(set(self.real), True), left))
        off = _label_set(everything - set(self._context_set(_Slot(on_real, False), left))).closure()
        k = abs(index)

        def steps(j: int) -> list[pynini.Fst]:  # (off)* (on (off)*)^j, near to far
            out = [off]
            for _ in range(j):
                out += [on, off]
            return out

        alts = []
        found = _label_set(self._context_set(_Slot(slot.symbols, False), left))
        if slot.symbols:
            near = steps(k - 1)
            alts.append(_concat([found, *reversed(near)]) if left else _concat([*near, found]))
        if slot.boundary:
            for j in range(k):
                near = steps(j)
                if left:
                    alts.append(_concat([_label_set([BOS_LABEL]), *reversed(near)]))
                else:
                    alts.append(_concat([*near, _label_set([EOS_LABEL])]))
        return _union(alts).optimize()

    def _slots(self, rule: Rule) -> dict[int, _Slot]:
        slots: dict[int, _Slot] = {}
        for pred in rule.predicates:
            inner = pred
            while isinstance(inner, Not):
                inner = inner.predicate
            if isinstance(inner, TierIs):
                continue  # see _tier_slots
            slot = self._slot(pred)
            old = slots.get(inner.offset)
            if old is not None:
                slot = _Slot(old.symbols & slot.symbols, old.boundary and slot.boundary)
            slots[inner.offset] = slot
        return slots

    def _context_set(self, slot: _Slot, left: bool) -> list[int]:
        seen = self._seen_marks
        labels = [m for s in slot.symbols for m in (s, *self.marks[s]) if m == s or m in seen]
        if left and slot.boundary:
            labels += [self.start, *(m for m in self.marks[self.start] if m in seen)]
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
        if mark not in self.mark_info:
            self.marks[label].append(mark)
            self.mark_info[mark] = (label, tr, copied)
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
        if tr.offset == 0:
            # Copying the symbol itself: each member copies its own token (`_outputs`);
            # at the start position the copy would read the boundary and not apply.
            targets &= self.real
            return [([(s, self._mark(s, tr, None)) for s in sorted(targets)], slots)]
        out = []
        at = slots.get(tr.offset, _Slot(set(self.real), True))
        for tok in self.tokens:
            copied = {s for s in at.symbols if self.token_of[s] == tok}
            if not copied:
                continue
            sub = dict(slots)
            sub[tr.offset] = _Slot(copied, False)
            out.append(([(s, self._mark(s, tr, tok)) for s in sorted(targets)], sub))
        return out

    def _with_tiers(
        self, left: pynini.Fst, right: pynini.Fst, tiers: dict[tuple[str, int], _Slot]
    ) -> tuple[pynini.Fst, pynini.Fst]:
        """Intersect the offset contexts with each tier context.

        Each context is anchored at the current symbol, so both are extended to the far
        side ([BOS]? sigma* before a left context, sigma* [EOS]? after a right one)
        and intersected; the boundary appears at most once, at the end.
        """
        left_labels = sorted(set(self._context_set(_Slot(set(self.real), True), True)))
        right_labels = sorted(set(self._context_set(_Slot(set(self.real), True), False)))
        opt_bos = _union([pynini.accep(""), _label_set([BOS_LABEL])])
        opt_eos = _union([pynini.accep(""), _label_set([EOS_LABEL])])
        lead = _concat([opt_bos, _label_set(left_labels).closure()]).optimize()
        tail = _concat([_label_set(right_labels).closure(), opt_eos]).optimize()
        left_lang = _concat([lead, left]).optimize()
        right_lang = _concat([right, tail]).optimize()
        for (tier, index), slot in sorted(tiers.items()):
            if index < 0:
                ctx = _concat([lead, self._tier_context(tier, index, slot, True)]).optimize()
                left_lang = pynini.intersect(left_lang, ctx).optimize()
            else:
                ctx = _concat([self._tier_context(tier, index, slot, False), tail]).optimize()
                right_lang = pynini.intersect(right_lang, ctx).optimize()
        # No boundary inside: at most one, at the far end.
        left_lang = pynini.intersect(left_lang, lead).optimize()
        right_lang = pynini.intersect(right_lang, tail).optimize()
        return left_lang, right_lang

    def compile(self, deadline: float | None = None) -> pynini.Fst:
        plans = []
        for rule in self.pass_.rules:
            for pairs, slots in self._rule_fsts(rule):
                if pairs:
                    plans.append((pairs, slots, rule))
        # A rewrite reads only the marks of the rules before it: its contexts and
        # sigma-star list those alone (and its own, which it writes).
        unmarked = self.real | {self.start}
        # The chain reads only what a pass is given, `<s> w`: with `<s>` allowed anywhere
        # the largest benchmark pass took 1.6x as long to compile.
        rewrites = [_concat([_label_set([self.start]), _label_set(sorted(self.real)).closure()])]
        for pairs, slots, rule in plans:
            _check_deadline(deadline)
            tau = _label_map([(a, [b]) for a, b in pairs], star=False)
            written = {mark for _, mark in pairs}
            sigma_star = _label_set(sorted(unmarked | self._seen_marks | written)).closure()
            left, right = self._contexts(slots)
            tiers = self._tier_slots(rule)
            if tiers:
                left, right = self._with_tiers(left, right, tiers)
            rewrites.append(pynini.cdrewrite(tau, left, right, sigma_star, direction="sim"))
            self._seen_marks |= written
        fst = _compose_chain(rewrites, deadline)
        # The marked string names its input (every mark records its class), so the
        # pass is kept as an acceptor of decisions and realized member by member.
        # (Determinized and minimized directly: `optimize` gives the same acceptor and
        # took 3-4x as long on the largest benchmark pass.)
        decisions = pynini.determinize(fst.project("output").rmepsilon()).minimize()
        self._chunked = self._realized(decisions)
        return self._chunked

    def _outputs(self, label: int) -> list[tuple[int, list[int]]]:
        """(input symbol, output labels) for every member behind a decision label."""
        if label in self.mark_info:
            owner, tr, copied = self.mark_info[label]
            if isinstance(tr, (CopyReplace, CopyInsert)) and tr.offset == 0:
                return [(s, self._output(s, tr, self.token_of[s])) for s in self.members[owner]]
            return [(s, self._output(s, tr, copied)) for s in self.members[owner]]
        if label == self.start:
            return [(self.start, [self.start])]
        return [(s, self._output(s, Identity(), None)) for s in self.members[label]]

    def _realized(self, decisions: pynini.Fst) -> pynini.Fst:
        """The pass as a transducer: each arc of `decisions` becomes one arc per member
        symbol of its class, from the symbol to its output as one label (a token, or a
        chunk label standing for none or several, recorded in `self.chunks`).

        Built by composition, not arc by arc from Python (the largest benchmark pass
        has 1.4M arcs: 10 s arc by arc, under 1 s so). Every (member, decision) pair
        gets a temporary label; a one-state transducer from pair labels to decisions,
        composed with the decisions and projected on its input, is the decisions with
        each arc multiplied out per member; the pair labels are then relabelled to the
        member (input side) and its output (output side)."""
        pairs = pynini.Fst()
        state = pairs.add_state()
        pairs.set_start(state)
        pairs.set_final(state)
        ipairs: list[tuple[int, int]] = []
        opairs: list[tuple[int, int]] = []
        pair = PAIR_LABEL_BASE
        for decision in sorted(set(self.mark_info) | set(self.members)):
            for symbol, outs in self._outputs(decision):
                pairs.add_arc(state, pynini.Arc(pair, decision, _ONE, state))
                ipairs.append((pair, symbol))
                opairs.append((pair, self._chunk(outs)))
                pair += 1
        realized = pynini.compose(pairs, decisions).project("input")
        realized.relabel_pairs(ipairs=ipairs, opairs=opairs)
        return realized

    def _chunk(self, outs: list[int]) -> int:
        """`outs` as one label: the label itself, or a chunk label (recorded), also for
        no output at all: with no output epsilons in the pass, spelling chunks out by
        composition (`_framed`) has one way to order its arcs, not several (2.4x the
        states on a benchmark pass with deletions)."""
        if len(outs) == 1:
            return outs[0]
        chunk = self.syms.internal(("chunk", tuple(outs)))
        self.chunks[chunk] = tuple(outs)
        return chunk

    def chunked(self) -> tuple[pynini.Fst, dict[int, tuple[int, ...]]]:
        """The pass with every multi-token output as one chunk label (no input epsilons,
        so it can be determinized as a function), and what each chunk label stands for."""
        assert self._chunked is not None, "compile() first"
        return self._chunked.copy().optimize(), self.chunks


def _compose_chain(fsts: list[pynini.Fst], deadline: float | None) -> pynini.Fst:
    """The composition of `fsts` in order. Consecutive rewrites after the first are
    composed into groups first, while a group stays within GROUP_STATES_LIMIT states
    (a rewrite is a few states over class labels; one with a tier context can be 75),
    so the large running composition is walked once per group instead of once per
    rewrite (largest benchmark pass: 1.5x faster). The running composition is optimized
    whenever it has grown GROWTH_BEFORE_OPTIMIZE times past its last optimized size (a
    balanced tree of pairwise compositions was tried: 1.1-2x slower on the largest
    dev-split passes)."""
    groups: list[pynini.Fst] = []
    for rewrite in fsts[1:]:
        _check_deadline(deadline)
        joined = pynini.compose(groups[-1], rewrite) if groups else None
        if joined is not None and joined.num_states() <= GROUP_STATES_LIMIT:
            groups[-1] = joined.optimize()
        else:
            groups.append(rewrite)
    fst = fsts[0]
    optimized_size = fst.num_states()
    for group in groups:
        _check_deadline(deadline)
        fst = pynini.compose(fst, group)
        if fst.num_states() > GROWTH_BEFORE_OPTIMIZE * optimized_size + 1000:
            fst = fst.optimize()
            optimized_size = fst.num_states()
    return fst


def _symbol_for(syms: _Symbols, tok: Token, tag: Transformation | None) -> int:
    if tag is None:
        return syms.plain(tok)
    # Printed as the token and the transformation that made it, e.g. `a<Delete(x)>`
    # (no whitespace: AT&T text and symbol files split on it).
    return syms.internal(("tagged", tok, tag), "".join(f"{tok}<{tag}>".split()))


# ------------------------------------------------------------------ whole programs


class Compiled:
    """A compiled program: one transducer per pass, applied in order (`passes`), over
    `symbols`. Each maps strings to strings on its own (its frame is inside it); what
    flows between passes may carry tagged tokens (named in `symbols`) that a later
    `TransformationApplied` tests. `fst`, their composition, is built on first use: for
    programs with right contexts it can be far larger than the passes together.

    `tokens` (default: every symbol but epsilon and `<s>`) are the symbols that are word
    tokens; the others are internal.
    """

    def __init__(
        self,
        passes: Sequence[pynini.Fst],
        symbols: pynini.SymbolTable,
        tokens: Iterable[Token] | None = None,
        *,
        seconds: float = 0.0,
        compilers: "list[_PassCompiler] | None" = None,
        syms: "_Symbols | None" = None,
        subsequential: bool = True,
    ) -> None:
        self.passes = list(passes)
        self.symbols = symbols
        self.seconds = seconds
        self._passes = compilers
        self._syms = syms
        self.subsequential = subsequential  # every pass determinizes (see `fast`)
        self.walker: Walker | TwoWayWalker | None = None
        self._cascade: pynini.Fst | None = None
        self._tables_fit: bool | None = None
        wanted = None if tokens is None else set(tokens)
        self.labels: dict[Token, int] = {
            tok: label
            for label, tok in symbols
            if tok not in (EPSILON, START_SYMBOL) and (wanted is None or tok in wanted)
        }
        self.tokens: dict[int, Token] = {label: tok for tok, label in self.labels.items()}

    @property
    def fst(self) -> pynini.Fst:
        """The passes composed into one transducer (optimized, arc-sorted)."""
        if self._cascade is None:
            self._cascade = compose_passes(self.passes, self.symbols)
        return self._cascade

    @property
    def alphabet(self) -> set[Token]:
        return set(self.labels)

    def token_symbols(self) -> pynini.SymbolTable:
        """The table of word tokens alone (and epsilon): what a user's words are written in."""
        table = pynini.SymbolTable()
        table.add_symbol(EPSILON, 0)
        for label, tok in sorted(self.tokens.items()):
            table.add_symbol(tok, label)
        return table

    def map_unknown(self, word: Sequence[Token]) -> Word:
        """The word as the model reads it: unseen tokens become `UNK`."""
        return tuple(t if t in self.labels else UNK for t in word)

    def apply(self, word: Sequence[Token]) -> Word:
        """The output of the pass transducers, one after the other, on `word`."""
        mapped = self.map_unknown(word)
        labels = [self.labels[t] for t in mapped]
        for fst in self.passes:
            found = _transduce_labels(fst, labels)
            if found is None:
                raise Error(f"the transducer gives no output for {' '.join(mapped)!r}")
            labels = found
        try:
            return tuple(self.tokens[label] for label in labels)
        except KeyError:  # a pass wrote a symbol that is no token: a damaged transducer
            raise Error(f"the transducer writes a symbol that is not a token for {' '.join(mapped)!r}") from None

    def apply_many(self, words: Iterable[Sequence[Token]]) -> list[Word]:
        """Outputs for many words, through the per-pass tables when available and the
        passes are small enough for them (`tables_fit`), else word by word."""
        if self.walker is None and (self._passes is None or not self.tables_fit()):
            return [self.apply(word) for word in words]
        walk = self.fast()  # reads unseen tokens as UNK itself
        return [walk(word) for word in words]

    def tables_fit(self) -> bool:
        """Are the passes small enough (TABLES_MAX_ARCS arcs together) for tables?"""
        if self._tables_fit is None:
            self._tables_fit = sum(map(arc_count, self.passes)) <= TABLES_MAX_ARCS
        return self._tables_fit

    def fast(self) -> "Walker | TwoWayWalker":
        """The program's passes as tables (built once, on first use): deterministic ones
        walked together (`Walker`) if every pass is subsequential, else bimachines
        walked pass by pass (`TwoWayWalker`)."""
        if self.walker is None:
            if self._passes is None or self._syms is None:
                raise Error("no tables for this transducer (loaded without its passes); use apply")
            build = Walker.build if self.subsequential else TwoWayWalker.build
            self.walker = build(self._passes, self._syms, self.labels, self.tokens)
            self._passes = None  # the tables replace the pass compilers
        return self.walker

    def with_tables_of(self, fresh: "Compiled") -> None:
        """Take the pass tables of `fresh`, the same program compiled again (for a
        loaded model, whose archive keeps only the transducers)."""
        self._passes, self._syms = fresh._passes, fresh._syms
        self.subsequential = fresh.subsequential


#: Passes with more arcs than this together are applied word by word through the pass
#: transducers (`Compiled.apply`), not through tables: for a 10,000-pair learning-curve
#: program (12.6M arcs) the tables took 134 s and 5 GB to build and then ran at a few
#: words/s (their bimachine's state sets grew with every word); on 3,000 pairs (570k
#: arcs) they took 9 s and ran 8x faster than the word-by-word path.
TABLES_MAX_ARCS = 2_000_000

#: The passes are not composed when the product of their states (which bounds the
#: composition's) exceeds this: a default-settings benchmark program with passes of
#: 61,867 and 286 states ran out of memory composing.
MAX_COMPOSED_STATES_BOUND = 5_000_000


class CompositionTooLargeError(UserError):
    """The passes' composition could be too large to build (see `compose_passes`)."""


#: Compositions with more states than this are not optimized: determinizing over label
#: pairs is exponential in the worst case, and passes with right contexts reach it (a
#: 27k-state composition of a default-settings benchmark program passed 14 GB).
OPTIMIZE_STATES_LIMIT = 100_000


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
    if cascade.num_states() <= OPTIMIZE_STATES_LIMIT:
        cascade = cascade.optimize()
    else:
        cascade = cascade.rmepsilon().connect()
    cascade.arcsort("ilabel")
    cascade.set_input_symbols(symbols)
    cascade.set_output_symbols(symbols)
    return cascade


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


_Table = tuple[list[dict[int, tuple[int, tuple[int, ...]]]], list["tuple[int, ...] | None"], int]


def _read_arcs(fst: pynini.Fst) -> tuple[list[list[tuple[int, int, int]]], list[bool]]:
    """Per state, its arcs as (input label, output label, next state); and which states
    are final. Read from the FST's text form: iterating `Fst.arcs` from Python costs
    about 50 microseconds an arc here, parsing the text about 2."""
    fst = fst.copy()
    fst.set_input_symbols(None)
    fst.set_output_symbols(None)
    n = fst.num_states()
    arcs: list[list[tuple[int, int, int]]] = [[] for _ in range(n)]
    is_final = [False] * n
    for line in str(fst).splitlines():
        fields = line.split("\t")
        if len(fields) >= 4:
            src, dst, ilabel, olabel = int(fields[0]), int(fields[1]), int(fields[2]), int(fields[3])
            arcs[src].append((ilabel, olabel, dst))
        elif fields[0]:
            is_final[int(fields[0])] = True
    return arcs, is_final


def _pass_table(pc: "_PassCompiler", syms: "_Symbols") -> _Table:
    """A subsequential pass, determinized as a function, as transition tables."""
    subsequential = syms.internal(("subsequential",))
    chunked, chunks = pc.chunked()
    try:
        det = pynini.determinize(chunked, det_type="functional", subsequential_label=subsequential)
    except Exception as exc:  # pynini raises a bare FstOpError
        raise Error(f"a pass is not a function and cannot be determinized: {exc}") from exc
    return _det_table(det, chunks, subsequential)


def _det_table(det: pynini.Fst, chunks: Mapping[int, tuple[int, ...]], subsequential: int) -> _Table:
    """Transition tables of a deterministic FST: per state, input label -> (next state,
    output labels with chunks expanded), and the output emitted when the word ends there
    (None: the word may not end there). Arcs with an epsilon input occur only on the
    single-arc chains determinization makes for outputs longer than one label (final
    outputs chain on the subsequential label instead); they are followed here so that
    every table entry consumes exactly one input label."""
    arcs, is_final = _read_arcs(det)
    n = len(arcs)

    def expand(olabel: int) -> tuple[int, ...]:
        return chunks.get(olabel, (olabel,)) if olabel else ()

    def follow(state: int, out: tuple[int, ...], chain: int) -> tuple[int, tuple[int, ...]]:
        while not is_final[state]:
            here = arcs[state]
            if len(here) != 1 or here[0][0] != chain:
                break
            out += expand(here[0][1])
            state = here[0][2]
        return state, out

    trans: list[dict[int, tuple[int, tuple[int, ...]]]] = []
    final: list[tuple[int, ...] | None] = []
    for state in range(n):
        row: dict[int, tuple[int, tuple[int, ...]]] = {}
        ends: tuple[int, ...] | None = () if is_final[state] else None
        for ilabel, olabel, dst in arcs[state]:
            if ilabel == 0:
                continue  # the inside of an output chain (see `follow`)
            chain = subsequential if ilabel == subsequential else 0
            nxt, out = follow(dst, expand(olabel), chain)
            if ilabel == subsequential:
                if not is_final[nxt]:
                    raise Error("a final-output arc leads to a non-final state")
                ends = out
            else:
                row[ilabel] = (nxt, out)
        trans.append(row)
        final.append(ends)
    return trans, final, det.start()


def _walk(
    trans: Sequence[Mapping[int, tuple[int, tuple[int, ...]]]], state: int, labels: Iterable[int]
) -> tuple[int, list[int]] | None:
    """Follow `labels` through a deterministic table from `state`: the state reached and
    the output labels, or None where a label has no transition."""
    out: list[int] = []
    for label in labels:
        hit = trans[state].get(label)
        if hit is None:
            return None
        state, emitted = hit
        out += emitted
    return state, out


class _Walking:
    """What both table walkers read words with: the start label, the label unseen tokens
    become, and the token <-> label maps."""

    def __init__(self, start: int, unk: int, labels: Mapping[Token, int], tokens: Mapping[int, Token]) -> None:
        self.start = start
        self.unk = unk
        self.labels = dict(labels)
        self.tokens = dict(tokens)


class Walker(_Walking):
    """A compiled program run from Python dictionaries: per-pass deterministic tables,
    walked together through a lazily built product.

    Each pass is determinized as a function (it is one: DESIGN.md section 8) after its
    multi-token outputs became single chunk labels. The passes' tables are then composed
    on demand: a product state is the tuple of the passes' states, and the first time an
    input label is read in a product state, it is pushed through every pass and the
    result (next product state, output tokens) is cached. A word then costs one
    dictionary lookup per token, however many passes. `Compiled.apply` (the pass transducers)
    stays the reference; the tests compare the two.
    """

    def __init__(
        self, tables: list[_Table], start: int, unk: int, labels: Mapping[Token, int], tokens: Mapping[int, Token]
    ) -> None:
        super().__init__(start, unk, labels, tokens)
        self.tables = tables
        self._ids: dict[tuple[int, ...], int] = {}
        self._states: list[tuple[int, ...]] = []
        self._rows: list[dict[int, tuple[int, tuple[Token, ...]]]] = []
        self._finals: list[tuple[Token, ...] | None | bool] = []
        initial = self._intern(tuple(table[2] for table in tables))
        self._init = self._step(initial, start)

    @classmethod
    def build(
        cls,
        passes: "list[_PassCompiler]",
        syms: "_Symbols",
        labels: Mapping[Token, int],
        tokens: Mapping[int, Token],
    ) -> "Walker":
        tables = [_pass_table(pc, syms) for pc in passes]
        return cls(tables, syms.plain(START_SYMBOL), syms.plain(UNK), labels, tokens)

    # -- the lazy product

    def _intern(self, states: tuple[int, ...]) -> int:
        sid = self._ids.get(states)
        if sid is None:
            sid = self._ids[states] = len(self._states)
            self._states.append(states)
            self._rows.append({})
            self._finals.append(False)  # not computed yet
        return sid

    def _as_tokens(self, labels: Sequence[int]) -> tuple[Token, ...]:
        # The start symbol is in the last pass's output at the start position only.
        return tuple(self.tokens[label] for label in labels if label != self.start)

    def _step(self, sid: int, label: int) -> tuple[int, tuple[Token, ...]] | None:
        """Push one input label through every pass (None: no transition)."""
        states = list(self._states[sid])
        seq: list[int] = [label]
        for k, (trans, _final, _start) in enumerate(self.tables):
            walked = _walk(trans, states[k], seq)
            if walked is None:
                return None
            states[k], seq = walked
        result = (self._intern(tuple(states)), self._as_tokens(seq))
        self._rows[sid][label] = result
        return result

    def _final(self, sid: int) -> tuple[Token, ...] | None:
        """What the passes still output when the word ends in product state `sid`."""
        ends = self._finals[sid]
        if ends is not False:
            return ends  # type: ignore[return-value]
        seq: list[int] = []
        result: tuple[Token, ...] | None = None
        for (trans, final, _start), state in zip(self.tables, self._states[sid]):
            walked = _walk(trans, state, seq)
            tail = None if walked is None else final[walked[0]]
            if walked is None or tail is None:
                break
            seq = walked[1] + list(tail)
        else:
            result = self._as_tokens(seq)
        self._finals[sid] = result
        return result

    def __call__(self, word: Sequence[Token]) -> Word:
        """The output for a word; tokens the model never saw are read as UNK."""
        labels, unk, rows = self.labels, self.unk, self._rows
        sid, first = self._init if self._init is not None else (None, ())
        if sid is None:
            raise Error(f"the transducer gives no output for {' '.join(word)!r}")
        out = list(first)
        for tok in word:
            label = labels.get(tok, unk)
            hit = rows[sid].get(label)
            if hit is None:
                hit = self._step(sid, label)
                if hit is None:
                    raise Error(f"the transducer gives no output for {' '.join(word)!r}")
            sid, emitted = hit
            out += emitted
        ends = self._finals[sid]
        if ends is False:
            ends = self._final(sid)
        if ends is None:
            raise Error(f"the transducer gives no output for {' '.join(word)!r}")
        out += ends  # type: ignore[arg-type]
        return tuple(out)


class _TwoWayPass:
    """One pass, functional but perhaps not subsequential, walked as a bimachine.

    A rule may look arbitrarily far right (a tier test), so no deterministic table
    exists for the pass. A word is read twice instead: right to left, computing at
    every position the set of states from which the rest of the word is accepted
    (the states of the reversed pass's subset construction, built lazily); then left to
    right, taking at each position any arc whose next state is in that set. Every path
    so taken is accepted, and since the pass is a function all accepted paths give the
    same output. Both steps are cached dictionary lookups after the first time.
    """

    def __init__(self, fst: pynini.Fst, chunks: Mapping[int, tuple[int, ...]]) -> None:
        arcs, is_final = _read_arcs(fst)
        if any(ilabel == 0 for row in arcs for ilabel, _, _ in row):
            raise Error("a pass has input epsilons: it cannot be walked a label at a time")
        self.start = fst.start()
        self.arcs: list[dict[int, list[tuple[int, tuple[int, ...]]]]] = []
        self.into: dict[int, dict[int, list[int]]] = {}  # label -> next state -> states
        for src, row in enumerate(arcs):
            by_label: dict[int, list[tuple[int, tuple[int, ...]]]] = {}
            for ilabel, olabel, dst in row:
                out = chunks.get(olabel, (olabel,)) if olabel else ()
                by_label.setdefault(ilabel, []).append((dst, out))
                self.into.setdefault(ilabel, {}).setdefault(dst, []).append(src)
            self.arcs.append(by_label)
        finals = frozenset(q for q, final in enumerate(is_final) if final)
        self._set_ids: dict[frozenset[int], int] = {finals: 0}
        self._sets: list[frozenset[int]] = [finals]
        self._back: dict[tuple[int, int], int] = {}
        self._pick: dict[tuple[int, int, int], tuple[int, tuple[int, ...]] | None] = {}

    def _before(self, set_id: int, label: int) -> int:
        """The states with a `label` arc into set `set_id`, as a set id."""
        key = (set_id, label)
        found = self._back.get(key)
        if found is None:
            into = self.into.get(label, {})
            states = frozenset(q for dst in self._sets[set_id] for q in into.get(dst, ()))
            found = self._set_ids.get(states)
            if found is None:
                found = self._set_ids[states] = len(self._sets)
                self._sets.append(states)
            self._back[key] = found
        return found

    def _choose(self, state: int, label: int, set_id: int) -> tuple[int, tuple[int, ...]] | None:
        key = (state, label, set_id)
        if key not in self._pick:
            live = self._sets[set_id]
            self._pick[key] = next(
                ((dst, out) for dst, out in self.arcs[state].get(label, ()) if dst in live), None
            )
        return self._pick[key]

    def __call__(self, labels: Sequence[int]) -> list[int] | None:
        """The pass's output labels for input `labels` (None: not accepted)."""
        back, pick = self._back, self._pick
        set_id = 0
        accepting = [0]  # reversed: accepting[-1 - i] is the set accepting labels[i:]
        for label in reversed(labels):
            found = back.get((set_id, label))
            set_id = found if found is not None else self._before(set_id, label)
            accepting.append(set_id)
        if self.start not in self._sets[set_id]:
            return None
        accepting.pop()
        state, out = self.start, []
        for label in labels:
            after = accepting.pop()
            step = pick.get((state, label, after))
            if step is None:
                step = self._choose(state, label, after)
                if step is None:
                    return None
            state, emitted = step
            out += emitted
        return out


class _OneWayPass:
    """One subsequential pass, walked left to right through its deterministic table."""

    def __init__(self, table: _Table) -> None:
        self.trans, self.final, self.start = table

    def __call__(self, labels: Sequence[int]) -> list[int] | None:
        """The pass's output labels for input `labels` (None: not accepted)."""
        walked = _walk(self.trans, self.start, labels)
        ends = None if walked is None else self.final[walked[0]]
        return None if walked is None or ends is None else walked[1] + list(ends)


class TwoWayWalker(_Walking):
    """A compiled program run from Python dictionaries when some pass is not
    subsequential, one pass after the other: such a pass walked as a bimachine
    (`_TwoWayPass`), the others through their deterministic tables (`_OneWayPass`).
    Slower than `Walker` (two lookups per label in a bimachine, no product), still far
    faster than composing each word with each pass transducer."""

    def __init__(
        self,
        passes: list[_TwoWayPass | _OneWayPass],
        start: int,
        unk: int,
        labels: Mapping[Token, int],
        tokens: Mapping[int, Token],
    ) -> None:
        super().__init__(start, unk, labels, tokens)
        self.passes = passes

    @classmethod
    def build(
        cls,
        passes: "list[_PassCompiler]",
        syms: "_Symbols",
        labels: Mapping[Token, int],
        tokens: Mapping[int, Token],
    ) -> "TwoWayWalker":
        walks: list[_TwoWayPass | _OneWayPass] = []
        for pc in passes:
            if pass_looks_unboundedly_right(pc.pass_):
                walks.append(_TwoWayPass(*pc.chunked()))
            else:
                walks.append(_OneWayPass(_pass_table(pc, syms)))
        return cls(walks, syms.plain(START_SYMBOL), syms.plain(UNK), labels, tokens)

    def __call__(self, word: Sequence[Token]) -> Word:
        labels, unk = self.labels, self.unk
        seq: list[int] | None = [self.start, *(labels.get(tok, unk) for tok in word)]
        for walk in self.passes:
            seq = walk(seq)  # type: ignore[arg-type]
            if seq is None:
                raise Error(f"the transducer gives no output for {' '.join(word)!r}")
        start, tokens = self.start, self.tokens
        return tuple(tokens[label] for label in seq if label != start)  # type: ignore[union-attr]


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
    tokens = program_tokens(program, alphabet)
    syms = _Symbols(tokens)
    token_list = sorted(tokens)
    start = syms.plain(START_SYMBOL)
    passes = program.passes
    in_tags: list[Transformation | None] = [None]
    pass_compilers: list[_PassCompiler] = []
    pass_fsts: list[pynini.Fst] = []
    for k, pass_ in enumerate(passes):
        last = k == len(passes) - 1
        next_tags = referenced_tags(passes[k + 1]) if not last else set()
        pc = _PassCompiler(pass_, in_tags, next_tags, token_list, features, syms, last)
        rewrite = pc.compile(deadline)
        _check_deadline(deadline)
        out_tags: list[Transformation | None] = [None, *sorted(next_tags, key=str)]
        pass_fsts.append(_framed(rewrite, pc.chunks, syms, token_list, in_tags, out_tags, start))
        pass_compilers.append(pc)
        in_tags = out_tags
    if not pass_fsts:  # the empty program: the identity
        pass_fsts.append(_label_set([syms.plain(t) for t in token_list]).closure())
    public = syms.public()
    for fst in pass_fsts:
        fst.arcsort("ilabel")
        fst.set_input_symbols(public)
        fst.set_output_symbols(public)
    # A pass that looks unboundedly far right is not subsequential: determinizing it
    # would not terminate, so such programs are walked as bimachines instead.
    return Compiled(
        pass_fsts, public, tokens, seconds=time.perf_counter() - started,
        compilers=pass_compilers, syms=syms, subsequential=not looks_unboundedly_right(program),
    )


def _framed(
    rewrite: pynini.Fst,
    chunks: Mapping[int, tuple[int, ...]],
    syms: _Symbols,
    tokens: Sequence[Token],
    in_tags: Sequence[Transformation | None],
    out_tags: Sequence[Transformation | None],
    start: int,
) -> pynini.Fst:
    """A pass on its own: `<s>` inserted in front of the input, the pass, then on its
    output `<s>` removed and chunk labels spelled out (inside the compiler a pass reads
    and writes `<s> w`, with multi-token outputs as chunks)."""
    reads = [_symbol_for(syms, tok, tag) for tag in in_tags for tok in tokens]
    writes = [_symbol_for(syms, tok, tag) for tag in out_tags for tok in tokens]
    frame = _label_map([(0, [start])], star=False)
    frame.concat(_label_set(reads).closure())
    # `<s>` is written first, alone or as the head of a chunk (insertions at the start).
    at_start = {c for c, outs in chunks.items() if outs[:1] == (start,)}
    first = [(start, [])] + [(c, list(chunks[c][1:])) for c in sorted(at_start)]
    rest = [(w, [w]) for w in writes] + [(c, list(outs)) for c, outs in sorted(chunks.items()) if c not in at_start]
    unframe = _label_map(first, star=False)
    unframe.concat(_label_map(rest, star=True))
    return pynini.compose(pynini.compose(frame, rewrite), unframe).optimize()


def program_tokens(program: Program, alphabet: Iterable[Token]) -> set[Token]:
    """Every token a program compiled over `alphabet` reads or writes, and `UNK`."""
    return set(alphabet) | _program_tokens(program) | {UNK}


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
