"""Candidate rules of a pass: for each transformation right at some example that needs a
change, the conjunctions of atoms under which it is worth considering.

Public API:
    Positives, Candidate, CandidateSet, candidates(examples, features, options, deadline, index, edges)
    affix_edges(examples), BOTH_EDGES

Inverse semantics (FlashMeta-style): each example yields the transformations whose
output there is right (`examples.consistent_transformations`); each such
transformation is tried under conjunctions of up to `Options.max_conjuncts` atoms true
at one of its positive examples (where it is right and a change is needed). Candidates
that fire on exactly the same examples are one candidate (observational equivalence):
the cheapest form is kept, ties going to the smaller printed form. Conjunctions still
wrong somewhere are extended, the most promising `Options.beam` at each depth.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping, NamedTuple, Sequence

import numpy as np

from fstsynth.dsl import (
    BOUNDARY,
    CopyInsert,
    CopyReplace,
    Delete,
    Identity,
    Insert,
    IsToken,
    Not,
    Predicate,
    ReplaceAnyBy,
    ReplaceBy,
    Rule,
    TierIs,
    Transformation,
)
from fstsynth.features import harmonic_tier_names
from fstsynth.interpreter import START
from fstsynth.synthesis.atoms import AtomIndex, atom_index
from fstsynth.synthesis.bitsets import LongSet, bit_indices, bits, column_bits, narrowed
from fstsynth.synthesis.examples import TaggedExample, consistent_transformations
from fstsynth.synthesis.feature_changes import feature_transformations
from fstsynth.synthesis.options import CHECK_EVERY, Deadline, Options
from fstsynth.synthesis.ranking import (
    AFFIX_SIDE_DISCOUNT,
    TIERS,
    UNANCHORED_CHANGE_COST,
    UNANCHORED_INSERT_COST,
    constant_copy_cost,
    grows,
    predicate_cost,
    transformation_cost,
)
from fstsynth.types import Features, Token, Word

# Sets over more examples than this are filed in the candidate pools under `LongSet`
# keys: hashing an int costs time in its length, a `LongSet` a constant.
LONG_SET = 1 << 14
#: A pool reads its bitsets on the examples where its transformation applies
#: (`_Pool.rows`) when those are at most one in this many of the examples.
NARROW_SHARE = 2

#: The word edges, as the sign of the offsets that test them: the start (an edge test
#: at an offset of at most 0) and the end.
START_EDGE, END_EDGE = -1, 1
BOTH_EDGES = frozenset((START_EDGE, END_EDGE))


def affix_edges(examples: Sequence[TaggedExample]) -> frozenset[int]:
    """The word edges where the pass's examples insert or delete tokens at the edge
    itself (before the first token, the first token deleted; the last token deleted or
    followed by more): the side of its affixes. Both where it does so at neither (no
    evidence which) or at both (a prefix and a suffix).

    The edge prior is there because a paradigm's forms differ by their affixes, and
    a change next to an affix is conditioned by it; the other edge of the word is as
    far from the affix as any stem token (French `b ɔ n` -> `b ɔ̃`, the final `n` goes:
    the nasal vowel is "before a final n", not "two after the word start", which made
    `f ɔ ʁ t` -> `f ɔ̃ ʁ`).

    Where the pass inserts and deletes at neither edge, an edge whose token every word
    replaces with the same one is its affix's too: an ending replaced by another
    (Icelandic `s aː ɣ a` -> `s œː ɣ ʏ`, every final `a` -> `ʏ`). Without it both edges
    anchored, and the umlaut was "two after the word start", as it is in every training
    word of the shape C V, which left `f l a s k a` unchanged. A change of the edge
    token that writes different tokens (final devoicing: `d` -> `t`, `ɡ` -> `k`) or
    spares some words is the stem's, and says nothing of a side."""
    edges = set()
    # Per edge, what every word writes for its token there (None: not all alike).
    replaced: dict[int, set[Word | None]] = {START_EDGE: set(), END_EDGE: set()}
    for ex in examples:
        if ex.position == START:
            if ex.output:
                edges.add(START_EDGE)
            continue
        kept = ex.output == ex.identity_output
        if ex.position == 0 and not ex.output:
            edges.add(START_EDGE)
        elif ex.position == len(ex.word) - 1 and len(ex.output) != 1:
            edges.add(END_EDGE)
        for edge, at_edge in ((START_EDGE, ex.position == 0), (END_EDGE, ex.position == len(ex.word) - 1)):
            if at_edge:
                replaced[edge].add(None if kept else ex.output)
    if not edges:
        # Two words at least, or one word's change would pass for an ending.
        words = sum(1 for ex in examples if ex.position == len(ex.word) - 1)
        edges = {edge for edge, outputs in replaced.items() if words > 1 and len(outputs) == 1 and None not in outputs}
    return frozenset(edges) or BOTH_EDGES


