"""The rule DSL: predicates, transformations, rules, passes and programs.

Public API:
    predicates:      IsToken, Is, TransformationApplied, TierIs, Not   (type Predicate)
    transformations: ReplaceBy, ReplaceAnyBy, Insert, Delete, CopyReplace, CopyInsert,
                     Identity, SetFeatures, Agree                  (type Transformation)
    TaggedToken (a token with the transformation that produced it)
    Rule, Pass, Program
    to_json(node) / from_json(data)

`fstsynth.dsl_parser.parse` reads the printed notation back (`parse(str(node)) == node`).

Every node is a frozen dataclass: hashable, comparable, usable as a dict key. `str()`
prints the paper's notation (`IfThen(IsToken(w, "t", 0), ReplaceBy(x, "t", "d"))`);
`repr()` is the constructor form. The boundary beyond either end of a word is written
`$` and represented by `BOUNDARY` (None), so that no real token can be mistaken for it.

Two extensions of the paper's Table 2, both reducing to it when used as the paper does:
`ReplaceBy`/`ReplaceAnyBy` may produce several tokens (one rule for `l -> s h`), and a
rule may fire at the *start position* before the first token (only `Insert` and
`CopyInsert` produce output there), which is how prefixes are learned.

Beyond the paper, rules in features (docs/design.md, section 3): `SetFeatures` (`[-voice]`)
and `Agree` (`[αback]` from a neighbour or the nearest tier token) map a token to the
inventory token with the resulting feature bundle (`fstsynth.features.Inventory`), and
a `TierIs` may count the position itself (`inclusive`: "the nearest vowel at or before
here", so that "the last vowel of the word" is one test at the word's last position).
"""

from __future__ import annotations

import json
import functools
from dataclasses import dataclass
from typing import Any, Optional, Union
from fstsynth import program_json
from fstsynth.types import Token

BOUNDARY: None = None


class Error(ValueError):
    """A DSL document (JSON) is malformed."""


def _refuse(kind: str, **values: Any) -> None:
    """Raise what a node's constructor refuses in these field values (one reading with
    the JSON documents': `program_json.refused`)."""
    fault = program_json.refused(kind, values)
    if fault is not None:
        raise Error(fault)


# Printing rules is on the learner's hot path (ties are broken by the printed form),
# and the same few tokens are quoted again and again.
@functools.lru_cache(maxsize=4096)
def _q(token: Token | None) -> str:
    return "$" if token is None else json.dumps(token, ensure_ascii=False)


@functools.lru_cache(maxsize=4096)
def _qs(tokens: tuple[Token, ...]) -> str:
    return json.dumps(" ".join(tokens), ensure_ascii=False)


# --------------------------------------------------------------------------- predicates


@dataclass(frozen=True, order=True)
class IsToken:
    """The token at `offset` is `token` (`BOUNDARY` = past either end of the word)."""

    token: Token | None
    offset: int

    def __str__(self) -> str:
        return f"IsToken(w, {_q(self.token)}, {self.offset})"


@dataclass(frozen=True, order=True)
class Is:
    """Feature `feature` is true of the token at `offset` (never true of the boundary)."""

    feature: str
    offset: int

    def __str__(self) -> str:
        return f"Is(w, {_q(self.feature)}, {self.offset})"


@dataclass(frozen=True)
class TransformationApplied:
    """The token at `offset` was produced by `transformation` in the previous pass."""

    transformation: "Transformation"
    offset: int

    def __str__(self) -> str:
        return f"TransformationApplied(w, {self.transformation}, {self.offset})"


@dataclass(frozen=True, order=True)
class TierIs:
    """On the tier of tokens with feature `tier` (say the vowels), the `index`-th one to
    the right of the current position (index > 0) or to the left (index < 0) has
    feature `feature`; with `feature` = `BOUNDARY` ($): there is no such tier token.

    Not part of the paper's DSL: its analysis (section 5) names word-level information
    as the main failure on stress and harmony. "Stress the last vowel" is
    `Is(vowel, 0)` and `TierIs(vowel, $, 1)`; "the next vowel is long" is
    `TierIs(vowel, long, 1)`, however many consonants lie between. Still regular: it
    compiles to a context like "(non-vowel)* long-vowel".

    `inclusive`: the tier tokens counted start at the current position itself, not
    next to it ("the nearest vowel at or before here", printed with a last argument
    `inclusive`). At the start position (before the first token) there is no token
    to include. At a word's last token, `TierIs(vowel, back, -1, inclusive)` reads the
    word's last vowel whether or not the word ends in one.
    """

    tier: str
    feature: str | None
    index: int
    inclusive: bool = False

    def __post_init__(self) -> None:
        _refuse("TierIs", index=self.index)

    def __str__(self) -> str:
        last = ", inclusive" if self.inclusive else ""
        return f"TierIs(w, {_q(self.tier)}, {_q(self.feature)}, {self.index}{last})"


