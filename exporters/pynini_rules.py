"""The vocabulary of a grammar written by `fstsynth export --format pynini`: rules.

A grammar lists, per column pair, passes of rules in the DSL's terms:
`p.rule(Insert(["d"]), at={0: [feature("voice")], 1: [END]})` is "insert d after a
voiced token at the end of the word". This file holds what such a line names: the
transformations a rule writes, the tests at an offset (`token`, `feature`, `made_by`,
`END`, `~` for not), tier tests (`tier`), and `Pass`, an ordered list of rules. How
they become transducers is `exporters/pynini_runtime.py`.

This file is copied, after the line that marks its start, into every exported grammar
(`exporters.pynini_grammar`), which thus needs nothing but Pynini and the standard
library. The tests also import it directly.
"""

# ---- imports ----
# (No `from __future__ import annotations`: dataclasses would then look this module up
# in sys.modules, where a grammar loaded by hand may not be. A grammar takes its imports
# from exporters/pynini_runtime.py's, which therefore also cover these.)
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence, Union

# ---- runtime (everything below is copied into exported grammars) ----

# -- what a rule writes (the DSL's transformations)


@dataclass(frozen=True)
class Identity:
    pass


@dataclass(frozen=True)
class Delete:
    pass


@dataclass(frozen=True)
class ReplaceBy:
    """Applies only to `source`."""

    source: str
    target: tuple[str, ...]

    def __init__(self, source: str, target: Iterable[str]) -> None:
        object.__setattr__(self, "source", source)
        object.__setattr__(self, "target", tuple(target))


@dataclass(frozen=True)
class ReplaceAnyBy:
    target: tuple[str, ...]

    def __init__(self, target: Iterable[str]) -> None:
        object.__setattr__(self, "target", tuple(target))


@dataclass(frozen=True)
class Insert:
    """Keeps the token and writes `tokens` after it (at the start: a prefix)."""

    tokens: tuple[str, ...]

    def __init__(self, tokens: Iterable[str]) -> None:
        object.__setattr__(self, "tokens", tuple(tokens))


@dataclass(frozen=True)
class CopyReplace:
    """Writes a copy of the token at `offset` (applies only where that is a token)."""

    offset: int


@dataclass(frozen=True)
class CopyInsert:
    """Keeps the token and writes a copy of the token at `offset` after it."""

    offset: int


@dataclass(frozen=True)
class SetFeatures:
    """Writes the token with `values` set (`['-voice']`): `table` maps each token it
    applies to to the token written (the one of the model's inventory with that
    bundle); elsewhere it does not apply."""

    values: tuple[str, ...]
    table: tuple[tuple[str, str], ...]

    def __init__(self, values: Iterable[str], table: Mapping[str, str]) -> None:
        object.__setattr__(self, "values", tuple(values))
        object.__setattr__(self, "table", tuple(sorted(table.items())))


@dataclass(frozen=True)
class Agree:
    """Writes the token with the values of `features` taken from another token: the
    one at `offset`, or with `tier`, the offset-th token of that tier (not counting the
    position's own). `sources`: each token's values of those features (a token without
    features is not there: nothing agrees with it); `table`: per values, each token it
    applies to and the token written; elsewhere it does not apply."""

    features: tuple[str, ...]
    offset: int
    tier: str | None
    sources: tuple[tuple[str, tuple[bool, ...]], ...]
    table: tuple[tuple[tuple[bool, ...], tuple[tuple[str, str], ...]], ...]

    def __init__(
        self,
        features: Iterable[str],
        offset: int,
        tier: str | None,
        sources: Mapping[str, tuple[bool, ...]],
        table: Mapping[tuple[bool, ...], Mapping[str, str]],
    ) -> None:
        object.__setattr__(self, "features", tuple(features))
        object.__setattr__(self, "offset", offset)
        object.__setattr__(self, "tier", tier)
        object.__setattr__(self, "sources", tuple(sorted(sources.items())))
        object.__setattr__(self, "table", tuple(sorted((k, tuple(sorted(v.items()))) for k, v in table.items())))


Transformation = Union[Identity, Delete, ReplaceBy, ReplaceAnyBy, Insert, CopyReplace, CopyInsert, SetFeatures, Agree]
COPIES = (CopyReplace, CopyInsert)


# -- tests at an offset: a token, a feature, the transformation that made it, the boundary


class _CellTest:
    """A test of the cell at an offset; `~test` is its negation."""

    def __invert__(self) -> "Negated":
        return Negated(self)  # type: ignore[arg-type]  # (every subclass is a Positive)


@dataclass(frozen=True)
class TokenIs(_CellTest):
    token: str


@dataclass(frozen=True)
class FeatureIs(_CellTest):
    feature: str


@dataclass(frozen=True)
class MadeBy(_CellTest):
    """The token was written by `transformation` in the previous pass."""

    transformation: Transformation


@dataclass(frozen=True)
class Boundary(_CellTest):
    """Beyond either end of the word."""


Positive = Union[TokenIs, FeatureIs, MadeBy, Boundary]


@dataclass(frozen=True)
class Negated:
    test: Positive  # `~` of a Negated is its test

    def __invert__(self) -> Positive:
        return self.test


Test = Union[TokenIs, FeatureIs, MadeBy, Boundary, Negated]
END = Boundary()


def token(name: str) -> TokenIs:
    return TokenIs(name)


def feature(name: str) -> FeatureIs:
    return FeatureIs(name)


def made_by(transformation: "Transformation") -> MadeBy:
    return MadeBy(transformation)


@dataclass(frozen=True)
class OnTier:
    """On the tier of the tokens with feature `tier`, the `index`-th token to the right
    (index > 0) or to the left (index < 0) of the position has `feature`; with
    `feature` = END: there is no such tier token. `inclusive`: counting from the
    position's own token (the start position has none). `~` negates it."""

    tier: str
    feature: str | Boundary
    index: int
    inclusive: bool = False
    negated: bool = False

    def __invert__(self) -> "OnTier":
        return OnTier(self.tier, self.feature, self.index, self.inclusive, not self.negated)


def tier(tier_feature: str, test: str | Boundary, index: int, inclusive: bool = False) -> OnTier:
    return OnTier(tier_feature, test, index, inclusive)


@dataclass(frozen=True)
class Rule:
    writes: Transformation
    at: tuple[tuple[int, tuple[Test, ...]], ...]
    tiers: tuple[OnTier, ...]


class Pass:
    """An ordered list of rules: at each position the first that applies wins."""

    def __init__(self) -> None:
        self.rules: list[Rule] = []

    def rule(
        self,
        writes: Transformation,
        at: Mapping[int, Sequence[Test]] | None = None,
        tiers: Sequence[OnTier] = (),
    ) -> None:
        """Add a rule: `writes` where every test of `at` (offset -> tests, all of
        which must hold) and every tier test hold."""
        tests = tuple(sorted((k, tuple(v)) for k, v in (at or {}).items()))
        self.rules.append(Rule(writes, tests, tuple(tiers)))

    def tags_read(self) -> list[Transformation]:
        """The transformations this pass's `made_by` tests name, in a fixed order."""
        found: dict[Transformation, None] = {}
        for rule in self.rules:
            for _, tests in rule.at:
                for test in tests:
                    while isinstance(test, Negated):
                        test = test.test
                    if isinstance(test, MadeBy):
                        found[test.transformation] = None
        return sorted(found, key=repr)
