"""A model's rules as text, read back: what `fstsynth show` prints, edited or written by
hand, for `fstsynth compile` and `fstsynth.compile`.

Public API:
    PairRules (source, target: column names or None; program), Error
    parse_rules(text, where="rules") -> list[PairRules]

The text is, per column pair, a header `SOURCE -> TARGET` at the start of a line
(anything after two spaces, such as show's "(3 rules, 10/10 training pairs)", is
ignored), then its passes. A pass is a line `pass K:` (K = 1, 2, ... in order) and
either the pass in the DSL after it on the same line (as `str(program)` writes it) or
its rules on the lines below, one a line, each optionally numbered (`  1. IfThen(...)`),
optionally closed by show's `else Identity(x)` (or `else: unchanged`). Show's
`(no rules: every token is kept)` is a pair without passes. `#` starts a comment up to
the end of the line (outside quoted tokens); blank lines are ignored. A text without a
header is the program of a single column pair.

Errors name the text, the line and the column (from 1), in one line:
`rules.txt: line 4, column 31: expected ')'`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fstsynth import dsl, dsl_parser
from fstsynth.errors import UserError


class Error(UserError):
    """The rules text could not be read; the message names the line and column."""


@dataclass(frozen=True)
class PairRules:
    """The program written for a column pair (`source`, `target`: the header's column
    names; None for a text without header)."""

    source: str | None
    target: str | None
    program: dsl.Program


_PASS = re.compile(r"(\s*)pass\s+(\d+)\s*:\s*")
_NUMBERED = re.compile(r"(\s*)\d+\.\s+")
_ELSE = re.compile(r"\s*else(\s+Identity\(x\)|:\s+unchanged)\s*$")
_NO_RULES = re.compile(r"\s*\(no rules: every token is kept\)\s*$")
_HEADER = re.compile(r"(\S.*?) -> (\S.*?)(\s{2,}\(.*\))?\s*$")
_NODE = re.compile(r"\s*[A-Z][A-Za-z]*\(")


def without_comment(line: str) -> str:
    """`line` up to a `#` that is outside double-quoted tokens."""
    quoted = escaped = False
    for k, char in enumerate(line):
        if quoted:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                quoted = False
        elif char == '"':
            quoted = True
        elif char == "#":
            return line[:k]
    return line


@dataclass
class _Pair:
    source: str | None
    target: str | None
    line: int
    passes: list[list[dsl.Rule]]


def parse_rules(text: str, where: str = "rules") -> list[PairRules]:
    """The column pairs' programs of `text` (see the module doc); `where` names the text
    in errors (its file)."""
    pairs: list[_Pair] = []

    def fail(number: int, column: int, reason: str) -> Error:
        return Error(f"{where}: line {number}, column {column + 1}: {reason}")

    def node(number: int, line: str, start: int) -> object:
        try:
            return dsl_parser.parse(line[start:])
        except dsl_parser.ParseError as exc:
            raise fail(number, start + exc.index, exc.reason) from None

    def current(number: int, column: int) -> list[list[dsl.Rule]]:
        if not pairs:
            pairs.append(_Pair(None, None, number, []))
        if not pairs[-1].passes:
            raise fail(number, column, "a rule before its pass: write `pass 1:` above it")
        return pairs[-1].passes

    for number, raw in enumerate(text.splitlines(), start=1):
        line = without_comment(raw).rstrip()
        if not line.strip() or _ELSE.match(line) or _NO_RULES.match(line):
            continue
        if match := _PASS.match(line):
            if not pairs:
                pairs.append(_Pair(None, None, number, []))
            passes = pairs[-1].passes
            if int(match.group(2)) != len(passes) + 1:
                raise fail(number, len(match.group(1)), f"expected `pass {len(passes) + 1}:`")
            passes.append([])
            if match.end() < len(line):
                whole = node(number, line, match.end())
                # An empty pass prints as `Identity(x)`, a pass of one rule as that rule.
                rules = whole.rules if isinstance(whole, dsl.Pass) else [] if whole == dsl.Identity() else _rule(whole)
                if rules is None:
                    raise fail(number, match.end(), "expected a pass (rules in an `Else` chain)")
                passes[-1].extend(rules)
            continue
        numbered = _NUMBERED.match(line)
        if numbered or _NODE.match(line):
            start = numbered.end() if numbered else len(line) - len(line.lstrip())
            passes = current(number, start)
            rule = _rule(node(number, line, start))
            if rule is None:
                raise fail(number, start, "expected one rule on the line (an `Else` chain is a whole pass)")
            passes[-1].extend(rule)
            continue
        if (header := _HEADER.match(line)) and not line[0].isspace():
            if pairs and pairs[-1].source is None:
                raise fail(pairs[-1].line, 0, "rules before the first `SOURCE -> TARGET` header")
            pairs.append(_Pair(header.group(1), header.group(2), number, []))
            continue
        indent = len(line) - len(line.lstrip())
        raise fail(number, indent, "expected `pass N:`, a rule, or a column pair `SOURCE -> TARGET`")
    if not pairs:
        raise Error(f"{where}: no rules (the program that keeps every word is `(no rules: every token is kept)`)")
    return [
        PairRules(pair.source, pair.target, dsl.Program(tuple(dsl.Pass(tuple(rules)) for rules in pair.passes)))
        for pair in pairs
    ]


def _rule(node: object) -> list[dsl.Rule] | None:
    """A parsed node as one rule (a transformation alone is a rule without condition);
    None if it is no rule."""
    if isinstance(node, dsl.Rule):
        return [node]
    if isinstance(node, dsl.TRANSFORMATION_TYPES):
        return [dsl.Rule((), node)]
    return None
