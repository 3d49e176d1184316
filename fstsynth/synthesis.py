"""Synthesis: learn a program from word pairs (FlashMeta-style candidates, NDSyn selection).

Public API:
    Options, LearnResult, VARIANTS, AUTO
    learn(pairs, features, options) -> LearnResult   (variant "auto": chosen by k-fold CV)
    token_map_pass(examples) -> Pass                 (first pass of a transcription)
    synthesize_pass(examples, features, options) -> Pass
    rule_cost(rule, variant) -> float       (the ranking score is its negation)

Outline (DESIGN.md section 4):
1. Align every training pair into token-level examples (`alignment`).
2. Candidates by inverse semantics: the transformations consistent with each example,
   times conjunctions of up to `max_conjuncts` atomic predicates true there, within
   offsets -window..window. Each atom and each transformation owns a bitset over the
   examples (Python ints), so "where does this rule fire, and is it right there" is a
   few AND/popcount operations; gains are counted on bitsets over each
   transformation's positive examples only (`_Positives`), far shorter on large
   inputs. Candidates that fire on exactly the same examples are one candidate
   (observational equivalence); the cheapest form is kept.
3. Selection builds the decision list top-down: repeatedly take the rule that answers
   the most still-undecided examples that need a change, among those that answer no
   undecided example wrongly; ties go to the better ranking score, then to the printed
   form (determinism). Examples a rule fires on are decided by it. A rule wrong only
   on undecided examples that need no change may be taken with up to
   `Options.exceptions` `Identity` rules before it that fire first there
   (`_Exceptions`), its gain then shared among them.
4. Passes: the chosen pass is run on the training words, the words still wrong are
   re-aligned against their targets (tags kept) and the next pass learns from all of
   them, up to `max_passes`.
"""

from __future__ import annotations

import heapq
import time
from concurrent.futures import Executor
from dataclasses import dataclass, field, replace
from typing import Iterable, Mapping, Sequence

import numpy as np

from fstsynth.alignment import (
    Affinity,
    align_pair,
    base_letters,
    examples_from_alignment,
    learn_affinity,
)
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
)
from fstsynth.errors import UserError
from fstsynth.interpreter import START, TaggedToken, apply_transformation, run_many, run_pass_many
from fstsynth.types import Token, Word, Features


VARIANTS = ("nofeature", "token", "feature")
#: `auto` picks one of VARIANTS per column pair by cross-validation on the training rows.
AUTO = "auto"


class Error(UserError):
    """Learning was asked for something it cannot do (bad option, limit reached)."""


@dataclass(frozen=True)
class Options:
    variant: str = AUTO
    window: int = 2
    max_conjuncts: int = 3
    max_passes: int = 3
    alignment: str = "global"
    beam: int = 400
    time_limit: float | None = None
    # Learn which source token corresponds to which target token before aligning
    # (`alignment.learn_affinity`): needed when the two columns use different symbols.
    affinity: bool = True
    # For a transcription into other symbols, start with a context-free token map pass
    # (`token_map_pass`); then `max_passes` passes of rules.
    token_map: bool = True
    # Otherwise, start by writing letters with diacritics that no target uses as plain
    # letters (`plain_letter_pass`). `auto` tries it by cross-validation where it applies.
    plain_letters: bool = False
    # Predicates on tiers (`TierIs`: the nearest vowels left and right) as candidates.
    tiers: bool = True
    # Folds of the cross-validation by which `auto` picks a variant per column pair.
    folds: int = 3
    # The cross-validation reads at most this many rows, evenly spaced (the program is
    # still learned from all rows): with more, the choice costs more than the program.
    cv_rows: int = 1000
    # A broad rule wrong only on examples that need no change may be taken with up to
    # this many `Identity` rules before it that keep those examples as they are, and a
    # very broad one also with rules making another change at a few odd examples
    # (`_Exceptions`); 0: never.
    exceptions: int = 3

    def __post_init__(self) -> None:
        if self.variant not in (*VARIANTS, AUTO):
            raise Error(
                f"variant must be one of {', '.join((*VARIANTS, AUTO))}, not {self.variant!r}"
            )
        if self.folds < 2:
            raise Error(f"folds must be at least 2, not {self.folds}")
        if self.cv_rows < self.folds:
            raise Error(f"cv_rows must be at least folds ({self.folds}), not {self.cv_rows}")
        if self.alignment not in ("global", "local"):
            raise Error(f"alignment must be 'global' or 'local', not {self.alignment!r}")
        if not 0 <= self.window <= 6:
            raise Error(f"window must be between 0 and 6, not {self.window}")
        if not 1 <= self.max_passes <= 10:
            raise Error(f"max_passes must be between 1 and 10, not {self.max_passes}")
        if not 0 <= self.exceptions <= 10:
            raise Error(f"exceptions must be between 0 and 10, not {self.exceptions}")
        if not 0 <= self.max_conjuncts <= 4:
            raise Error(f"max_conjuncts must be between 0 and 4, not {self.max_conjuncts}")


@dataclass(frozen=True)
class LearnResult:
    program: Program
    cost: float  # sum of rule costs: lower is preferred
    train_correct: int
    train_total: int
    seconds: dict[str, float] = field(default_factory=dict)
    variant: str = ""  # the variant that learned the program
    # Share of training rows predicted right by programs learned without them
    # (cross-validation; None when not measured): how far the program generalizes.
    held_out: float | None = None


# ------------------------------------------------------------------ ranking score


_TOKEN_COST = {"nofeature": 0.3, "token": 0.2, "feature": 0.6}
_FEATURE_COST = {"nofeature": float("inf"), "token": 0.6, "feature": 0.1}


def predicate_cost(pred: Predicate, variant: str) -> float:
    if isinstance(pred, Not):
        return predicate_cost(pred.predicate, variant) + 0.3
    if isinstance(pred, TierIs):
        # Farther-reaching than a neighbour test: a little dearer, so local rules win ties.
        base = TIER_COST + 0.5 * (abs(pred.index) - 1)
        return base + (0.1 if pred.feature is BOUNDARY else _FEATURE_COST[variant])
    base = 1.0 + 0.5 * abs(pred.offset)
    if isinstance(pred, IsToken):
        return base + (0.1 if pred.token is BOUNDARY else _TOKEN_COST[variant])
    if isinstance(pred, Is):
        return base + _FEATURE_COST[variant]
    return base + 0.2  # TransformationApplied


TIER_COST = 1.3
#: Tiers that tier predicates look along (when the features define them), and how far.
TIERS = ("vowel",)
TIER_INDICES = (1, -1, 2, -2)


def transformation_cost(tr: Transformation) -> float:
    if isinstance(tr, Identity):
        return 0.5
    if isinstance(tr, Delete):
        return 1.0
    if isinstance(tr, ReplaceAnyBy):
        return 1.0 + 0.2 * len(tr.target)
    if isinstance(tr, ReplaceBy):
        return 1.3 + 0.2 * len(tr.target)
    if isinstance(tr, Insert):
        return 1.0 + 0.2 * len(tr.tokens)
    return 1.0 + 0.3 * abs(tr.offset)  # CopyReplace, CopyInsert


