"""Hypothesis strategies for random DSL programs and words, and the equivalence check.

Public API:
    cases()                      -> strategy of `Case` (alphabet, features, program, words)
    check_case(case)             -> list of `Mismatch` (empty when the backends agree)
    TOKEN_POOL, UNSEEN_TOKENS, FEATURE_NAMES

Used by `tests/test_equivalence.py` (a short seeded run in the suite) and by
`scripts/fuzz_equivalence` (the long run). A case draws a small alphabet from a pool
that includes multi-character tokens and characters that mean something in FST string
syntax (`[`, `]`, `\\`), random boolean features, a program of 1-3 passes using every
predicate and transformation type of `fstsynth.dsl` (offsets within +-3, `Not`,
boundary tests, multi-token outputs, copies, and `TransformationApplied` tags naming
transformations of the previous pass), and words that include the empty word, one-token
words, and tokens the compiled model has never seen.

The law checked: for every word w,
`compiled.apply(w) == interpreter.run(program, compiled.map_unknown(w), features)`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from hypothesis import strategies as st

from fstsynth import dsl
from fstsynth.compiler import compile_program
from fstsynth.dsl import (
    BOUNDARY,
    CopyInsert,
    CopyReplace,
    Delete,
    Identity,
    Insert,
    Is,
    IsToken,
    Not,
    Pass,
    Program,
    ReplaceAnyBy,
    ReplaceBy,
    Rule,
    Transformation,
    TransformationApplied,
)
from fstsynth.interpreter import run

#: Tokens an alphabet is drawn from: plain letters, multi-character IPA tokens, and
#: characters with a meaning in Pynini's string syntax (the compiler uses integer
#: labels, so they must be ordinary tokens).
TOKEN_POOL = ("a", "b", "t", "i", "ŋ", "t͡ʃ", "a:", "[", "]", "\\", "ˈ")
#: Tokens never in an alphabet: words containing them exercise the `<unk>` path.
UNSEEN_TOKENS = ("q", "ʔ", "[x]")
FEATURE_NAMES = ("f", "g")
MAX_OFFSET = 3

offsets = st.integers(-MAX_OFFSET, MAX_OFFSET)


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


def _outputs(tokens: st.SearchStrategy[str], min_size: int) -> st.SearchStrategy[tuple[str, ...]]:
    return st.lists(tokens, min_size=min_size, max_size=3).map(tuple)


@lru_cache(maxsize=None)
def transformations(alphabet: tuple[str, ...]) -> st.SearchStrategy[Transformation]:
    """Every transformation type of the DSL, with tokens from `alphabet`.

    Strategies are cached per argument: building and validating them anew for every
    drawn program costs more than compiling the program.
    """
    tokens = st.sampled_from(alphabet)
    return st.one_of(
        st.builds(ReplaceBy, tokens, _outputs(tokens, 0)),
        st.builds(ReplaceAnyBy, _outputs(tokens, 1)),
        st.builds(Insert, _outputs(tokens, 1)),
        st.just(Delete()),
        st.builds(CopyReplace, offsets),
        st.builds(CopyInsert, offsets),
        st.just(Identity()),
    )


@lru_cache(maxsize=4096)
def predicates(
    alphabet: tuple[str, ...], tags: tuple[Transformation, ...]
) -> st.SearchStrategy[dsl.Predicate]:
    """Every predicate type; `TransformationApplied` only names transformations in `tags`."""
    tokens = st.sampled_from(alphabet)
    atoms = [
        st.builds(IsToken, tokens, offsets),
        st.builds(IsToken, st.just(BOUNDARY), offsets),
        st.builds(Is, st.sampled_from(FEATURE_NAMES), offsets),
    ]
    if tags:
        atoms.append(st.builds(TransformationApplied, st.sampled_from(tags), offsets))
    atom = st.one_of(*atoms)
    return st.one_of(atom, atom.map(Not), atom.map(Not).map(Not))


@lru_cache(maxsize=4096)
def _rules(alphabet: tuple[str, ...], tags: tuple[Transformation, ...]) -> st.SearchStrategy[Rule]:
    return st.builds(
        Rule,
        st.lists(predicates(alphabet, tags), max_size=3).map(tuple),
        transformations(alphabet),
    )


@st.composite
def programs(draw: st.DrawFn, alphabet: tuple[str, ...]) -> Program:
    """1-3 passes of 0-4 rules with 0-3 conjuncts each."""
    # Programs may also mention tokens outside the alphabet (the compiler adds them).
    tokens = alphabet + ("o",)
    passes: list[Pass] = []
    previous: tuple[Transformation, ...] = ()
    for _ in range(draw(st.integers(1, 3))):
        # Tags of the previous pass: its transformations, and Identity (untouched).
        tags = (*previous, Identity()) if passes else ()
        rules = tuple(draw(st.lists(_rules(tokens, tags), max_size=4)))
        passes.append(Pass(rules))
        previous = tuple(dict.fromkeys(r.transformation for r in rules))
    return Program(tuple(passes))


@st.composite
def cases(draw: st.DrawFn, words_per_case: int = 12) -> Case:
    alphabet = tuple(
        sorted(draw(st.lists(st.sampled_from(TOKEN_POOL), min_size=1, max_size=4, unique=True)))
    )
    features = {
        tok: {name: draw(st.booleans()) for name in FEATURE_NAMES}
        for tok in alphabet
        if draw(st.booleans())
    }
    program = draw(programs(alphabet))
    known = st.sampled_from(alphabet)
    any_token = st.one_of(known, known, known, st.sampled_from(UNSEEN_TOKENS))
    drawn = draw(st.lists(st.lists(any_token, max_size=7).map(tuple), max_size=words_per_case))
    # Boundary cases every time: the empty word and each one-token word.
    words = ((), *((t,) for t in alphabet), (UNSEEN_TOKENS[0],), *drawn)
    return Case(alphabet, features, program, tuple(dict.fromkeys(words)))


def check_case(case: Case) -> list[Mismatch]:
    """Compile the case's program and compare the two backends on each of its words."""
    compiled = compile_program(case.program, case.alphabet, case.features)
    mismatches = []
    for word in case.words:
        expected = run(case.program, compiled.map_unknown(word), case.features)
        try:
            got: object = compiled.apply(word)
        except Exception as exc:  # an internal compiler error is a mismatch to report
            got = f"{type(exc).__name__}: {exc}"
        if got != expected:
            mismatches.append(Mismatch(word, got, expected))
    return mismatches


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