@dataclass(eq=False, frozen=True)
class Positives:
    """The examples where a transformation is right and a change is needed, in order
    (`indices`; `number` tells transformations apart). A candidate's `gainable` is a
    bitset over this list, not over all examples: counting gains on these small ints
    instead of ones as long as the example list was most of selection's time on large
    inputs. `applies` (where the transformation may fire) and `atom_bits` (where each
    atom holds) give its candidates' `fires`."""

    number: int
    indices: list[int]
    applies: int = 0
    atom_bits: Mapping[Predicate, int] = field(default_factory=dict)


class Candidate(NamedTuple):
    """A rule with where it fires and where it gains, over the examples of a pass."""

    # The rule's parts (`rule` makes the `Rule`: only those selected are made, of the
    # hundreds of thousands of candidates of a large pass).
    predicates: tuple[Predicate, ...]
    transformation: Transformation
    # Where it fires, is right and a change is needed: a bitset over `positives`.
    gainable: int
    positives: Positives
    cost: float
    text: str  # str(rule)
    # Where its transformation is wrong, and where it is right (shared by every
    # candidate of the transformation: a per-candidate `fires & right` was a large part
    # of the search's time on big inputs).
    wrong_where: int
    right_where: int

    @property
    def rule(self) -> Rule:
        return Rule(self.predicates, self.transformation)

    @property
    def fires(self) -> int:
        """Examples where the rule fires: made from its atoms when asked, not kept (a
        bitset over every example for each of a large pass's candidates was most of
        learning's memory)."""
        where = self.positives.applies
        atom_bits = self.positives.atom_bits
        for pred in self.predicates:
            where &= atom_bits[pred]
        return where

    @property
    def correct(self) -> int:
        """Examples where it fires and is right."""
        return self.fires & self.right_where


class CandidateSet(NamedTuple):
    candidates: list[Candidate]
    need: int  # the examples that need a change


class _Atom(NamedTuple):
    """An atom true at some positive example of the transformation searched."""

    pred: Predicate
    bits: int  # where it holds, over all examples
    cost: float
    boundary: bool  # a word-edge test (anchors an insertion)
    anchor: bool  # a word-edge test off the position itself (added to conjunctions)
    opened: str  # its printed opening, "IfThen(atom, "
    local: int  # where it holds, over the positive examples


class _TokenTest(NamedTuple):
    """A test of the token at the position."""

    pred: Predicate
    cost: float
    opened: str  # its printed opening, "IfThen(atom, "


class _Conjunction(NamedTuple):
    """A conjunction on the search's frontier, still wrong somewhere."""

    preds: tuple[Predicate, ...]
    opened: str  # the printed openings of its atoms
    bits: int  # where its rule fires, in the pool's coordinates (`_Pool.narrowed`)
    last: int  # index in the atom list of its last atom (extensions take later ones)
    cost: float  # its predicates' cost
    anchored: bool  # tests a word edge
    has_anchor: bool  # has an anchor atom
    local: int  # where it holds among the positive examples


@dataclass(frozen=True)
class _Transformations:
    """The transformations right at some example, with where each is right and where
    it applies, and the examples that need a change."""

    order: list[Transformation]  # sorted by printed form
    right: dict[Transformation, int]
    applies: dict[Transformation, int]
    need: int


def _transformations(
    examples: Sequence[TaggedExample], features: Features, options: Options, deadline: Deadline
) -> _Transformations:
    n = len(examples)
    window = options.window
    everything = (1 << n) - 1
    correct_at: dict[Transformation, list[int]] = {}
    need_idx = []
    for k, ex in enumerate(examples):
        if k % CHECK_EVERY == 0:
            deadline.check()
        if ex.output != ex.identity_output:
            need_idx.append(k)
        for tr in consistent_transformations(ex, window):
            correct_at.setdefault(tr, []).append(k)
    # At the start position every transformation but Insert/CopyInsert outputs nothing
    # (and ReplaceBy never applies there): such examples are right for all of them.
    empty_starts = bits(k for k, ex in enumerate(examples) if ex.position == START and not ex.output)
    by_token: dict[Token, list[int]] = {}
    for k, ex in enumerate(examples):
        if ex.position != START:
            by_token.setdefault(ex.word[ex.position][0], []).append(k)
    order = sorted(correct_at, key=str)
    right: dict[Transformation, int] = {}
    applies_at: dict[Transformation, int] = {}
    for tr in order:
        if isinstance(tr, ReplaceBy):
            applies = bits(by_token.get(tr.source, []))
        elif isinstance(tr, (CopyReplace, CopyInsert)):
            applies = bits(k for k, ex in enumerate(examples) if ex.token_at(tr.offset) is not None)
        else:
            applies = everything
        correct = bits(correct_at[tr])
        if not isinstance(tr, (Insert, CopyInsert, ReplaceBy)):
            correct |= empty_starts & applies
        right[tr] = correct
        applies_at[tr] = applies
    if options.feature_rules and options.variant == "feature":
        harmonic = harmonic_tier_names(features) if options.harmonic_tiers else ()
        tiers = (*TIERS, *harmonic) if options.tiers else ()
        changes = feature_transformations(examples, need_idx, features, window, tiers, deadline)
        for tr, (correct, applies) in changes.items():
            right[tr] = correct
            applies_at[tr] = applies
        order = sorted(right, key=str)
    return _Transformations(order, right, applies_at, bits(need_idx))