@dataclass(frozen=True)
class Not:
    predicate: "Predicate"

    def __str__(self) -> str:
        return f"Not({self.predicate})"


Predicate = Union[IsToken, Is, TransformationApplied, TierIs, Not]


# ----------------------------------------------------------------------- transformations


@dataclass(frozen=True)
class ReplaceBy:
    """If x is `source`, it becomes `target` (one or more tokens)."""

    source: Token
    target: tuple[Token, ...]

    def __str__(self) -> str:
        return f"ReplaceBy(x, {_q(self.source)}, {_qs(self.target)})"


@dataclass(frozen=True)
class ReplaceAnyBy:
    """x becomes `target` (one or more tokens), whatever it was."""

    target: tuple[Token, ...]

    def __str__(self) -> str:
        return f"ReplaceAnyBy(x, {_qs(self.target)})"


@dataclass(frozen=True)
class Insert:
    """x is kept and `tokens` follow it (at the start position: a prefix)."""

    tokens: tuple[Token, ...]

    def __str__(self) -> str:
        return f"Insert(x, {_qs(self.tokens)})"


@dataclass(frozen=True)
class Delete:
    def __str__(self) -> str:
        return "Delete(x)"


@dataclass(frozen=True)
class CopyReplace:
    """x becomes a copy of the token at `offset` (applies only if that is a token)."""

    offset: int

    def __str__(self) -> str:
        return f"CopyReplace(x, {self.offset})"


@dataclass(frozen=True)
class CopyInsert:
    """x is kept and a copy of the token at `offset` follows it (if that is a token)."""

    offset: int

    def __str__(self) -> str:
        return f"CopyInsert(x, {self.offset})"


@dataclass(frozen=True)
class Identity:
    def __str__(self) -> str:
        return "Identity(x)"


def _names(names: tuple[str, ...]) -> str:
    return json.dumps(list(names), ensure_ascii=False)


@dataclass(frozen=True)
class SetFeatures:
    """x becomes the inventory token with x's features except `values` (`[-voice]`).

    `values`: (feature, value) pairs, sorted by feature, each feature once. The
    inventory is the `Features` mapping the program runs with: the token is the one
    whose bundle (every feature the mapping names; a missing one is false) equals x's
    with `values` set (`features.Inventory.resolve`). Where x has no features, or no
    token of the inventory has that bundle, or several do and x is not one of them, the
    transformation does not apply, so the rule does not fire there (as `ReplaceBy` of
    another token does not): the next rule of the pass is tried, and if none fires x
    is kept. This is a fixed map from tokens to tokens, the same in every backend.
    Never applies at the start position. Printed `SetFeatures(x, ["-voice"])`.
    """

    values: tuple[tuple[str, bool], ...]

    def __post_init__(self) -> None:
        _refuse("SetFeatures", values=[name for name, _ in self.values])

    @classmethod
    def of(cls, values: dict[str, bool]) -> SetFeatures:
        return cls(tuple(sorted(values.items())))

    def __str__(self) -> str:
        return f"SetFeatures(x, {_names(tuple(('+' if v else '-') + n for n, v in self.values))})"


@dataclass(frozen=True)
class Agree:
    """x takes the values of `features` from another token (`[αback]`): the token at
    `offset` (tier None), or the `offset`-th token of `tier` to the right (offset > 0)
    or left (offset < 0) of x, counted as `TierIs` counts (x itself never).

    x becomes the inventory token whose bundle is x's with those features set to that
    token's values, found as `SetFeatures` finds it. It does not apply (the rule does
    not fire) where there is no such other token (past the word's edge, or no tier
    token there), where either token has no features, or where the bundle names no
    single token (see `SetFeatures`). Nasal place assimilation:
    `Agree(x, ["cor", "dors", "lab"], 1)` on nasals; vowel harmony:
    `Agree(x, ["back"], "vowel", -1)`.
    """

    features: tuple[str, ...]
    offset: int
    tier: str | None = None

    def __post_init__(self) -> None:
        _refuse("Agree", features=self.features, offset=self.offset)

    def __str__(self) -> str:
        tier = "" if self.tier is None else f"{_q(self.tier)}, "
        return f"Agree(x, {_names(self.features)}, {tier}{self.offset})"


Transformation = Union[
    ReplaceBy, ReplaceAnyBy, Insert, Delete, CopyReplace, CopyInsert, Identity, SetFeatures, Agree
]
#: A token with the transformation that produced it in the previous pass (None: input).
TaggedToken = tuple[Token, Optional[Transformation]]

PREDICATE_TYPES: tuple[type[Predicate], ...] = (IsToken, Is, TransformationApplied, TierIs, Not)
TRANSFORMATION_TYPES: tuple[type[Transformation], ...] = (
    ReplaceBy,
    ReplaceAnyBy,
    Insert,
    Delete,
    CopyReplace,
    CopyInsert,
    Identity,
    SetFeatures,
    Agree,
)


