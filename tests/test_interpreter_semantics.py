"""The interpreter's meaning, spelled out case by case with hand-worked answers.

The other interpreter tests compare two runners with each other or with the compiled
transducer; these pin what each predicate, transformation and pass does on its own, so
a slip in a shared helper (an offset, a boundary test, a tag) fails here in a second.
Every runner is checked: `eval_predicate`/`fire` word by word, `run`/`trace`, and the
many-word path (`run_many`), which compiles predicates into closures of its own.
"""

from __future__ import annotations

import pytest

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
    Program,
    ReplaceAnyBy,
    ReplaceBy,
    Rule,
    TierIs,
    TransformationApplied,
)
from fstsynth.interpreter import (
    START,
    Step,
    apply_transformation,
    eval_predicate,
    fire,
    run,
    run_many,
    run_pass,
    run_pass_many,
    trace,
)

# a and i are vowels (i is also high, a is long); t and k are not on the vowel tier.
FEATURES = {
    "a": {"vowel": True, "long": True},
    "i": {"vowel": True, "high": True, "long": False},
    "t": {"vowel": False},
    "k": {},
}


def tagged(*tokens: str, tag=None):
    return [(tok, tag) for tok in tokens]


def holds_everywhere(pred, word):
    """`pred` at every position of `word` (START included), by both evaluators."""
    direct = [eval_predicate(pred, word, p, FEATURES) for p in range(START, len(word))]
    rule = Rule((pred,), Insert(("!",)))
    # run_pass_many evaluates through its own compiled tests: it must agree.
    many = run_pass_many(Pass((rule,)), [word], FEATURES)[0]
    marked = []
    position = START
    for tok, _ in many:
        if tok == "!":
            marked.append(position)
        else:
            position += 1
    assert [p for p, h in zip(range(START, len(word)), direct) if h] == marked
    return direct


WORD = tagged("t", "a", "k", "i")


@pytest.mark.parametrize(
    "pred, expected",
    [
        # positions:                 START   t      a      k      i
        (IsToken("a", 0), [False, False, True, False, False]),
        (IsToken("a", 1), [False, True, False, False, False]),
        (IsToken("a", -1), [False, False, False, True, False]),
        (IsToken("i", 0), [False, False, False, False, True]),
        (IsToken("t", 0), [False, True, False, False, False]),
        (IsToken(BOUNDARY, 0), [True, False, False, False, False]),
        (IsToken(BOUNDARY, 1), [False, False, False, False, True]),
        (IsToken(BOUNDARY, -1), [True, True, False, False, False]),
        (IsToken(BOUNDARY, 2), [False, False, False, True, True]),
        (Is("vowel", 0), [False, False, True, False, True]),
        (Is("vowel", 1), [False, True, False, True, False]),
        (Is("vowel", -2), [False, False, False, False, True]),
        (Is("high", 0), [False, False, False, False, True]),
        (Is("long", 0), [False, False, True, False, False]),
        (Is("nasal", 0), [False, False, False, False, False]),
        (Not(Is("vowel", 0)), [True, True, False, True, False]),
        (Not(IsToken(BOUNDARY, 1)), [True, True, True, True, False]),
        (Not(Not(IsToken("k", 0))), [False, False, False, True, False]),
    ],
    ids=str,
)
def test_token_and_feature_tests_at_every_position(pred, expected):
    assert holds_everywhere(pred, WORD) == expected


@pytest.mark.parametrize(
    "pred, expected",
    [
        # positions:                          START   t      a      k      i
        (TierIs("vowel", "long", 1), [True, True, False, False, False]),
        (TierIs("vowel", "high", 1), [False, False, True, True, False]),
        (TierIs("vowel", "high", 2), [True, True, False, False, False]),
        (TierIs("vowel", BOUNDARY, 1), [False, False, False, False, True]),
        (TierIs("vowel", BOUNDARY, 2), [False, False, True, True, True]),
        (TierIs("vowel", BOUNDARY, 3), [True, True, True, True, True]),
        (TierIs("vowel", "long", -1), [False, False, False, True, True]),
        (TierIs("vowel", "long", -2), [False, False, False, False, False]),
        (TierIs("vowel", "high", -1), [False, False, False, False, False]),
        (TierIs("vowel", BOUNDARY, -1), [True, True, True, False, False]),
        (TierIs("vowel", BOUNDARY, -2), [True, True, True, True, True]),
        (TierIs("vowel", "vowel", 1), [True, True, True, True, False]),
        (Not(TierIs("vowel", "long", 1)), [False, False, True, True, True]),
    ],
    ids=str,
)
def test_tier_tests_skip_tokens_off_the_tier(pred, expected):
    assert holds_everywhere(pred, WORD) == expected