# Insertions are mostly affixes: an insertion not anchored at a word edge is a priori
# unlikely, so it pays this much more than one that tests the boundary.
UNANCHORED_INSERT_COST = 2.0


def _anchored(rule: Rule) -> bool:
    return any(isinstance(p, IsToken) and p.token is BOUNDARY for p in rule.predicates)


def _grows(tr: Transformation) -> bool:
    """Does `tr` output more tokens than it reads (an insertion, in effect)?"""
    return isinstance(tr, (Insert, CopyInsert)) or (
        isinstance(tr, (ReplaceBy, ReplaceAnyBy)) and len(tr.target) > 1
    )


def rule_cost(rule: Rule, variant: str) -> float:
    cost = transformation_cost(rule.transformation) + sum(
        predicate_cost(p, variant) for p in rule.predicates
    )
    if _grows(rule.transformation) and not _anchored(rule):
        cost += UNANCHORED_INSERT_COST
    return cost


# ------------------------------------------------------------------ examples


@dataclass(frozen=True)
class TaggedExample:
    """Tagged word `word` at `position` must produce `output`."""

    word: tuple[TaggedToken, ...]
    position: int
    output: Word

    def token_at(self, offset: int) -> Token | None:
        index = self.position + offset
        return self.word[index][0] if 0 <= index < len(self.word) else None

    def tag_at(self, offset: int) -> Transformation | None:
        index = self.position + offset
        return self.word[index][1] if 0 <= index < len(self.word) else None

    @property
    def identity_output(self) -> Word:
        return () if self.position == START else (self.word[self.position][0],)


def tagged_examples(
    word: Sequence[TaggedToken],
    target: Word,
    features: Features,
    mode: str,
    affinity: Affinity | None = None,
    one_to_one: bool | None = None,
) -> list[TaggedExample]:
    tokens = tuple(tok for tok, _ in word)
    columns = align_pair(tokens, target, features, mode, affinity, one_to_one)
    frozen = tuple(word)
    return [
        TaggedExample(frozen, e.position, e.output)
        for e in examples_from_alignment(tokens, target, columns)
    ]


def _bits(indices: Iterable[int]) -> int:
    """A bitset (Python int) with the given bits set."""
    indices = list(indices)
    if not indices:
        return 0
    buf = bytearray((max(indices) >> 3) + 1)
    for k in indices:
        buf[k >> 3] |= 1 << (k & 7)
    return int.from_bytes(buf, "little")


def _lowest_bit(bits: int) -> int:
    """Index of the lowest set bit of a nonzero bitset."""
    return (bits & -bits).bit_length() - 1


def _bit_indices(bits: int) -> list[int]:
    """Indices of the set bits of a bitset, ascending."""
    # The binary text is scanned in C: far cheaper than peeling bits off a long int.
    text = bin(bits)[:1:-1]  # least significant first, without the "0b"
    out = []
    k = text.find("1")
    while k >= 0:
        out.append(k)
        k = text.find("1", k + 1)
    return out


# ------------------------------------------------------------------ candidates


def _column_bits(table: np.ndarray) -> list[int]:
    """Each column of a 0/1 table as a bitset over its rows (row k is bit k)."""
    packed = np.ascontiguousarray(np.packbits(table, axis=0, bitorder="little").T)
    return [int.from_bytes(row.tobytes(), "little") for row in packed]


def _atom_table(
    examples: Sequence[TaggedExample], features: Features, options: Options
) -> tuple[list[Predicate], np.ndarray]:
    """Every atomic predicate true at some example, and a 0/1 table with a row per
    example and a column per predicate, in that order."""
    use_features = options.variant != "nofeature"
    feature_names = sorted({f for feats in features.values() for f in feats}) if use_features else []
    w = options.window
    tiers = [t for t in TIERS if t in feature_names] if options.tiers else []
    # The atoms true at an example depend on one value in each of a few slots around it
    # (the (token, tag) at an offset; the token at a tier index): each such group of
    # atoms is made once, as indices into `found` (the atoms in the order first seen,
    # which the result keeps), and an example only records its group's number in each
    # slot. The table is then filled a slot at a time, numpy copying each group's row to
    # its examples. (Hashing predicates once per example was most of the cost; then
    # appending each example to its atoms' lists.)
    found: list[Predicate] = []
    index_of: dict[Predicate, int] = {}
    slot_groups: dict[tuple[str, int] | int, list[tuple[int, ...]]] = {}  # per slot, its groups
    slot_rows: dict[tuple[str, int] | int, list[int]] = {}  # per slot, each example's group

    def indices(preds: list[Predicate]) -> tuple[int, ...]:
        out = []
        for pred in preds:
            i = index_of.get(pred)
            if i is None:
                i = index_of[pred] = len(found)
                found.append(pred)
            out.append(i)
        return tuple(out)

    def new_group(slot: tuple[str, int] | int, preds: list[Predicate]) -> int:
        groups = slot_groups.setdefault(slot, [])
        groups.append(indices(preds))
        return len(groups) - 1

    tier_cache: dict[tuple[int, str], list[int]] = {}
    tier_groups: dict[tuple[str, int, Token | None], int] = {}

    def tier_group(tier: str, index: int, tok: Token | None) -> int:
        """The group of atoms on the `index`-th `tier` token, `tok` (None: there is none)."""
        key = (tier, index, tok)
        group = tier_groups.get(key)
        if group is None:
            preds: list[Predicate] = []
            if tok is None:
                preds.append(TierIs(tier, BOUNDARY, index))
                # No such tier token: every feature test there is false, so its
                # negation holds (as the interpreter and transducer read it).
                preds.extend(Not(TierIs(tier, f, index)) for f in feature_names if f != tier)
            else:
                preds.append(Not(TierIs(tier, BOUNDARY, index)))
                feats = features.get(tok, {})
                for f in feature_names:
                    if f == tier:
                        continue
                    pred = TierIs(tier, f, index)
                    preds.append(pred if feats.get(f, False) else Not(pred))
            group = tier_groups[key] = new_group((tier, index), preds)
        return group

    tier_slots = [
        (tier, [(index, slot_rows.setdefault((tier, index), [])) for index in TIER_INDICES])
        for tier in tiers
    ]
    for ex in examples:
        for tier, slots in tier_slots:
            key = (id(ex.word), tier)
            on = tier_cache.get(key)
            if on is None:
                on = [i for i, (tok, _) in enumerate(ex.word) if features.get(tok, {}).get(tier, False)]
                tier_cache[key] = on
            right = [i for i in on if i > ex.position]
            left = [i for i in reversed(on) if i < ex.position]
            for index, rows in slots:
                seq = right if index > 0 else left
                tok = ex.word[seq[abs(index) - 1]][0] if abs(index) <= len(seq) else None
                rows.append(tier_group(tier, index, tok))

    groups: dict[tuple[int, Token | None, int], int] = {}
    offset_slots = [(offset, slot_rows.setdefault(offset, [])) for offset in range(-w, w + 1)]
    for ex in examples:
        word, position = ex.word, ex.position
        for offset, rows in offset_slots:
            at = position + offset
            if 0 <= at < len(word):
                tok, tag = word[at]
            else:
                tok = tag = None
            # Tags are keyed by identity: cheap to hash, and the words keep them alive.
            key = (offset, tok, id(tag))
            group = groups.get(key)
            if group is None:
                preds: list[Predicate] = [IsToken(tok, offset)]
                if tok is not None:
                    preds.append(Not(IsToken(BOUNDARY, offset)))
                    if tag is not None:
                        preds.append(TransformationApplied(tag, offset))
                feats = features.get(tok, {}) if tok is not None else {}
                for f in feature_names:
                    preds.append(Is(f, offset) if feats.get(f, False) else Not(Is(f, offset)))
                group = groups[key] = new_group(offset, preds)
            rows.append(group)
    table = np.zeros((len(examples), len(found)), dtype=np.uint8)
    for slot, made in slot_groups.items():
        # A slot's atoms name its offset (or tier and index): no other slot has them.
        columns = sorted({i for group in made for i in group})
        place = {i: j for j, i in enumerate(columns)}
        member = np.zeros((len(made), len(columns)), dtype=np.uint8)
        for number, group in enumerate(made):
            member[number, [place[i] for i in group]] = 1
        table[:, columns] = member[np.array(slot_rows[slot], dtype=np.intp)]
    return found, table


