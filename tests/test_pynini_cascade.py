"""exporters/pynini_cascade.py: passes composed into one transducer, and applying it."""

from __future__ import annotations

from exporters.pynini_cascade import cascade, rewrite
from exporters.pynini_rules import Pass, ReplaceBy


def test_no_pass_is_the_identity():
    fst = cascade([], ["a", "b"], {})
    for word in (["a"], ["b", "a", "b"], []):
        assert rewrite(fst, word) == word


def test_passes_apply_in_order():
    first, second = Pass(), Pass()
    first.rule(ReplaceBy("a", ["b"]))
    second.rule(ReplaceBy("b", ["c"]))
    fst = cascade([first, second], ["a", "b", "c"], {})
    assert rewrite(fst, ["a", "c", "b"]) == ["c", "c", "c"]
    assert rewrite(cascade([second, first], ["a", "b", "c"], {}), ["a", "b"]) == ["b", "c"]
