"""foma's notation for the parts of a rule: symbols, cell tests, contexts, tier contexts.

Public API (for `exporters.foma_script`, which assembles the script):
    foma_symbol(token) -> str, Error, NOTHING, union(symbols), with_tag(symbol, tag_any), internal(name)
    Writer(program, tokens, features): the script's names (feature classes, tags) and
        a rule's cell tests (`slots`) and tier tests (`tier_context`) in foma's notation
    Slot, PassContext, TierContext, Side, Variant
    left_sides(slots, ctx, center), right_sides(slots, ctx), left_text(side), right_text(side)
    with_tiers(pairs, tiers, ctx), rule_variants(shape, tokens, features), slots_between(slots, lo, hi, any_slot)

How the contexts serve the marking rules is in `exporters/foma_script.py`'s docstring.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from fstsynth.dsl import BOUNDARY, Is, IsToken, Program, SetFeatures, TierIs, Transformation
from fstsynth.errors import UserError
from fstsynth.features import inventory
from fstsynth.rule_shape import CellPredicate, RuleShape, SlotTest, TierTest
from fstsynth.types import Features, Token


NOTHING = "~[?*]"  # the empty language


class Error(UserError):
    """A program or alphabet cannot be written as a foma script."""


def foma_symbol(token: Token) -> str:
    """A token as one foma multicharacter symbol.

    Every ASCII character other than a letter is escaped with `%` (so `0` is not
    epsilon, `?` not "any symbol", `a:` not a pair); other characters, IPA and combining
    marks included, stand for themselves. A bare run of characters is one symbol in
    foma (`t͡ʃ`), unlike `{...}`.
    """
    if not token:
        raise Error("an empty token cannot be a foma symbol")
    out = []
    for ch in token:
        if ch.isascii() and not ch.isalpha():
            out.append("%" + ch)
        else:
            out.append(ch)
    return "".join(out)


def internal(name: str) -> str:
    """A marker or tag symbol `<name>` (name: letters and digits, which foma reads
    literally inside a multicharacter symbol)."""
    return f"%<{name}%>"


def with_tag(symbol: str, tag_any: str | None) -> str:
    """A token class, optionally followed by one of the input tags."""
    return f"[{symbol} ({tag_any})]" if tag_any else symbol


def union(symbols: Sequence[str]) -> str:
    return "[ " + " | ".join(symbols) + " ]" if symbols else NOTHING


@dataclass
class Slot:
    """What a rule demands at one offset: a cell language (token and input tag, no
    marker), or None for any cell; and whether the boundary is allowed there."""

    core: str | None
    boundary: bool


class Writer:
    def __init__(self, program: Program, tokens: Sequence[Token], features: Features) -> None:
        self.program = program
        self.tokens = sorted(set(tokens))
        self.features = features
        self.feature_names: dict[str, str] = {}
        self.tag_names: dict[Transformation, str] = {}
        self.lines: list[str] = []
        # A defined name is read wherever a symbol of the same spelling is written.
        self._taken = set(self.tokens)

    # -- names

    def feature_class(self, feature: str) -> str:
        """The defined name of a feature's class: ASCII letters and digits only (foma
        0.10 crashes on a defined name with `_` in a rule context, and reads `.` or `-`
        as operators), distinct from every other name and token of the script."""
        name = self.feature_names.get(feature)
        if name is None:
            parts = re.findall(r"[A-Za-z0-9]+", feature)
            base = "F" + "".join(part[:1].upper() + part[1:] for part in parts)
            name = base
            k = 2
            while name in self.feature_names.values() or name in self._taken:
                name = f"{base}{k}"
                k += 1
            self.feature_names[feature] = name
        return name

    def tag(self, tr: Transformation) -> str:
        name = self.tag_names.get(tr)
        if name is None:
            name = internal(f"t{len(self.tag_names) + 1}")
            self.tag_names[tr] = name
        return name

    # -- predicates

    def test_core(self, test: SlotTest, ctx: "PassContext") -> Slot:
        """One cell test as a slot: the cells it admits (None: any token) and whether
        the boundary satisfies it."""
        slot = self._positive_core(test.test, ctx)
        if not test.negated:
            return slot
        if slot.core == NOTHING:
            return Slot(None, not slot.boundary)
        return Slot(f"[{ctx.core} - {slot.core}]", not slot.boundary)

    def _positive_core(self, test: CellPredicate, ctx: "PassContext") -> Slot:
        if isinstance(test, IsToken):
            if test.token is BOUNDARY:
                return Slot(NOTHING, True)
            if test.token not in self.tokens:
                return Slot(NOTHING, False)
            return Slot(with_tag(foma_symbol(test.token), ctx.tag_any), False)
        if isinstance(test, Is):
            return Slot(with_tag(self.feature_class(test.feature), ctx.tag_any), False)
        if test.transformation not in ctx.in_tags:
            return Slot(NOTHING, False)
        return Slot(f"[Tok {self.tag(test.transformation)}]", False)

    def slots(self, tests: Sequence[SlotTest], cells: dict[int, set[Token]], ctx: "PassContext") -> dict[int, Slot]:
        """Per offset, the cells the tests admit there (the rule's, its transformation's
        conditions included), narrowed to the tokens `cells` names at some offsets."""
        by_offset: dict[int, list[Slot]] = {}
        for test in tests:
            by_offset.setdefault(test.offset, []).append(self.test_core(test, ctx))
        for offset, tokens in cells.items():
            members = [foma_symbol(t) for t in sorted(tokens) if t in self.tokens]
            allowed = with_tag(union(members), ctx.tag_any) if members else NOTHING
            by_offset.setdefault(offset, []).append(Slot(allowed, False))
        out: dict[int, Slot] = {}
        for offset, cores in sorted(by_offset.items()):
            restricted = [c.core for c in cores if c.core is not None]
            core: str | None = None
            if NOTHING in restricted:
                core = NOTHING
            elif len(restricted) == 1:
                core = restricted[0]
            elif restricted:
                core = "[" + " & ".join(restricted) + "]"
            out[offset] = Slot(core, all(c.boundary for c in cores))
        return out

    def tier_context(self, test: TierTest, ctx: "PassContext") -> "TierContext":
        """A tier test as a context language on one side of the position.

        Left: the cells just before the position's token (to be followed by it); right:
        the cells just after it (the start position: from the first token). Cells of
        tokens off the tier are skipped over."""
        negated = test.negated
        tier = self.feature_class(test.tier)

        def cell(core: str) -> str:
            return f"[{with_tag(core, ctx.tag_any)} ({ctx.mark_any})]"

        on, off = cell(tier), cell(f"[Tok - {tier}]")
        between = test.rank  # tier tokens between the position and the tested one
        if test.feature is BOUNDARY:
            at_k = None  # the test is on the existence of the k-th tier token
        else:
            feature = self.feature_class(test.feature)
            at_k = f"[{tier} - {feature}]" if negated else f"[{tier} & {feature}]"
        # `exists`: the k-th tier token exists (with the feature, if any); `ends`: fewer
        # than k tier tokens on that side, up to the word edge.
        fewer = f"[{on} {off}*]^{{0,{between}}}" if between else ""
        if test.side > 0:
            skip = f"[{off}* {on}]^{between}" if between else ""
            exists: Side = (False, f"{skip} {off}* {cell(at_k) if at_k else on}")
            ends: Side = (True, f"{off}* {fewer}")
        else:
            skip = f"[{on} {off}*]^{between}" if between else ""
            exists = (False, f"{cell(at_k) if at_k else on} {off}* {skip}")
            ends = (True, f"({ctx.mark_any}) {off}* {fewer}")
        side = test.side
        # Nothing lies left of the start position: a left test holds there iff it
        # holds where the tier has ended.
        holds_at_end = (test.feature is BOUNDARY) != negated
        if test.feature is BOUNDARY:
            return TierContext(side, [exists] if negated else [ends], holds_at_end)
        return TierContext(side, [exists, ends] if negated else [exists], holds_at_end)


@dataclass
class TierContext:
    side: int  # -1: left of the position, +1: right
    alternatives: list[tuple[bool, str]]  # (anchored at the word edge, body), any of them
    holds_at_start: bool  # (left tests) whether it holds at the start position


@dataclass
class PassContext:
    number: int
    in_tags: set[Transformation]
    tag_any: str | None  # union of the input's tag symbols, or None
    mark_any: str  # name of the define holding every marker of this pass
    core: str  # any token with its optional input tag


def cell_text(slot: Slot, ctx: PassContext) -> str:
    core = ctx.core if slot.core is None else slot.core
    return f"[{core} ({ctx.mark_any})]"


#: One side of a rule context: whether it is anchored at the word edge (`.#.`, beyond
#: the body: before it on the left, after it on the right), and the body.
Side = tuple[bool, str]


def left_sides(slots: Sequence[Slot], ctx: PassContext, center: str) -> list[Side]:
    """Left-context alternatives: slots far..near, then the marked token itself."""
    n = len(slots)
    alts: list[Side] = []
    if not any(s.core == NOTHING for s in slots):  # a boundary-only slot needs .#.
        alts.append((False, " ".join([*(cell_text(s, ctx) for s in slots), center])))
    for j in range(n):  # only the j nearest slots are inside the word
        if all(s.boundary for s in slots[: n - j]) and not any(s.core == NOTHING for s in slots[n - j :]):
            near = [cell_text(s, ctx) for s in slots[n - j :]]
            alts.append((True, " ".join([f"({ctx.mark_any})", *near, center])))
    return alts


def right_sides(slots: Sequence[Slot], ctx: PassContext) -> list[Side]:
    """Right-context alternatives: slots near..far. Each starts with a token or the
    boundary, so a position that already carries a marker is never marked again."""
    m = len(slots)
    if m == 0:
        return [(False, "Tok"), (True, "")]
    full = [cell_text(s, ctx) for s in slots]
    alts: list[Side] = []
    if not any(s.core == NOTHING for s in slots):
        if ctx.tag_any:
            # A context extends to the right with `?*`: without this, the last cell could
            # match a token and leave its tag to `?*`, so that a test of the tag is skipped.
            alts += [(False, " ".join([*full, f"[Tok | {ctx.mark_any}]"])), (True, " ".join(full))]
        else:
            alts.append((False, " ".join(full)))
    for j in range(m):
        if all(s.boundary for s in slots[j:]) and not any(s.core == NOTHING for s in slots[:j]):
            alts.append((True, " ".join(cell_text(s, ctx) for s in slots[:j])))
    return alts


def left_text(side: Side) -> str:
    anchored, body = side
    return f".#. {body}".strip() if anchored else body


def right_text(side: Side) -> str:
    anchored, body = side
    return f"{body} .#.".strip() if anchored else body


def with_tiers(
    pairs: list[tuple[Side | None, Side]], tiers: list["TierContext"], ctx: PassContext
) -> list[tuple[Side | None, Side]]:
    """The (left, right) context pairs narrowed by tier contexts: each side intersected
    with a tier language of that side for every tier test (one pair per choice among a
    test's alternatives). Bodies are intersected with `?*` extending them away from the
    position, unless anchored at the word edge (foma reads `.#.` only at a context's
    edge, so the edge is kept out of the intersection)."""
    start_ok = all(t.holds_at_start for t in tiers if t.side < 0)
    out = []
    for left, right in pairs:
        choices: list[list[tuple[int, Side]]] = [[]]
        for tier in tiers:
            if left is None and tier.side < 0:
                continue  # the start position: decided by `start_ok`
            choices = [chosen + [(tier.side, alt)] for chosen in choices for alt in tier.alternatives]
        if left is None and not start_ok:
            continue
        for chosen in choices:
            lefts = [alt for side, alt in chosen if side < 0]
            rights = [alt for side, alt in chosen if side > 0]
            new_left = left if left is None or not lefts else intersect(
                [left, *((a, f"{body} {ctx.core}".strip()) for a, body in lefts)], left=True
            )
            new_right = right if not rights else intersect([right, *rights], left=False)
            out.append((new_left, new_right))
    return out


def intersect(sides: list[Side], left: bool) -> Side:
    """The intersection of context sides (anchored if any is): an unanchored body is
    extended by `?*` away from the position to the length of the others."""
    anchored = any(a for a, _ in sides)
    parts = []
    for a, body in sides:
        if a:
            parts.append(f"[{body}]")
        else:
            parts.append(f"[?* {body}]" if left else f"[{body} ?*]")
    return anchored, "[ " + " & ".join(parts) + " ]"


@dataclass
class Variant:
    """One case of a rule, marked by a marker of its own (the cases of a rule exclude
    each other, so marking them one after the other marks where the rule applies)."""

    tests: list[SlotTest]  # cell tests: the rule's (guarded) and the case's
    cells: dict[int, set[Token]]  # the tokens the case admits at some offsets
    tiers: list[TierTest]  # tier tests, none counting the position itself
    recoded: dict[Token, Token] | None  # a feature change: token -> the token written


def exclusive(test: TierTest, index: int) -> TierTest:
    return TierTest(TierIs(test.tier, test.feature, index), test.negated)


def rule_variants(shape: RuleShape, tokens: Sequence[Token], features: Features) -> list[Variant]:
    """A rule as cases foma's rules can say: a tier test that counts the position
    itself is two cases (the position on the tier: it is the first tier token counted;
    off it: the plain test); a feature change is a case per values of the token it
    agrees with (or one case), each a map from tokens to tokens."""
    tests = [t for slot in shape.guarded_slots for t in slot.tests]
    cases: list[tuple[list[SlotTest], list[TierTest]]] = [(tests, [t for t in shape.tiers if not t.inclusive])]
    for test in shape.tiers:
        if not test.inclusive:
            continue
        on_tier = Is(test.tier, 0)
        off = ([SlotTest(on_tier, True)], [exclusive(test, test.index)])
        on: tuple[list[SlotTest], list[TierTest]] = ([SlotTest(on_tier, False)], [])
        if test.rank > 0:
            on[1].append(exclusive(test, test.side * test.rank))
        elif test.feature is not BOUNDARY:
            on[0].append(SlotTest(Is(test.feature, 0), test.negated))
        branches = [off] if test.rank == 0 and test.feature is BOUNDARY and not test.negated else [off, on]
        cases = [(c + c2, t + t2) for c, t in cases for c2, t2 in branches]
    recodes = shape.writes.recodes
    if recodes is None:
        return [Variant(c, {}, t, None) for c, t in cases]
    known = inventory(features)
    out = []
    if isinstance(recodes, SetFeatures):
        made = {x: known.resolve(x, recodes.values) for x in tokens}
        mapping = {x: y for x, y in made.items() if y is not None}
        return [Variant(c, {0: set(mapping)}, t, mapping) for c, t in cases]
    combos = sorted({tuple(bool(known.value(y, f)) for f in recodes.features) for y in features})
    for combo in combos:
        made = {x: known.resolve(x, tuple(zip(recodes.features, combo))) for x in tokens}
        mapping = {x: y for x, y in made.items() if y is not None}
        for c, t in cases:
            if recodes.tier is None:
                # (a token without features has no value: it is never agreed with)
                having = {y for y in tokens if all(known.value(y, f) == v for f, v in zip(recodes.features, combo))}
                out.append(Variant(c, {0: set(mapping), recodes.offset: having}, t, mapping))
            else:
                tier_tests = [TierTest(TierIs(recodes.tier, BOUNDARY, recodes.offset), True)]
                tier_tests += [
                    TierTest(TierIs(recodes.tier, f, recodes.offset), not v) for f, v in zip(recodes.features, combo)
                ]
                out.append(Variant(c, {0: set(mapping)}, t + tier_tests, mapping))
    return out


def slots_between(slots: dict[int, Slot], lo: int, hi: int, any_slot: Slot) -> list[Slot]:
    return [slots.get(k, any_slot) for k in range(lo, hi)]