@dataclass(frozen=True)
class _Atoms:
    """The usable atoms of a pass with what the search reads of each, computed once:
    the ranking score is a sum, and its parts are added in the same order as
    `ranking.rule_cost`, so that the floats, and hence the ties, are the same."""

    index: AtomIndex
    cost: dict[Predicate, float]
    boundary: dict[Predicate, bool]
    opened: dict[Predicate, str]
    # The side of the position each atom reads (-1 left, 1 right, 0 the position).
    side: dict[Predicate, int]

    @classmethod
    def of(cls, index: AtomIndex, variant: str) -> _Atoms:
        usable = index.usable
        return cls(
            index,
            {p: predicate_cost(p, variant) for p in usable},
            {p: isinstance(p, IsToken) and p.token is BOUNDARY for p in usable},
            {p: f"IfThen({p}, " for p in usable},
            {p: _side(p) for p in usable},
        )

    def true_at(self, positives: Positives, edges: frozenset[int] = BOTH_EDGES) -> list[_Atom]:
        """The atoms true at some of `positives`, cheapest first. For a change under the
        edge prior, `edges` are the pass's affix edges: only tests of those anchor a rule
        (a test of the start edge reads offset 0 at the start position, or a negative
        one), and where there is one, tests on its side cost `AFFIX_SIDE_DISCOUNT` less."""
        local_bits = column_bits(self.index.table[positives.indices])
        (toward,) = edges if len(edges) == 1 else (None,)
        side = self.side
        atoms = []
        for p, local in zip(self.index.usable, local_bits):
            if not local:
                continue
            cost = self.cost[p] - (AFFIX_SIDE_DISCOUNT if side[p] == toward else 0.0)
            boundary = self.boundary[p] and (END_EDGE if side[p] > 0 else START_EDGE) in edges
            anchor = boundary and p.offset != 0  # type: ignore[union-attr]
            atoms.append(_Atom(p, self.index.bits[p], cost, boundary, anchor, self.opened[p], local))
        return atoms


def _side(pred: Predicate) -> int:
    """The side of the position that `pred` reads: -1 left, 1 right, 0 the position."""
    inner = pred.predicate if isinstance(pred, Not) else pred
    reach = inner.index if isinstance(inner, TierIs) else inner.offset  # type: ignore[union-attr]
    return (reach > 0) - (reach < 0)


def _neighbours(examples: Sequence[TaggedExample]) -> dict[int, list[int]]:
    """Per side (-1, 1), the examples grouped by the token next to the position on that
    side (the word edge a token too), and (side 0) by the token at the position, as
    bitsets."""
    by_side: dict[int, dict[Token | None, list[int]]] = {-1: {}, 0: {}, 1: {}}
    for k, ex in enumerate(examples):
        if ex.position != START:
            for side, groups in by_side.items():
                groups.setdefault(ex.token_at(side), []).append(k)
    return {side: [bits(group) for group in groups.values()] for side, groups in by_side.items()}