def _consistent_transformations(ex: TaggedExample, window: int) -> list[Transformation]:
    """Inverse semantics: the transformations whose output here is `ex.output`."""
    out = ex.output
    found: list[Transformation] = []
    if ex.position == START:
        if out:
            found.append(Insert(out))
            if len(out) == 1:
                found.extend(
                    CopyInsert(i) for i in range(1, window + 1) if ex.token_at(i) == out[0]
                )
        return found  # empty outputs at the start: see _start_defaults
    x = ex.word[ex.position][0]
    if out == (x,):
        found.append(Identity())
    if not out:
        found.append(Delete())
    elif len(out) == 1 or out[0] != x:  # x followed by more is Insert's job
        found.append(ReplaceAnyBy(out))
        if out != (x,):
            found.append(ReplaceBy(x, out))
    if len(out) >= 2 and out[0] == x:
        found.append(Insert(out[1:]))
    if len(out) == 1:
        found.extend(
            CopyReplace(i)
            for i in range(-window, window + 1)
            if i != 0 and ex.token_at(i) == out[0]
        )
    if len(out) == 2 and out[0] == x:
        found.extend(
            CopyInsert(i) for i in range(-window, window + 1) if ex.token_at(i) == out[1]
        )
    return found


@dataclass(eq=False)
class _Positives:
    """The examples where a transformation is right and a change is needed, in order
    (`indices`; `number` tells transformations apart). A candidate's `gainable` is a
    bitset over this list, not over all examples: counting gains on these small ints
    instead of ones as long as the example list was most of selection's time on large
    inputs."""

    number: int
    indices: list[int]


@dataclass
class _Candidate:
    rule: Rule
    fires: int  # examples where the rule fires
    # Where it fires, is right and a change is needed: a bitset over `positives`.
    gainable: int
    positives: _Positives
    cost: float
    text: str
    # Where its transformation is wrong, and where it is right (shared by every
    # candidate of the transformation: a per-candidate `fires & right` was a large part
    # of the search's time on big inputs).
    wrong_where: int
    right_where: int

    @property
    def correct(self) -> int:
        """Examples where it fires and is right."""
        return self.fires & self.right_where


_LOW_BITS = (1 << 64) - 1
# Sets over more examples than this are filed in the candidate pools under `_LongSet`
# keys: hashing an int costs time in its length, a `_LongSet` a constant.
_LONG_SET = 1 << 14


class _LongSet:
    """A long bitset as a dict key, hashed from a few facts about it that cost a few
    machine words each, whatever its length: where it holds among the positive
    examples, its highest example, the 64 examples below that, and the first 64
    examples. Hashing the int itself was the search's largest cost on large inputs."""

    __slots__ = ("bits", "hash")

    def __init__(self, bits: int, gainable: int) -> None:
        length = bits.bit_length()
        self.bits = bits
        self.hash = hash((gainable, length, bits >> max(length - 64, 0), bits & _LOW_BITS))

    def __hash__(self) -> int:
        return self.hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _LongSet) and self.bits == other.bits


class _Timer:
    def __init__(self, limit: float | None) -> None:
        self.deadline = None if limit is None else time.monotonic() + limit

    def check(self) -> None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise Error("time limit reached while learning (raise --time-limit)")


@dataclass
class _AtomIndex:
    """The atoms of a set of examples, made once per pass for the candidate search and
    the exception search (`_Exceptions`)."""

    bits: dict[Predicate, int]  # every atom, with its bitset over the examples
    usable: list[Predicate]  # the atoms a rule may test, cheapest first, then by text
    table: np.ndarray  # 0/1: a row per example, a column per atom of `usable`


def _atom_index(
    examples: Sequence[TaggedExample], features: Features, options: Options
) -> _AtomIndex:
    found, table = _atom_table(examples, features, options)
    column = {p: i for i, p in enumerate(found)}
    atoms = dict(zip(found, _column_bits(table)))
    atom_list = sorted(atoms, key=lambda p: (predicate_cost(p, options.variant), str(p)))
    atom_list = [p for p in atom_list if predicate_cost(p, options.variant) != float("inf")]
    # The table restricted to the listed atoms, in their order: rows of a
    # transformation's positive examples are cut from it.
    return _AtomIndex(atoms, atom_list, np.ascontiguousarray(table[:, [column[p] for p in atom_list]]))


