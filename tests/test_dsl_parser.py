"""Reading the printed notation back (`fstsynth.dsl_parser`): `parse(str(node)) == node`
for every node, and parse errors that say where the text went wrong."""

from __future__ import annotations

import pytest

from fstsynth import dsl_parser
from fstsynth.dsl import (
    BOUNDARY,
    CopyInsert,
    CopyReplace,
    Delete,
    Is,
    IsToken,
    Not,
    ReplaceBy,
    Rule,
    TierIs,
)
from test_dsl import EVERY_NODE


@pytest.mark.parametrize("node", EVERY_NODE, ids=str)
def test_parse_round_trip(node):
    assert dsl_parser.parse(str(node)) == node


def test_a_pass_of_thousands_of_rules_round_trips():
    # A learned pass can hold over a thousand rules (German spelling -> IPA at 10,000
    # pairs: 1,138), printed as nested `Else`s; reading them must not recurse per rule.
    from fstsynth.dsl import Pass, Program

    rules = tuple(
        Rule((IsToken(f"t{k}", 1), Not(Is("voice", -1))), ReplaceBy("a", (f"b{k}",))) for k in range(3000)
    )
    program = Program((Pass(rules), Pass(rules[:2])))
    assert dsl_parser.parse(str(program)) == program
    assert dsl_parser.parse(str(program.passes[0])) == program.passes[0]


def test_parse_round_trip_of_rules_and_passes():
    from programs import PROGRAMS

    for program in PROGRAMS.values():
        for pass_ in program.passes:
            if len(pass_.rules) > 1:
                assert dsl_parser.parse(str(pass_)) == pass_
            for rule in pass_.rules:
                expected = rule if rule.predicates else rule.transformation
                assert dsl_parser.parse(str(rule)) == expected


def test_parse_tokens_with_quotes_and_unicode():
    rule = Rule((IsToken('"', -1), Is("ŋ-like", 0)), ReplaceBy("t͡ʃ", ("ʃ", "ː")))
    assert dsl_parser.parse(str(rule)) == rule


@pytest.mark.parametrize(
    "text, where",
    [
        ('IfThen(IsToken(w, "a", 0), Insert(x, "b")', "index 41: expected ')'"),
        ("Explode(x)", "expected a transformation name"),
        ('IsToken(w, "a", one)', "expected an integer"),
        ("CopyInsert(x, ", "index 14: expected an integer"),  # the text ends where a number should be
        ("Delete(x) trailing", "expected the end of the text"),
    ],
)
def test_parse_errors_say_where(text, where):
    with pytest.raises(dsl_parser.ParseError, match=where.replace("(", r"\(").replace(")", r"\)")):
        dsl_parser.parse(text)


@pytest.mark.parametrize(
    "text, node", [('IsToken(w, "a", +2)', IsToken("a", 2)), ("CopyInsert(x, -3)", CopyInsert(-3))]
)
def test_parse_signed_offsets(text, node):
    assert dsl_parser.parse(text) == node


@pytest.mark.parametrize(
    "text, node",
    [
        ("  Delete( x )  ", Delete()),
        ('IsToken(w,"a",0)', IsToken("a", 0)),
        ("IsToken(w, $, -1)", IsToken(BOUNDARY, -1)),
        ('IsToken(w, "$", 0)', IsToken("$", 0)),
        ("CopyReplace(x, 12)", CopyReplace(12)),
        ('TierIs(w, "v", $, -2)', TierIs("v", BOUNDARY, -2)),
        ('Not(Not(Is(w, "v", 1)))', Not(Not(Is("v", 1)))),
        ('ReplaceBy(x, "a", "")', ReplaceBy("a", ())),
    ],
)
def test_parse_accepts_spacing_and_boundaries(text, node):
    assert dsl_parser.parse(text) == node


@pytest.mark.parametrize(
    "text, where",
    [
        ("", "index 0: expected a name"),
        ("Delete", "index 6: expected '('"),
        ("Delete(y)", "index 7: expected 'x'"),
        ('IsToken(w, a, 0)', "index 11: expected a quoted string"),
        ("IsToken(w, 5, 0)", "index 11: expected a quoted string"),
        ('IfThen(Delete(x), Delete(x))', "expected a predicate"),
        ('Else(IsToken(w, "a", 0), Delete(x))', "expected a rule"),
        ('Insert(x "a")', "expected ','"),
        ("CopyInsert(x, +)", "index 14: expected an integer"),
        ('Is(w, "v", 1) x', "expected the end of the text"),
    ],
)
def test_parse_errors_name_the_place(text, where):
    with pytest.raises(dsl_parser.ParseError) as caught:
        dsl_parser.parse(text)
    assert where in str(caught.value)
