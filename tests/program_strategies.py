"""Hypothesis strategies for random DSL programs and words, and the equivalence check.

Public API:
    cases()                      -> strategy of `Case` (alphabet, features, program, words)
    Mismatch(word, transducer, interpreter), describe(case, mismatches), constructs_used(program)
    TOKEN_POOL, UNSEEN_TOKENS, FEATURE_NAMES

The programs come from the one program generator, `fstsynth.random_programs` (its
`Grammar` with every construct and edge case), drawing its choices from hypothesis
(`DrawnChoices`). `tests/backends.py: check_backends` checks a case on every apply path,
`tests/test_backends.py` runs it on a short seeded run, `scripts/fuzz_equivalence` on a
long one. A case draws a small alphabet from a pool that includes multi-character tokens
and characters that mean something in FST string syntax (`[`, `]`, `\\`), random boolean
features (each token has some, all or none of them), a program of 1-3 passes using every
predicate and transformation type of `fstsynth.dsl` (offsets within +-3, `Not`, boundary
tests, multi-token outputs, copies, and `TransformationApplied` tags naming
transformations of the previous pass, or any transformation, often one of the same kind
as the previous pass's), and words that include the empty word, one-token words, and
tokens the compiled model has never seen.

The law checked: for every word w and every apply path,
`path(w) == interpreter.run(program, compiled.map_unknown(w), features)` (unseen tokens
put back as `PairModel.predict` does).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence, TypeVar

from hypothesis import strategies as st

from fstsynth import dsl
from fstsynth.dsl import Not, Program, TransformationApplied
from fstsynth.random_programs import Grammar, random_program

T = TypeVar("T")

#: Tokens an alphabet is drawn from: plain letters, multi-character IPA tokens, and
#: characters with a meaning in Pynini's string syntax (the compiler uses integer
#: labels, so they must be ordinary tokens).
TOKEN_POOL = ("a", "b", "t", "i", "ŋ", "t͡ʃ", "a:", "[", "]", "\\", "ˈ")
#: Tokens never in an alphabet: words containing them exercise the `<unk>` path.
UNSEEN_TOKENS = ("q", "ʔ", "[x]")
FEATURE_NAMES = ("f", "g")
MAX_OFFSET = 3

# Every strategy below is built once (`_below` once per bound): drawing from fixed
# strategies is several times cheaper than building strategies per draw (hypothesis
# validates each new strategy object).
_index = st.integers(0, 63)
_bool = st.booleans()
_small = [st.integers(0, n) for n in range(8)]
#: What the agreement property's programs may contain: every construct of the DSL, the
#: edge cases included, with offsets within +-3.
GRAMMAR = Grammar(
    features=FEATURE_NAMES, changeable=FEATURE_NAMES, window=MAX_OFFSET, tiers=True, feature_rules=True,
    edge_cases=True,
)


@lru_cache(maxsize=None)
def _below(stop: int) -> st.SearchStrategy[int]:
    return st.integers(0, stop - 1)


class DrawnChoices:
    """`fstsynth.random_programs.Choices` from hypothesis draws: the programs come from
    the seeded generator's grammar, and hypothesis shrinks them (each choice towards the
    first option: the smaller number, the first kind, the branch taken below a
    probability)."""

    def __init__(self, draw: st.DrawFn) -> None:
        self.draw = draw

    def randrange(self, stop: int, /) -> int:
        return self.draw(_below(stop))

    def randint(self, low: int, high: int, /) -> int:
        return low + self.randrange(high - low + 1)

    def random(self) -> float:
        # In twentieths: hypothesis draws a small range about evenly, a large one mostly
        # near 0 (every branch below a probability would be taken).
        return (self.randrange(20) + 0.5) / 20

    def choice(self, items: Sequence[T], /) -> T:
        return items[self.randrange(len(items))]

    def sample(self, population: Sequence[T], k: int, /) -> list[T]:
        pool = list(population)
        return [pool.pop(self.randrange(len(pool))) for _ in range(k)]


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


def _pick(draw: st.DrawFn, items: Sequence[T]) -> T:
    return items[draw(_index) % len(items)]


def _program(draw: st.DrawFn, alphabet: tuple[str, ...]) -> Program:
    """1-3 passes of 0-4 rules (and often a first one testing a sibling's tag) with 0-3
    conjuncts each. Programs may also mention a token outside the alphabet (the
    compiler adds it)."""
    choices = DrawnChoices(draw)
    grammar = dataclasses.replace(GRAMMAR, alphabet=(*alphabet, "o"))
    return random_program(choices, passes=1 + choices.randint(0, 2), max_rules=4, max_conjuncts=3, grammar=grammar)


@lru_cache(maxsize=None)
def _word_count(most: int) -> st.SearchStrategy[int]:
    return st.integers(min(4, most), most)


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

