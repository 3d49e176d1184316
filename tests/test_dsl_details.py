"""The DSL's small print: the exact text and JSON of every node, and the messages for
bad input (the shape helpers are tested in tests/test_rule_shape.py).

Pinned exactly because other code depends on them: the printed text ranks the learner's
ties and is what users read; the JSON is the model file's format.
"""

from __future__ import annotations

import pytest

from fstsynth import dsl, dsl_parser
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

TEXT_AND_JSON = [
    (IsToken("t", -2), 'IsToken(w, "t", -2)', {"type": "IsToken", "token": "t", "offset": -2}),
    (IsToken(BOUNDARY, 1), "IsToken(w, $, 1)", {"type": "IsToken", "token": None, "offset": 1}),
    (Is("voice", 3), 'Is(w, "voice", 3)', {"type": "Is", "feature": "voice", "offset": 3}),
    (
        TransformationApplied(Delete(), -1),
        "TransformationApplied(w, Delete(x), -1)",
        {"type": "TransformationApplied", "transformation": {"type": "Delete"}, "offset": -1},
    ),
    (
        TierIs("vowel", "long", -1),
        'TierIs(w, "vowel", "long", -1)',
        {"type": "TierIs", "tier": "vowel", "feature": "long", "index": -1},
    ),
    (
        TierIs("vowel", BOUNDARY, 2),
        'TierIs(w, "vowel", $, 2)',
        {"type": "TierIs", "tier": "vowel", "feature": None, "index": 2},
    ),
    (
        Not(IsToken("a", 0)),
        'Not(IsToken(w, "a", 0))',
        {"type": "Not", "predicate": {"type": "IsToken", "token": "a", "offset": 0}},
    ),
    (
        ReplaceBy("a", ("o", "u")),
        'ReplaceBy(x, "a", "o u")',
        {"type": "ReplaceBy", "source": "a", "target": ["o", "u"]},
    ),
    (ReplaceAnyBy(("s",)), 'ReplaceAnyBy(x, "s")', {"type": "ReplaceAnyBy", "target": ["s"]}),
    (Insert(("h", "j")), 'Insert(x, "h j")', {"type": "Insert", "tokens": ["h", "j"]}),
    (Delete(), "Delete(x)", {"type": "Delete"}),
    (CopyReplace(-1), "CopyReplace(x, -1)", {"type": "CopyReplace", "offset": -1}),
    (CopyInsert(2), "CopyInsert(x, 2)", {"type": "CopyInsert", "offset": 2}),
    (Identity(), "Identity(x)", {"type": "Identity"}),
    (
        Rule((), Delete()),
        "Delete(x)",
        {"type": "Rule", "predicates": [], "transformation": {"type": "Delete"}},
    ),
    (
        Rule((Is("v", 0), Not(IsToken(BOUNDARY, 1))), Insert(("e",))),
        'IfThen(Is(w, "v", 0), IfThen(Not(IsToken(w, $, 1)), Insert(x, "e")))',
        {
            "type": "Rule",
            "predicates": [
                {"type": "Is", "feature": "v", "offset": 0},
                {"type": "Not", "predicate": {"type": "IsToken", "token": None, "offset": 1}},
            ],
            "transformation": {"type": "Insert", "tokens": ["e"]},
        },
    ),
]


@pytest.mark.parametrize("node, text, data", TEXT_AND_JSON, ids=lambda v: type(v).__name__)
def test_every_node_prints_and_serializes_exactly(node, text, data):
    assert str(node) == text
    assert dsl.to_json(node) == data
    assert dsl.from_json(data) == node
    expected = node if not (isinstance(node, Rule) and not node.predicates) else node.transformation
    assert dsl_parser.parse(text) == expected


def test_passes_and_programs_print_in_order():
    first = Pass((Rule((IsToken("a", 0),), Delete()), Rule((), Identity())))
    second = Pass((Rule((), CopyInsert(-1)),))
    assert str(first) == 'Else(IfThen(IsToken(w, "a", 0), Delete(x)), Identity(x))'
    assert str(second) == "CopyInsert(x, -1)"
    program = Program((first, second))
    assert str(program) == (
        'pass 1: Else(IfThen(IsToken(w, "a", 0), Delete(x)), Identity(x))\npass 2: CopyInsert(x, -1)'
    )
    assert program.rule_count == 3
    assert Program(()).rule_count == 0
    # A pass with no rules changes nothing, and prints so.
    assert str(Pass(())) == "Identity(x)"
    assert str(Program((Pass(()),))) == "pass 1: Identity(x)"
    assert dsl_parser.parse(str(first)) == first
    three = Pass((Rule((), Delete()), Rule((), Identity()), Rule((), Insert(("a",)))))
    assert str(three) == 'Else(Delete(x), Else(Identity(x), Insert(x, "a")))'
    assert dsl_parser.parse(str(three)) == three


@pytest.mark.parametrize(
    "data, message",
    [
        ({"type": "Insert", "tokens": ["a", 1]}, "Insert: 'tokens' must be a list of tokens"),
        ({"type": "ReplaceAnyBy", "target": "a"}, "ReplaceAnyBy: 'target' must be a list of tokens"),
        ({"type": "CopyInsert", "offset": "1"}, "CopyInsert: 'offset' must be an integer"),
        ({"type": "CopyReplace", "offset": True}, "CopyReplace: 'offset' must be an integer"),
        ({"type": "Is", "feature": None, "offset": 0}, "Is: 'feature' must be a string"),
        ({"type": "ReplaceBy", "source": 3, "target": ["a"]}, "ReplaceBy: 'source' must be a string"),
        ({"type": "Program", "passes": "x"}, "Program: 'passes' must be a list"),
        ({"type": "Rule", "predicates": None}, "Rule: 'predicates' must be a list"),
        ({"type": "Frobnicate"}, "unknown DSL node type 'Frobnicate'"),
        ({"kind": "Delete"}, "expected a DSL node object with a 'type'"),
    ],
)
def test_from_json_names_the_bad_field(data, message):
    with pytest.raises(dsl.Error) as caught:
        dsl.from_json(data)
    assert message in str(caught.value)


def test_from_json_accepts_what_it_should():
    assert dsl.from_json({"type": "IsToken", "token": None, "offset": 0}) == IsToken(BOUNDARY, 0)
    assert dsl.from_json({"type": "TierIs", "tier": "v", "feature": None, "index": -1}) == TierIs("v", BOUNDARY, -1)
    assert dsl.from_json({"type": "CopyInsert", "offset": 0}) == CopyInsert(0)
    assert dsl.from_json({"type": "Insert", "tokens": []}) == Insert(())
    with pytest.raises(dsl.Error):
        dsl.from_json({"type": "TierIs", "tier": "v", "feature": 5, "index": 1})
