"""The SPE reading aid says what the DSL means where the notations differ."""

from __future__ import annotations

from fstsynth.spe import rule_to_spe
from fstsynth.dsl import BOUNDARY, Agree, Insert, Is, IsToken, Not, Pass, Program, ReplaceBy, Rule, SetFeatures, TierIs
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


def test_feature_rules_print_as_a_phonologist_writes_them():
    devoice = Rule((Not(Is("son", 0)), IsToken(BOUNDARY, 1)), SetFeatures.of({"voice": False}))
    assert rule_to_spe(devoice) == "[-son] -> [-voice] / _ #"
    assert rule_to_spe(Rule((Is("nas", 0),), Agree(("place",), 1))) == "[+nas] -> [αplace] / _ [αplace]"
    two = Rule((Is("nas", 0), Is("cons", 1)), Agree(("cor", "lab"), 1))
    assert rule_to_spe(two) == "[+nas] -> [αcor βlab] / _ [+cons αcor βlab]"
    harmony = Rule((Is("vowel", 0),), Agree(("back",), -1, "vowel"))
    assert rule_to_spe(harmony) == "[+vowel] -> [αback]   ‖ vowel tier: [αback] _"


def test_a_tier_test_counting_the_focus_says_so():
    # "The last vowel of the word is back", read at the word's last segment.
    tests = (IsToken(BOUNDARY, 1), TierIs("vowel", "back", -1, True), TierIs("vowel", "high", 1))
    rule = Rule(tests, Insert(("l", "a", "r")))
    assert rule_to_spe(rule) == "∅ -> l a r / {#, X} _ #   ‖ vowel tier (_ counted): [+back] _; vowel tier: _ [+high]"
