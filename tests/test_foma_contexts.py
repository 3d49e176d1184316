"""exporters/foma_contexts.py: foma's notation for symbols and their unions (the
contexts themselves are checked by running foma on whole scripts in test_exports.py)."""

from __future__ import annotations

import pytest

from exporters.foma_contexts import NOTHING, Error, foma_symbol, internal, union, with_tag


def test_ascii_non_letters_are_escaped_and_other_characters_stand_for_themselves():
    assert foma_symbol("a") == "a"
    assert foma_symbol("0") == "%0"  # not epsilon
    assert foma_symbol("?") == "%?"  # not any symbol
    assert foma_symbol("a:") == "a%:"  # not a pair
    assert foma_symbol("t͡ʃ") == "t͡ʃ"  # IPA and combining marks: one multicharacter symbol


def test_an_empty_token_is_refused():
    with pytest.raises(Error, match="empty token"):
        foma_symbol("")


def test_markers_tags_and_unions():
    assert internal("L1") == "%<L1%>"
    assert with_tag("a", None) == "a"
    assert with_tag("a", "T") == "[a (T)]"
    assert union(["a", "%0"]) == "[ a | %0 ]"
    assert union([]) == NOTHING == "~[?*]"  # no symbol: the empty language