@dataclass(frozen=True)
class _Silence:
    """Where a `Delete`'s token is silent and where it is sounded (not at the start
    position), and those split by the token next to it on either side
    (`Options.silent_share`: see `licensed`)."""

    silent: int
    tokens: int
    share: float
    # Per side, per neighbouring token, (where silent, where silent or sounded); side
    # 0: per token deleted, every one (`each_token`).
    cells: dict[int, list[tuple[int, int]]]

    @classmethod
    def of(cls, silent: int, sounded: int, neighbours: dict[int, list[int]], share: float) -> _Silence:
        tokens = silent | sounded
        cells = {
            side: [(group & silent, group & tokens) for group in groups if group & silent]
            for side, groups in neighbours.items()
            if side != 0
        }
        # By the token deleted: every token, silent somewhere or not.
        cells[0] = [(group & silent, group & tokens) for group in neighbours.get(0, []) if group & tokens]
        return cls(silent, tokens, share, cells)

    def within(self, narrowed: Callable[[list[int]], list[int]]) -> _Silence:
        """The same sets in a pool's coordinates (`_Pool.narrowed`), which `licensed`'s
        `fires` is in."""
        silent, tokens = narrowed([self.silent, self.tokens])
        cells = {}
        for side, groups in self.cells.items():
            flat = narrowed([bits for cell in groups for bits in cell])  # silent, tokens, silent, ...
            cells[side] = [(flat[k], flat[k + 1]) for k in range(0, len(flat), 2)]
        return _Silence(silent, tokens, self.share, cells)

    def each_token(self, fires: int) -> bool:
        """Is each token the deletion fires on at two positions or more (decided ones
        too) silent at some of them? Conditions that license some tokens' silence say
        nothing of a token they hold at only where it is sounded: "the token after a
        final `r` goes", taken once the sounded ones are decided, learned from `e`,
        `s`, `t` (French `autre`, `hors`, `fort`), dropped the sounded `a` of an
        unseen `camera`, which no training word shows deleted there. One sounded
        position is no evidence: a lone row of a small paradigm barred an affix's
        deletion (Movima on the dev split)."""
        for cell_silent, cell_tokens in self.cells[0]:
            if (fires & cell_tokens).bit_count() >= 2 and not fires & cell_silent:
                return False
        return True

    def licensed(self, preds: tuple[Predicate, ...], fires: int) -> bool:
        """Does a deletion under `preds`, firing on `fires`, delete where something
        licenses a silent letter? Where its token is silent in at least `share` of the
        positions it fires on, decided ones too, yes. A licence may also be two-sided
        (Spanish `u` is silent after `g` before a front vowel, sounded `w` before `a`,
        `o`): a deletion testing one side only is taken after the rules sounding its
        token, and so deletes where those leave it, which may be a condition on the
        other side. So it passes if, split by the token next to the position on that
        other side, its silent positions lie mostly (`share`) where that token makes it
        mostly silent."""
        if not self.each_token(fires):
            return False
        silent = (fires & self.silent).bit_count()
        if silent >= self.share * (fires & self.tokens).bit_count():
            return True
        sides = {_side(pred) for pred in preds} - {0}
        if len(sides) != 1:
            return False
        licensed = 0
        for cell_silent, cell_tokens in self.cells[-sides.pop()]:
            here = (fires & cell_silent).bit_count()
            if here and here >= self.share * (fires & cell_tokens).bit_count():
                licensed += here
        return licensed >= self.share * silent


