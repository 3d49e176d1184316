"""A program as a foma/XFST script of rewrite rules, compiled by foma itself.

Public API:
    program_to_foma(program, tokens, features, title="", compose=True) -> str
    tag_symbols(program, tokens, features) -> list[str]
    foma_symbol(token) -> str, Error

The script defines the token alphabet (`Tok`), one class per feature the rules test,
and one composed block per pass (`define Pass1 [ ... ];`), then leaves the cascade
`Tok* .o. Pass1 .o. Pass2 ...` on foma's stack (`regex Model;`), or, with
`compose=False`, leaves the passes to be applied one after the other.

Why markers: foma's rewrite rules have no priority order, but a DSL pass is an ordered
`Else` chain (the first rule that applies at a position wins) whose predicates all read
the pass's input. Each pass is therefore written like the Pynini compiler does it
(docs/design.md, section 5), in foma's own notation:
1. for each rule in order, `[..] -> <mPrR> || left _ right` inserts the rule's marker
   right after every token (or at the start of the word, for prefixes) where the rule
   applies and no earlier rule has marked it; the contexts skip over markers, so every
   rule reads the pass input (`||` reads both contexts on the input side, like the DSL);
   a last `else` marker goes on every token no rule took;
2. rules realize each marker as the rule's output (and, where the next pass tests
   `TransformationApplied`, a tag symbol after each output token).
Each rule is printed above its marking rule in SPE and in DSL notation, so a reader can
follow (and edit) it. A `Copy*` rule has no plain-rule form in foma (the copied token is
not known statically): its marker is first rewritten, by one rule per token it can
copy, into a marker naming the token found at the copied offset; the script says so.
Nothing here is approximate: the tests compare foma's output with fstsynth's on every
training and test word of the benchmark.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from fstsynth.spe import rule_to_spe
from fstsynth.dsl import (
    BOUNDARY,
    SetFeatures,
    TierIs,
    Identity,
    Is,
    IsToken,
    Pass,
    Program,
    Transformation,
)
from fstsynth.errors import UserError
from fstsynth.features import inventory
from fstsynth.rule_shape import CellPredicate, RuleShape, SlotTest, TierTest, referenced_tags, shape_of
from fstsynth.types import Token, Features


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


def _internal(name: str) -> str:
    """A marker or tag symbol `<name>` (name: letters and digits, which foma reads
    literally inside a multicharacter symbol)."""
    return f"%<{name}%>"


def _with_tag(symbol: str, tag_any: str | None) -> str:
    """A token class, optionally followed by one of the input tags."""
    return f"[{symbol} ({tag_any})]" if tag_any else symbol


def _union(symbols: Sequence[str]) -> str:
    return "[ " + " | ".join(symbols) + " ]" if symbols else NOTHING


@dataclass
class _Slot:
    """What a rule demands at one offset: a cell language (token and input tag, no
    marker), or None for any cell; and whether the boundary is allowed there."""

    core: str | None
    boundary: bool


class _Writer:
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
            name = _internal(f"t{len(self.tag_names) + 1}")
            self.tag_names[tr] = name
        return name

    # -- predicates

    def test_core(self, test: SlotTest, ctx: "_PassContext") -> _Slot:
        """One cell test as a slot: the cells it admits (None: any token) and whether
        the boundary satisfies it."""
        slot = self._positive_core(test.test, ctx)
        if not test.negated:
            return slot
        if slot.core == NOTHING:
            return _Slot(None, not slot.boundary)
        return _Slot(f"[{ctx.core} - {slot.core}]", not slot.boundary)

    def _positive_core(self, test: CellPredicate, ctx: "_PassContext") -> _Slot:
        if isinstance(test, IsToken):
            if test.token is BOUNDARY:
                return _Slot(NOTHING, True)
            if test.token not in self.tokens:
                return _Slot(NOTHING, False)
            return _Slot(_with_tag(foma_symbol(test.token), ctx.tag_any), False)
        if isinstance(test, Is):
            return _Slot(_with_tag(self.feature_class(test.feature), ctx.tag_any), False)
        if test.transformation not in ctx.in_tags:
            return _Slot(NOTHING, False)
        return _Slot(f"[Tok {self.tag(test.transformation)}]", False)

    def slots(self, tests: Sequence[SlotTest], cells: dict[int, set[Token]], ctx: "_PassContext") -> dict[int, _Slot]:
        """Per offset, the cells the tests admit there (the rule's, its transformation's
        conditions included), narrowed to the tokens `cells` names at some offsets."""
        by_offset: dict[int, list[_Slot]] = {}
        for test in tests:
            by_offset.setdefault(test.offset, []).append(self.test_core(test, ctx))
        for offset, tokens in cells.items():
            members = [foma_symbol(t) for t in sorted(tokens) if t in self.tokens]
            allowed = _with_tag(_union(members), ctx.tag_any) if members else NOTHING
            by_offset.setdefault(offset, []).append(_Slot(allowed, False))
        out: dict[int, _Slot] = {}
        for offset, cores in sorted(by_offset.items()):
            restricted = [c.core for c in cores if c.core is not None]
            core: str | None = None
            if NOTHING in restricted:
                core = NOTHING
            elif len(restricted) == 1:
                core = restricted[0]
            elif restricted:
                core = "[" + " & ".join(restricted) + "]"
            out[offset] = _Slot(core, all(c.boundary for c in cores))
        return out

    def tier_context(self, test: TierTest, ctx: "_PassContext") -> "_TierContext":
        """A tier test as a context language on one side of the position.

        Left: the cells just before the position's token (to be followed by it); right:
        the cells just after it (the start position: from the first token). Cells of
        tokens off the tier are skipped over."""
        negated = test.negated
        tier = self.feature_class(test.tier)

        def cell(core: str) -> str:
            return f"[{_with_tag(core, ctx.tag_any)} ({ctx.mark_any})]"

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
            exists: _Side = (False, f"{skip} {off}* {cell(at_k) if at_k else on}")
            ends: _Side = (True, f"{off}* {fewer}")
        else:
            skip = f"[{on} {off}*]^{between}" if between else ""
            exists = (False, f"{cell(at_k) if at_k else on} {off}* {skip}")
            ends = (True, f"({ctx.mark_any}) {off}* {fewer}")
        side = test.side
        # Nothing lies left of the start position: a left test holds there iff it
        # holds where the tier has ended.
        holds_at_end = (test.feature is BOUNDARY) != negated
        if test.feature is BOUNDARY:
            return _TierContext(side, [exists] if negated else [ends], holds_at_end)
        return _TierContext(side, [exists, ends] if negated else [exists], holds_at_end)


@dataclass
class _TierContext:
    side: int  # -1: left of the position, +1: right
    alternatives: list[tuple[bool, str]]  # (anchored at the word edge, body), any of them
    holds_at_start: bool  # (left tests) whether it holds at the start position


@dataclass
class _PassContext:
    number: int
    in_tags: set[Transformation]
    tag_any: str | None  # union of the input's tag symbols, or None
    mark_any: str  # name of the define holding every marker of this pass
    core: str  # any token with its optional input tag


def _cell(slot: _Slot, ctx: _PassContext) -> str:
    core = ctx.core if slot.core is None else slot.core
    return f"[{core} ({ctx.mark_any})]"


#: One side of a rule context: whether it is anchored at the word edge (`.#.`, beyond
#: the body: before it on the left, after it on the right), and the body.
_Side = tuple[bool, str]


def _left(slots: Sequence[_Slot], ctx: _PassContext, center: str) -> list[_Side]:
    """Left-context alternatives: slots far..near, then the marked token itself."""
    n = len(slots)
    alts: list[_Side] = []
    if not any(s.core == NOTHING for s in slots):  # a boundary-only slot needs .#.
        alts.append((False, " ".join([*(_cell(s, ctx) for s in slots), center])))
    for j in range(n):  # only the j nearest slots are inside the word
        if all(s.boundary for s in slots[: n - j]) and not any(s.core == NOTHING for s in slots[n - j :]):
            near = [_cell(s, ctx) for s in slots[n - j :]]
            alts.append((True, " ".join([f"({ctx.mark_any})", *near, center])))
    return alts


def _right(slots: Sequence[_Slot], ctx: _PassContext) -> list[_Side]:
    """Right-context alternatives: slots near..far. Each starts with a token or the
    boundary, so a position that already carries a marker is never marked again."""
    m = len(slots)
    if m == 0:
        return [(False, "Tok"), (True, "")]
    full = [_cell(s, ctx) for s in slots]
    alts: list[_Side] = []
    if not any(s.core == NOTHING for s in slots):
        if ctx.tag_any:
            # A context extends to the right with `?*`: without this, the last cell could
            # match a token and leave its tag to `?*`, so that a test of the tag is skipped.
            alts += [(False, " ".join([*full, f"[Tok | {ctx.mark_any}]"])), (True, " ".join(full))]
        else:
            alts.append((False, " ".join(full)))
    for j in range(m):
        if all(s.boundary for s in slots[j:]) and not any(s.core == NOTHING for s in slots[:j]):
            alts.append((True, " ".join(_cell(s, ctx) for s in slots[:j])))
    return alts


def _left_text(side: _Side) -> str:
    anchored, body = side
    return f".#. {body}".strip() if anchored else body


def _right_text(side: _Side) -> str:
    anchored, body = side
    return f"{body} .#.".strip() if anchored else body


def _with_tiers(
    pairs: list[tuple[_Side | None, _Side]], tiers: list["_TierContext"], ctx: _PassContext
) -> list[tuple[_Side | None, _Side]]:
    """The (left, right) context pairs narrowed by tier contexts: each side intersected
    with a tier language of that side for every tier test (one pair per choice among a
    test's alternatives). Bodies are intersected with `?*` extending them away from the
    position, unless anchored at the word edge (foma reads `.#.` only at a context's
    edge, so the edge is kept out of the intersection)."""
    start_ok = all(t.holds_at_start for t in tiers if t.side < 0)
    out = []
    for left, right in pairs:
        choices: list[list[tuple[int, _Side]]] = [[]]
        for tier in tiers:
            if left is None and tier.side < 0:
                continue  # the start position: decided by `start_ok`
            choices = [chosen + [(tier.side, alt)] for chosen in choices for alt in tier.alternatives]
        if left is None and not start_ok:
            continue
        for chosen in choices:
            lefts = [alt for side, alt in chosen if side < 0]
            rights = [alt for side, alt in chosen if side > 0]
            new_left = left if left is None or not lefts else _intersect(
                [left, *((a, f"{body} {ctx.core}".strip()) for a, body in lefts)], left=True
            )
            new_right = right if not rights else _intersect([right, *rights], left=False)
            out.append((new_left, new_right))
    return out


def _intersect(sides: list[_Side], left: bool) -> _Side:
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
class _Variant:
    """One case of a rule, marked by a marker of its own (the cases of a rule exclude
    each other, so marking them one after the other marks where the rule applies)."""

    tests: list[SlotTest]  # cell tests: the rule's (guarded) and the case's
    cells: dict[int, set[Token]]  # the tokens the case admits at some offsets
    tiers: list[TierTest]  # tier tests, none counting the position itself
    recoded: dict[Token, Token] | None  # a feature change: token -> the token written


def _exclusive(test: TierTest, index: int) -> TierTest:
    return TierTest(TierIs(test.tier, test.feature, index), test.negated)


def _variants(shape: RuleShape, tokens: Sequence[Token], features: Features) -> list[_Variant]:
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
        off = ([SlotTest(on_tier, True)], [_exclusive(test, test.index)])
        on: tuple[list[SlotTest], list[TierTest]] = ([SlotTest(on_tier, False)], [])
        if test.rank > 0:
            on[1].append(_exclusive(test, test.side * test.rank))
        elif test.feature is not BOUNDARY:
            on[0].append(SlotTest(Is(test.feature, 0), test.negated))
        branches = [off] if test.rank == 0 and test.feature is BOUNDARY and not test.negated else [off, on]
        cases = [(c + c2, t + t2) for c, t in cases for c2, t2 in branches]
    recodes = shape.writes.recodes
    if recodes is None:
        return [_Variant(c, {}, t, None) for c, t in cases]
    known = inventory(features)
    out = []
    if isinstance(recodes, SetFeatures):
        made = {x: known.resolve(x, recodes.values) for x in tokens}
        mapping = {x: y for x, y in made.items() if y is not None}
        return [_Variant(c, {0: set(mapping)}, t, mapping) for c, t in cases]
    combos = sorted({tuple(bool(known.value(y, f)) for f in recodes.features) for y in features})
    for combo in combos:
        made = {x: known.resolve(x, tuple(zip(recodes.features, combo))) for x in tokens}
        mapping = {x: y for x, y in made.items() if y is not None}
        for c, t in cases:
            if recodes.tier is None:
                # (a token without features has no value: it is never agreed with)
                having = {y for y in tokens if all(known.value(y, f) == v for f, v in zip(recodes.features, combo))}
                out.append(_Variant(c, {0: set(mapping), recodes.offset: having}, t, mapping))
            else:
                tier_tests = [TierTest(TierIs(recodes.tier, BOUNDARY, recodes.offset), True)]
                tier_tests += [
                    TierTest(TierIs(recodes.tier, f, recodes.offset), not v) for f, v in zip(recodes.features, combo)
                ]
                out.append(_Variant(c, {0: set(mapping)}, t + tier_tests, mapping))
    return out


def _window(slots: dict[int, _Slot], lo: int, hi: int, any_slot: _Slot) -> list[_Slot]:
    return [slots.get(k, any_slot) for k in range(lo, hi)]


def program_to_foma(
    program: Program, tokens: Sequence[Token], features: Features, title: str = "", compose: bool = True
) -> str:
    """The foma script of `program` over `tokens` (every token the transducer reads).

    `compose=False` leaves the passes uncomposed: the script defines `Pass1`, `Pass2`,
    ... and pushes nothing, for programs whose composition foma would take minutes to
    build; each pass is then applied to the previous one's output (`tag_symbols` lists
    the symbols that may flow between them besides the tokens)."""
    w, body = _written(program, tokens, features)
    toks = w.tokens
    passes = program.passes

    head = [
        f"# fstsynth rules{': ' + title if title else ''}",
        "# Written by `fstsynth export --format foma`. Compile with foma:",
        "#   foma -e 'source THIS_FILE' -e 'save stack rules.fomabin' -s",
        "#   echo 'WORD' | flookup -i -x rules.fomabin     (apply down: source -> target)",
        "# Tokens are foma multicharacter symbols; a token not in `Tok` (never seen in",
        "# training) must be written <unk> (`%<unk%>`), as fstsynth reads it.",
        "# Each pass is one composed block: marking rules (first match wins, contexts read",
        "# the pass input), then the realization of the markers. See the docstring of",
        "# exporters/foma_script.py for the scheme.",
        "",
        f"define Tok {_union([foma_symbol(t) for t in toks])};",
    ]
    for feature, name in sorted(w.feature_names.items(), key=lambda kv: kv[1]):
        members = [foma_symbol(t) for t in toks if features.get(t, {}).get(feature, False)]
        head.append(f"define {name} {_union(members)};   # [+{feature}]")
    for tr, name in w.tag_names.items():
        head.append(f"# tag {name}: the token was produced by {tr} in the previous pass")
    if compose:
        cascade = "".join(f" .o. Pass{k}" for k in range(1, len(passes) + 1))
        tail = ["", f"define Model [ Tok*{cascade} ];", "regex Model;", ""]
    else:
        tail = [
            "",
            f"# The {len(passes)} passes are left uncomposed: apply `Tok* .o. Pass1` to a word, then",
            "# Pass2 to its output, and so on (e.g. `regex Tok* .o. Pass1;` saved as pass1.fomabin,",
            "# `regex Pass2;` as pass2.fomabin, and flookup one after the other).",
            "",
        ]
    return "\n".join(head + body + tail)


def tag_symbols(program: Program, tokens: Sequence[Token], features: Features) -> list[str]:
    """The tag symbols (`<t1>`, ...) the script of `program` writes between passes."""
    w, _ = _written(program, tokens, features)
    return [name.replace("%", "") for name in w.tag_names.values()]


def _written(program: Program, tokens: Sequence[Token], features: Features) -> tuple["_Writer", list[str]]:
    """The writer (its names for classes and tags) and the passes' blocks."""
    w = _Writer(program, tokens, features)
    for tok in w.tokens:
        if re.fullmatch(r"<(m\d+\w*|t\d+)>", tok):
            raise Error(f"token {tok!r} has the form of one of the script's marker symbols")
        if re.fullmatch(r"Tok|Model|(Pass|Marks)\d+", tok):
            raise Error(f"token {tok!r} is spelled as a name the foma script defines")
    body: list[str] = []
    passes = program.passes
    for k, pass_ in enumerate(passes, start=1):
        out_tags = referenced_tags(passes[k]) if k < len(passes) else set()
        in_tags = referenced_tags(pass_) if k > 1 else set()
        body.extend(_pass_block(w, k, pass_, in_tags, out_tags))
    return w, body


