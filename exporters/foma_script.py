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
from typing import Sequence

from exporters.foma_contexts import (
    NOTHING,
    Error as Error,
    PassContext,
    Side,
    Slot,
    Writer,
    foma_symbol as foma_symbol,
    internal,
    left_sides,
    left_text,
    right_sides,
    right_text,
    rule_variants,
    slots_between,
    union,
    with_tag,
    with_tiers,
)
from fstsynth.dsl import Identity, Pass, Program, Transformation
from fstsynth.rule_shape import referenced_tags, shape_of
from fstsynth.spe import rule_to_spe
from fstsynth.types import Features, Token


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
        f"define Tok {union([foma_symbol(t) for t in toks])};",
    ]
    for feature, name in sorted(w.feature_names.items(), key=lambda kv: kv[1]):
        members = [foma_symbol(t) for t in toks if features.get(t, {}).get(feature, False)]
        head.append(f"define {name} {union(members)};   # [+{feature}]")
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


def _written(program: Program, tokens: Sequence[Token], features: Features) -> tuple["Writer", list[str]]:
    """The writer (its names for classes and tags) and the passes' blocks."""
    w = Writer(program, tokens, features)
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
    w: Writer,
    number: int,
    pass_: Pass,
    in_tags: set[Transformation],
    out_tags: set[Transformation],
) -> list[str]:
    tag_syms = [w.tag(t) for t in sorted(in_tags, key=str)]
    tag_any = union(tag_syms) if tag_syms else None
    marks_name = f"Marks{number}"
    core = with_tag("Tok", tag_any)
    ctx = PassContext(number, in_tags, tag_any, marks_name, core)
    any_slot = Slot(None, True)
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
        variants = rule_variants(shape, w.tokens, w.features)
        if writes.recodes is not None:
            lines.append("#   (a feature change: one marker per case, realized token by token)")
        if any(t.inclusive for t in shape.tiers):
            lines.append("#   (a tier test counting the position: one case on the tier, one off it)")
        if shape.tiers or any(v.tiers for v in variants):
            lines.append("#   (tier tests: contexts in which only the tier's tokens count)")
        applies = False
        for v, variant in enumerate(variants, start=1):
            slots = w.slots(variant.tests, variant.cells, ctx)
            here = slots.pop(0, Slot(None, True))
            lo = min([o for o in slots if o < 0], default=0)
            hi = max([o for o in slots if o > 0], default=0)
            mark = internal(f"m{number}r{r}" if len(variants) == 1 else f"m{number}r{r}v{v}")
            left_slots = slots_between(slots, lo, 0, any_slot)
            right_slots = slots_between(slots, 1, hi + 1, any_slot)
            pairs: list[tuple[Side | None, Side]] = []  # left None: the start position
            # At a token: insert the marker after it.
            center = ctx.core if here.core is None else here.core
            if here.core != NOTHING:  # else the rule applies only at the start position
                pairs += [
                    (left, right)
                    for left in left_sides(left_slots, ctx, center)
                    for right in right_sides(right_slots, ctx)
                ]
            # At the start position (offset i reads token i-1): the rule applies there only
            # if every offset <= 0 may be the boundary.
            at_start = here.boundary and all(s.boundary for o, s in slots.items() if o < 0)
            if at_start:
                pairs += [(None, right) for right in right_sides(right_slots, ctx)]
            tiers = [w.tier_context(test, ctx) for test in variant.tiers]
            if tiers:
                pairs = with_tiers(pairs, tiers, ctx)
            contexts = [
                f"{'.#.' if left is None else left_text(left)} _ {right_text(right)}" for left, right in pairs
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
                    sub = internal(f"{mark[2:-2]}c{c}")
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
    else_mark = internal(f"m{number}else")
    marks.append(else_mark)
    lines.append("# else: the token is kept")
    marking.append(f"[..] -> {else_mark} || {ctx.core} _ [Tok | .#.]")
    realize.append(f"{else_mark} -> {keep_tag(Identity()) or '0'}")

    lines.append(f"define {marks_name} {union(marks)};")
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
