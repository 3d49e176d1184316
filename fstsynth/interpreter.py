"""The interpreter: the executable definition of what a program means.

Public API:
    TaggedToken, Step
    eval_predicate(pred, word, position, features) -> bool
    apply_transformation(tr, word, position, features) -> tuple[Token, ...] | None
    run_pass(pass_, word, features) -> list[TaggedToken]
    run(program, word, features) -> Word
    tier_token(tier, index, inclusive, word, position, features) -> int | None
    run_pass_many(pass_, words, features), run_many(program, words, features)
        (the same on many words, faster for passes with many rules)
    trace(program, word, features) -> list[list[Step]]

Semantics (docs/design.md, section 3): a pass visits the start position (-1, before the first
token) and every token; at each, the first rule whose predicates all hold and whose
transformation applies there fires, reading only the pass's input. Outputs are
concatenated in order and every output token is tagged with the transformation that
produced it (an untouched token with `Identity()`). Offsets past either end read the
boundary `$`. The compiler must implement exactly this.

The features a program runs with are also its inventory: `SetFeatures` and `Agree`
output the token of that mapping with the resulting feature bundle, and do not apply
(the rule does not fire) where no single token has it (`features.Inventory`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence, cast

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
    TierIs,
    ReplaceBy,
    Rule,
    SetFeatures,
    TaggedToken,
    Transformation,
    TransformationApplied,
)
from fstsynth.features import inventory
from fstsynth.types import Token, Word, Features


START = -1  # the position before the first token
#: The features of a program that reads none (the default of `apply_transformation`).
NO_FEATURES: Features = {}


def eval_predicate(
    pred: Predicate, word: Sequence[TaggedToken], position: int, features: Features
) -> bool:
    if isinstance(pred, Not):
        return not eval_predicate(pred.predicate, word, position, features)
    if isinstance(pred, TierIs):
        return _tier_is(pred, word, position, features)
    index = position + pred.offset
    inside = 0 <= index < len(word)
    if isinstance(pred, IsToken):
        if pred.token is BOUNDARY:
            return not inside
        return inside and word[index][0] == pred.token
    if isinstance(pred, Is):
        return inside and bool(features.get(word[index][0], {}).get(pred.feature, False))
    if isinstance(pred, TransformationApplied):
        return inside and word[index][1] == pred.transformation
    raise TypeError(f"not a predicate: {pred!r}")


def _has(features: Features, token: Token, feature: str) -> bool:
    return bool(features.get(token, {}).get(feature, False))


def tier_token(
    tier: str, index: int, inclusive: bool, word: Sequence[TaggedToken], position: int, features: Features
) -> int | None:
    """Where the `index`-th token of `tier` right (index > 0) or left (< 0) of `position`
    is (`inclusive`: counting from the position itself), None if there is none."""
    first = position if inclusive and position != START else position + (1 if index > 0 else -1)
    order = range(first, len(word)) if index > 0 else range(first, -1, -1)
    k = abs(index)
    for i in order:
        if _has(features, word[i][0], tier):
            k -= 1
            if k == 0:
                return i
    return None


def _tier_is(pred: TierIs, word: Sequence[TaggedToken], position: int, features: Features) -> bool:
    at = tier_token(pred.tier, pred.index, pred.inclusive, word, position, features)
    if at is None:
        return pred.feature is BOUNDARY
    return pred.feature is not BOUNDARY and _has(features, word[at][0], pred.feature)


def apply_transformation(
    tr: Transformation, word: Sequence[TaggedToken], position: int, features: Features = NO_FEATURES
) -> tuple[Token, ...] | None:
    """The tokens `tr` outputs at `position`, or None if it does not apply there.
    `features`: the inventory `SetFeatures` and `Agree` map tokens into."""
    at_start = position == START
    x = None if at_start else word[position][0]
    here: tuple[Token, ...] = () if at_start else (word[position][0],)  # the input token, kept

    def token_at(offset: int) -> Token | None:
        index = position + offset
        return word[index][0] if 0 <= index < len(word) else None

    if isinstance(tr, Identity):
        return here
    if isinstance(tr, Delete):
        return ()
    if isinstance(tr, ReplaceBy):
        return tr.target if x == tr.source else None
    if isinstance(tr, ReplaceAnyBy):
        return () if at_start else tr.target
    if isinstance(tr, Insert):
        return (*here, *tr.tokens)
    if isinstance(tr, CopyReplace):
        copied = token_at(tr.offset)
        if copied is None:
            return None
        return () if at_start else (copied,)
    if isinstance(tr, CopyInsert):
        copied = token_at(tr.offset)
        if copied is None:
            return None
        return (*here, copied)
    if isinstance(tr, SetFeatures):
        if x is None:
            return None
        made = inventory(features).resolve(x, tr.values)
        return None if made is None else (made,)
    if isinstance(tr, Agree):
        if x is None:
            return None
        if tr.tier is None:
            source = token_at(tr.offset)
        else:
            at = tier_token(tr.tier, tr.offset, False, word, position, features)
            source = None if at is None else word[at][0]
        if source is None:
            return None
        known = inventory(features)
        values = [(name, known.value(source, name)) for name in tr.features]
        if any(value is None for _, value in values):
            return None  # the token agreed with has no features
        made = known.resolve(x, tuple((name, bool(value)) for name, value in values))
        return None if made is None else (made,)
    raise TypeError(f"not a transformation: {tr!r}")


def fire(
    rule: Rule, word: Sequence[TaggedToken], position: int, features: Features
) -> tuple[Token, ...] | None:
    """The rule's output at `position`, or None if it does not fire there."""
    for pred in rule.predicates:
        if not eval_predicate(pred, word, position, features):
            return None
    return apply_transformation(rule.transformation, word, position, features)


