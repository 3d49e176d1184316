"""A rule's shape is read once (fstsynth/rule_shape.py): slots, tiers, negations, what
it writes. Hand-written rules pin the reading; random programs check it against the
interpreter, the definition: the shape's tests hold exactly where the rule fires, its
items are what the rule writes, and its offsets are the cells the interpreter reads."""

from __future__ import annotations

import random
from typing import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fstsynth.dsl import (
    BOUNDARY,
    Agree,
    CopyInsert,
    CopyReplace,
    Delete,
    Identity,
    Insert,
    Is,
    IsToken,
    Not,
    Pass,
    Program,
    ReplaceAnyBy,
    ReplaceBy,
    Rule,
    SetFeatures,
    TierIs,
    Transformation,
    TransformationApplied,
)
from fstsynth.interpreter import START, apply_transformation, eval_predicate
from fstsynth.random_programs import ALPHABET, FEATURES, random_program, random_word
from fstsynth.rule_shape import (
    Copied,
    OutputItem,
    Recoded,
    RuleShape,
    SlotTest,
    TierTest,
    Written,
    looks_unboundedly_right,
    offsets_read,
    pass_looks_unboundedly_right,
    referenced_tags,
    shape_of,
)
from fstsynth.dsl import TaggedToken
from fstsynth.types import Token


def test_nested_not_is_read_as_its_parity_and_slots_are_sorted_by_offset():
    rule = Rule(
        (
            Is("voice", 1),
            Not(Not(IsToken("a", -2))),
            Not(Not(Not(Is("vowel", 1)))),
            Not(TransformationApplied(Delete(), 0)),
        ),
        Delete(),
    )
    shape = shape_of(rule)
    assert [slot.offset for slot in shape.slots] == [-2, 0, 1]
    assert shape.slot(-2) == (SlotTest(IsToken("a", -2), False),)
    assert shape.slot(0) == (SlotTest(TransformationApplied(Delete(), 0), True),)
    assert shape.slot(1) == (SlotTest(Is("voice", 1), False), SlotTest(Is("vowel", 1), True))
    assert shape.slot(5) == ()
    assert shape.tiers == ()
    assert shape.tags_tested == {Delete()}
    assert [str(t) for t in shape.slot(1)] == ['Is(w, "voice", 1)', 'Not(Is(w, "vowel", 1))']


def test_tiers_on_both_sides_keep_their_side_rank_and_negation():
    rule = Rule(
        (TierIs("vowel", "back", -1), Not(TierIs("vowel", BOUNDARY, 2)), Not(Not(TierIs("cons", "voice", 1)))),
        Identity(),
    )
    shape = shape_of(rule)
    assert shape.slots == ()
    assert shape.tiers == (
        TierTest(TierIs("vowel", "back", -1), False),
        TierTest(TierIs("vowel", BOUNDARY, 2), True),
        TierTest(TierIs("cons", "voice", 1), False),
    )
    assert [(t.side, t.rank, t.tier, t.feature, t.negated) for t in shape.tiers] == [
        (-1, 0, "vowel", "back", False),
        (1, 1, "vowel", BOUNDARY, True),
        (1, 0, "cons", "voice", False),
    ]
    assert shape.looks_unboundedly_right
    assert not shape_of(Rule((Not(TierIs("vowel", "back", -2)),), Delete())).looks_unboundedly_right


def test_boundary_tests_are_told_from_token_tests():
    rule = Rule((IsToken(BOUNDARY, 1), Not(IsToken(BOUNDARY, -1)), IsToken("a", 0), Not(IsToken("b", 2))), Delete())
    shape = shape_of(rule)
    assert shape.boundary_tests == (SlotTest(IsToken(BOUNDARY, -1), True), SlotTest(IsToken(BOUNDARY, 1), False))
    assert [t.is_boundary for t in shape.slot_tests] == [True, False, True, False]


@pytest.mark.parametrize(
    "tr, at_token, at_start, conditions",
    [
        (Identity(), (Copied(0),), (), ()),
        (Delete(), (), (), ()),
        (ReplaceBy("a", ("b", "c")), (Written("b"), Written("c")), (), (SlotTest(IsToken("a", 0), False),)),
        (ReplaceAnyBy(("b",)), (Written("b"),), (), ()),
        (Insert(("l", "a")), (Copied(0), Written("l"), Written("a")), (Written("l"), Written("a")), ()),
        (CopyReplace(-2), (Copied(-2),), (), (SlotTest(IsToken(BOUNDARY, -2), True),)),
        (CopyInsert(1), (Copied(0), Copied(1)), (Copied(1),), (SlotTest(IsToken(BOUNDARY, 1), True),)),
        (CopyInsert(0), (Copied(0), Copied(0)), (Copied(0),), (SlotTest(IsToken(BOUNDARY, 0), True),)),
    ],
    ids=str,
)
def test_what_each_transformation_writes_and_where_it_applies(
    tr: Transformation, at_token: tuple, at_start: tuple, conditions: tuple
) -> None:
    writes = shape_of(Rule((), tr)).writes
    assert (writes.at_token, writes.at_start, writes.conditions) == (at_token, at_start, conditions)
    assert writes.keeps == isinstance(tr, (Identity, Insert, CopyInsert))
    assert writes.inserts == isinstance(tr, (Insert, CopyInsert))