def test_tier_index_counts_tier_tokens_not_positions():
    word = tagged("a", "t", "t", "i", "k", "a")
    # From k (position 4): the nearest vowel to the left is i, the second is a.
    assert eval_predicate(TierIs("vowel", "high", -1), word, 4, FEATURES)
    assert eval_predicate(TierIs("vowel", "long", -2), word, 4, FEATURES)
    assert not eval_predicate(TierIs("vowel", "long", -1), word, 4, FEATURES)
    assert not eval_predicate(TierIs("vowel", "high", -2), word, 4, FEATURES)
    # The current token is never its own tier neighbour.
    assert eval_predicate(TierIs("vowel", "long", 1), word, 3, FEATURES)
    assert not eval_predicate(TierIs("vowel", "high", 1), word, 3, FEATURES)
    assert eval_predicate(TierIs("vowel", "long", -1), word, 3, FEATURES)


def test_transformation_applied_reads_the_tag_and_the_whole_transformation():
    earlier = ReplaceBy("a", ("o",))
    word = [("t", Identity()), ("o", earlier), ("k", ReplaceBy("a", ("u",))), ("i", None)]
    pred = TransformationApplied(earlier, 0)
    assert holds_everywhere(pred, word) == [False, False, True, False, False]
    assert holds_everywhere(TransformationApplied(earlier, -1), word) == [False, False, False, True, False]
    assert holds_everywhere(TransformationApplied(earlier, 1), word) == [False, True, False, False, False]
    assert holds_everywhere(TransformationApplied(Identity(), 0), word) == [False, True, False, False, False]
    # Same kind, other transformation: no match (the bug planted in issue 19).
    assert holds_everywhere(TransformationApplied(ReplaceBy("a", ("e",)), 0), word) == [False] * 5
    assert holds_everywhere(TransformationApplied(Delete(), 0), word) == [False] * 5


@pytest.mark.parametrize(
    "tr, at_start, at_a, at_i",
    [
        (Identity(), (), ("a",), ("i",)),
        (Delete(), (), (), ()),
        (ReplaceBy("a", ("o", "o")), None, ("o", "o"), None),
        (ReplaceBy(BOUNDARY, ("h",)), ("h",), None, None),
        (ReplaceAnyBy(("e",)), (), ("e",), ("e",)),
        (ReplaceAnyBy(()), (), (), ()),
        (Insert(("h",)), ("h",), ("a", "h"), ("i", "h")),
        (Insert(("h", "j")), ("h", "j"), ("a", "h", "j"), ("i", "h", "j")),
        (CopyReplace(1), (), ("k",), None),
        (CopyReplace(-1), None, ("t",), ("k",)),
        (CopyReplace(2), (), ("i",), None),
        (CopyInsert(1), ("t",), ("a", "k"), None),
        (CopyInsert(-1), None, ("a", "t"), ("i", "k")),
        (CopyInsert(-2), None, None, ("i", "a")),
    ],
    ids=str,
)
def test_each_transformation_at_the_start_inside_and_at_the_end(tr, at_start, at_a, at_i):
    assert apply_transformation(tr, WORD, START) == at_start
    assert apply_transformation(tr, WORD, 1) == at_a
    assert apply_transformation(tr, WORD, 3) == at_i


def test_fire_needs_every_predicate():
    rule = Rule((Is("vowel", 0), IsToken("k", 1)), ReplaceAnyBy(("A",)))
    assert fire(rule, WORD, 1, FEATURES) == ("A",)
    assert fire(rule, WORD, 3, FEATURES) is None  # vowel, but no k after it
    assert fire(rule, WORD, 2, FEATURES) is None  # k follows nothing: k is not a vowel
    assert fire(Rule((), Delete()), WORD, 2, FEATURES) == ()


def test_first_applicable_rule_wins_and_a_rule_that_does_not_apply_lets_the_next_fire():
    pass_ = Pass((
        Rule((IsToken("k", 0),), ReplaceBy("x", ("never",))),  # holds, but k is not x
        Rule((Is("vowel", 1),), CopyInsert(1)),  # t -> t a, k -> k i
        Rule((Is("vowel", 0),), ReplaceAnyBy(("V",))),
        Rule((), Delete()),  # never reached for k: the CopyInsert fires first
    ))
    out = run_pass(pass_, WORD, FEATURES)
    assert [tok for tok, _ in out] == ["t", "a", "V", "k", "i", "V"]
    assert [tag for _, tag in out] == [
        CopyInsert(1), CopyInsert(1), ReplaceAnyBy(("V",)),
        CopyInsert(1), CopyInsert(1), ReplaceAnyBy(("V",)),
    ]
    # At START the CopyInsert fires when the word begins with a vowel: it copies it.
    assert run(Program((pass_,)), ("t", "a", "k", "i"), FEATURES) == ("t", "a", "V", "k", "i", "V")
    assert run_many(Program((pass_,)), [("t", "a", "k", "i"), ("a",), ()], FEATURES) == [
        ("t", "a", "V", "k", "i", "V"), ("a", "V"), ()]


