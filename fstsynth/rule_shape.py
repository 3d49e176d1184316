"""One reading of a rule's shape: what it tests where, and what it writes.

Public API:
    shape_of(rule) -> RuleShape   (cached: rules are immutable values)
    RuleShape, Slot, SlotTest, TierTest, Writes, Written, Copied, Recoded (OutputItem)
    offsets_read(rule), referenced_tags(pass_), pass_looks_unboundedly_right(pass_),
    looks_unboundedly_right(program)

Every backend that renders a rule (the bimachine, the foma script, the SPE view, the
Pynini grammar) reads it here, so that `Not` is stripped, tiers are told from slots and
a transformation's own conditions are stated in one place:
- `slots`: per offset, the tests on the cell there (a token, a feature, a tag), each
  with whether it is negated (`Not(Not(p))` is `p`);
- `tiers`: the tier tests (side, tier, feature tested, negation);
- `writes`: what the transformation outputs at a token and at the start position, as
  constant tokens, tokens read at an offset, and the position's token recoded by a
  feature transformation (`SetFeatures`, `Agree`), and the conditions it adds
  (`ReplaceBy` applies only to its source; a copy, or an `Agree` with a neighbour, only
  where that offset holds a token). Where a feature transformation applies depends on
  the inventory as well (`features.Inventory`): backends expand it per token.
`guarded_slots` are the slots with those conditions added: the rule fires at a position
exactly where every test of `guarded_slots` and `tiers` holds (the interpreter is the
definition; tests/test_rule_shape.py checks this on random programs).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Union

from fstsynth.dsl import (
    BOUNDARY,
    Agree,
    CopyInsert,
    CopyReplace,
    Delete,
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

#: A test of one cell, read at its offset.
CellPredicate = Union[IsToken, Is, TransformationApplied]


@dataclass(frozen=True)
class SlotTest:
    """`test` (a predicate on one cell, `Not` stripped) holds, or with `negated` fails."""

    test: CellPredicate
    negated: bool

    @property
    def offset(self) -> int:
        return self.test.offset

    @property
    def is_boundary(self) -> bool:
        """A test of the boundary itself (`IsToken(w, $, i)`, perhaps negated)."""
        return isinstance(self.test, IsToken) and self.test.token is BOUNDARY

    def __str__(self) -> str:
        return f"Not({self.test})" if self.negated else str(self.test)


@dataclass(frozen=True)
class Slot:
    """Every test a rule makes of the cell at `offset` (in the order written)."""

    offset: int
    tests: tuple[SlotTest, ...]


@dataclass(frozen=True)
class TierTest:
    """`test` (a tier test, `Not` stripped) holds, or with `negated` fails."""

    test: TierIs
    negated: bool

    @property
    def tier(self) -> str:
        return self.test.tier

    @property
    def feature(self) -> str | None:
        """The feature tested of the tier token (`BOUNDARY`: that there is none)."""
        return self.test.feature

    @property
    def index(self) -> int:
        return self.test.index

    @property
    def side(self) -> int:
        """-1: the tier to the left of the position, +1: to the right."""
        return 1 if self.test.index > 0 else -1

    @property
    def rank(self) -> int:
        """How many tier tokens lie between the position (or, `inclusive`, just
        before it) and the one tested."""
        return abs(self.test.index) - 1

    @property
    def inclusive(self) -> bool:
        """The tier tokens are counted from the position itself (`TierIs.inclusive`)."""
        return self.test.inclusive

    def __str__(self) -> str:
        return f"Not({self.test})" if self.negated else str(self.test)


@dataclass(frozen=True)
class Written:
    """A constant token written."""

    token: Token


@dataclass(frozen=True)
class Copied:
    """The input token at `offset` written (offset 0: the position's own token, kept)."""

    offset: int


@dataclass(frozen=True)
class Recoded:
    """The position's token recoded by a feature transformation: `SetFeatures` (a
    function of the token) or `Agree` (of the token and the one it agrees with)."""

    transformation: Union[SetFeatures, Agree]


OutputItem = Union[Written, Copied, Recoded]


@dataclass(frozen=True)
class Writes:
    """What a transformation outputs, and where it applies at all.

    `at_token` / `at_start`: the items written at a token / at the start position
    (before the first token). `conditions`: cell tests the transformation adds to the
    rule's predicates (it does not apply where one fails). `source`: the token a
    `ReplaceBy` applies to; `tokens`: the constant tokens it writes; `copy_offset`: the
    offset a copy reads (None: no copy); `recodes`: the feature transformation, if it
    is one; `agrees_at`: the offset of the token an `Agree` reads (None: none, or a tier
    token)."""

    transformation: Transformation
    at_token: tuple[OutputItem, ...]
    at_start: tuple[OutputItem, ...]
    conditions: tuple[SlotTest, ...]
    source: Token | None
    tokens: tuple[Token, ...]
    copy_offset: int | None
    recodes: Union[SetFeatures, Agree, None] = None
    agrees_at: int | None = None

    @property
    def keeps(self) -> bool:
        """The position's token is written first, unchanged (Identity, Insert, CopyInsert)."""
        return self.at_token[:1] == (Copied(0),)

    @property
    def inserts(self) -> bool:
        """The rule writes after the kept token, or before the first one (Insert, CopyInsert)."""
        return bool(self.at_start)

    @property
    def copied_offsets(self) -> tuple[int, ...]:
        """Offsets other than 0 whose token is written (the copy's, if not 0)."""
        found = {item.offset for item in self.at_token + self.at_start if isinstance(item, Copied)}
        return tuple(sorted(found - {0}))


def _writes(tr: Transformation) -> Writes:
    """The one place where a transformation's output and conditions are read."""
    kept = Copied(0)
    if isinstance(tr, Identity):
        return Writes(tr, (kept,), (), (), None, (), None)
    if isinstance(tr, Delete):
        return Writes(tr, (), (), (), None, (), None)
    if isinstance(tr, ReplaceBy):
        # Applies to its source only, hence never at the start position.
        source_test = SlotTest(IsToken(tr.source, 0), False)
        return Writes(tr, tuple(map(Written, tr.target)), (), (source_test,), tr.source, tr.target, None)
    if isinstance(tr, ReplaceAnyBy):
        return Writes(tr, tuple(map(Written, tr.target)), (), (), None, tr.target, None)
    if isinstance(tr, Insert):
        written = tuple(map(Written, tr.tokens))
        return Writes(tr, (kept, *written), written, (), None, tr.tokens, None)
    if isinstance(tr, (CopyReplace, CopyInsert)):
        copy = Copied(tr.offset)
        needs_token = (SlotTest(IsToken(BOUNDARY, tr.offset), True),)
        if isinstance(tr, CopyReplace):
            return Writes(tr, (copy,), (), needs_token, None, (), tr.offset)
        return Writes(tr, (kept, copy), (copy,), needs_token, None, (), tr.offset)
    if isinstance(tr, SetFeatures):
        return Writes(tr, (Recoded(tr),), (), (), None, (), None, recodes=tr)
    if isinstance(tr, Agree):
        if tr.tier is not None:
            return Writes(tr, (Recoded(tr),), (), (), None, (), None, recodes=tr)
        needs_token = (SlotTest(IsToken(BOUNDARY, tr.offset), True),)
        return Writes(tr, (Recoded(tr),), (), needs_token, None, (), None, recodes=tr, agrees_at=tr.offset)
    raise TypeError(f"not a transformation: {tr!r}")


def _strip(pred: Predicate) -> tuple[Predicate, bool]:
    negated = False
    while isinstance(pred, Not):
        pred, negated = pred.predicate, not negated
    return pred, negated


def _slots(tests: list[SlotTest]) -> tuple[Slot, ...]:
    by_offset: dict[int, list[SlotTest]] = {}
    for test in tests:
        by_offset.setdefault(test.offset, []).append(test)
    return tuple(Slot(offset, tuple(by_offset[offset])) for offset in sorted(by_offset))


@dataclass(frozen=True)
class RuleShape:
    """A rule read once (see the module docstring). Build it with `shape_of`."""

    rule: Rule
    slots: tuple[Slot, ...]
    tiers: tuple[TierTest, ...]
    writes: Writes

    @property
    def transformation(self) -> Transformation:
        return self.rule.transformation

    @functools.cached_property
    def guarded_slots(self) -> tuple[Slot, ...]:
        """The slots with the transformation's conditions added (after the rule's own)."""
        return _slots([t for slot in self.slots for t in slot.tests] + list(self.writes.conditions))

    def slot(self, offset: int) -> tuple[SlotTest, ...]:
        """The tests at `offset` (none: any cell, the boundary included)."""
        for slot in self.slots:
            if slot.offset == offset:
                return slot.tests
        return ()

    @property
    def slot_tests(self) -> tuple[SlotTest, ...]:
        return tuple(t for slot in self.slots for t in slot.tests)

    @property
    def boundary_tests(self) -> tuple[SlotTest, ...]:
        """The tests of the boundary (`IsToken(w, $, i)` or its negation)."""
        return tuple(t for t in self.slot_tests if t.is_boundary)

    @property
    def offsets(self) -> tuple[int, ...]:
        """Every offset the rule reads at (its slots, its copy, the token it agrees
        with), sorted; tiers are not at a fixed offset."""
        found = {slot.offset for slot in self.slots}
        for offset in (self.writes.copy_offset, self.writes.agrees_at):
            if offset is not None:
                found.add(offset)
        return tuple(sorted(found))

    @property
    def tags_tested(self) -> frozenset[Transformation]:
        """The transformations its `TransformationApplied` tests look for."""
        return frozenset(
            t.test.transformation for t in self.slot_tests if isinstance(t.test, TransformationApplied)
        )

    @property
    def classes_read(self) -> frozenset[str]:
        """Every feature whose class of tokens the rule reads: tested at an offset, a
        tier and the feature tested on it, and the tier an `Agree` counts along (which
        no test need name)."""
        found = {t.test.feature for t in self.slot_tests if isinstance(t.test, Is)}
        for tier in self.tiers:
            found.add(tier.tier)
            if tier.feature is not BOUNDARY:
                found.add(tier.feature)
        agrees = self.writes.recodes
        if isinstance(agrees, Agree) and agrees.tier is not None:
            found.add(agrees.tier)
        return frozenset(found)

    @property
    def looks_unboundedly_right(self) -> bool:
        """It tests a tier to the right, or agrees with a tier token to the right: it
        depends on tokens arbitrarily far ahead."""
        agrees = self.writes.recodes
        right_agree = isinstance(agrees, Agree) and agrees.tier is not None and agrees.offset > 0
        return right_agree or any(t.side > 0 for t in self.tiers)


@functools.lru_cache(maxsize=1 << 16)
def shape_of(rule: Rule) -> RuleShape:
    """The shape of `rule` (the same object for equal rules while cached)."""
    cells: list[SlotTest] = []
    tiers: list[TierTest] = []
    for pred in rule.predicates:
        inner, negated = _strip(pred)
        if isinstance(inner, TierIs):
            tiers.append(TierTest(inner, negated))
        elif isinstance(inner, (IsToken, Is, TransformationApplied)):
            cells.append(SlotTest(inner, negated))
        else:
            raise TypeError(f"not a predicate: {pred!r}")
    return RuleShape(rule, _slots(cells), tuple(tiers), _writes(rule.transformation))


# ------------------------------------------------------------------ passes and programs


def offsets_read(rule: Rule) -> tuple[int, ...]:
    """Every offset the rule reads at (see `RuleShape.offsets`)."""
    return shape_of(rule).offsets


def referenced_tags(pass_: Pass) -> set[Transformation]:
    """Transformations that `TransformationApplied` tests of this pass look for."""
    return {tag for rule in pass_.rules for tag in shape_of(rule).tags_tested}


def pass_looks_unboundedly_right(pass_: Pass) -> bool:
    """True if some rule of the pass tests a tier to the right (`TierIs` with index > 0).

    Such a rule depends on tokens arbitrarily far ahead, so the pass is not a
    subsequential function and has no deterministic (left-to-right) table form.
    """
    return any(shape_of(rule).looks_unboundedly_right for rule in pass_.rules)


def looks_unboundedly_right(program: Program) -> bool:
    """True if some pass of the program looks unboundedly right."""
    return any(pass_looks_unboundedly_right(pass_) for pass_ in program.passes)