# ------------------------------------------------------------------ rules and programs


@dataclass(frozen=True)
class Rule:
    """A conjunction of predicates (nested `IfThen`) guarding one transformation."""

    predicates: tuple[Predicate, ...]
    transformation: Transformation

    def __str__(self) -> str:
        text = str(self.transformation)
        for pred in reversed(self.predicates):
            text = f"IfThen({pred}, {text})"
        return text


@dataclass(frozen=True)
class Pass:
    """An ordered `Else` chain of rules: at each position the first that fires wins."""

    rules: tuple[Rule, ...]

    def __str__(self) -> str:
        if not self.rules:
            return "Identity(x)"
        text = str(self.rules[-1])
        for rule in reversed(self.rules[:-1]):
            text = f"Else({rule}, {text})"
        return text


@dataclass(frozen=True)
class Program:
    passes: tuple[Pass, ...]

    def __str__(self) -> str:
        return "\n".join(f"pass {k + 1}: {p}" for k, p in enumerate(self.passes))

    @property
    def rule_count(self) -> int:
        return sum(len(p.rules) for p in self.passes)


# ------------------------------------------------------------------------------- JSON


def to_json(node: Any) -> Any:
    """A plain-JSON form of any DSL node: `{"type": name, ...fields}`."""
    if isinstance(node, Program):
        return {"type": "Program", "passes": [to_json(p) for p in node.passes]}
    if isinstance(node, Pass):
        return {"type": "Pass", "rules": [to_json(r) for r in node.rules]}
    if isinstance(node, Rule):
        return {
            "type": "Rule",
            "predicates": [to_json(p) for p in node.predicates],
            "transformation": to_json(node.transformation),
        }
    if isinstance(node, IsToken):
        return {"type": "IsToken", "token": node.token, "offset": node.offset}
    if isinstance(node, Is):
        return {"type": "Is", "feature": node.feature, "offset": node.offset}
    if isinstance(node, TransformationApplied):
        return {
            "type": "TransformationApplied",
            "transformation": to_json(node.transformation),
            "offset": node.offset,
        }
    if isinstance(node, TierIs):
        tier_is: dict[str, Any] = {"type": "TierIs", "tier": node.tier, "feature": node.feature, "index": node.index}
        if node.inclusive:
            tier_is["inclusive"] = True
        return tier_is
    if isinstance(node, Not):
        return {"type": "Not", "predicate": to_json(node.predicate)}
    if isinstance(node, ReplaceBy):
        return {"type": "ReplaceBy", "source": node.source, "target": list(node.target)}
    if isinstance(node, ReplaceAnyBy):
        return {"type": "ReplaceAnyBy", "target": list(node.target)}
    if isinstance(node, Insert):
        return {"type": "Insert", "tokens": list(node.tokens)}
    if isinstance(node, (CopyReplace, CopyInsert)):
        return {"type": type(node).__name__, "offset": node.offset}
    if isinstance(node, (Delete, Identity)):
        return {"type": type(node).__name__}
    if isinstance(node, SetFeatures):
        return {"type": "SetFeatures", "values": {name: value for name, value in node.values}}
    if isinstance(node, Agree):
        agree: dict[str, Any] = {"type": "Agree", "features": list(node.features), "offset": node.offset}
        if node.tier is not None:
            agree["tier"] = node.tier
        return agree
    raise TypeError(f"not a DSL node: {node!r}")


#: The node classes by their JSON type name (`to_json`'s "type").
_NODE_TYPES: dict[str, type] = {
    cls.__name__: cls
    for cls in (
        Program, Pass, Rule, IsToken, Is, TransformationApplied, TierIs, Not,
        ReplaceBy, ReplaceAnyBy, Insert, Delete, CopyReplace, CopyInsert, Identity, SetFeatures, Agree,
    )
}


def from_json(data: Any) -> Any:
    """Inverse of `to_json`; raises `Error` naming the bad node. The document is checked
    by `fstsynth.program_json` (which a model's reader uses without this module), then
    built from its table of fields."""
    try:
        program_json.check_node(data)
    except program_json.Error as exc:
        raise Error(str(exc)) from None
    return _node(data)


def _node(data: dict[str, Any]) -> Any:
    """The node of a checked document."""
    kind = data["type"]
    if kind == "SetFeatures":
        return SetFeatures.of(data["values"])
    fields: dict[str, Any] = {}
    for held, key in program_json.FIELDS[kind]:
        value: Any = data.get(key)
        if held == "nodes":
            value = tuple(_node(item) for item in value)
        elif held == "node":
            value = _node(value)
        elif held == "tokens":
            value = tuple(value)
        elif held == "bool":
            value = bool(value)
        fields[key] = value
    return _NODE_TYPES[kind](**fields)