class _Pool:
    """The candidates of one transformation, keyed by the examples they fire on (as
    ints, or as `LongSet`s when there are many examples); `offer` keeps a rule if no
    cheaper one (or equal with a smaller printed form) fires on the same examples.

    A rule fires only where its transformation applies, so where the transformation
    applies at few of the examples, the search reads bitsets over those alone
    (`narrowed`, the pool's coordinates): far shorter ints to AND, compare and key
    (a `ReplaceBy` applies only where its token stands), the same sets."""

    def __init__(
        self, tr: Transformation, positives: Positives, right: int, applies: int, n: int, long_sets: bool,
        by_token: list[int], edge_prior: bool = False, copied: Sequence[tuple[int, float]] = (),
        silence: _Silence | None = None, deleted: _TokenTest | None = None,
    ) -> None:
        self.tr = tr
        self.positives = positives
        self.right = right
        self.applies = applies
        self.n = n
        # Where the rule may fire is where its conjunction holds, within `applies`.
        self.everything = (1 << n) - 1
        self.negatives = applies & ~right
        # The pool's coordinates: the examples where the transformation applies, if it
        # applies at few enough for reading the bitsets there to pay (None: all).
        self.rows = np.array(bit_indices(applies), dtype=np.intp) if applies.bit_count() * NARROW_SHARE <= n else None
        width = n if self.rows is None else len(self.rows)
        self.fires_everywhere = self.narrowed([applies])[0]  # where a conjunction of nothing fires
        self.narrow_negatives = self.narrowed([self.negatives])[0]
        self.cost = transformation_cost(tr)
        self.text = str(tr)
        self.grows = grows(tr)
        # What the rule pays more where it tests no word edge (`Options.edge_prior`).
        self.unanchored_cost = (
            UNANCHORED_INSERT_COST if self.grows else UNANCHORED_CHANGE_COST if edge_prior else 0.0
        )
        self.long_sets = long_sets and width > LONG_SET
        # For a `ReplaceAnyBy`, its positive examples by the token replaced (bitsets
        # over `positives`; empty for other transformations): see `kept`.
        self.by_token = by_token
        # For a `Delete` with `Options.silent_share`, where its token is silent and
        # where it is sounded: see `kept`.
        self.silence = None if silence is None else silence.within(self.narrowed)
        # For a copy, its positive examples by the token copied, each with what a rule
        # gaining only there pays more (`ranking.constant_copy_cost`).
        self.copied = copied
        # For a `Delete` whose every positive example deletes the same token, the test
        # of that token: see `_test_deleted_token`.
        self.deleted = deleted
        # Per key, the form kept so far as (cost, opened, preds, fires, gainable): its
        # printed form and its `Candidate` are made once, for the form kept in the end
        # (`kept`), not for each form offered and replaced by a cheaper one.
        self.forms: dict[int | LongSet, tuple[float, str, tuple[Predicate, ...], int, int]] = {}

    def narrowed(self, where: list[int]) -> list[int]:
        """Sets of examples (over all of them) as the pool's coordinates read them,
        within `applies`: where a rule of each would fire."""
        if self.rows is None:
            return [w & self.applies for w in where]
        return narrowed(where, self.rows, self.n)

    def offer(
        self, preds: tuple[Predicate, ...], opened: str, fires: int, preds_cost: float, anchored: bool, gainable: int
    ) -> None:
        """Keep `preds => tr`, which fires on `fires` (in the pool's coordinates) and
        gains among the positive examples on `gainable`, unless a rule at most as cheap
        fires on the same examples.
        `opened`: the printed "IfThen(atom, " of each predicate (a rule is printed only
        on a tie of cost: printing was costly)."""
        if not gainable:
            return
        cost = self.cost + preds_cost
        if not anchored:
            cost += self.unanchored_cost
        key = LongSet(fires, gainable) if self.long_sets else fires
        old = self.forms.get(key)
        if old is not None:
            if cost > old[0]:
                return
            # The same cost: the smaller printed form wins (the old one if the same).
            if cost == old[0] and not self._text(opened, preds) < self._text(old[1], old[2]):
                return
        self.forms[key] = (cost, opened, preds, fires, gainable)

    def _text(self, opened: str, preds: tuple[Predicate, ...]) -> str:
        """The printed form of `preds => tr`, from the predicates' printed openings."""
        return opened + self.text + ")" * len(preds)

    def _test_deleted_token(self, test: _TokenTest) -> None:
        """Make every deletion test the one token the pass deletes (`test`), at the
        position: no row shows a deletion reaching another token, so a rule deleting
        whatever stands where its other tests hold has no evidence of its reach over
        tokens (as a `ReplaceAnyBy` seen replacing one token, `kept`). Japanese
        negatives: every deletion is the `ɾ` of a vowel stem (`t a b e ɾ ɯ` -> `t a b e
        n a i`), and the one of `o ɕ i e ɾ ɯ`, decided by that word alone, was "the
        token before the final `ɯ` goes where the vowel two back is high", which took
        the `ɡ` of `i s o ɡ ɯ` (`i s o a n a i`). Only where the pass deletes one token:
        where it deletes several (Maori truncation, French final consonants), a rule
        gaining on one word's token may well reach the others, and naming that token
        lost Maori's `h u t i a` and four Olympiad queries (docs/learning.md)."""
        holds = self.narrowed([self.positives.atom_bits[test.pred]])[0]
        forms: dict[int | LongSet, tuple[float, str, tuple[Predicate, ...], int, int]] = {}
        for key, form in self.forms.items():
            cost, opened, preds, fires, gainable = form
            if test.pred not in preds:
                fires &= holds
                form = (cost + test.cost, test.opened + opened, (test.pred, *preds), fires, gainable)
                key = LongSet(fires, gainable) if self.long_sets else fires
            old = forms.get(key)
            if old is None or (form[0], self._text(form[1], form[2])) < (old[0], self._text(old[1], old[2])):
                forms[key] = form
        self.forms = forms

    def kept(self) -> list[Candidate]:
        """The candidates kept, in the order their keys were first offered, less those
        that selection can never take (`_undominated`)."""
        tr, positives, negatives, right = self.tr, self.positives, self.negatives, self.right
        narrow_negatives = self.narrow_negatives
        if self.deleted is not None:
            self._test_deleted_token(self.deleted)
        silence = self.silence
        if silence is not None:
            # A deletion testing a word edge removes an ending or a prefix, which a
            # paradigm's exceptions, taken before it, may well hold back (`to` of `to
            # bring` -> `bringen`, but `the` -> `das`): only those inside the word
            # must say where the token is silent; at an edge too, none may fire on a
            # token it never sees silent (`each_token`).
            self.forms = {
                key: form for key, form in self.forms.items()
                if silence.licensed(form[2], form[3])
                or (any(isinstance(p, IsToken) and p.token is BOUNDARY for p in form[2])
                    and silence.each_token(form[3]))
            }
        # The printed forms' ends, by number of predicates.
        ends = [self.text + ")" * size for size in range(max((len(f[2]) for f in self.forms.values()), default=0) + 1)]
        forms: Iterable[tuple[float, str, tuple[Predicate, ...], int, int]] = self.forms.values()
        if self.by_token:
            # A rule replacing any token that was seen to replace one token only has no
            # evidence of its reach over tokens: `ReplaceBy` of that token, under the
            # same conditions, gains the same and leaves the tokens never seen there as
            # they are (a fallback "any last token -> x" learned from one final token
            # rewrote every other one).
            by_token = self.by_token
            forms = [f for f in forms if not any(f[4] & ~group == 0 for group in by_token)]
        if self.copied:
            forms = [
                (cost + next((more for group, more in self.copied if gainable & ~group == 0), 0.0),
                 opened, preds, fires, gainable)
                for cost, opened, preds, fires, gainable in forms
            ]
        # (cost, printed form, predicates, fires, gainable), as `_undominated` reads them,
        # and those right everywhere, sorted out in the same pass.
        printed: list[Form] = []
        right_everywhere: list[Form] = []
        for cost, opened, preds, fires, gainable in forms:
            form = (cost, opened + ends[len(preds)], preds, fires, gainable)
            printed.append(form)
            if not fires & narrow_negatives:
                right_everywhere.append(form)
        # `tuple.__new__` makes the named tuple without the keyword-taking constructor
        # (a large pass keeps hundreds of thousands of candidates).
        new = tuple.__new__
        return [
            new(Candidate, (preds, tr, gainable, positives, cost, text, negatives, right))
            for cost, text, preds, _, gainable in _undominated(printed, narrow_negatives, right_everywhere)
        ]