def _candidates(
    examples: Sequence[TaggedExample],
    features: Features,
    options: Options,
    timer: _Timer,
    index: _AtomIndex | None = None,
) -> tuple[list[_Candidate], int]:
    """The candidate rules and the bitset of examples that need a change. `index`: the
    examples' atoms, if already made."""
    n = len(examples)
    everything = (1 << n) - 1
    if index is None:
        index = _atom_index(examples, features, options)
    atoms, atom_list, atom_table = index.bits, index.usable, index.table

    correct_at: dict[Transformation, list[int]] = {}
    need_idx = []
    for k, ex in enumerate(examples):
        if ex.output != ex.identity_output:
            need_idx.append(k)
        for tr in _consistent_transformations(ex, options.window):
            correct_at.setdefault(tr, []).append(k)
    need = _bits(need_idx)
    # At the start position every transformation but Insert/CopyInsert outputs nothing
    # (and ReplaceBy never applies there): such examples are right for all of them.
    empty_starts = [
        k for k, ex in enumerate(examples) if ex.position == START and not ex.output
    ]
    by_token: dict[Token, list[int]] = {}
    for k, ex in enumerate(examples):
        if ex.position != START:
            by_token.setdefault(ex.word[ex.position][0], []).append(k)
    transformations = sorted(correct_at, key=str)
    correct_bits: dict[Transformation, int] = {}
    applies_bits: dict[Transformation, int] = {}
    for tr in transformations:
        if isinstance(tr, ReplaceBy):
            applies = _bits(by_token.get(tr.source, []))
        elif isinstance(tr, (CopyReplace, CopyInsert)):
            applies = _bits(
                k for k, ex in enumerate(examples) if ex.token_at(tr.offset) is not None
            )
        else:
            applies = everything
        correct = _bits(correct_at[tr])
        if not isinstance(tr, (Insert, CopyInsert, ReplaceBy)):
            correct |= _bits(empty_starts) & applies
        correct_bits[tr] = correct
        applies_bits[tr] = applies

    # Candidates per transformation, keyed by the examples they fire on (as ints, or as
    # `_LongSet`s when there are many examples).
    pool: dict[Transformation, dict[int | _LongSet, _Candidate]] = {}
    long_sets = n > _LONG_SET
    # The ranking score is a sum: its parts are computed once (summed in the same order
    # as `rule_cost`, so the floats and hence the ties are the same).
    atom_cost = {p: predicate_cost(p, options.variant) for p in atom_list}
    is_boundary = {p: isinstance(p, IsToken) and p.token is BOUNDARY for p in atom_list}
    atom_open = {p: f"IfThen({p}, " for p in atom_list}

    for tr in transformations:
        timer.check()
        positives = correct_bits[tr] & need
        if not positives:
            continue
        # The search tests "true on some positive example" on bitsets over the positive
        # examples only (`local`): far shorter than the example list.
        tr_positives = _Positives(len(pool), _bit_indices(positives))
        local_bits = _column_bits(atom_table[tr_positives.indices])
        local = {p: bits for p, bits in zip(atom_list, local_bits)}
        all_local = (1 << len(tr_positives.indices)) - 1
        applies, right = applies_bits[tr], correct_bits[tr]
        negatives = applies & ~right
        tr_cost = transformation_cost(tr)
        tr_text = str(tr)
        grows = _grows(tr)
        tr_pool = pool[tr] = {}

        # Where the rule may fire is where its conjunction holds, within `applies`.
        restrict = applies != everything
        # What `correct & need` is for a conjunction: right implies applies, so a
        # conjunction true on a positive example is right on a needed one.
        assert not positives & ~applies

        def offer(
            preds: tuple[Predicate, ...],
            opened: str,
            bits: int,
            preds_cost: float,
            anchored: bool,
            gainable: int,
        ) -> None:
            """Keep `preds` => tr if no cheaper (or equal, smaller printed) rule fires on
            the same examples. `opened`: the printed "IfThen(atom, " of each predicate;
            `gainable`: where `preds` hold among the positive examples (local)."""
            if not gainable:
                return
            fires = bits & applies if restrict else bits
            cost = tr_cost + preds_cost
            if grows and not anchored:
                cost += UNANCHORED_INSERT_COST
            key = _LongSet(fires, gainable) if long_sets else fires
            old = tr_pool.get(key)
            if old is not None and cost > old.cost:
                return
            # Printing a rule is costly: once per rule kept or tied, never otherwise, and
            # from the printed atoms (what `Rule.__str__` writes, without re-printing them).
            text = opened + tr_text + ")" * len(preds)
            if old is None or cost < old.cost or text < old.text:
                tr_pool[key] = _Candidate(
                    Rule(preds, tr), fires, gainable, tr_positives, cost, text, negatives, right
                )

        if options.max_conjuncts == 0:
            offer((), "", everything, 0, False, all_local)
            continue
        # (atom, its bits, its cost, a boundary test?, an anchor?, its printed opening,
        # its local bits) for the atoms true on some positive example; flags travel with
        # each conjunction (no re-hashing).
        useful = [
            (p, atoms[p], atom_cost[p], is_boundary[p], is_boundary[p] and p.offset != 0, atom_open[p], local[p])  # type: ignore[union-attr]
            for p in atom_list
            if local[p]
        ]
        # The anchoring discount makes "conj + boundary test" cheaper than "conj" alone
        # for insertions, so every conjunction is also offered with each anchor.
        anchors = [
            (p, bits, cost, p_open, p_local)
            for p, bits, cost, _, anchor, p_open, p_local in useful
            if anchor
        ]

        def offer_anchors(
            preds: tuple[Predicate, ...], opened: str, bits: int, preds_cost: float, gainable: int
        ) -> None:
            for a, abits, acost, a_open, a_local in anchors:
                both_local = gainable & a_local
                if both_local:
                    offer(preds + (a,), opened + a_open, bits & abits, preds_cost + acost, True, both_local)

        offer((), "", everything, 0, False, all_local)
        if options.max_conjuncts > 0:
            offer_anchors((), "", everything, 0, all_local)
        # (conjunction, printed opening, bits, index of its last atom in `useful`, cost,
        # boundary?, anchor?, local bits)
        frontier: list[tuple[tuple[Predicate, ...], str, int, int, float, bool, bool, int]] = []
        for idx, (p, bits, cost, boundary, anchor, p_open, p_local) in enumerate(useful):
            offer((p,), p_open, bits, 0 + cost, boundary, p_local)
            if 1 < options.max_conjuncts and not anchor:
                offer_anchors((p,), p_open, bits, 0 + cost, p_local)
            if bits & negatives:
                frontier.append(((p,), p_open, bits, idx, 0 + cost, boundary, anchor, p_local))
        closers = [")" * k for k in range(options.max_conjuncts + 1)]
        for depth in range(2, options.max_conjuncts + 1):
            # Extend the most promising inconsistent conjunctions only (a beam).
            frontier.sort(
                key=lambda c: (
                    -c[7].bit_count(),
                    (c[2] & negatives).bit_count(),
                )
            )
            frontier = frontier[: options.beam]
            # The deepest conjunctions get no anchor added and are not extended.
            deepest = depth == options.max_conjuncts
            closer = closers[depth]
            next_frontier = []
            for preds, opened, bits, last, preds_cost, anchored, has_anchor, bits_local in frontier:
                timer.check()
                for idx in range(last + 1, len(useful)):
                    p, pbits, cost, boundary, anchor, p_open, p_local = useful[idx]
                    gainable = bits_local & p_local
                    if not gainable:
                        continue
                    both = bits & pbits
                    if both == bits:
                        continue
                    # `offer`, inlined on this hot path (the test on positives is done).
                    more_cost = preds_cost + cost
                    now_anchored = anchored or boundary
                    fires = both & applies if restrict else both
                    rule_cost_ = tr_cost + more_cost
                    if grows and not now_anchored:
                        rule_cost_ += UNANCHORED_INSERT_COST
                    key = _LongSet(fires, gainable) if long_sets else fires
                    old = tr_pool.get(key)
                    if old is None or rule_cost_ <= old.cost:
                        text = opened + p_open + tr_text + closer
                        if old is None or rule_cost_ < old.cost or text < old.text:
                            tr_pool[key] = _Candidate(
                                Rule(preds + (p,), tr), fires, gainable, tr_positives,
                                rule_cost_, text, negatives, right,
                            )
                    if deepest:
                        continue
                    longer = preds + (p,)
                    now_anchor = has_anchor or anchor
                    if anchors and not now_anchor:
                        offer_anchors(longer, opened + p_open, both, more_cost, gainable)
                    if both & negatives:
                        next_frontier.append(
                            (longer, opened + p_open, both, idx, more_cost, now_anchored, now_anchor,
                             gainable)
                        )
            frontier = next_frontier
    return [cand for tr_pool in pool.values() for cand in tr_pool.values()], need