@dataclass(frozen=True)
class Step:
    """What one pass did at one position: which rule fired (None: none) and the output."""

    position: int
    rule_index: int | None
    output: tuple[Token, ...]


def _pass_steps(
    pass_: Pass, word: Sequence[TaggedToken], features: Features
) -> tuple[list[TaggedToken], list[Step]]:
    out: list[TaggedToken] = []
    steps: list[Step] = []
    for position in range(START, len(word)):
        for k, rule in enumerate(pass_.rules):
            produced = fire(rule, word, position, features)
            if produced is not None:
                tag: Transformation = rule.transformation
                steps.append(Step(position, k, produced))
                break
        else:
            produced = () if position == START else (word[position][0],)
            tag = Identity()
            steps.append(Step(position, None, produced))
        out.extend((tok, tag) for tok in produced)
    return out, steps


def run_pass(
    pass_: Pass, word: Sequence[TaggedToken], features: Features
) -> list[TaggedToken]:
    return _pass_steps(pass_, word, features)[0]


def run(program: Program, word: Sequence[Token], features: Features) -> Word:
    tagged: list[TaggedToken] = [(tok, None) for tok in word]
    for pass_ in program.passes:
        tagged = run_pass(pass_, tagged, features)
    return tuple(tok for tok, _ in tagged)


def _token_needed(rule: Rule) -> tuple[bool, Token | None]:
    """(True, t) if the rule can only fire where the current token is t (None: the
    start position), from an `IsToken(t, 0)` test or a `ReplaceBy(t, ...)`."""
    for pred in rule.predicates:
        if isinstance(pred, IsToken) and pred.offset == 0:
            return True, pred.token
    if isinstance(rule.transformation, ReplaceBy):
        return True, rule.transformation.source
    return False, None


_Test = Callable[[Sequence[TaggedToken], int], bool]


def _test(pred: Predicate, features: Features) -> _Test:
    """`eval_predicate(pred, ., ., features)` as a function of (word, position) alone:
    the predicate's kind is looked at once, not at every position."""
    if isinstance(pred, Not):
        inner = _test(pred.predicate, features)
        return lambda word, position: not inner(word, position)
    if isinstance(pred, TierIs):
        return _tier_test(pred, features)
    offset = pred.offset
    if isinstance(pred, IsToken) and pred.token is BOUNDARY:
        return lambda word, position: not 0 <= position + offset < len(word)
    if isinstance(pred, IsToken):
        token = pred.token
        return lambda word, position: 0 <= position + offset < len(word) and word[position + offset][0] == token
    if isinstance(pred, Is):
        having = frozenset(tok for tok, feats in features.items() if feats.get(pred.feature, False))
        return lambda word, position: 0 <= position + offset < len(word) and word[position + offset][0] in having
    if isinstance(pred, TransformationApplied):
        tag = pred.transformation
        return lambda word, position: 0 <= position + offset < len(word) and word[position + offset][1] == tag
    raise TypeError(f"not a predicate: {pred!r}")