#: A candidate of one pool before it is made a `Candidate`: (cost, printed form,
#: predicates, fires, gainable), a plain tuple (a large pass has hundreds of thousands).
Form = tuple[float, str, tuple[Predicate, ...], int, int]

#: `_undominated` compares a form with at most this many right-everywhere forms gaining
#: on its first positive example (the best-ranked first): a bound on its time that
#: only lets a few dominated forms through (on 200 French spelling -> IPA pairs, 162k
#: dropped of 164k with no bound).
DOMINATORS_TRIED = 16


def _undominated(forms: list[Form], negatives: int, right_everywhere: list[Form] | None = None) -> list[Form]:
    """`forms` (of one transformation) without those selection can never take: a form
    B is dropped where a form A is right wherever it fires (never on `negatives`),
    gains wherever B gains (`gainable` a superset), has no more predicates, and ranks
    before it (cost, then printed form).

    Selection takes the candidate of most gain still undecided, ranked first among
    equals, that is wrong on no undecided example, or wrong where exceptions may be
    taken before it with its gain shared among them. Whenever B could be taken, its
    positive examples left are undecided, so A gains at least as much, is never wrong
    and needs no exception, and ranks first: A is taken before B (and then B gains
    nothing). As an exception making a change (`Exceptions._changing`, the fewest
    predicates, then most examples covered, then rank), A fires wherever B fires among
    the examples needing a change and is right there: it is chosen before B too. So
    the rules selected are the same, from fewer candidates (a third fewer on a deep
    orthography). `right_everywhere`: those of `forms` never firing on `negatives`, if
    the caller sorted them out already."""
    if right_everywhere is None:
        right_everywhere = [form for form in forms if not form[3] & negatives]
    if not right_everywhere:
        return forms
    right_everywhere.sort(key=lambda form: (form[0], form[1]))
    # Per positive example (bit of `gainable`), the first forms right everywhere gaining
    # there, best-ranked first; `full`: the bits that have `DOMINATORS_TRIED` already
    # (most, on a large pass: only the others are looked at).
    gaining_at: dict[int, list[Form]] = {}
    full = 0
    for form in right_everywhere:
        open_bits = form[4] & ~full
        if not open_bits:
            continue
        for bit in bit_indices(open_bits):
            at = gaining_at.setdefault(bit, [])
            at.append(form)
            if len(at) == DOMINATORS_TRIED:
                full |= 1 << bit
    kept = []
    for form in forms:
        cost, text, preds, _, gainable = form
        for other in gaining_at.get((gainable & -gainable).bit_length() - 1, ()):
            if other[0] > cost or (other[0] == cost and other[1] >= text):
                kept.append(form)  # ranked after it: so are the rest
                break
            if len(other[2]) <= len(preds) and other[4] & gainable == gainable:
                break  # dominated
        else:
            kept.append(form)
    return kept


