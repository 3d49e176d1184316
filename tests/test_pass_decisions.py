"""A pass's rules read as decisions (`fstsynth.pass_decisions`): one decision per case
of a rule, in the pass's order, and every test sorted to its side of the position."""

from __future__ import annotations

from fstsynth.dsl import BOUNDARY, Delete, IsToken, ReplaceBy, Rule, SetFeatures, TierIs
from fstsynth.pass_decisions import BOUNDARY_CELL, Cells, decisions_of, sides_of

FEATURES = {
    "a": {"vowel": True, "back": True},
    "e": {"vowel": True},
    "b": {"voice": True, "labial": True},
    "p": {"labial": True},
    "d": {"voice": True},
    "t": {},
}
TOKENS = ("a", "e", "b", "p", "d", "t")


def test_a_plain_rule_is_one_decision_with_its_tests_by_offset():
    rule = Rule((IsToken("a", -1), IsToken(BOUNDARY, 1)), Delete())
    (decision,) = decisions_of([rule], TOKENS, FEATURES)
    assert decision.rule == rule
    assert sorted(decision.cells) == [(-1, ("token", "a"), False), (1, ("token", None), False)]
    assert decision.tiers == () and decision.at_token == ()


def test_set_features_is_one_decision_per_token_it_recodes():
    rule = Rule((IsToken(BOUNDARY, 1),), SetFeatures.of({"voice": False}))
    decisions = decisions_of([rule], TOKENS, FEATURES)
    # b -> p and d -> t, and each voiceless token to itself (a token whose resulting
    # bundle no token or several tokens have would get no case).
    written = {d.cells[-1][1][1]: d.at_token[0].token for d in decisions}
    assert written["b"] == "p" and written["d"] == "t" and written["p"] == "p"
    assert all(d.rule == rule for d in decisions) and len(decisions) == len(TOKENS)


def test_an_inclusive_tier_test_is_two_cases_on_and_off_the_tier():
    rule = Rule((TierIs("vowel", "back", -1, inclusive=True),), ReplaceBy("e", ("a",)))
    off, on = decisions_of([rule], TOKENS, FEATURES)
    # Off the tier: the nearest vowel to the left is tested; on it, the position itself.
    assert (0, ("feature", "vowel"), True) in off.cells and off.tiers == ((-1, "vowel", 0, "back", False),)
    assert (0, ("feature", "vowel"), False) in on.cells and (0, ("feature", "back"), False) in on.cells
    assert on.tiers == ()


def test_sides_sort_tests_left_center_right_and_cells_read_symbols():
    rules = [
        Rule((IsToken("a", -2), IsToken("b", 1), TierIs("vowel", BOUNDARY, 1)), Delete()),
        Rule((IsToken("p", -1),), ReplaceBy("e", ("a",))),
    ]
    left, center, center_tests, right = sides_of(decisions_of(rules, TOKENS, FEATURES))
    assert left.width == 2 and left.atoms == [[("token", "p")], [("token", "a")]]
    assert left.cell_tests == [{1: [(0, False)]}, {0: [(0, False)]}]
    assert right.width == 1 and right.atoms[0] == [("token", "b")] and "vowel" in right.tier_feats
    # Only the second rule tests the position itself (ReplaceBy reads its own token).
    assert center == [("token", "e")] and list(center_tests) == [1]
    cells = Cells(TOKENS, (None,), FEATURES)
    assert cells.value(("token", "a"), 0) is True and cells.value(("token", None), BOUNDARY_CELL) is True
    assert cells.has(2, "voice") and not cells.has(BOUNDARY_CELL, "voice")
