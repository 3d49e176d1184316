"""Seeded random programs and words: for backend-agreement tests and self-consistency.

Public API:
    ALPHABET, FEATURES, Choices, Grammar
    random_program(rng, *, passes, max_rules, max_conjuncts, grammar, **grammar_fields) -> Program
    random_word(rng, alphabet, min_len, max_len) -> Word
    learn_back(seed, *, passes, max_rules, max_conjuncts, n_train, n_heldout) -> dict

The programs use every construct of the DSL (docs/design.md, section 3) over a small
alphabet with `vowel`/`voice` features (or the alphabet and features given), so the same
generator serves the interpreter/transducer comparisons, the backends' agreement property
(`tests/program_strategies.py` draws from it through hypothesis) and the "learn back a
random program" benchmark. Everything is drawn from the `Choices` passed in: from a
`random.Random`, same seed, same programs.
"""

from __future__ import annotations

import dataclasses
import random
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, Sequence, TypeVar

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
from fstsynth.types import Token, Word

if TYPE_CHECKING:
    from fstsynth.synthesis import Options

T = TypeVar("T")


# Place and manner features give every token its own bundle, so that `SetFeatures` and
# `Agree` map tokens to tokens (b -> p by [-voice], i -> u by [+back]) and, where no
# token has the bundle (k by [+voice], n by [-voice]), do not apply.
FEATURES: dict[Token, dict[str, bool]] = {
    "a": {"vowel": True, "voice": True, "back": True},
    "i": {"vowel": True, "voice": True, "high": True},
    "u": {"vowel": True, "voice": True, "high": True, "back": True},
    "p": {"vowel": False, "voice": False, "lab": True},
    "t": {"vowel": False, "voice": False, "cor": True},
    "k": {"vowel": False, "voice": False, "back": True},
    "b": {"vowel": False, "voice": True, "lab": True},
    "d": {"vowel": False, "voice": True, "cor": True},
    "s": {"vowel": False, "voice": False, "cor": True, "cont": True},
    "n": {"vowel": False, "voice": True, "cor": True, "nas": True},
}
ALPHABET: tuple[Token, ...] = tuple(FEATURES)


def random_word(rng: random.Random, alphabet: Sequence[Token], min_len: int = 1, max_len: int = 8) -> Word:
    return tuple(rng.choice(alphabet) for _ in range(rng.randint(min_len, max_len)))


class Choices(Protocol):
    """Where a generator's choices come from: a `random.Random` (seeded programs), or
    hypothesis draws (`tests/program_strategies.py`: shrinkable programs), so that both
    draw from the one grammar below."""

    def random(self) -> float: ...
    def randint(self, low: int, high: int, /) -> int: ...
    def randrange(self, stop: int, /) -> int: ...
    def choice(self, items: Sequence[T], /) -> T: ...
    def sample(self, population: Sequence[T], k: int, /) -> list[T]: ...


@dataclass(frozen=True)
class Grammar:
    """What a random program may contain (the defaults: the seeded programs of the tests
    and benchmarks, which stay the same for the same seed).

    `alphabet`: the tokens rules test and write. `features`: the features predicates
    test (the first one is `Agree`'s tier). `changeable`: the features `SetFeatures` and
    `Agree` change. `window`: the largest offset. `tiers`: tier tests (`TierIs`).
    `feature_rules`: `SetFeatures`, `Agree` and inclusive tier tests. `edge_cases`: what
    only an agreement check needs: passes without rules, empty and three-token outputs,
    `Not` of `Not`, copies at offset 0, and tests of the tag of a transformation the
    previous pass did not apply (a sibling of one it did: same kind, other arguments)."""

    alphabet: tuple[Token, ...] = ALPHABET
    features: tuple[str, ...] = ("vowel", "voice")
    changeable: tuple[str, ...] = ("voice", "back", "cor", "lab", "high")
    window: int = 2
    tiers: bool = False
    feature_rules: bool = False
    edge_cases: bool = False


def _offset(rng: Choices, g: Grammar) -> int:
    """A nonzero offset within the window (or 0, among the edge cases)."""
    if g.edge_cases and rng.random() < 0.1:
        return 0
    return rng.choice([k for k in range(-g.window, g.window + 1) if k != 0] or [1])


def _atom(rng: Choices, g: Grammar, tags: Sequence[Transformation]) -> Predicate:
    if g.tiers and rng.random() < 0.3:
        # The k-th token on a feature's tier, either side (or none: the boundary).
        reach = max(2, g.window)
        index = rng.choice(tuple(k for k in range(-reach, reach + 1) if k != 0))
        inclusive = g.feature_rules and rng.random() < 0.5
        pred: Predicate = TierIs(rng.choice(g.features), rng.choice((*g.features, BOUNDARY)), index, inclusive)
        return _negated(rng, g, pred)
    offset = rng.randint(-g.window, g.window)
    kind = rng.random()
    if kind < 0.45:
        pred = IsToken(rng.choice(g.alphabet), offset)
    elif kind < 0.6 and offset != 0:
        pred = IsToken(BOUNDARY, offset)
    elif kind < 0.85 or not tags:
        pred = Is(rng.choice(g.features), offset)
    elif g.edge_cases and rng.random() < 0.5:
        # Not a transformation of the previous pass: a sibling of one, or any. It must
        # not match where the previous pass applied its sibling: a tag is the whole
        # transformation, not its kind.
        other = _sibling(rng, g, rng.choice(tags)) if rng.random() < 0.5 else _transformation(rng, g)
        pred = TransformationApplied(other, offset)
    else:
        pred = TransformationApplied(rng.choice(tags), offset)
    return _negated(rng, g, pred)