def _search(pool: _Pool, atoms: list[_Atom], options: Options, deadline: Deadline) -> None:
    """Offer `pool` its transformation under every conjunction worth trying.

    Conjunctions are followed by where their rules fire, in the pool's coordinates
    (`_Pool.narrowed`); whether an atom adds nothing to a conjunction is asked of all
    the examples, but only where it adds nothing where the transformation applies."""
    everything = pool.fires_everywhere
    negatives = pool.narrow_negatives
    all_local = (1 << len(pool.positives.indices)) - 1
    offer = pool.offer
    offer((), "", everything, 0, False, all_local)
    if options.max_conjuncts == 0:
        return
    fires_of = pool.narrowed([a.bits for a in atoms])
    # Where the transformation applies everywhere, where a rule fires is where its
    # conjunction holds: an atom adding nothing there adds nothing.
    applies_everywhere = pool.applies == pool.everything
    atom_bits = pool.positives.atom_bits
    # The anchoring discount makes "conj + boundary test" cheaper than "conj" alone for
    # insertions, so every conjunction is also offered with each anchor.
    # Each atom as a one-predicate tuple, made once: a conjunction grows by one of these
    # (`preds + (a.pred,)` made the one-tuple anew for every extension offered).
    singles = [(a.pred,) for a in atoms]
    anchors = [(a, fires_of[idx], singles[idx]) for idx, a in enumerate(atoms) if a.anchor]

    def offer_anchors(preds: tuple[Predicate, ...], opened: str, fires: int, cost: float, gainable: int) -> None:
        for a, a_fires, single in anchors:
            anchored_gainable = gainable & a.local
            if anchored_gainable:  # `offer` keeps nothing that gains nothing
                offer(preds + single, opened + a.opened, fires & a_fires, cost + a.cost, True, anchored_gainable)

    offer_anchors((), "", everything, 0, all_local)
    frontier: list[_Conjunction] = []
    # Each frontier conjunction's beam key, made where its bits are at hand: (minus)
    # where it holds among the positive examples, then where it is wrong.
    beam_keys: list[tuple[int, int]] = []
    for idx, a in enumerate(atoms):
        a_fires = fires_of[idx]
        offer(singles[idx], a.opened, a_fires, 0 + a.cost, a.boundary, a.local)
        if 1 < options.max_conjuncts and not a.anchor:
            offer_anchors(singles[idx], a.opened, a_fires, 0 + a.cost, a.local)
        a_wrong = a_fires & negatives
        if a_wrong:
            single = singles[idx]
            frontier.append(_Conjunction(single, a.opened, a_fires, idx, 0 + a.cost, a.boundary, a.anchor, a.local))
            beam_keys.append((-a.local.bit_count(), a_wrong.bit_count()))
    for depth in range(2, options.max_conjuncts + 1):
        # Extend the most promising inconsistent conjunctions only (a beam; the sort is
        # stable, as sorting the conjunctions by their keys was).
        beam = sorted(range(len(frontier)), key=beam_keys.__getitem__)[: options.beam]
        frontier = [frontier[i] for i in beam]
        # The deepest conjunctions get no anchor added and are not extended.
        deepest = depth == options.max_conjuncts
        grown: list[_Conjunction] = []
        beam_keys = []
        new_tuple = tuple.__new__
        for conj in frontier:
            deadline.check()
            # The conjunction's fields as locals: this loop is most of the search.
            c_preds, c_opened, c_fires, _, c_cost, c_anchored, c_has_anchor, c_local = conj
            c_holds = -1  # where the conjunction holds over all examples, once asked
            for idx in range(conj.last + 1, len(atoms)):
                a = atoms[idx]
                gainable = c_local & a.local
                if not gainable:
                    continue
                both = c_fires & fires_of[idx]
                if both == c_fires:
                    if applies_everywhere:
                        continue  # adds nothing
                    if c_holds < 0:
                        c_holds = pool.everything
                        for pred in c_preds:
                            c_holds &= atom_bits[pred]
                    if c_holds & a.bits == c_holds:
                        continue  # adds nothing, where the transformation applies or not
                longer = c_preds + singles[idx]
                opened = c_opened + a.opened
                cost = c_cost + a.cost
                anchored = c_anchored or a.boundary
                offer(longer, opened, both, cost, anchored, gainable)
                if deepest:
                    continue
                has_anchor = c_has_anchor or a.anchor
                if anchors and not has_anchor:
                    offer_anchors(longer, opened, both, cost, gainable)
                wrong = both & negatives
                if wrong:
                    # `tuple.__new__`: the named tuple's own constructor is a Python
                    # call per conjunction kept (1.5% of German 3,000 pairs' profile).
                    conjunction = (longer, opened, both, idx, cost, anchored, has_anchor, gainable)
                    grown.append(new_tuple(_Conjunction, conjunction))
                    beam_keys.append((-gainable.bit_count(), wrong.bit_count()))
        frontier = grown


