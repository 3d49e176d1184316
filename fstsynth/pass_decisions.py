"""A pass's rules read as decisions, and their tests sorted by side of the position.

The first half of compiling a pass into a bimachine (`fstsynth.bimachine`): every rule
becomes one or more *decisions* (`Decision`: a rule's case, with its tests on cells at
fixed offsets and on tiers, and what it writes), and `sides_of` sorts those tests into
what lies left of the position, the position itself and what lies right of it: the two
automata of the bimachine are built from the two `Side`s.

Cells are the pass's input symbols, (tag, token) pairs numbered `tag * tokens + token`,
and `BOUNDARY_CELL` past either end of the word (`Cells` says how each one reads).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from fstsynth.dsl import BOUNDARY, Agree, Is, IsToken, Rule, SetFeatures, Transformation
from fstsynth.features import inventory
from fstsynth.rule_shape import CellPredicate, Copied, OutputItem, TierTest, Writes, Written, shape_of
from fstsynth.types import Features, Token

#: The value of a cell past either end of the word.
BOUNDARY_CELL = -1

#: A test on one cell, whatever its offset: ("token", t) (t None: the boundary),
#: ("feature", f), ("tag", transformation); ("copy",) is not a test but the token itself
#: (its index, -1 at the boundary), kept where a copy reads it.
Atom = tuple


def atom_of(test: CellPredicate) -> Atom:
    if isinstance(test, IsToken):
        return ("token", test.token)
    if isinstance(test, Is):
        return ("feature", test.feature)
    return ("tag", test.transformation)


class Cells:
    """How the pass's symbols read: per symbol, its token, tag and features."""

    def __init__(self, tokens: Sequence[Token], in_tags: Sequence[Transformation | None], features: Features) -> None:
        self.tokens = tokens
        self.in_tags = in_tags
        self.features = features
        self.count = len(tokens) * len(in_tags)

    def token(self, v: int) -> int:
        return v % len(self.tokens)

    def has(self, v: int, feature: str) -> bool:
        if v == BOUNDARY_CELL:
            return False
        return bool(self.features.get(self.tokens[self.token(v)], {}).get(feature, False))

    def value(self, atom: Atom, v: int) -> int | bool:
        kind = atom[0]
        if kind == "copy":
            return -1 if v == BOUNDARY_CELL else self.token(v)
        if kind == "token":
            if atom[1] is BOUNDARY:
                return v == BOUNDARY_CELL
            return v != BOUNDARY_CELL and self.tokens[self.token(v)] == atom[1]
        if kind == "feature":
            return self.has(v, atom[1])
        if kind == "known":  # the token has features (an entry in the mapping)
            return v != BOUNDARY_CELL and self.tokens[self.token(v)] in self.features
        if kind == "tag":
            return v != BOUNDARY_CELL and self.in_tags[v // len(self.tokens)] == atom[1]
        raise TypeError(f"unknown atom {atom!r}")


@dataclass
class Side:
    """What the rules test on one side (-1: left, +1: right) of a position.

    `atoms[j]`: the atoms tested at offset side*(j+1); `cell_tests[j]`: per rule, its
    tests there as (atom index, negated). `tier_feats[tier][q]`: the features tested of
    the (q+1)-th tier token on this side (None: only whether it exists);
    `tier_tests[tier]`: per rule, (q, feature or None, negated).
    """

    side: int
    atoms: list[list[Atom]]
    cell_tests: list[dict[int, list[tuple[int, bool]]]]
    tier_feats: dict[str, list[list[str]]]
    tier_tests: dict[str, dict[int, list[tuple[int, str | None, bool]]]]
    copy_offsets: list[int]  # offsets (signed) whose token a copy rule reads

    @property
    def width(self) -> int:
        return len(self.atoms)


#: A test of a cell: (offset, atom, negated); of a tier: (side, tier, rank, feature or
#: None for the tier's end, negated), rank counting tier tokens from the nearest.
CellCheck = tuple[int, Atom, bool]
TierCheck = tuple[int, str, int, "str | None", bool]


@dataclass(frozen=True)
class Decision:
    """One case of a rule firing, tested like a rule of its own. A rule is one case,
    unless what it writes or tests depends on the token at a position in a way the
    automata do not read directly: a feature transformation (one case per token it
    recodes, and per values of the token it agrees with) or a tier test that counts the
    position itself (one case where the position is on the tier, one where it is not).
    A rule's cases exclude each other, so as consecutive decisions they fire exactly
    where the rule does."""

    rule: Rule
    cells: tuple[CellCheck, ...]
    tiers: tuple[TierCheck, ...]
    at_token: tuple[OutputItem, ...]
    at_start: tuple[OutputItem, ...]


def inclusive_cases(test: TierTest) -> list[tuple[list[CellCheck], list[TierCheck]]]:
    """An inclusive tier test as the two cases of the position's token: off the tier,
    it is the exclusive test; on it, that token is the first tier token counted."""
    on_tier = ("feature", test.tier)
    off: tuple[list[CellCheck], list[TierCheck]] = (
        [(0, on_tier, True)], [(test.side, test.tier, test.rank, test.feature, test.negated)]
    )
    on_cells: list[CellCheck] = [(0, on_tier, False)]
    on_tiers: list[TierCheck] = []
    if test.rank > 0:
        on_tiers.append((test.side, test.tier, test.rank - 1, test.feature, test.negated))
    elif test.feature is not BOUNDARY:
        on_cells.append((0, ("feature", test.feature), test.negated))
    elif not test.negated:
        return [off]  # "no tier token from here on", yet the position is one
    return [off, (on_cells, on_tiers)]


def recoded_cases(
    writes: Writes, tokens: Sequence[Token], features: Features
) -> list[tuple[list[CellCheck], list[TierCheck], Token]]:
    """A feature transformation as cases: per token it applies to (and per values of
    the agreed features of the token it agrees with), the tests and the token written."""
    known = inventory(features)
    tr = writes.recodes
    cases: list[tuple[list[CellCheck], list[TierCheck], Token]] = []
    if isinstance(tr, SetFeatures):
        for token in tokens:
            made = known.resolve(token, tr.values)
            if made is not None:
                cases.append(([(0, ("token", token), False)], [], made))
        return cases
    assert isinstance(tr, Agree)
    # The values the agreed features take together on some token of the inventory.
    combos = sorted({tuple(bool(known.value(t, f)) for f in tr.features) for t in features})
    for token in tokens:
        for combo in combos:
            made = known.resolve(token, tuple(zip(tr.features, combo)))
            if made is None:
                continue
            here: list[CellCheck] = [(0, ("token", token), False)]
            if tr.tier is None:
                # The token agreed with must have features (the boundary has none).
                cells = here + [(tr.offset, ("known",), False)]
                cells += [(tr.offset, ("feature", f), not v) for f, v in zip(tr.features, combo)]
                cases.append((cells, [], made))
            else:
                # A tier token has features (the tier's); it must exist.
                side, rank = (1 if tr.offset > 0 else -1), abs(tr.offset) - 1
                tiers: list[TierCheck] = [(side, tr.tier, rank, BOUNDARY, True)]
                tiers += [(side, tr.tier, rank, f, not v) for f, v in zip(tr.features, combo)]
                cases.append((here, tiers, made))
    return cases


def decisions_of(rules: Sequence[Rule], tokens: Sequence[Token], features: Features) -> list[Decision]:
    """Every rule of a pass as its cases, in the pass's order (see `Decision`)."""
    out = []
    for rule in rules:
        shape = shape_of(rule)
        cells: list[CellCheck] = [
            (slot.offset, atom_of(test.test), test.negated) for slot in shape.guarded_slots for test in slot.tests
        ]
        plain = [(t.side, t.tier, t.rank, t.feature, t.negated) for t in shape.tiers if not t.inclusive]
        variants: list[tuple[list[CellCheck], list[TierCheck]]] = [(cells, plain)]
        for test in shape.tiers:
            if test.inclusive:
                variants = [(c + c2, t + t2) for c, t in variants for c2, t2 in inclusive_cases(test)]
        writes = shape.writes
        for c, t in variants:
            if writes.recodes is None:
                out.append(Decision(rule, tuple(c), tuple(t), writes.at_token, writes.at_start))
                continue
            for c2, t2, made in recoded_cases(writes, tokens, features):
                out.append(Decision(rule, tuple(c + c2), tuple(t + t2), (Written(made),), ()))
    return out


def sides_of(
    decisions: Sequence[Decision],
) -> tuple[Side, list[Atom], dict[int, list[tuple[int, bool]]], Side]:
    """Sort every test of every decision into the left side, offset 0, and the right side."""
    per_offset: dict[int, list[Atom]] = {}
    tests: dict[int, dict[int, list[tuple[Atom, bool]]]] = {}
    tiers: dict[int, dict[str, dict[int, set[str]]]] = {-1: {}, 1: {}}
    tier_tests: dict[int, dict[str, dict[int, list[tuple[int, str | None, bool]]]]] = {-1: {}, 1: {}}
    copies: dict[int, list[int]] = {-1: [], 1: []}
    for r, decision in enumerate(decisions):
        for offset, atom, negated in decision.cells:
            atoms = per_offset.setdefault(offset, [])
            if atom not in atoms:
                atoms.append(atom)
            tests.setdefault(offset, {}).setdefault(r, []).append((atom, negated))
        for side, tier, rank, feature, negated in decision.tiers:
            feats = tiers[side].setdefault(tier, {})
            feats.setdefault(rank, set())
            if feature is not BOUNDARY:
                feats[rank].add(feature)
            tier_tests[side].setdefault(tier, {}).setdefault(r, []).append((rank, feature, negated))
        copied = {i.offset for i in decision.at_token + decision.at_start if isinstance(i, Copied)} - {0}
        for offset in sorted(copied):
            side = 1 if offset > 0 else -1
            atoms = per_offset.setdefault(offset, [])
            if ("copy",) not in atoms:
                atoms.append(("copy",))
            if offset not in copies[side]:
                copies[side].append(offset)

    def side_of(sign: int) -> Side:
        width = max([abs(o) for o in per_offset if o * sign > 0], default=0)
        atoms = [sorted(per_offset.get(sign * (j + 1), []), key=repr) for j in range(width)]
        cell_tests = []
        for j in range(width):
            index = {a: i for i, a in enumerate(atoms[j])}
            cell_tests.append({
                r: [(index[a], neg) for a, neg in found]
                for r, found in tests.get(sign * (j + 1), {}).items()
            })
        tier_feats = {
            tier: [sorted(qs.get(q, set())) for q in range(max(qs) + 1)]
            for tier, qs in sorted(tiers[sign].items())
        }
        return Side(sign, atoms, cell_tests, tier_feats, tier_tests[sign], sorted(copies[sign], key=abs))

    center_atoms = sorted(per_offset.get(0, []), key=repr)
    index0 = {a: i for i, a in enumerate(center_atoms)}
    center_tests = {r: [(index0[a], neg) for a, neg in found] for r, found in tests.get(0, {}).items()}
    return side_of(-1), center_atoms, center_tests, side_of(1)


