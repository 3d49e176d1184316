from __future__ import annotations

import pytest

from fstsynth import dsl
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

EVERY_NODE = [
    IsToken("t", 0),
    IsToken(BOUNDARY, 1),
    Is("voice", -1),
    TransformationApplied(ReplaceBy("l", ("h",)), 1),
    Not(Is("vowel", 2)),
    TierIs("vowel", "long", 1),
    TierIs("vowel", BOUNDARY, -2),
    Not(TierIs("cons", BOUNDARY, 1)),
    ReplaceBy("a", ("i",)),
    ReplaceAnyBy(("s", "h")),
    Insert(("z",)),
    Delete(),
    CopyReplace(-1),
    CopyInsert(0),
    Identity(),
]


@pytest.mark.parametrize("node", EVERY_NODE, ids=repr)
def test_json_round_trip(node):
    assert dsl.from_json(dsl.to_json(node)) == node


def test_program_round_trip_and_hashable():
    program = Program(
        (
            Pass((Rule((IsToken(BOUNDARY, 1), Is("voice", 0)), Insert(("z",))),)),
            Pass((Rule((TransformationApplied(Insert(("z",)), 0),), Identity()),)),
        )
    )
    assert dsl.from_json(dsl.to_json(program)) == program
    assert hash(program) == hash(dsl.from_json(dsl.to_json(program)))
    assert program.rule_count == 2


def test_prints_in_the_papers_notation():
    rule = Rule((IsToken(BOUNDARY, 1), Is("voice", 0)), Insert(("z",)))
    assert str(rule) == 'IfThen(IsToken(w, $, 1), IfThen(Is(w, "voice", 0), Insert(x, "z")))'
    assert str(TransformationApplied(ReplaceBy("l", ("h",)), 1)) == (
        'TransformationApplied(w, ReplaceBy(x, "l", "h"), 1)'
    )
    assert str(Pass((Rule((), Delete()), Rule((), Identity())))) == "Else(Delete(x), Identity(x))"
    assert str(TierIs("vowel", BOUNDARY, 1)) == 'TierIs(w, "vowel", $, 1)'
    # A real token "$" is quoted; the boundary is not.
    assert str(IsToken("$", 0)) == 'IsToken(w, "$", 0)'


def test_nodes_are_immutable():
    node = IsToken("a", 0)
    with pytest.raises(AttributeError):
        node.offset = 3  # type: ignore[misc]


@pytest.mark.parametrize(
    "bad",
    [
        {"type": "Nope"},
        {"type": "IsToken", "token": "a"},
        {"type": "Insert", "tokens": "a b"},
        {"type": "Pass", "rules": {}},
        {"type": "TierIs", "tier": "vowel", "feature": None, "index": 0},
        {"type": "TierIs", "tier": "vowel", "feature": None},
        [],
    ],
)
def test_from_json_rejects_malformed(bad):
    with pytest.raises(dsl.Error):
        dsl.from_json(bad)


def test_prints_tokens_as_they_are_written():
    """Rules are shown to linguists and ranked by their text: IPA stays IPA, not \\u escapes."""
    assert str(IsToken("ŋ", 0)) == 'IsToken(w, "ŋ", 0)'
    assert str(ReplaceBy("t͡ʃ", ("ʃ", "ː"))) == 'ReplaceBy(x, "t͡ʃ", "ʃ ː")'
    assert str(Insert(("é",))) == 'Insert(x, "é")'


def test_from_json_quotes_the_bad_node_briefly():
    bad = {"type": 5, "note": "x" * 200}
    with pytest.raises(dsl.Error) as caught:
        dsl.from_json(bad)
    assert str(caught.value) == f"expected a DSL node object with a 'type', got {str(bad)[:60]!r}"