def test_a_pass_visits_the_start_position_once_and_every_token():
    pass_ = Pass((Rule((IsToken(BOUNDARY, 0),), Insert(("#",))), Rule((), Insert(("|",)))))
    assert run(Program((pass_,)), ("t", "a"), FEATURES) == ("#", "t", "|", "a", "|")
    assert run(Program((pass_,)), (), FEATURES) == ("#",)
    assert run_many(Program((pass_,)), [("t", "a"), ()], FEATURES) == [("#", "t", "|", "a", "|"), ("#",)]


def test_untouched_tokens_are_tagged_identity_and_the_next_pass_sees_the_tags():
    first = Pass((Rule((), ReplaceBy("a", ("o",))),))
    second = Pass((
        Rule((TransformationApplied(ReplaceBy("a", ("o",)), -1),), Insert(("!",))),
        Rule((TransformationApplied(Identity(), 0), Is("vowel", 0)), ReplaceAnyBy(("I",))),
    ))
    out = run_pass(first, tagged("t", "a", "i"), FEATURES)
    assert out == [("t", Identity()), ("o", ReplaceBy("a", ("o",))), ("i", Identity())]
    program = Program((first, second))
    # o is not in FEATURES (not a vowel); i follows the replaced a and gets "!" first.
    assert run(program, ("t", "a", "i"), FEATURES) == ("t", "o", "i", "!")
    assert run(program, ("i", "t"), FEATURES) == ("I", "t")
    assert run_many(program, [("t", "a", "i"), ("i", "t")], FEATURES) == [("t", "o", "i", "!"), ("I", "t")]


def test_a_pass_reads_only_its_input_not_its_own_output():
    # Each a becomes b; a rule looking for b to the left sees the input's a, not the new b.
    pass_ = Pass((Rule((IsToken("b", -1),), ReplaceAnyBy(("X",))), Rule((), ReplaceBy("a", ("b",)))))
    assert run(Program((pass_,)), ("a", "a", "b", "k"), FEATURES) == ("b", "b", "b", "X")
    assert run_many(Program((pass_,)), [("a", "a", "b", "k")], FEATURES) == [("b", "b", "b", "X")]


def test_run_many_narrows_rules_by_token_without_changing_their_order():
    # Rules bound to a token (IsToken(t, 0) or ReplaceBy(t, ...)) and free rules interleave.
    pass_ = Pass((
        Rule((IsToken("a", 1),), ReplaceBy("t", ("T",))),
        Rule((Is("vowel", 0),), ReplaceAnyBy(("V",))),
        Rule((IsToken("t", 0),), Delete()),
        Rule((IsToken(BOUNDARY, 0),), Insert(("^",))),
        Rule((IsToken("k", 0),), ReplaceBy("k", ("K",))),
    ))
    words = [("t", "a", "t", "k"), ("k", "t", "i"), ()]
    expected = [("^", "T", "V", "K"), ("^", "K", "V"), ("^",)]
    program = Program((pass_,))
    assert [run(program, w, FEATURES) for w in words] == expected
    assert run_many(program, words, FEATURES) == expected


def test_trace_lists_each_pass_output_and_the_rule_that_fired_at_each_position():
    first = Pass((Rule((IsToken("a", 0),), ReplaceAnyBy(("o",))),))
    second = Pass((Rule((IsToken(BOUNDARY, 1),), Insert(("s",))),))
    steps = trace(Program((first, second)), ("t", "a"), FEATURES)
    assert steps == [
        (("t", "o"), [Step(START, None, ()), Step(0, None, ("t",)), Step(1, 0, ("o",))]),
        (("t", "o", "s"), [Step(START, None, ()), Step(0, None, ("t",)), Step(1, 0, ("o", "s"))]),
    ]


def test_steps_are_frozen_records():
    """A step handed out by `trace` is a record like the DSL's nodes: it cannot be
    changed after the fact, and it can be a set member or dict key."""
    step = trace(Program((Pass((Rule((), Delete()),)),)), ("a",), FEATURES)[0][1][1]
    assert step == Step(0, 0, ())
    with pytest.raises(AttributeError):
        step.output = ("b",)  # type: ignore[misc]
    assert {step, Step(0, 0, ())} == {step}
