"""Programs in SPE notation (`a -> b / c _ d`), a reading aid for linguists.

Public API:
    rule_to_spe(rule) -> str
    pass_to_spe(pass_) -> list[str]
    derivation(program, word, features) -> list[str]

Notation: `#` is the word boundary, `X` any segment, `∅` nothing, `[+voice -son]` a
natural class (`+f` for `Is(w, f, i)`, `-f` for `Not(Is(...))`), `¬s` "not s",
`⟨+1⟩` "a copy of the segment one to the right", `{T}` "produced by T in the previous
pass". Several tokens in one slot are written `[s +f]`. The DSL form (`show --format
dsl`) stays the authoritative one: SPE has no exact notation for some DSL details, which
this rendering approximates as follows (and documents, rather than hides):
- `Not(Is(w, f, i))` also holds at the boundary; it is printed `-f`, or `{-f, #}` when
  the slot may be the boundary.
- an unconstrained slot between the focus and a constrained one is printed `X`, though
  it may also be the boundary when the constrained slot is `#`.
- a rule whose focus may be the start position (before the first token) as well as a
  token prints its focus as `{#, X}`.
Tier tests (`TierIs`, not in SPE proper) follow the rule after `‖`, one context per
tier in which only that tier's segments count: `‖ vowel tier: _ #` "no vowel follows",
`‖ vowel tier: [+long] _ X [-high]` "the previous vowel is long, the second next one is
not high"; `{-f, #}` also holds when there is no such tier segment. On a tier `_` is
the rule's focus, not counted; in an insertion (`∅ -> l a r / X _ #`) that is the
segment before `∅`, which the tier then says: `‖ vowel tier (_ = the segment before ∅):
[+back] _` "the vowel before the last segment (not counting it) is back". A tier test
that counts the focus itself says `(_ counted)`: `‖ vowel tier (_ counted): [+back] _`
"the nearest vowel at or before the focus is back".
Rules in features: `SetFeatures` is written `[-son] -> [-voice] / _ #`; `Agree` takes
Greek-letter values from the segment it agrees with: `[+nas] -> [αcor βlab] / _ [αcor
βlab]`, or, with a tier segment, `‖ vowel tier: [αback] _`.
"""

from __future__ import annotations

from typing import Mapping, Sequence

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
    Pass,
    Program,
    ReplaceAnyBy,
    ReplaceBy,
    Rule,
    SetFeatures,
    Transformation,
)
from fstsynth.interpreter import trace
from fstsynth.rule_shape import SlotTest, TierTest, shape_of

EMPTY = "∅"


def _tier_item(test: TierTest) -> tuple[str, bool]:
    """A tier test as a bundle item (and whether it holds where the tier has ended)."""
    if test.feature is BOUNDARY:
        return ("X", False) if test.negated else ("#", True)
    return (f"-{test.feature}", True) if test.negated else (f"+{test.feature}", False)


def _tier_contexts(
    tests: Sequence[TierTest], inserts: bool = False, agree: tuple[str, int, list[tuple[str, bool]]] | None = None
) -> str:
    """`‖ tier: left _ right` for each tier the rule tests, in order of first test.

    On a tier `_` is the rule's focus, which is not counted. In an insertion that is
    the segment before `∅`, not the insertion site as in the main context, so there
    the tier says so: `vowel tier (_ = the segment before ∅): [+back] _` (the nearest
    vowel before that segment; were the segment a vowel, it does not count). `agree`:
    (tier, index, items) an `Agree` reads from a tier token. Inclusive and exclusive
    tests of a tier are written as separate contexts, as they count differently."""
    by_tier: dict[tuple[str, bool], dict[int, list[tuple[str, bool]]]] = {}
    for test in tests:
        by_tier.setdefault((test.tier, test.inclusive), {}).setdefault(test.index, []).append(_tier_item(test))
    if agree is not None:
        tier, index, items = agree
        by_tier.setdefault((tier, False), {}).setdefault(index, []).extend(items)
    contexts = []
    for (tier, inclusive), slots in by_tier.items():
        def bundle(index: int, slots: dict[int, list[tuple[str, bool]]] = slots) -> str:
            return _bundle_items(slots[index])[0] if index in slots else "X"

        left = [bundle(k) for k in range(min(min(slots), 0), 0)]
        right = [bundle(k) for k in range(1, max(max(slots), 0) + 1)]
        key = " (_ counted)" if inclusive else f" (_ = the segment before {EMPTY})" if inserts and left else ""
        contexts.append(f"{tier} tier{key}: " + " ".join([*left, "_", *right]))
    return "   ‖ " + "; ".join(contexts)


def _item(test: SlotTest) -> tuple[str, bool]:
    """One cell test as a bundle item, and whether it admits the boundary."""
    cell = test.test
    if isinstance(cell, IsToken):
        if cell.token is BOUNDARY:
            return ("X", False) if test.negated else ("#", True)
        return (f"¬{cell.token}", True) if test.negated else (cell.token, False)
    if isinstance(cell, Is):
        return (f"-{cell.feature}", True) if test.negated else (f"+{cell.feature}", False)
    tag = "{" + str(cell.transformation) + "}"
    return ("¬" + tag, True) if test.negated else (tag, False)