# ------------------------------------------------------------------ selection


#: A rule making at least this many changes may be taken with exceptions that make
#: other changes, at one example in `_NOISE_SHARE` of its gain at most: in data this
#: large an odd word is more likely a loan or a slip than a rule (Spanish `hills` ->
#: `ʝ ʝ s`, aligned l:ʝ l:ʝ, blocked "the first `l` of `ll` is silent").
_NOISE_GAIN = 20
_NOISE_SHARE = 20


class _Exceptions:
    """Rules that let a broad rule be taken despite a few undecided examples where it
    is wrong and that need no change: placed just before it, each is an `Identity` rule
    that fires first on some of them and on no undecided example needing a change.
    Without them the selection, which takes no rule wrong on an undecided example,
    splits one broad rule into a narrow rule per context it saw (Spanish `i -> j` before
    a vowel, blocked by `ci` + vowel, became one rule per preceding consonant) and
    predicts nothing for the contexts it did not see.

    A rule of `_NOISE_GAIN` changes or more may also be wrong at a few examples that
    need another change: its exception there is a candidate of the pool that is right
    wherever it fires (`_changing`)."""

    def __init__(
        self,
        index: _AtomIndex,
        need: int,
        n: int,
        options: Options,
        pool: list[_Candidate],
        slots: Mapping[int, list[tuple[int, int]]],
    ) -> None:
        self.index = index
        self.need = need
        # For the exceptions that make a change (`_changing`): the pool, its candidates
        # by transformation (made when first needed), and where each example sits in
        # the transformations' positive examples (selection's `slots`).
        self.pool = pool
        self.by_group: dict[int, list[_Candidate]] | None = None
        self.slots = slots
        # Per anchor example, the changing exception found (kept: it stays right as
        # examples get decided), or, if none, how many examples were undecided then.
        self.changing: dict[int, _Candidate | int] = {}
        self.limit = options.exceptions
        self.depth = max(1, options.max_conjuncts)
        self.variant = options.variant
        # `Identity` is right exactly where no change is needed; it gains nothing (no
        # positive examples), so an exception never counts in `undecided_at`.
        self.right = ((1 << n) - 1) & ~need
        self.no_positives = _Positives(-1, [])
        self.found: dict[int, list[_Candidate]] = {}  # by candidate index
        # `_one` tests conjunctions on bitsets over the examples that need a change (the
        # only ones that can be in danger), made when first needed: ops on ints as long
        # as the example list were most of its cost. Selection keeps which of them are
        # undecided, as for a transformation's positive examples (`undecided_at`).
        self.needed = _Positives(-2, _bit_indices(need))
        self.need_bits: list[int] | None = None  # per atom of `index.usable`
        self.here: dict[int, list[tuple[Predicate, int]]] = {}  # atoms true at an example
        # Anchors where no rule was found, with the size of the danger then: while it is
        # the same (it only shrinks), none would be found again.
        self.failed: dict[int, int] = {}

    def tolerates(self, gain: int, wrong: int) -> bool:
        """Whether a rule of this gain may be taken with exceptions where it is wrong:
        everywhere the tokens must stay, and, for a rule of `_NOISE_GAIN` or more, at a
        few examples needing another change (one word in `_NOISE_SHARE` of its gain)."""
        if not self.limit:
            return False
        changing = (wrong & self.need).bit_count()
        return not changing or (gain >= _NOISE_GAIN and changing * _NOISE_SHARE <= gain)

    def cover(self, k: int, wrong: int, danger: int, gain: int, undecided: int) -> list[_Candidate] | None:
        """Exception rules (at most `limit`) that together fire on every example of
        `wrong`, each right on every undecided example where it fires: `Identity` rules
        firing on no undecided example that needs a change (`danger`, a bitset over
        `needed`), and for the few examples needing another change (`tolerates`), rules
        of the candidate pool. None if the search finds none such. Found once per
        candidate `k`, then only cut down."""
        if not self.tolerates(gain, wrong):
            # Exceptions that change tokens for any rule (any rule right where it
            # fires) gave Spanish (1,000 pairs) 97.3% instead of 97.0%, but the dev
            # benchmark lost 1.3 points of Exact and learning took 3x as long
            # (measured on the `accuracy` branch): hence only for broad rules.
            return None
        cached = self.found.get(k)
        if cached is not None:
            # Still right as examples get decided (they fire on fewer undecided ones);
            # drop those no longer needed.
            return [e for e in cached if e.fires & wrong]
        rules: list[_Candidate] = []
        left = wrong
        while left:
            if len(rules) == self.limit:
                return None
            # Those changing tokens first: an `Identity` exception may then fire on
            # their examples too (they are decided by the time it is reached).
            changing = left & self.need
            if changing:
                rule = self._changing(_lowest_bit(changing), changing, undecided)
            else:
                rule = self._one(_lowest_bit(left), left, danger)
            if rule is None:
                return None
            rules.append(rule)
            left &= ~rule.fires
        self.found[k] = rules
        return rules

    def _changing(self, anchor: int, left: int, undecided: int) -> _Candidate | None:
        """The candidate firing at `anchor` and right on every undecided example where
        it fires with the fewest predicates; among those, the one firing on most of
        `left`, then the cheapest, then the smallest printed form. Found once per
        anchor."""
        count = undecided.bit_count()
        seen = self.changing.get(anchor)
        if isinstance(seen, _Candidate):
            return seen
        if seen == count:
            return None
        if self.by_group is None:
            self.by_group = {}
            for cand in self.pool:
                self.by_group.setdefault(cand.positives.number, []).append(cand)
        best = None
        best_key = None
        # Only the transformations right at the anchor, and of those the candidates
        # firing there: tested on the small positive-example bitsets, not the long ones.
        for number, bit in self.slots.get(anchor, ()):
            for cand in self.by_group.get(number, ()):  # `needed` has no candidates
                if not cand.gainable >> bit & 1 or cand.fires & cand.wrong_where & undecided:
                    continue
                key = (len(cand.rule.predicates), -(cand.fires & left).bit_count(), cand.cost, cand.text)
                if best_key is None or key < best_key:
                    best, best_key = cand, key
        self.changing[anchor] = best if best is not None else count
        return best

    def _one(self, anchor: int, left: int, danger: int) -> _Candidate | None:
        """The shortest rule `... => Identity` true at example `anchor` that fires on no
        example of `danger`; among those, the one firing on most of `left`, then the
        cheapest, then the smallest printed form."""
        if self.need_bits is None:
            self.need_bits = _column_bits(self.index.table[self.needed.indices])
        here = self.here.get(anchor)
        if here is None:
            # The table's row, not a test of each atom's long bitset.
            usable, need_bits = self.index.usable, self.need_bits
            here = self.here[anchor] = [
                (usable[i], need_bits[i]) for i in np.flatnonzero(self.index.table[anchor])
            ]
        danger_size = danger.bit_count()  # danger only shrinks: its size tells it
        if self.failed.get(anchor) == danger_size:
            return None
        # On the examples needing a change, a conjunction of the least size avoiding
        # danger narrows at each step (else one atom less would do), so "adds nothing"
        # tested there prunes none of them: the same rules are found as by a search on
        # all examples.
        best: tuple[tuple[int, int, float, str], Rule, int] | None = None
        frontier: list[tuple[tuple[Predicate, ...], int, int]] = [((), -1, -1)]
        atoms = self.index.bits
        for depth in range(1, self.depth + 1):
            grown = []
            for preds, bits, last in frontier:
                for idx in range(last + 1, len(here)):
                    p, pbits = here[idx]
                    both = bits & pbits
                    if both == bits:
                        continue  # adds nothing
                    longer = preds + (p,)
                    if both & danger:
                        grown.append((longer, both, idx))
                        continue
                    fires = -1
                    for q in longer:
                        fires &= atoms[q]
                    covered = (fires & left).bit_count()
                    if best is not None and covered < -best[0][1]:
                        continue  # the cost and printed form only break ties
                    rule = Rule(longer, Identity())
                    key = (depth, -covered, rule_cost(rule, self.variant), str(rule))
                    if best is None or key < best[0]:
                        best = (key, rule, fires)
            if best is not None:
                break  # a deeper rule cannot be better
            frontier = grown
        if best is None:
            self.failed[anchor] = danger_size
            return None
        key, rule, fires = best
        return _Candidate(rule, fires, 0, self.no_positives, key[2], key[3], self.need, self.right)