def test_feature_transformations_write_the_recoded_token_and_read_their_source():
    devoice = SetFeatures.of({"voice": False})
    writes = shape_of(Rule((IsToken(BOUNDARY, 1),), devoice)).writes
    assert (writes.at_token, writes.at_start, writes.conditions) == ((Recoded(devoice),), (), ())
    assert writes.recodes == devoice and writes.agrees_at is None and not writes.keeps
    place = Agree(("cor", "lab"), 1)
    shape = shape_of(Rule((Is("nas", 0),), place))
    assert shape.writes.conditions == (SlotTest(IsToken(BOUNDARY, 1), True),)
    assert shape.writes.agrees_at == 1 and shape.offsets == (0, 1)
    harmony = shape_of(Rule((), Agree(("back",), -1, "vowel")))
    assert harmony.writes.conditions == () and harmony.offsets == () and not harmony.looks_unboundedly_right
    assert shape_of(Rule((), Agree(("back",), 1, "vowel"))).looks_unboundedly_right


def test_the_classes_a_rule_reads_include_the_tier_an_agree_counts_along():
    tested = Rule((Not(Is("nas", 0)), TierIs("vowel", "back", 1), Not(TierIs("cons", BOUNDARY, -1))), Delete())
    assert shape_of(tested).classes_read == {"nas", "vowel", "back", "cons"}
    # The features agreed in are read through the inventory, not as classes.
    assert shape_of(Rule((), Agree(("f", "g"), 3, "f"))).classes_read == {"f"}
    assert shape_of(Rule((IsToken("a", 0),), Agree(("back",), 1))).classes_read == frozenset()


def test_an_inclusive_tier_test_says_so():
    last_vowel = shape_of(Rule((Not(TierIs("vowel", "back", -1, True)),), Delete()))
    assert [(t.inclusive, t.negated, t.rank, t.side) for t in last_vowel.tiers] == [(True, True, 0, -1)]


def test_guarded_slots_add_the_transformations_conditions_after_the_rules_own_tests():
    shape = shape_of(Rule((Is("voice", 0), IsToken("t", 2)), ReplaceBy("d", ("t",))))
    assert [(s.offset, s.tests) for s in shape.guarded_slots] == [
        (0, (SlotTest(Is("voice", 0), False), SlotTest(IsToken("d", 0), False))),
        (2, (SlotTest(IsToken("t", 2), False),)),
    ]
    copy = shape_of(Rule((), CopyReplace(3)))
    assert copy.slots == ()
    assert [(s.offset, s.tests) for s in copy.guarded_slots] == [(3, (SlotTest(IsToken(BOUNDARY, 3), True),))]
    assert copy.writes.copied_offsets == (3,)


def test_a_shape_is_read_once_per_rule_and_is_a_value():
    rule = Rule((Not(Is("voice", -1)),), Insert(("a",)))
    assert shape_of(rule) is shape_of(Rule((Not(Is("voice", -1)),), Insert(("a",))))
    assert isinstance(hash(shape_of(rule)), int)
    with pytest.raises(AttributeError):
        shape_of(rule).rule = rule  # type: ignore[misc]


def test_offsets_read_sees_through_not_and_skips_tiers():
    rule = Rule(
        (IsToken("a", -2), Not(Not(Is("v", 3))), TierIs("v", "long", 1), Not(TierIs("v", BOUNDARY, -1))),
        CopyReplace(-4),
    )
    assert offsets_read(rule) == (-4, -2, 3)
    assert offsets_read(Rule((TransformationApplied(Delete(), 1),), CopyInsert(2))) == (1, 2)
    assert offsets_read(Rule((), Insert(("a",)))) == ()
    # A tier test first does not end the scan: the tests after it are still read.
    assert offsets_read(Rule((TierIs("v", "long", -1), IsToken("a", 2), Is("v", -3)), Delete())) == (-3, 2)
    assert offsets_read(Rule((IsToken("a", 0),), ReplaceBy("a", ("b",)))) == (0,)


def test_referenced_tags_looks_inside_not():
    pass_ = Pass((
        Rule((TransformationApplied(Delete(), -1), IsToken("a", 0)), Identity()),
        Rule((Not(TransformationApplied(Insert(("x",)), 1)),), Delete()),
        Rule((Not(IsToken("b", 0)),), Insert(("y",))),
    ))
    assert referenced_tags(pass_) == {Delete(), Insert(("x",))}
    assert referenced_tags(Pass((Rule((), Delete()),))) == set()