def _bundle_items(found: list[tuple[str, bool]]) -> tuple[str, bool]:
    items = list(dict.fromkeys(found))  # drop repeats, keep order
    if any(text == "#" for text, _ in items):
        # `#` together with an item demanding a segment can never hold: say so.
        return ("#" if all(b for _, b in items) else "(never)"), True
    boundary = all(b for _, b in items)
    texts = [t for t, _ in items if t != "X"] or ["X"]
    if len(texts) == 1 and not texts[0].startswith(("+", "-", *_GREEK)):
        body = texts[0]
    else:
        body = "[" + " ".join(texts) + "]"
    if boundary:
        return "{" + body + ", #}", True
    return body, False


#: Variables over feature values, in the order an `Agree` names its features.
_GREEK = "αβγδεζηθ"


def _agreed(features: Sequence[str]) -> list[tuple[str, bool]]:
    """`Agree`'s features as bundle items `αf`, `βg`, ... (the boundary never agrees)."""
    return [(f"{_GREEK[k % len(_GREEK)]}{name}", False) for k, name in enumerate(features)]


def _tokens(tokens: tuple[str, ...]) -> str:
    return " ".join(tokens) if tokens else EMPTY


def _copy(offset: int) -> str:
    return f"⟨{offset:+d}⟩"


def rule_to_spe(rule: Rule) -> str:
    """`focus -> change / left _ right` for one rule (see the module docstring)."""
    shape = shape_of(rule)
    slots = {slot.offset: [_item(t) for t in slot.tests] for slot in shape.slots}
    tr: Transformation = rule.transformation
    agree = None  # an Agree with a tier token: (tier, index, items)
    if isinstance(tr, Agree):
        if tr.tier is None:
            slots.setdefault(tr.offset, []).extend(_agreed(tr.features))
        else:
            agree = (tr.tier, tr.offset, _agreed(tr.features))
    center = slots.pop(0, [])
    if shape.writes.source is not None:
        center = [_item(SlotTest(IsToken(shape.writes.source, 0), False)), *center]
    if shape.writes.recodes is not None:
        # A feature transformation applies to a segment only: the boundary is no focus.
        center = [(text, False) for text, _ in center]
    if center:
        focus, focus_boundary = _bundle_items(center)
    else:
        focus, focus_boundary = "X", True
    inserts = shape.writes.inserts
    if focus_boundary and inserts and focus != "#":
        focus = "{#, " + focus.strip("{}").replace(", #", "") + "}" if focus != "X" else "{#, X}"
    lo = min(slots, default=0)
    hi = max(slots, default=0)
    left = [_bundle_items(slots[k])[0] if k in slots else "X" for k in range(min(lo, 0), 0)]
    right = [_bundle_items(slots[k])[0] if k in slots else "X" for k in range(1, max(hi, 0) + 1)]

    if isinstance(tr, Insert):
        lhs, rhs = EMPTY, _tokens(tr.tokens)
        left.append(focus)
    elif isinstance(tr, CopyInsert):
        lhs, rhs = EMPTY, _copy(tr.offset)
        left.append(focus)
    elif isinstance(tr, (ReplaceBy, ReplaceAnyBy)):
        lhs, rhs = focus, _tokens(tr.target)
    elif isinstance(tr, Delete):
        lhs, rhs = focus, EMPTY
    elif isinstance(tr, CopyReplace):
        lhs, rhs = focus, _copy(tr.offset)
    elif isinstance(tr, Identity):
        lhs, rhs = focus, focus
    elif isinstance(tr, SetFeatures):
        lhs, rhs = focus, "[" + " ".join(("+" if v else "-") + name for name, v in tr.values) + "]"
    elif isinstance(tr, Agree):
        lhs, rhs = focus, "[" + " ".join(text for text, _ in _agreed(tr.features)) + "]"
    else:
        raise TypeError(f"not a transformation: {tr!r}")
    text = f"{lhs} -> {rhs}"
    if left or right:
        text += " / " + " ".join([*left, "_", *right])
    if shape.tiers or agree is not None:
        text += _tier_contexts(shape.tiers, inserts, agree)
    if isinstance(tr, Identity):
        text += "   (no change; blocks the rules below)"
    return text


def pass_to_spe(pass_: Pass) -> list[str]:
    """One line per rule, in order (the first that applies at a position wins)."""
    return [rule_to_spe(rule) for rule in pass_.rules]


def derivation(
    program: Program, word: Sequence[str], features: Mapping[str, Mapping[str, bool]]
) -> list[str]:
    """A word's derivation: its form after each pass and, under it, each position where
    a rule fired (`start` is the position before the first token), read from the
    interpreter's `trace` (the transducer computes the same outputs)."""
    form = tuple(word)
    lines = [f"input:  {' '.join(form) or EMPTY}"]
    for k, (output, steps) in enumerate(trace(program, form, features), start=1):
        lines.append(f"pass {k}: {' '.join(output) or EMPTY}")
        rules = program.passes[k - 1].rules
        for step in steps:
            if step.rule_index is None:
                continue
            where = "start" if step.position < 0 else f"{step.position + 1} ({form[step.position]})"
            rule = rules[step.rule_index]
            lines.append(
                f"  at {where}: rule {step.rule_index + 1}, {rule_to_spe(rule)}"
                f"  =>  {' '.join(step.output) or EMPTY}"
            )
        form = output
    return lines