def _negated(rng: Choices, g: Grammar, pred: Predicate) -> Predicate:
    if rng.random() < 0.2:
        pred = Not(pred)
        if g.edge_cases and rng.random() < 0.3:
            pred = Not(pred)
    return pred


def _output(rng: Choices, g: Grammar, empty: bool) -> tuple[Token, ...]:
    if g.edge_cases and rng.random() < 0.2:
        return () if empty else tuple(rng.choice(g.alphabet) for _ in range(3))
    return tuple(rng.choice(g.alphabet) for _ in range(rng.choice((1, 1, 2))))


def _transformation(rng: Choices, g: Grammar) -> Transformation:
    if g.feature_rules and rng.random() < 0.4:
        names = sorted(rng.sample(g.changeable, min(len(g.changeable), rng.choice((1, 1, 2)))))
        if rng.random() < 0.5:
            return SetFeatures(tuple((name, rng.random() < 0.5) for name in names))
        offset = rng.choice([k for k in range(-g.window, g.window + 1) if k != 0] or [1])
        return Agree(tuple(names), offset, g.features[0] if rng.random() < 0.3 else None)
    kind = rng.randrange(7)
    tokens = _output(rng, g, empty=kind == 0)  # drawn for every kind: the seeded programs stay the same
    if kind == 0:
        return ReplaceBy(rng.choice(g.alphabet), tokens)
    if kind == 1:
        return ReplaceAnyBy(tokens)
    if kind == 2:
        return Insert(tokens)
    if kind == 3:
        return Delete()
    offset = _offset(rng, g)
    if kind == 4:
        return CopyReplace(offset)
    if kind == 5:
        return CopyInsert(rng.choice((0, offset)))
    return Identity()


def _sibling(rng: Choices, g: Grammar, tag: Transformation) -> Transformation:
    """A transformation of the same kind as `tag` with other arguments, where it has any."""
    if isinstance(tag, ReplaceBy):
        if rng.random() < 0.5:
            return ReplaceBy(rng.choice(g.alphabet), tag.target)
        return ReplaceBy(tag.source, _output(rng, g, empty=True))
    if isinstance(tag, (ReplaceAnyBy, Insert)):
        return type(tag)(_output(rng, g, empty=False))
    if isinstance(tag, (CopyReplace, CopyInsert)):
        return type(tag)(_offset(rng, g))
    return _transformation(rng, g)


def random_program(
    rng: Choices,
    *,
    passes: int = 1,
    max_rules: int = 4,
    max_conjuncts: int = 2,
    grammar: Grammar = Grammar(),
    **options: Any,
) -> Program:
    """A program of `passes` passes, each of 1..max_rules rules (0.. among the edge
    cases) of 0..max_conjuncts predicates; later passes may test the transformations of
    the pass before. `grammar` says what may occur (see `Grammar`); its fields may also
    be given as keywords (`tiers=True`)."""
    g = dataclasses.replace(grammar, **options) if options else grammar
    out: list[Pass] = []
    tags: list[Transformation] = []
    for _ in range(passes):
        rules = []
        for _ in range(rng.randint(0 if g.edge_cases else 1, max_rules)):
            preds = tuple(_atom(rng, g, tags) for _ in range(rng.randint(0, max_conjuncts)))
            rules.append(Rule(preds, _transformation(rng, g)))
        if tags and g.edge_cases and rng.random() < 0.5:
            # First, often, a rule reading the tag of a sibling of a transformation the
            # previous pass applied: it must not fire there.
            test = TransformationApplied(_sibling(rng, g, rng.choice(tags)), rng.randint(-1, 1))
            rules.insert(0, Rule((test,), _transformation(rng, g)))
        out.append(Pass(tuple(rules)))
        tags = [r.transformation for r in rules] + [Identity()]
    return Program(tuple(out))


def learn_back(
    seed: int,
    *,
    passes: int = 1,
    max_rules: int = 2,
    max_conjuncts: int = 1,
    n_train: int = 80,
    n_heldout: int = 300,
    options: Options | None = None,
) -> dict[str, Any]:
    """Self-consistency for one seed: a random program makes `n_train` pairs (by the
    interpreter), the learner (`options`; default: `Options()`) learns them back;
    reports whether the learned program, run by the interpreter, reproduces every
    training pair (and
    whether the learner's own count says the same), and its agreement with the original
    on `n_heldout` other random words."""
    from fstsynth.dsl import to_json as dsl_to_json
    from fstsynth.interpreter import run
    from fstsynth.synthesis import Options, learn

    rng = random.Random(seed)
    program = random_program(rng, passes=passes, max_rules=max_rules, max_conjuncts=max_conjuncts)
    train_words = [random_word(rng, ALPHABET, 1, 7) for _ in range(n_train)]
    heldout = [random_word(rng, ALPHABET, 1, 7) for _ in range(n_heldout)]
    pairs = [(w, run(program, w, FEATURES)) for w in train_words]
    started = time.perf_counter()
    result = learn(pairs, FEATURES, Options() if options is None else options)
    seconds = time.perf_counter() - started
    agree = sum(run(result.program, w, FEATURES) == run(program, w, FEATURES) for w in heldout)
    reproduced = sum(run(result.program, s, FEATURES) == t for s, t in pairs)
    return {
        "seed": seed,
        "program": str(program),
        "learned": str(result.program),
        "changed_pairs": sum(s != t for s, t in pairs),
        "learned_json": dsl_to_json(result.program),
        # Checked by running the learned program, not by trusting the learner's count.
        "train_reproduced": reproduced == len(pairs),
        "learner_count_right": result.train_correct == reproduced,
        "heldout_agreement": agree / len(heldout),
        "seconds": seconds,
    }