def _slots(groups: Iterable[_Positives]) -> dict[int, list[tuple[int, int]]]:
    """Where each example sits in the positive examples of each transformation: a list
    of (group number, bit) per example index."""
    slots: dict[int, list[tuple[int, int]]] = {}
    for group in groups:
        for bit, index in enumerate(group.indices):
            slots.setdefault(index, []).append((group.number, bit))
    return slots


def synthesize_pass(
    examples: Sequence[TaggedExample],
    features: Features,
    options: Options,
    timer: _Timer | None = None,
) -> Pass:
    timer = timer or _Timer(options.time_limit)
    index = _atom_index(examples, features, options)
    candidates, need = _candidates(examples, features, options, timer, index)
    slots: dict[int, list[tuple[int, int]]] = {}  # filled below, before any selection
    exceptions = _Exceptions(index, need, len(examples), options, candidates, slots)
    undecided = (1 << len(examples)) - 1
    rules: list[Rule] = []
    # Each round takes the candidate with the least (-gain, cost, text, index) among
    # those with gain > 0 and no wrong answer on undecided examples. Gains only shrink
    # as examples get decided, so a heap keyed by a past gain holds a lower bound of
    # each key (lazy greedy): an entry popped with its gain still current is the best,
    # without rescoring every candidate each round. Same choices as a full scan.
    # The key is one int, -gain * m + rank, rank being the place in (cost, text, index)
    # order: ordered as the tuple, far cheaper to push and pop.
    m = len(candidates)
    # Two stable sorts on plain keys give the (cost, text, index) order at half the
    # time of one sort on tuples (whose comparisons were a tenth of a small problem's
    # synthesis).
    texts = [cand.text for cand in candidates]
    costs = [cand.cost for cand in candidates]
    order = sorted(range(m), key=texts.__getitem__)
    order.sort(key=costs.__getitem__)
    gainable = [cand.gainable for cand in candidates]
    # Gains are counted over each transformation's positive examples: the undecided
    # ones among them, per transformation (`undecided_at`), and where each example sits
    # in those lists (`slots`).
    groups = {id(cand.positives): cand.positives for cand in candidates}
    groups[id(exceptions.needed)] = exceptions.needed
    undecided_at = {group.number: (1 << len(group.indices)) - 1 for group in groups.values()}
    slots.update(_slots(groups.values()))
    group_of = [cand.positives.number for cand in candidates]
    heap = []
    for rank, k in enumerate(order):
        gain = gainable[k].bit_count()
        if gain:
            heap.append(-gain * m + rank)
    heapq.heapify(heap)
    # A candidate wrong on some undecided example cannot be taken until every such
    # example is decided. Rather than popping and re-pushing it every round (which made
    # selection quadratic: the broad, high-gain rules wrong somewhere stay on top), it
    # waits on one of those examples (a witness) and is looked at again only when a
    # chosen rule decides that example: then it gets a new witness, or goes back on the
    # heap with its old key (still a lower bound of its current key).
    waiting: dict[int, list[int]] = {}
    # With exceptions (`_Exceptions`), a candidate wrong only where tokens must stay is
    # ranked by its gain shared among itself and the exception rules it needs: its
    # effective gain, gain // (exceptions + 1). That one can grow, as its exceptions
    # drop out when the examples they were for get decided, so it cannot be the heap
    # key: the heap keeps the whole gain (an upper bound of the effective gain, and
    # still only shrinking). A candidate needing exceptions is rescored when popped,
    # kept aside if it is the best so far, and the round ends once the heap's least
    # key is past the best effective key; those kept aside go back on the heap with
    # their whole gain. Same choices as a full scan by effective key, given each
    # candidate's exceptions (found once, then only cut down).
    def witness(wrong: int) -> int:
        # Until those are decided, a rule wrong where a change is needed waits on one
        # (unless it is broad enough to take exceptions there: `tolerates`).
        return _lowest_bit(wrong & need or wrong)

    while undecided & need:
        timer.check()
        best = None
        best_key = 0
        excepted: list[_Candidate] = []
        aside: list[int] = []  # keys popped for candidates needing exceptions
        while heap:
            key = heap[0]
            if best is not None and key > best_key:
                break  # every key left is a lower bound past the best
            heapq.heappop(heap)
            past = key // m  # -gain when pushed
            rank = key - past * m
            k = order[rank]
            gain = (gainable[k] & undecided_at[group_of[k]]).bit_count()
            if gain == 0:
                continue  # never again: undecided only shrinks
            if gain != -past:
                heapq.heappush(heap, -gain * m + rank)
                continue
            cand = candidates[k]
            wrong = cand.fires & cand.wrong_where & undecided
            if wrong:
                tolerated = exceptions.tolerates(gain, wrong)
                if best is not None and tolerated and -(gain // 2) * m + rank > best_key:
                    # Even with one exception it cannot beat this round's best: no search.
                    aside.append(key)
                    continue
                danger = undecided_at[exceptions.needed.number]
                found = exceptions.cover(k, wrong, danger, gain, undecided) if gain > 1 else None
                if found is None or gain <= len(found):
                    waiting.setdefault(witness(wrong), []).append(key)
                    continue
                aside.append(key)
                shared = -(gain // (len(found) + 1)) * m + rank
                if best is None or shared < best_key:
                    best, best_key, excepted = cand, shared, found
                continue
            # Its key is exact and the least on the heap, hence below `best_key`.
            best, excepted = cand, []
            break
        for key in aside:
            heapq.heappush(heap, key)
        if best is None:
            break
        fires = best.fires
        for rule in excepted:
            rules.append(rule.rule)
            fires |= rule.fires
        rules.append(best.rule)
        # The exceptions' examples are decided too (kept as they are): through
        # `decided`, like the rule's, so the waiting lists and `undecided_at` follow.
        decided = undecided & fires
        undecided &= ~fires
        cleared: dict[int, list[int]] = {}
        for index in _bit_indices(decided):
            for number, bit in slots.get(index, ()):
                cleared.setdefault(number, []).append(bit)
            for key in waiting.pop(index, ()):
                k = order[key % m]
                cand = candidates[k]
                wrong = cand.fires & cand.wrong_where & undecided
                gain = (gainable[k] & undecided_at[group_of[k]]).bit_count()
                if wrong and not exceptions.tolerates(gain, wrong):
                    waiting.setdefault(witness(wrong), []).append(key)
                else:
                    heapq.heappush(heap, key)
        for number, bits in cleared.items():
            undecided_at[number] &= ~_bits(bits)
    return Pass(tuple(rules))


# ------------------------------------------------------------------ passes


# A column pair is a transcription (another script or notation) when most target
# tokens never occur on the source side.
_TRANSCRIPTION_SHARE = 0.5


def _transcription(pairs: Sequence[tuple[Word, Word]]) -> bool:
    src_vocab = {t for s, _ in pairs for t in s}
    target_tokens = [t for _, tgt in pairs for t in tgt]
    if not target_tokens:
        return False
    foreign = sum(t not in src_vocab for t in target_tokens)
    return foreign / len(target_tokens) > _TRANSCRIPTION_SHARE


def _output_counts(examples: Sequence[TaggedExample]) -> dict[Token, dict[Token | None, int]]:
    """For each source token, how often each token starts its aligned output (None:
    aligned with nothing)."""
    counts: dict[Token, dict[Token | None, int]] = {}
    for ex in examples:
        if ex.position == START:
            continue
        x = ex.word[ex.position][0]
        first = ex.output[0] if ex.output else None
        by = counts.setdefault(x, {})
        by[first] = by.get(first, 0) + 1
    return dict(sorted(counts.items()))


def token_map_pass(examples: Sequence[TaggedExample]) -> Pass:
    """A context-free first pass mapping each source token to the target token it is
    most often aligned with (the paper's token map for transliteration, written as
    `ReplaceBy` rules so that it is part of the program and of the transducer).

    The rules after it then only learn what depends on context (an inherent vowel, a
    sign that is not pronounced), over the target's own tokens, where features and
    tokens generalize. Tokens most often aligned to nothing or to themselves are kept.
    """
    rules = []
    for x, by in _output_counts(examples).items():
        best = min(by.items(), key=lambda kv: (-kv[1], kv[0] is not None, kv[0] or ""))[0]
        if best is not None and best != x:
            rules.append(Rule((), ReplaceBy(x, (best,))))
    return Pass(tuple(rules))


def plain_letter_pass(examples: Sequence[TaggedExample], target_vocab: set[Token]) -> Pass:
    """A context-free first pass writing each letter with diacritics that no target
    uses as its plain letter (`í` -> `i`: the letter without its diacritics,
    `alignment.base_letters`), where the two are aligned at least once.

    The rules after it learn such a letter's changes together with the plain letter's:
    in Spanish, `í` and `i` both become `j` before a vowel except after c/g, which `í`
    alone is too rare to teach. It also loses what the diacritic said (where a stress
    accent stood), so `auto` takes it only where cross-validation says it helps.
    """
    rules = []
    for x, by in _output_counts(examples).items():
        plain = _plain_letter(x, target_vocab)
        if plain is not None and by.get(plain):
            rules.append(Rule((), ReplaceBy(x, (plain,))))
    return Pass(tuple(rules))


def _plain_letter(token: Token, target_vocab: set[Token]) -> Token | None:
    """The letter `token` is without its diacritics, if it has some and no target uses
    it (`plain_letter_pass`)."""
    plain = base_letters(token)
    return plain if token not in target_vocab and plain not in ("", token) else None


def _has_plain_letters(pairs: Sequence[tuple[Word, Word]]) -> bool:
    """Whether `plain_letter_pass` could map anything: a source letter with diacritics
    that no target uses, whose plain letter some target uses."""
    src_vocab = {t for s, _ in pairs for t in s}
    tgt_vocab = {t for _, t in pairs for t in t}
    return any(_plain_letter(x, tgt_vocab) in tgt_vocab for x in src_vocab)


def learn(
    pairs: Sequence[tuple[Word, Word]],
    features: Features,
    options: Options = Options(),
    jobs: int = 1,
) -> LearnResult:
    """Learn a program mapping each source word of `pairs` to its target.

    With the `auto` variant, each of the paper's variants is scored by k-fold
    cross-validation on `pairs` (rows held out, predicted by the program learned from
    the others; on `options.cv_rows` evenly spaced rows when there are more) and the
    best one learns the program from all of them. Ties go to the
    shorter program (shorter programs generalize better, paper section 5.2), then to
    the order of `_AUTO_ORDER`; a variant that predicts every held-out row stops the
    search. Where letters with diacritics could be written plain first
    (`plain_letter_pass`), the best variant is cross-validated with that pass too, and
    taken with it only if it then predicts more held-out rows. Never looks at anything
    but the training rows.

    `jobs` > 1 runs the cross-validation folds (and tied variants' final runs) in that
    many worker processes: the same result, sooner on an otherwise idle machine. The
    `seconds` then add up the workers' times.
    """
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, not {jobs}")
    if options.variant != AUTO:
        return _learn_variant(pairs, features, options)
    k = min(options.folds, len(pairs))
    if jobs > 1 and k >= 2:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=jobs) as pool:
            return _learn_auto(pairs, features, options, k, pool)
    return _learn_auto(pairs, features, options, k, None)


def _fold(
    pairs: Sequence[tuple[Word, Word]], features: Features, options: Options, k: int, fold: int
) -> tuple[int, dict[str, float]]:
    """Rows of fold `fold` (of `k`) predicted right by the program learned from the
    others, and the seconds that took."""
    train = [p for i, p in enumerate(pairs) if i % k != fold]
    test = [p for i, p in enumerate(pairs) if i % k == fold]
    part = _learn_variant(train, features, options)
    predicted = run_many(part.program, [src for src, _ in test], features)
    return sum(p == tgt for p, (_, tgt) in zip(predicted, test)), part.seconds


def _cv_sample(pairs: Sequence[tuple[Word, Word]], rows: int) -> Sequence[tuple[Word, Word]]:
    """At most `rows` of `pairs`, evenly spaced (all of them if there are no more)."""
    if len(pairs) <= rows:
        return pairs
    return [pairs[i * len(pairs) // rows] for i in range(rows)]


def _learn_auto(
    pairs: Sequence[tuple[Word, Word]],
    features: Features,
    options: Options,
    k: int,
    pool: Executor | None,
) -> LearnResult:
    seconds: dict[str, float] = {}
    cv_pairs = _cv_sample(pairs, options.cv_rows)

    def add_seconds(part: Mapping[str, float]) -> None:
        for key_, value in part.items():
            seconds[key_] = seconds.get(key_, 0.0) + value

    variants = [replace(options, variant=variant) for variant in _AUTO_ORDER]
    # In workers, every variant's folds are started at once (most often every variant
    # is needed); those of variants after a perfect one are cancelled or dropped.
    folds = (
        [[pool.submit(_fold, cv_pairs, features, opts, k, fold) for fold in range(k)] for opts in variants]
        if pool is not None and k >= 2
        else None
    )

    def held_out_rows(rank: int, opts: Options) -> int:
        held = 0
        for fold in range(k):
            if folds is not None:
                right, part_seconds = folds[rank][fold].result()
            else:
                right, part_seconds = _fold(cv_pairs, features, opts, k, fold)
            held += right
            add_seconds(part_seconds)
        return held

    held_by_rank: list[int] = []
    for rank, opts in enumerate(variants):
        held = held_out_rows(rank, opts) if k >= 2 else 0
        held_by_rank.append(held)
        if held == len(cv_pairs) and k >= 2:
            for later in folds[rank + 1 :] if folds is not None else []:
                for future in later:
                    future.cancel()
            break  # every held-out row right: no variant can do better
    most = max(held_by_rank)
    if k >= 2 and most < len(cv_pairs) and not options.plain_letters and _has_plain_letters(pairs):
        # Plain letters first (`plain_letter_pass`), with the variant ahead so far: it
        # pays where an accent says nothing the target keeps, and loses where it does.
        # Taken only if it predicts more held-out rows: it forgets what the accents
        # said, which a tie does not justify.
        plain = replace(variants[held_by_rank.index(most)], plain_letters=True)
        if folds is not None:
            folds.append([pool.submit(_fold, cv_pairs, features, plain, k, fold) for fold in range(k)])
        held = held_out_rows(len(variants), plain)
        if held > most:
            variants.append(plain)
            held_by_rank.append(held)
    # The best held-out count decides; the program from all rows is learned only for
    # the variants that reach it (the shorter program, then the earlier variant, breaks
    # a tie), since a variant behind on held-out rows cannot win whatever its program.
    most = max(held_by_rank)
    tied = [rank for rank, held in enumerate(held_by_rank) if held == most]
    if pool is not None and len(tied) > 1:
        futures = [pool.submit(_learn_variant, pairs, features, variants[rank]) for rank in tied]
        results = [future.result() for future in futures]
    else:
        results = [_learn_variant(pairs, features, variants[rank]) for rank in tied]
    best_key = None
    best: LearnResult | None = None
    for rank, result in zip(tied, results):
        add_seconds(result.seconds)
        key = (-most, result.program.rule_count, rank)
        if best_key is None or key < best_key:
            held_out = most / len(cv_pairs) if k >= 2 else None
            best_key, best = key, replace(result, held_out=held_out)
    assert best is not None
    return replace(best, seconds=seconds)


# The variants `auto` tries, in tie order: the paper's best variant overall first.
# nofeature is left out: it is the paper's weakest, and each variant tried costs
# (folds + 1) learning runs.
_AUTO_ORDER = ("token", "feature")


def _learn_variant(
    pairs: Sequence[tuple[Word, Word]],
    features: Features,
    options: Options,
) -> LearnResult:
    timer = _Timer(options.time_limit)
    seconds = {"alignment": 0.0, "synthesis": 0.0}
    current: list[list[TaggedToken]] = [[(tok, None) for tok in src] for src, _ in pairs]
    targets = [tgt for _, tgt in pairs]
    passes: list[Pass] = []

    def n_correct(words: list[list[TaggedToken]]) -> int:
        return sum(tuple(t for t, _ in w) == tgt for w, tgt in zip(words, targets))

    score = n_correct(current)
    started = time.perf_counter()
    affinity = learn_affinity(pairs, features, options.alignment) if options.affinity else None
    # Position-by-position alignment only when the whole column pair looks like word ->
    # stress marks (always the same length, no shared tokens), not for a pair that
    # happens to be as long as its transcription.
    src_vocab = {t for s, _ in pairs for t in s}
    tgt_vocab = {t for _, t in pairs for t in t}
    one_to_one = bool(pairs) and all(len(s) == len(t) for s, t in pairs) and not (src_vocab & tgt_vocab)
    seconds["alignment"] += time.perf_counter() - started

    def examples_of(words: list[list[TaggedToken]]) -> list[TaggedExample]:
        examples: list[TaggedExample] = []
        for word, tgt in zip(words, targets):
            timer.check()  # alignment is quadratic in word length: bound it too
            examples.extend(
                tagged_examples(word, tgt, features, options.alignment, affinity, one_to_one)
            )
        return examples

    ready: list[TaggedExample] | None = None  # examples of `current`, when already made
    transcription = options.token_map and not one_to_one and _transcription(pairs)
    if transcription or (options.plain_letters and not one_to_one):
        started = time.perf_counter()
        ready = examples_of(current)
        map_pass = token_map_pass(ready) if transcription else plain_letter_pass(ready, tgt_vocab)
        seconds["alignment"] += time.perf_counter() - started
        if map_pass.rules:
            ready = None
            passes.append(map_pass)
            current = run_pass_many(map_pass, current, features)
            if not transcription:
                # The accents are forgotten: the next pass learns from the plain words
                # as a first pass would, with no `TransformationApplied` on this map
                # (which, found in 10,000 Spanish words, made a transducer too large
                # to build).
                current = [[(tok, None) for tok, _ in word] for word in current]
            score = n_correct(current)
    for _ in range(options.max_passes):
        if score == len(pairs):
            break
        started = time.perf_counter()
        examples = ready if ready is not None else examples_of(current)
        ready = None
        seconds["alignment"] += time.perf_counter() - started
        started = time.perf_counter()
        pass_ = synthesize_pass(examples, features, options, timer)
        seconds["synthesis"] += time.perf_counter() - started
        if not pass_.rules:
            break
        new = run_pass_many(pass_, current, features)
        new_score = n_correct(new)
        if new_score <= score and passes:
            break
        passes.append(pass_)
        current, score = new, new_score
    program = Program(tuple(passes))
    cost = sum(rule_cost(r, options.variant) for p in passes for r in p.rules)
    return LearnResult(program, cost, score, len(pairs), seconds, options.variant)


__all__ = [
    "Options",
    "LearnResult",
    "AUTO",
    "learn",
    "token_map_pass",
    "synthesize_pass",
    "rule_cost",
    "VARIANTS",
    "TaggedExample",
    "apply_transformation",
]