def _tier_test(pred: TierIs, features: Features) -> _Test:
    """`_tier_is(pred, ., ., features)` as a function of (word, position): the tier's
    tokens and those with the feature are sets made once (a learned pass's tier tests
    were a third of running it on many words, looking each token's features up)."""
    on_tier = frozenset(tok for tok, feats in features.items() if feats.get(pred.tier, False))
    having = None if pred.feature is BOUNDARY else frozenset(
        tok for tok, feats in features.items() if feats.get(pred.feature, False)
    )
    step = 1 if pred.index > 0 else -1
    count, inclusive = abs(pred.index), pred.inclusive

    def holds(word: Sequence[TaggedToken], position: int) -> bool:
        # As `tier_token`: from the position itself (inclusive) or the next one over.
        at = position if inclusive and position != START else position + step
        left = count
        while 0 <= at < len(word):
            token = word[at][0]
            if token in on_tier:
                left -= 1
                if left == 0:
                    return having is not None and token in having
            at += step
        return having is None  # no such tier token: only a test of the edge holds

    return holds


def run_pass_many(
    pass_: Pass, words: Sequence[Sequence[TaggedToken]], features: Features
) -> list[list[TaggedToken]]:
    """`run_pass` on each word, with the same results.

    A learned pass holds hundreds of rules, most of them for one token at the current
    position: each position only tries the rules that can fire on its token (in their
    order), so the cost no longer grows with every rule of the pass. Each predicate is
    made a function of the word and position once (`_test`), when a position first
    needs the rule: a few words (a class change's check, a deadline's slice) read a
    handful of a thousand-rule pass's rules, and building them all was most of the call.
    """
    # The rules each token can fire on: those bound to it and the unbound ones, merged
    # in pass order when the token is first met (one look at every rule per call, not
    # one per distinct token).
    bound_to: dict[Token | None, list[int]] = {}
    unbound: list[int] = []
    for number, rule in enumerate(pass_.rules):
        bound, need = _token_needed(rule)
        if bound:
            bound_to.setdefault(need, []).append(number)
        else:
            unbound.append(number)
    tests: dict[int, list[_Test]] = {}
    by_token: dict[Token | None, list[tuple[list[_Test], Transformation]]] = {}

    def tests_of(number: int) -> list[_Test]:
        made = tests.get(number)
        if made is None:
            made = tests[number] = [_test(pred, features) for pred in pass_.rules[number].predicates]
        return made

    def rules_for(token: Token | None) -> list[tuple[list[_Test], Transformation]]:
        rules = by_token.get(token)
        if rules is None:
            numbers = sorted([*bound_to.get(token, ()), *unbound])
            rules = by_token[token] = [(tests_of(number), pass_.rules[number].transformation) for number in numbers]
        return rules

    identity = Identity()
    out_words = []
    for word in words:
        out: list[TaggedToken] = []
        for position in range(START, len(word)):
            token = None if position == START else word[position][0]
            for rule_tests, tag in rules_for(token):
                for holds in rule_tests:
                    if not holds(word, position):
                        break
                else:
                    produced = apply_transformation(tag, word, position, features)
                    if produced is not None:
                        break
            else:
                produced = () if position == START else (word[position][0],)
                tag = identity
            # Not None: the loop broke on a result, or its `else` kept the token.
            out.extend((tok, tag) for tok in cast("tuple[Token, ...]", produced))
        out_words.append(out)
    return out_words


def run_many(program: Program, words: Sequence[Sequence[Token]], features: Features) -> list[Word]:
    """`run` on each word, with the same results (see `run_pass_many`)."""
    tagged: list[list[TaggedToken]] = [[(tok, None) for tok in word] for word in words]
    for pass_ in program.passes:
        tagged = run_pass_many(pass_, tagged, features)
    return [tuple(tok for tok, _ in word) for word in tagged]


def trace(
    program: Program, word: Sequence[Token], features: Features
) -> list[tuple[Word, list[Step]]]:
    """For each pass: its output word and the step taken at each position."""
    tagged: list[TaggedToken] = [(tok, None) for tok in word]
    result = []
    for pass_ in program.passes:
        tagged, steps = _pass_steps(pass_, tagged, features)
        result.append((tuple(tok for tok, _ in tagged), steps))
    return result