def _pass_block(
    w: _Writer,
    number: int,
    pass_: Pass,
    in_tags: set[Transformation],
    out_tags: set[Transformation],
) -> list[str]:
    tag_syms = [w.tag(t) for t in sorted(in_tags, key=str)]
    tag_any = _union(tag_syms) if tag_syms else None
    marks_name = f"Marks{number}"
    core = _with_tag("Tok", tag_any)
    ctx = _PassContext(number, in_tags, tag_any, marks_name, core)
    any_slot = _Slot(None, True)
    lines = ["", f"# ---- pass {number}: the first rule that applies at a position wins ----"]
    marking: list[str] = []
    resolve: list[str] = []
    realize: list[str] = []
    marks: list[str] = []

    def out(tokens: Sequence[Token], tr: Transformation) -> str:
        tag = w.tag(tr) if tr in out_tags else ""
        parts = [f"{foma_symbol(t)} {tag}".strip() for t in tokens]
        return " ".join(parts) if parts else "0"

    def keep_tag(tr: Transformation) -> str:
        return w.tag(tr) if tr in out_tags else ""

    # After marking, the input tags are dropped: a realization context sees cells
    # `token marker` (every token carries exactly one marker, the start at most one).
    cell = f"[Tok {marks_name}]"

    def copy_cell(tok: Token) -> str:
        return f"[{foma_symbol(tok)} {marks_name}]"

    def cells(count: int) -> str:
        return " ".join([cell] * count)

    for r, rule in enumerate(pass_.rules, start=1):
        shape = shape_of(rule)
        writes = shape.writes
        tr = rule.transformation
        lines.append(f"# rule {r}: {rule_to_spe(rule)}")
        lines.append(f"#   {rule}")
        if writes.copy_offset is not None:
            # Which token is copied is decided when the marker is realized.
            lines.append("#   (a copy has no plain-rule form: resolved by one rule per token it can copy)")
        variants = _variants(shape, w.tokens, w.features)
        if writes.recodes is not None:
            lines.append("#   (a feature change: one marker per case, realized token by token)")
        if any(t.inclusive for t in shape.tiers):
            lines.append("#   (a tier test counting the position: one case on the tier, one off it)")
        if shape.tiers or any(v.tiers for v in variants):
            lines.append("#   (tier tests: contexts in which only the tier's tokens count)")
        applies = False
        for v, variant in enumerate(variants, start=1):
            slots = w.slots(variant.tests, variant.cells, ctx)
            here = slots.pop(0, _Slot(None, True))
            lo = min([o for o in slots if o < 0], default=0)
            hi = max([o for o in slots if o > 0], default=0)
            mark = _internal(f"m{number}r{r}" if len(variants) == 1 else f"m{number}r{r}v{v}")
            left_slots = _window(slots, lo, 0, any_slot)
            right_slots = _window(slots, 1, hi + 1, any_slot)
            pairs: list[tuple[_Side | None, _Side]] = []  # left None: the start position
            # At a token: insert the marker after it.
            center = ctx.core if here.core is None else here.core
            if here.core != NOTHING:  # else the rule applies only at the start position
                pairs += [
                    (left, right)
                    for left in _left(left_slots, ctx, center)
                    for right in _right(right_slots, ctx)
                ]
            # At the start position (offset i reads token i-1): the rule applies there only
            # if every offset <= 0 may be the boundary.
            at_start = here.boundary and all(s.boundary for o, s in slots.items() if o < 0)
            if at_start:
                pairs += [(None, right) for right in _right(right_slots, ctx)]
            tiers = [w.tier_context(test, ctx) for test in variant.tiers]
            if tiers:
                pairs = _with_tiers(pairs, tiers, ctx)
            contexts = [
                f"{'.#.' if left is None else _left_text(left)} _ {_right_text(right)}" for left, right in pairs
            ]
            if not contexts:
                continue
            applies = True
            marks.append(mark)
            marking.append(f"[..] -> {mark} || " + " ,\n        ".join(contexts))
            # Realization: at the start (`.#. _`) and after a token.
            if variant.recoded is not None:
                for source, made in sorted(variant.recoded.items()):
                    realize.append(f"[{foma_symbol(source)} {mark}] -> {out((made,), tr)}")
            elif writes.copy_offset is None:
                if writes.keeps:
                    kept = keep_tag(tr) + " " + (out(writes.tokens, tr) if writes.tokens else "")
                    realize.append(f"{mark} -> {kept.strip() or '0'} || Tok _")
                else:
                    realize.append(f"[Tok {mark}] -> {out(writes.tokens, tr)}")
                if at_start:
                    realize.append(f"{mark} -> {out(writes.tokens, tr) if writes.inserts else '0'} || .#. _")
            else:
                # First resolve which token is copied: the marker becomes a per-token marker
                # `<mPrRcN>` where that token is found at the copied offset (the string
                # keeps its shape, so later contexts still read the pass input); then the
                # per-token markers are realized like any other.
                i = writes.copy_offset
                for c, tok in enumerate(w.tokens, start=1):
                    sub = _internal(f"{mark[2:-2]}c{c}")
                    marks.append(sub)
                    if i == 0:
                        where = [f"{foma_symbol(tok)} _"]
                    elif i > 0:
                        where = [f"Tok _ {cells(i - 1)} {copy_cell(tok)}".replace("  ", " ")]
                        if at_start:
                            where.append(f".#. _ {cells(i - 1)} {copy_cell(tok)}".replace("  ", " "))
                    else:
                        where = [f"{copy_cell(tok)} {cells(-i - 1)} Tok _".replace("  ", " ")]
                    resolve.append(f"{mark} -> {sub} || " + " , ".join(where))
                    if writes.keeps:
                        both = (keep_tag(tr) + " " + out((tok,), tr)).strip()
                        realize.append(f"{sub} -> {both} || Tok _")
                    else:
                        realize.append(f"[Tok {sub}] -> {out((tok,), tr)}")
                    if at_start:
                        realize.append(f"{sub} -> {out((tok,), tr) if writes.inserts else '0'} || .#. _")
        if not applies:
            lines.append("#   (never applies: its conditions cannot all hold)")
    # Else: every token no rule took keeps itself.
    else_mark = _internal(f"m{number}else")
    marks.append(else_mark)
    lines.append("# else: the token is kept")
    marking.append(f"[..] -> {else_mark} || {ctx.core} _ [Tok | .#.]")
    realize.append(f"{else_mark} -> {keep_tag(Identity()) or '0'}")

    lines.append(f"define {marks_name} {_union(marks)};")
    # The pass reads only well-formed input (each token with at most one tag): stating
    # that first keeps foma's compositions small (measured: 43 s -> 3 s on a 22-rule
    # program), as restricting the input does in the Pynini compiler.
    steps = [f"{core}*"] + [f"[ {m} ]" for m in marking]
    if tag_any:
        steps.append(f"[ {tag_any} -> 0 ]")  # the input tags have been read
    steps += [f"[ {m} ]" for m in resolve]
    # Each marker's realization touches only that marker (a one-rule-per-marker chain;
    # one parallel `,,` rule was measured 40x slower to compile).
    steps += [f"[ {m} ]" for m in realize]
    lines.append(f"define Pass{number} [")
    lines.append("      " + "\n  .o. ".join(steps))
    lines.append("];")
    return lines
