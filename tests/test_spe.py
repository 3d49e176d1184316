"""The SPE reading aid says what the DSL means where the notations differ."""

from __future__ import annotations

from fstsynth.spe import rule_to_spe
from fstsynth.dsl import BOUNDARY, Insert, IsToken, Pass, Program, ReplaceBy, Rule, TierIs
from fstsynth.interpreter import run


def test_a_tier_test_on_an_insertion_counts_from_before_the_segment_the_rule_sits_on():
    # "Insert l a r at the end if the vowel before the last segment is back": the last
    # segment itself, were it a vowel, does not count. Written `[+back] _` with `_` the
    # insertion site, as in the main context, it read "the last vowel is back".
    rule = Rule((TierIs("vowel", "back", -1), IsToken(BOUNDARY, 1)), Insert(("l", "a", "r")))
    assert rule_to_spe(rule) == "∅ -> l a r / {#, X} _ #   ‖ vowel tier (_ = the segment before ∅): [+back] _"
    features = {"a": {"vowel": True, "back": True}, "i": {"vowel": True}, "k": {}}
    program = Program((Pass((rule,)),))
    assert run(program, ("k", "a", "k", "i"), features) == ("k", "a", "k", "i", "l", "a", "r")  # i not counted
    assert run(program, ("k", "i", "k", "a"), features) == ("k", "i", "k", "a")


def test_tier_tests_to_the_right_and_on_replacements_read_as_before():
    right = Rule((TierIs("vowel", "back", 1), IsToken(BOUNDARY, 0)), Insert(("a",)))
    assert rule_to_spe(right) == "∅ -> a / # _   ‖ vowel tier: _ [+back]"
    replace = Rule((TierIs("vowel", "back", -1),), ReplaceBy("e", ("a",)))
    assert rule_to_spe(replace) == "e -> a   ‖ vowel tier: [+back] _"
