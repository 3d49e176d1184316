"""Hypothesis strategies for random DSL programs and words, and the equivalence check.

Public API:
    cases()                      -> strategy of `Case` (alphabet, features, program, words)
    Mismatch(word, transducer, interpreter), describe(case, mismatches), constructs_used(program)
    TOKEN_POOL, UNSEEN_TOKENS, FEATURE_NAMES

The suite's one program generator for agreement: `tests/backends.py: check_backends`
checks a case on every apply path, `tests/test_backends.py` runs it on a short seeded
run, `scripts/fuzz_equivalence` on a long one. A case draws a small alphabet from a pool
that includes multi-character tokens and characters that mean something in FST string
syntax (`[`, `]`, `\\`), random boolean features (each token has some, all or none of
them), a program of 1-3 passes using every predicate and transformation type of
`fstsynth.dsl` (offsets within +-3, `Not`, boundary tests, multi-token outputs, copies,
and `TransformationApplied` tags naming transformations of the previous pass, or any
transformation, often one of the same kind as the previous pass's), and words that
include the empty word, one-token words, and tokens the compiled model has never seen.

The law checked: for every word w and every apply path,
`path(w) == interpreter.run(program, compiled.map_unknown(w), features)` (unseen tokens
put back as `PairModel.predict` does).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from hypothesis import strategies as st

from fstsynth import dsl
from fstsynth.dsl import (
    Agree,
    BOUNDARY,
    CopyInsert,
    CopyReplace,
    Delete,
    Identity,
    Insert,
    Is,
    IsToken,
    TierIs,
    Not,
    Pass,
    Program,
    ReplaceAnyBy,
    ReplaceBy,
    Rule,
    SetFeatures,
    Transformation,
    TransformationApplied,
)

#: Tokens an alphabet is drawn from: plain letters, multi-character IPA tokens, and
#: characters with a meaning in Pynini's string syntax (the compiler uses integer
#: labels, so they must be ordinary tokens).
TOKEN_POOL = ("a", "b", "t", "i", "ŋ", "t͡ʃ", "a:", "[", "]", "\\", "ˈ")
#: Tokens never in an alphabet: words containing them exercise the `<unk>` path.
UNSEEN_TOKENS = ("q", "ʔ", "[x]")
FEATURE_NAMES = ("f", "g")
MAX_OFFSET = 3

# Every strategy below is built once, at import: drawing from fixed strategies and
# indexing into the case's alphabet is several times cheaper than building strategies
# per draw (hypothesis validates each new strategy object).
_offset = st.integers(-MAX_OFFSET, MAX_OFFSET)
_index = st.integers(0, 63)
_bool = st.booleans()
_small = [st.integers(0, n) for n in range(8)]
_PREDICATE_KINDS = ("IsToken", "boundary", "Is", "TierIs", "TransformationApplied")
_TRANSFORMATION_KINDS = (
    "ReplaceBy", "ReplaceAnyBy", "Insert", "Delete", "CopyReplace", "CopyInsert", "Identity", "SetFeatures",
    "Agree",
)


@dataclass(frozen=True)
class Case:
    alphabet: tuple[str, ...]
    features: dict[str, dict[str, bool]]
    program: Program
    words: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class Mismatch:
    word: tuple[str, ...]
    transducer: object  # a word, or the text of an exception
    interpreter: object


def _pick(draw: st.DrawFn, items: tuple) -> object:
    return items[draw(_index) % len(items)]


def _tokens(draw: st.DrawFn, alphabet: tuple[str, ...], low: int) -> tuple[str, ...]:
    return tuple(_pick(draw, alphabet) for _ in range(draw(_small[3]) if low == 0 else 1 + draw(_small[2])))


def _transformation(draw: st.DrawFn, alphabet: tuple[str, ...]) -> Transformation:
    """Any transformation type of the DSL, with tokens from `alphabet`."""
    kind = _pick(draw, _TRANSFORMATION_KINDS)
    if kind == "ReplaceBy":
        return ReplaceBy(_pick(draw, alphabet), _tokens(draw, alphabet, 0))
    if kind == "ReplaceAnyBy":
        return ReplaceAnyBy(_tokens(draw, alphabet, 1))
    if kind == "Insert":
        return Insert(_tokens(draw, alphabet, 1))
    if kind == "CopyReplace":
        return CopyReplace(draw(_offset))
    if kind == "CopyInsert":
        return CopyInsert(draw(_offset))
    if kind == "SetFeatures":
        names = FEATURE_NAMES[: 1 + draw(_small[1])]
        return SetFeatures(tuple((name, draw(_bool)) for name in names))
    if kind == "Agree":
        names = FEATURE_NAMES[draw(_small[1]) :]
        return Agree(names, draw(_offset) or 1, _pick(draw, FEATURE_NAMES) if draw(_bool) else None)
    return Delete() if kind == "Delete" else Identity()


def _sibling(draw: st.DrawFn, tag: Transformation, alphabet: tuple[str, ...]) -> Transformation:
    """A transformation of the same kind as `tag` with other arguments, where it has any."""
    if isinstance(tag, ReplaceBy):
        if draw(_bool):
            return ReplaceBy(_pick(draw, alphabet), tag.target)
        return ReplaceBy(tag.source, _tokens(draw, alphabet, 0))
    if isinstance(tag, ReplaceAnyBy):
        return ReplaceAnyBy(_tokens(draw, alphabet, 1))
    if isinstance(tag, Insert):
        return Insert(_tokens(draw, alphabet, 1))
    if isinstance(tag, (CopyReplace, CopyInsert)):
        return type(tag)(draw(_offset))
    return _transformation(draw, alphabet)


def _predicate(
    draw: st.DrawFn, alphabet: tuple[str, ...], tags: tuple[Transformation, ...]
) -> dsl.Predicate:
    """Any predicate type (wrapped in 0-2 `Not`); `TransformationApplied` names `tags` only."""
    kinds = _PREDICATE_KINDS if tags else _PREDICATE_KINDS[:4]
    kind = _pick(draw, kinds)
    offset = draw(_offset)
    pred: dsl.Predicate
    if kind == "IsToken":
        pred = IsToken(_pick(draw, alphabet), offset)
    elif kind == "boundary":
        pred = IsToken(BOUNDARY, offset)
    elif kind == "Is":
        pred = Is(_pick(draw, FEATURE_NAMES), offset)
    elif kind == "TierIs":
        index = offset if offset else 1
        pred = TierIs(_pick(draw, FEATURE_NAMES), _pick(draw, FEATURE_NAMES + (BOUNDARY,)), index, draw(_bool))
    elif draw(_bool):
        # Not one of the previous pass's transformations: a sibling of one of them (same
        # kind, other tokens or offset) or any transformation. It must not match where
        # the previous pass applied its sibling: a tag is the whole transformation, not
        # its kind.
        tag = _pick(draw, tags)
        other = _sibling(draw, tag, alphabet) if draw(_bool) else _transformation(draw, alphabet)
        pred = TransformationApplied(other, offset)
    else:
        pred = TransformationApplied(_pick(draw, tags), offset)
    for _ in range(draw(_small[2]) % 3 if draw(_bool) else 0):
        pred = Not(pred)
    return pred


def _program(draw: st.DrawFn, alphabet: tuple[str, ...]) -> Program:
    """1-3 passes of 0-4 rules with 0-3 conjuncts each."""
    # Programs may also mention a token outside the alphabet (the compiler adds it).
    tokens = alphabet + ("o",)
    passes: list[Pass] = []
    previous: tuple[Transformation, ...] = ()
    for _ in range(1 + draw(_small[2])):
        # Tags of the previous pass: its transformations, and Identity (untouched).
        tags = (*previous, Identity()) if passes else ()
        rules = tuple(
            Rule(
                tuple(_predicate(draw, tokens, tags) for _ in range(draw(_small[3]))),
                _transformation(draw, tokens),
            )
            for _ in range(draw(_small[4]))
        )
        if previous and draw(_bool):
            # First, often, a rule reading the tag of a sibling of a transformation the
            # previous pass applied (same kind, other arguments): it must not fire there.
            sibling = _sibling(draw, _pick(draw, previous), tokens)
            test = TransformationApplied(sibling, draw(_small[2]) - 1)
            rules = (Rule((test,), _transformation(draw, tokens)), *rules)
        passes.append(Pass(rules))
        previous = tuple(dict.fromkeys(r.transformation for r in rules))
    return Program(tuple(passes))


@lru_cache(maxsize=None)
def _word_count(most: int) -> st.SearchStrategy[int]:
    return st.integers(min(4, most), most)


@st.composite
def programs(draw: st.DrawFn, alphabet: tuple[str, ...]) -> Program:
    """Random programs over `alphabet` (see the module docstring)."""
    return _program(draw, alphabet)


@st.composite
def cases(draw: st.DrawFn, words_per_case: int = 12) -> Case:
    pool = list(TOKEN_POOL)
    alphabet = tuple(sorted({_pick(draw, tuple(pool)) for _ in range(1 + draw(_small[3]))}))
    # Partial feature sets: a token may have some features and not others (or none).
    features = {
        tok: {name: draw(_bool) for name in FEATURE_NAMES if draw(_bool)}
        for tok in alphabet
        if draw(_bool)
    }
    program = _program(draw, alphabet)
    # One token in four is unseen.
    mixed = alphabet * 3 + UNSEEN_TOKENS[: 1 + len(alphabet) // 2]
    drawn = [
        tuple(_pick(draw, mixed) for _ in range(draw(_small[7])))
        for _ in range(draw(_word_count(words_per_case)))
    ]
    # Boundary cases every time: the empty word and each one-token word.
    words = ((), *((t,) for t in alphabet), (UNSEEN_TOKENS[0],), *drawn)
    return Case(alphabet, features, program, tuple(dict.fromkeys(words)))


def describe(case: Case, mismatches: list[Mismatch]) -> str:
    """A readable report of a failing case (program, features and each differing word)."""
    lines = [f"alphabet {case.alphabet!r}", f"features {case.features!r}", str(case.program)]
    lines.append(repr(case.program))
    for m in mismatches:
        lines.append(f"  word {m.word!r}: transducer {m.transducer!r}, interpreter {m.interpreter!r}")
    return "\n".join(lines)


def constructs_used(program: Program) -> set[type]:
    """Every DSL node type that occurs in `program` (for the coverage meta-test)."""
    seen: set[type] = set()

    def visit_pred(pred: dsl.Predicate) -> None:
        seen.add(type(pred))
        if isinstance(pred, Not):
            visit_pred(pred.predicate)
        elif isinstance(pred, TransformationApplied):
            seen.add(type(pred.transformation))

    for pass_ in program.passes:
        for rule in pass_.rules:
            seen.add(type(rule.transformation))
            for pred in rule.predicates:
                visit_pred(pred)
    return seen