def _grouped(tokens: Sequence[Token]) -> dict[Token, int]:
    """The positive examples, as bits over their list, by a token of each (`tokens`)."""
    groups: dict[Token, int] = {}
    for bit, token in enumerate(tokens):
        groups[token] = groups.get(token, 0) | (1 << bit)
    return groups


def candidates(
    examples: Sequence[TaggedExample],
    features: Features,
    options: Options,
    deadline: Deadline = Deadline(),
    index: AtomIndex | None = None,
    edges: frozenset[int] | None = None,
) -> CandidateSet:
    """The candidate rules of a pass over `examples`, and the examples that need a
    change. `index`: the examples' atoms, if already made. `edges`: the affix edges of
    the edge prior, if known (the column pair's: a later pass, left with the changes
    inside the stem, inserts and deletes nowhere); by default `affix_edges(examples)`."""
    n = len(examples)
    if index is None:
        index = atom_index(examples, features, options, deadline)
    found = _transformations(examples, features, options, deadline)
    atoms = _Atoms.of(index, options.variant)
    # The edges that anchor a change under the edge prior (insertions: either edge).
    if not options.edge_prior:
        edges = BOTH_EDGES
    elif edges is None:
        edges = affix_edges(examples)
    pools = 0
    kept: list[Candidate] = []
    # The start positions: a `Delete` is right at those that output nothing, but deletes
    # no token there.
    starts = bits(k for k, ex in enumerate(examples) if ex.position == START)
    neighbours = _neighbours(examples) if options.silent_share else {}
    for tr in found.order:
        deadline.check()
        positives = found.right[tr] & found.need
        if not positives:
            continue
        by_token: list[int] = []
        silence = None
        if isinstance(tr, Delete) and options.silent_share:
            silence = _Silence.of(
                found.right[tr] & ~starts, found.applies[tr] & ~found.right[tr] & ~starts, neighbours,
                options.silent_share,
            )
        copied: list[tuple[int, float]] = []
        deleted: _TokenTest | None = None
        if isinstance(tr, Delete):
            # Only where every deletion the pass makes deletes the same token: then no
            # row shows the deletion reaching another token. Where it deletes several
            # (Maori truncation deletes `k m ŋ ɾ h t`), a rule gaining on one word
            # stays free to reach the others.
            groups = _grouped([examples[k].word[examples[k].position][0] for k in bit_indices(positives)])
            if len(groups) == 1:
                (token,) = groups
                if (test := IsToken(token, 0)) in atoms.cost:  # else its token is no atom
                    deleted = _TokenTest(test, atoms.cost[test], atoms.opened[test])
        elif isinstance(tr, ReplaceAnyBy):
            groups = _grouped([examples[k].word[examples[k].position][0] for k in bit_indices(positives)])
            if len(groups) == 1:
                continue  # every candidate would be one token's: `ReplaceBy`'s pool has them
            by_token = list(groups.values())
        elif isinstance(tr, (CopyReplace, CopyInsert)):
            # Where a copy applies there is a token to copy: right implies applies.
            copied_tokens = [examples[k].token_at(tr.offset) or "" for k in bit_indices(positives)]
            copied = [(group, constant_copy_cost(tr, token, options.variant))
                      for token, group in _grouped(copied_tokens).items()]
        # Right implies applies, so a conjunction true on a positive example is right on
        # an example that needs a change.
        assert not positives & ~found.applies[tr]
        prior = options.edge_prior and not isinstance(tr, Identity)
        pool = _Pool(
            tr, Positives(pools, bit_indices(positives), found.applies[tr], index.bits), found.right[tr],
            found.applies[tr], n,
            n > LONG_SET, by_token, prior, copied, silence, deleted,
        )
        pools += 1
        # The search tests "true on some positive example" on bitsets over the positive
        # examples only: far shorter than the example list.
        anchoring = edges if prior and not pool.grows else BOTH_EDGES  # insertions: either edge
        _search(pool, atoms.true_at(pool.positives, anchoring), options, deadline)
        # Kept as made, so that only one pool's forms (each with its bitset over every
        # example) are held at a time.
        kept.extend(pool.kept())
    return CandidateSet(kept, found.need)


