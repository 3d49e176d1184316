"""The atomic predicates true at each example, as a table and as bitsets.

Public API:
    AtomIndex, atom_index(examples, features, options, deadline), atom_table(...)

An atom is one test a rule may make: a token or a feature at an offset within the
window (`IsToken`, `Is`, and their negations), a tag from the previous pass
(`TransformationApplied`), or a feature of the nearest tier token left or right
(`TierIs`). Conjunctions of atoms are the candidates' conditions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from fstsynth.features import DERIVED, is_harmonic_name
from fstsynth.dsl import BOUNDARY, Is, IsToken, Not, Predicate, TierIs, TransformationApplied
from fstsynth.synthesis.bitsets import column_bits
from fstsynth.synthesis.examples import TaggedExample
from fstsynth.synthesis.options import CHECK_EVERY, Deadline, Options
from fstsynth.synthesis.ranking import INCLUSIVE_TIER_INDICES, TIER_DERIVED, TIER_INDICES, TIERS, predicate_cost
from fstsynth.types import Features, Token

# A slot is where one value decides a group of atoms: an offset (the (token, tag)
# there), or a tier and an index (the tier token there).
_Slot = tuple[str, int, bool] | int


def atom_table(
    examples: Sequence[TaggedExample], features: Features, options: Options, deadline: Deadline = Deadline()
) -> tuple[list[Predicate], np.ndarray]:
    """Every atomic predicate true at some example, and a 0/1 table with a row per
    example and a column per predicate, in that order."""
    use_features = options.variant != "nofeature"
    named = sorted({f for feats in features.values() for f in feats}) if use_features else []
    # The harmonic tiers (`features.harmonic_tiers`) are tiers only: at a position, a
    # class of no rule.
    every_name = [f for f in named if not is_harmonic_name(f)]
    all_names = every_name if options.derived_tests else [f for f in every_name if not f.startswith(DERIVED)]
    # Features derived from IPA (`fstsynth.features`) are many: they are tested on the
    # token itself and its neighbours only (assimilation is local), not along tiers.
    feature_names = [f for f in all_names if not f.startswith(DERIVED)]
    # With feature rules, the tiers are also read in the few derived features vowel
    # harmony turns on (backness, rounding, height).
    tier_names = feature_names + [f for f in TIER_DERIVED if options.feature_rules and f in every_name]
    w = options.window
    tiers = [t for t in TIERS if t in feature_names] if options.tiers else []
    # With feature rules, also the tiers of the vowels a harmony reads, neutral ones
    # skipped, where the inventory has one.
    reads_harmonic = options.tiers and options.feature_rules and options.harmonic_tiers
    harmonic = [t for t in named if is_harmonic_name(t)] if reads_harmonic else []
    # The atoms true at an example depend on one value in each of a few slots around it
    # (the (token, tag) at an offset; the token at a tier index): each such group of
    # atoms is made once, as indices into `found` (the atoms in the order first seen,
    # which the result keeps), and an example only records its group's number in each
    # slot. The table is then filled a slot at a time, numpy copying each group's row to
    # its examples. (Hashing predicates once per example was most of the cost; then
    # appending each example to its atoms' lists.)
    found: list[Predicate] = []
    index_of: dict[Predicate, int] = {}
    slot_groups: dict[_Slot, list[tuple[int, ...]]] = {}  # per slot, its groups
    slot_rows: dict[_Slot, list[int]] = {}  # per slot, each example's group

    def indices(preds: list[Predicate]) -> tuple[int, ...]:
        out = []
        for pred in preds:
            i = index_of.get(pred)
            if i is None:
                i = index_of[pred] = len(found)
                found.append(pred)
            out.append(i)
        return tuple(out)

    def new_group(slot: _Slot, preds: list[Predicate]) -> int:
        groups = slot_groups.setdefault(slot, [])
        groups.append(indices(preds))
        return len(groups) - 1

    tier_cache: dict[tuple[int, str], list[int]] = {}
    tier_groups: dict[tuple[str, int, bool, Token | None], int] = {}

    def tier_group(tier: str, index: int, inclusive: bool, tok: Token | None) -> int:
        """The group of atoms on the `index`-th `tier` token, `tok` (None: there is none)."""
        key = (tier, index, inclusive, tok)
        group = tier_groups.get(key)
        if group is None:
            preds: list[Predicate] = []
            # A harmonic tier is read for its vowels' features only: "no harmonic vowel
            # before" is a class of words of neutral vowels (where the tier has ended
            # the feature tests are false: a word of `i e` is "not back"), and as a
            # test of its own it found accidents (Kazakh, whose `ɪ` panphon pairs with
            # no back vowel: `t` after every stem of `ɪ` alone).
            edges = not is_harmonic_name(tier)
            read = tier_names if edges else harmonic_reads[tier]
            if tok is None:
                if edges:
                    preds.append(TierIs(tier, BOUNDARY, index, inclusive))
                # No such tier token: every feature test there is false, so its
                # negation holds (as the interpreter and transducer read it).
                preds.extend(Not(TierIs(tier, f, index, inclusive)) for f in read if f != tier)
            else:
                if edges:
                    preds.append(Not(TierIs(tier, BOUNDARY, index, inclusive)))
                feats = features.get(tok, {})
                for f in read:
                    if f == tier:
                        continue
                    pred = TierIs(tier, f, index, inclusive)
                    preds.append(pred if feats.get(f, False) else Not(pred))
            group = tier_groups[key] = new_group((tier, index, inclusive), preds)
        return group

    tier_places = [(index, False) for index in TIER_INDICES]
    if options.feature_rules:
        tier_places += [(index, True) for index in INCLUSIVE_TIER_INDICES]
    # Along a harmonic tier, the features that tell its vowels apart (`vowel` holds of
    # all: a test of it says only whether the tier has ended).
    harmonic_reads = {
        tier: [
            f
            for f in tier_names
            if len({bool(feats.get(f, False)) for feats in features.values() if feats.get(tier, False)}) > 1
        ]
        for tier in harmonic
    }
    # Along a harmonic tier, the nearest tier vowel either side (and the last one up to
    # the position): a harmony reads the last harmonic vowel, and each place read adds
    # a test per feature.
    harmonic_places = [(index, inclusive) for index, inclusive in tier_places if abs(index) == 1]
    tier_slots = [
        (
            tier,
            [
                (index, inclusive, slot_rows.setdefault((tier, index, inclusive), []))
                for index, inclusive in (harmonic_places if is_harmonic_name(tier) else tier_places)
            ],
        )
        for tier in tiers + harmonic
    ]
    for k, ex in enumerate(examples):
        if k % CHECK_EVERY == 0:
            deadline.check()
        for tier, slots in tier_slots:
            cache_key = (id(ex.word), tier)
            on = tier_cache.get(cache_key)
            if on is None:
                on = [i for i, (tok, _) in enumerate(ex.word) if features.get(tok, {}).get(tier, False)]
                tier_cache[cache_key] = on
            # The tier tokens either side; inclusive: the position itself too.
            sides = {
                (True, False): [i for i in on if i > ex.position],
                (False, False): [i for i in reversed(on) if i < ex.position],
                (True, True): [i for i in on if i >= ex.position],
                (False, True): [i for i in reversed(on) if i <= ex.position],
            }
            for index, inclusive, rows in slots:
                seq = sides[(index > 0, inclusive)]
                tok = ex.word[seq[abs(index) - 1]][0] if abs(index) <= len(seq) else None
                rows.append(tier_group(tier, index, inclusive, tok))

    groups: dict[tuple[int, Token | None, int], int] = {}
    offset_slots = [(offset, slot_rows.setdefault(offset, [])) for offset in range(-w, w + 1)]
    for k, ex in enumerate(examples):
        if k % CHECK_EVERY == 0:
            deadline.check()
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
                for f in feature_names if abs(offset) > 1 else all_names:
                    preds.append(Is(f, offset) if feats.get(f, False) else Not(Is(f, offset)))
                group = groups[key] = new_group(offset, preds)
            rows.append(group)
    table = np.zeros((len(examples), len(found)), dtype=np.uint8)
    for slot, made in slot_groups.items():
        # A slot's atoms name its offset (or tier and index): no other slot has them.
        columns = sorted({i for atoms in made for i in atoms})
        place = {i: j for j, i in enumerate(columns)}
        member = np.zeros((len(made), len(columns)), dtype=np.uint8)
        for number, atoms in enumerate(made):
            member[number, [place[i] for i in atoms]] = 1
        table[:, columns] = member[np.array(slot_rows[slot], dtype=np.intp)]
    if harmonic:
        return _without_vowel_tier_twins(found, table)
    return found, table


def _on_vowel_tier(pred: Predicate) -> Predicate | None:
    """The same test along the vowel tier, for a test along a harmonic tier (else None)."""
    if isinstance(pred, Not):
        inner = _on_vowel_tier(pred.predicate)
        return None if inner is None else Not(inner)
    if isinstance(pred, TierIs) and is_harmonic_name(pred.tier):
        return TierIs(TIERS[0], pred.feature, pred.index, pred.inclusive)
    return None


def _without_vowel_tier_twins(found: list[Predicate], table: np.ndarray) -> tuple[list[Predicate], np.ndarray]:
    """`found` and `table` without the harmonic tier tests that hold where the same test
    of the vowel tier holds, at every example: where no neutral vowel stands between,
    the two tiers read the same vowel, and the search would try each conjunction twice."""
    column = {pred: k for k, pred in enumerate(found)}
    keep = []
    for k, pred in enumerate(found):
        twin = column.get(_on_vowel_tier(pred))  # type: ignore[arg-type]
        if twin is None or not np.array_equal(table[:, k], table[:, twin]):
            keep.append(k)
    if len(keep) == len(found):
        return found, table
    return [found[k] for k in keep], np.ascontiguousarray(table[:, keep])


@dataclass(frozen=True)
class AtomIndex:
    """The atoms of a set of examples, made once per pass for the candidate search and
    the exception search (`exceptions.Exceptions`)."""

    bits: dict[Predicate, int]  # every atom, with its bitset over the examples
    usable: list[Predicate]  # the atoms a rule may test, cheapest first, then by text
    table: np.ndarray  # 0/1: a row per example, a column per atom of `usable`


def atom_index(
    examples: Sequence[TaggedExample], features: Features, options: Options, deadline: Deadline = Deadline()
) -> AtomIndex:
    found, table = atom_table(examples, features, options, deadline)
    column = {p: i for i, p in enumerate(found)}
    atoms = dict(zip(found, column_bits(table)))
    atom_list = sorted(atoms, key=lambda p: (predicate_cost(p, options.variant), str(p)))
    atom_list = [p for p in atom_list if predicate_cost(p, options.variant) != float("inf")]
    # The table restricted to the listed atoms, in their order: rows of a
    # transformation's positive examples are cut from it.
    return AtomIndex(atoms, atom_list, np.ascontiguousarray(table[:, [column[p] for p in atom_list]]))
