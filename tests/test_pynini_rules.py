"""exporters/pynini_rules.py: the grammar's rules as values."""

from __future__ import annotations

from exporters.pynini_rules import END, Delete, Negated, Pass, ReplaceBy, Rule, made_by, token


def test_a_rule_keeps_its_tests_by_offset_and_its_transformation():
    p = Pass()
    p.rule(ReplaceBy("a", "bc"), {1: [END], -1: [token("x")]})
    p.rule(Delete())
    assert p.rules == [
        Rule(ReplaceBy("a", ("b", "c")), ((-1, (token("x"),)), (1, (END,))), ()),
        Rule(Delete(), (), ()),
    ]


def test_the_tags_a_pass_reads_are_its_made_by_tests_once_each_negated_or_not():
    p = Pass()
    p.rule(Delete(), {-1: [made_by(ReplaceBy("a", "b"))]})
    p.rule(Delete(), {1: [Negated(made_by(ReplaceBy("a", "b")))], 2: [made_by(Delete())]})
    assert p.tags_read() == sorted([ReplaceBy("a", ("b",)), Delete()], key=repr)