@pytest.mark.parametrize(
    "pred, right",
    [
        (TierIs("v", "long", 1), True),
        (TierIs("v", BOUNDARY, 3), True),
        (Not(TierIs("v", "long", 1)), True),
        (Not(Not(TierIs("v", "long", 2))), True),
        (TierIs("v", "long", -1), False),
        (Not(TierIs("v", "long", -2)), False),
        (IsToken("a", 5), False),
        (Is("v", 2), False),
    ],
    ids=str,
)
def test_looks_unboundedly_right_only_for_right_tiers(pred, right):
    pass_ = Pass((Rule((IsToken("k", 0),), Delete()), Rule((pred,), Identity())))
    assert pass_looks_unboundedly_right(pass_) is right
    plain = Pass((Rule((), Delete()),))
    assert looks_unboundedly_right(Program((plain, pass_))) is right
    assert looks_unboundedly_right(Program((plain,))) is False


# ------------------------------------------------------------- against the interpreter


class _Recording(Sequence[TaggedToken]):
    """A word that records which of its positions were read."""

    def __init__(self, cells: Sequence[TaggedToken]) -> None:
        self.cells = list(cells)
        self.read: set[int] = set()

    def __len__(self) -> int:
        return len(self.cells)

    def __getitem__(self, index):  # type: ignore[no-untyped-def]
        assert isinstance(index, int) and 0 <= index < len(self.cells), index
        self.read.add(index)
        return self.cells[index]


def _holds(test: SlotTest | TierTest, word: Sequence[TaggedToken], position: int) -> bool:
    return eval_predicate(test.test, word, position, FEATURES) != test.negated


def _written(items: Sequence[OutputItem], word: Sequence[TaggedToken], position: int) -> tuple[Token, ...]:
    return tuple(i.token if isinstance(i, Written) else word[position + i.offset][0] for i in items)


def _check_rule(shape: RuleShape, word: list[TaggedToken], position: int) -> None:
    rule = shape.rule
    # Each predicate is its test, negated or not; the shape keeps every predicate.
    assert len(shape.slot_tests) + len(shape.tiers) == len(rule.predicates)
    predicates_hold = all(eval_predicate(p, word, position, FEATURES) for p in rule.predicates)
    tests_hold = all(_holds(t, word, position) for t in (*shape.slot_tests, *shape.tiers))
    assert predicates_hold == tests_hold
    # The guarded slots hold exactly where the transformation applies too.
    produced = apply_transformation(rule.transformation, word, position, FEATURES)
    guarded_tests = [t for slot in shape.guarded_slots for t in slot.tests]
    fires = all(_holds(t, word, position) for t in (*guarded_tests, *shape.tiers))
    if shape.writes.recodes is None:
        assert fires == (predicates_hold and produced is not None)
    else:
        # Where the inventory has the token is for the backends' expansion to decide.
        assert fires or not (predicates_hold and produced is not None)
        assert position != START or produced is None
    if produced is not None:
        items = shape.writes.at_start if position == START else shape.writes.at_token
        if shape.writes.recodes is None:
            assert _written(items, word, position) == produced
        else:
            assert items == (Recoded(shape.writes.recodes),) and len(produced) == 1
    # The cells the interpreter reads: at the slots' offsets, the copy's, and (for a
    # tier) only on the tier's side.
    for test in shape.slot_tests:
        recorded = _Recording(word)
        eval_predicate(test.test, recorded, position, FEATURES)
        # (a boundary test reads only whether the offset is inside the word)
        inside = 0 <= position + test.offset < len(word) and not test.is_boundary
        assert recorded.read == ({position + test.offset} if inside else set())
    for tier in shape.tiers:
        recorded = _Recording(word)
        eval_predicate(tier.test, recorded, position, FEATURES)
        assert all((i - position) * tier.side > 0 or (tier.inclusive and i == position) for i in recorded.read)
    recorded = _Recording(word)
    apply_transformation(rule.transformation, recorded, position, FEATURES)
    read_at = {*shape.writes.copied_offsets, *([shape.writes.agrees_at] if shape.writes.agrees_at else [])}
    expected = {position + o for o in read_at if 0 <= position + o < len(word)}
    agrees = shape.writes.recodes
    if agrees is not None and position == START:
        assert recorded.read == set()  # a feature transformation never applies there
    elif isinstance(agrees, Agree) and agrees.tier is not None:
        assert all((i - position) * agrees.offset > 0 for i in recorded.read - {position})
    else:
        assert recorded.read - {position} == expected


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_the_shape_agrees_with_the_interpreter_on_random_programs(seed: int) -> None:
    rng = random.Random(seed)
    program = random_program(rng, passes=2, max_rules=4, max_conjuncts=3, window=2, tiers=True, feature_rules=True)
    for k, pass_ in enumerate(program.passes):
        tags: list[Transformation | None] = [None, Identity()]
        if k:
            tags += [r.transformation for r in program.passes[k - 1].rules]
        for rule in pass_.rules:
            # The generator negates at most once: double some negations too.
            doubled = tuple(Not(Not(p)) if rng.random() < 0.3 else p for p in rule.predicates)
            shape = shape_of(Rule(doubled, rule.transformation))
            for _ in range(4):
                word = [(tok, rng.choice(tags)) for tok in random_word(rng, ALPHABET, 0, 6)]
                for position in range(START, len(word)):
                    _check_rule(shape, word, position)
