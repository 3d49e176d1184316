"""Reading the DSL's printed notation back into nodes: `parse(str(node)) == node`.

`str()` of any node of `fstsynth.dsl` prints the paper's notation
(`IfThen(IsToken(w, "t", 0), ReplaceBy(x, "t", "d"))`); `parse` is its inverse, used by
`fstsynth compile` (through `fstsynth.rules_text`) to read programs people wrote or
edited. Tokens are JSON strings, `$` is the boundary.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from fstsynth.dsl import (
    BOUNDARY,
    TRANSFORMATION_TYPES,
    Agree,
    CopyInsert,
    CopyReplace,
    Delete,
    Error,
    Identity,
    Insert,
    Is,
    IsToken,
    Not,
    Pass,
    Predicate,
    Program,
    ReplaceAnyBy,
    ReplaceBy,
    Rule,
    SetFeatures,
    TierIs,
    Transformation,
    TransformationApplied,
)
from fstsynth.types import Token

class ParseError(Error):
    """Text in the paper's notation could not be parsed; the message says where.
    `index`: the character of the text where it failed; `reason`: what went wrong there."""

    def __init__(self, message: str, index: int = 0, reason: str = "") -> None:
        super().__init__(message)
        self.index = index
        self.reason = reason or message


_PREDICATE_NAMES = {"IsToken", "Is", "TransformationApplied", "TierIs", "Not"}
_NODE_NAMES = {"IfThen", "Else", *_PREDICATE_NAMES, *(t.__name__ for t in TRANSFORMATION_TYPES)}


class _Parser:
    """Recursive descent over the printed notation (`str()` of any node)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def fail(self, what: str) -> ParseError:
        return ParseError(
            f"could not parse {self.text!r} at index {self.pos}: expected {what}", self.pos, f"expected {what}"
        )

    def skip(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self, literal: str) -> bool:
        self.skip()
        return self.text.startswith(literal, self.pos)

    def expect(self, literal: str) -> None:
        if not self.peek(literal):
            raise self.fail(repr(literal))
        self.pos += len(literal)

    def name(self) -> str:
        self.skip()
        start = self.pos
        while self.pos < len(self.text) and self.text[self.pos].isalpha():
            self.pos += 1
        if start == self.pos:
            raise self.fail("a name")
        return self.text[start : self.pos]

    def next_name_is(self, name: str) -> bool:
        """Whether the next name is `name`; if so it is read, else nothing is."""
        self.skip()
        end = self.pos
        while end < len(self.text) and self.text[end].isalpha():
            end += 1
        if self.text[self.pos : end] != name:
            return False
        self.pos = end
        return True

    def string(self) -> str:
        self.skip()
        decoder = json.JSONDecoder()
        try:
            value, end = decoder.raw_decode(self.text, self.pos)
        except json.JSONDecodeError:
            raise self.fail("a quoted string") from None
        if not isinstance(value, str):
            raise self.fail("a quoted string")
        self.pos = end
        return value

    def token_or_boundary(self) -> Token | None:
        if self.peek("$"):
            self.pos += 1
            return BOUNDARY
        return self.string()

    def integer(self) -> int:
        self.skip()
        start = self.pos
        if self.pos < len(self.text) and self.text[self.pos] in "+-":
            self.pos += 1
        while self.pos < len(self.text) and self.text[self.pos].isdigit():
            self.pos += 1
        try:
            return int(self.text[start : self.pos])
        except ValueError:
            self.pos = start
            raise self.fail("an integer") from None

    def tokens(self) -> tuple[Token, ...]:
        return tuple(self.string().split())

    def strings(self) -> list[str]:
        """A JSON list of strings (`["-voice", "+cont"]`)."""
        self.skip()
        try:
            value, end = json.JSONDecoder().raw_decode(self.text, self.pos)
        except json.JSONDecodeError:
            raise self.fail("a list of quoted names") from None
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.fail("a list of quoted names")
        self.pos = end
        return value

    def checked(self, make: Callable[[], Any]) -> Any:
        """`make()`, a node whose constructor may refuse its fields, as a `ParseError`."""
        try:
            return make()
        except Error as exc:
            raise ParseError(f"could not parse {self.text!r}: {exc}", self.pos, str(exc)) from None

    def node(self) -> Any:
        name = self.name()
        if name not in _NODE_NAMES:
            self.pos -= len(name)  # an error points at the name
            raise self.fail("a transformation name")
        self.expect("(")
        if name == "IfThen":
            pred = self.predicate_after_name(self.name())
            self.expect(",")
            inner = self.node()
            self.expect(")")
            if isinstance(inner, Rule):
                return Rule((pred, *inner.predicates), inner.transformation)
            return Rule((pred,), inner)
        if name == "Else":
            # The chain `Else(r1, Else(r2, ...))` is read in a loop, not by recursing into
            # each `Else`: a pass of a thousand rules (German spelling at 10,000 pairs)
            # would pass Python's recursion limit.
            rules = [self.as_rule(self.node())]
            links = 1
            while True:
                self.expect(",")
                if not self.next_name_is("Else"):
                    break
                self.expect("(")
                links += 1
                rules.append(self.as_rule(self.node()))
            rest = self.node()
            for _ in range(links):
                self.expect(")")
            rest_rules = rest.rules if isinstance(rest, Pass) else (self.as_rule(rest),)
            return Pass((*rules, *rest_rules))
        if name in _PREDICATE_NAMES:
            return self.predicate_body(name)
        return self.transformation_body(name)

    def as_rule(self, node: Any) -> Rule:
        if isinstance(node, Rule):
            return node
        if isinstance(node, TRANSFORMATION_TYPES):
            return Rule((), node)
        raise self.fail("a rule")

    def predicate_after_name(self, name: str) -> Predicate:
        if name not in _PREDICATE_NAMES:
            self.pos -= len(name)  # an error points at the name
            raise self.fail("a predicate")
        self.expect("(")
        return self.predicate_body(name)

    def predicate_body(self, name: str) -> Predicate:
        if name == "Not":
            inner = self.predicate_after_name(self.name())
            self.expect(")")
            return Not(inner)
        self.expect("w")
        self.expect(",")
        if name == "IsToken":
            token = self.token_or_boundary()
            self.expect(",")
            pred: Predicate = IsToken(token, self.integer())
        elif name == "Is":
            feature = self.string()
            self.expect(",")
            pred = Is(feature, self.integer())
        elif name == "TierIs":
            tier = self.string()
            self.expect(",")
            tier_feature = self.token_or_boundary()
            self.expect(",")
            index = self.integer()
            inclusive = False
            if self.peek(","):
                self.expect(",")
                self.expect("inclusive")
                inclusive = True
            pred = self.checked(lambda: TierIs(tier, tier_feature, index, inclusive))
        else:
            tr_name = self.name()
            self.expect("(")
            tr = self.transformation_body(tr_name)
            self.expect(",")
            pred = TransformationApplied(tr, self.integer())
        self.expect(")")
        return pred

    def transformation_body(self, name: str) -> Transformation:
        if name not in {t.__name__ for t in TRANSFORMATION_TYPES}:
            raise self.fail("a transformation name")
        self.expect("x")
        tr: Transformation
        if name in ("Delete", "Identity"):
            tr = Delete() if name == "Delete" else Identity()
        else:
            self.expect(",")
            if name == "ReplaceBy":
                source = self.string()
                self.expect(",")
                tr = ReplaceBy(source, self.tokens())
            elif name == "ReplaceAnyBy":
                tr = ReplaceAnyBy(self.tokens())
            elif name == "Insert":
                tr = Insert(self.tokens())
            elif name == "CopyReplace":
                tr = CopyReplace(self.integer())
            elif name == "SetFeatures":
                signed = self.strings()
                if not all(v[:1] in ("+", "-") and len(v) > 1 for v in signed):
                    raise self.fail('features written "+name" or "-name"')
                tr = self.checked(lambda: SetFeatures(tuple((v[1:], v[0] == "+") for v in signed)))
            elif name == "Agree":
                names = tuple(self.strings())
                self.expect(",")
                tier = self.string() if self.peek('"') else None
                if tier is not None:
                    self.expect(",")
                offset = self.integer()
                tr = self.checked(lambda: Agree(names, offset, tier))
            else:
                tr = CopyInsert(self.integer())
        self.expect(")")
        return tr

    def program(self) -> Program:
        """Passes as `str(Program)` writes them: `pass 1: <pass>`, `pass 2: ...`."""
        passes: list[Pass] = []
        while not self.at_end():
            self.expect(f"pass {len(passes) + 1}:")
            passes.append(self.as_pass(self.node()))
        return Program(tuple(passes))

    def as_pass(self, node: Any) -> Pass:
        """A node as a pass: a pass of one rule prints as that rule, an empty pass as
        `Identity(x)`."""
        if isinstance(node, Pass):
            return node
        return Pass(()) if node == Identity() else Pass((self.as_rule(node),))

    def at_end(self) -> bool:
        self.skip()
        return self.pos == len(self.text)

    def done(self) -> None:
        self.skip()
        if self.pos != len(self.text):
            raise self.fail("the end of the text")


def parse(text: str) -> Any:
    """Parse any node's printed form back into the node: `parse(str(node)) == node`.

    A bare transformation parses as itself; `IfThen(...)` as a `Rule`; `Else(...)` as a
    `Pass`. (An `Else` chain of one rule prints as that rule, and parses as a `Rule`.)
    A program's lines (`pass 1: ...`) parse as the `Program` (but the empty program
    prints as nothing, and nothing is an error here).
    """
    parser = _Parser(text)
    if parser.peek("pass "):
        return parser.program()
    node = parser.node()
    parser.done()
    return node
