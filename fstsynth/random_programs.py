"""Seeded random programs and words: for backend-agreement tests and self-consistency.

Public API:
    ALPHABET, FEATURES
    random_program(rng, *, passes, max_rules, max_conjuncts, window, features, tiers) -> Program
    random_word(rng, alphabet, min_len, max_len) -> Word
    learn_back(seed, *, passes, max_rules, max_conjuncts, n_train, n_heldout) -> dict

The programs use every construct of the DSL (docs/design.md, section 3) over a small
alphabet with `vowel`/`voice` features, so the same generator serves the
interpreter/transducer comparisons and the "learn back a random program" benchmark.
Everything is drawn from the `random.Random` passed in: same seed, same programs.
"""

from __future__ import annotations

import random
import time
from typing import Any, Sequence

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


def _atom(
    rng: random.Random,
    window: int,
    tags: Sequence[Transformation],
    features: Sequence[str],
    tiers: bool = False,
    feature_rules: bool = False,
) -> Predicate:
    if tiers and rng.random() < 0.3:
        # The k-th token on a feature's tier, either side (or none: the boundary).
        index = rng.choice((-2, -1, 1, 2))
        inclusive = feature_rules and rng.random() < 0.5
        pred: Predicate = TierIs(rng.choice(features), rng.choice((*features, BOUNDARY)), index, inclusive)
        return Not(pred) if rng.random() < 0.2 else pred
    offset = rng.randint(-window, window)
    kind = rng.random()
    if kind < 0.45:
        pred = IsToken(rng.choice(ALPHABET), offset)
    elif kind < 0.6 and offset != 0:
        pred = IsToken(BOUNDARY, offset)
    elif kind < 0.85 or not tags:
        pred = Is(rng.choice(features), offset)
    else:
        pred = TransformationApplied(rng.choice(tags), offset)
    return Not(pred) if rng.random() < 0.2 else pred


#: What `SetFeatures` and `Agree` of random programs change.
_CHANGEABLE = ("voice", "back", "cor", "lab", "high")


def _transformation(rng: random.Random, window: int, feature_rules: bool = False) -> Transformation:
    if feature_rules and rng.random() < 0.4:
        names = sorted(rng.sample(_CHANGEABLE, rng.choice((1, 1, 2))))
        if rng.random() < 0.5:
            return SetFeatures(tuple((name, rng.random() < 0.5) for name in names))
        offset = rng.choice([k for k in range(-window, window + 1) if k != 0] or [1])
        return Agree(tuple(names), offset, "vowel" if rng.random() < 0.3 else None)
    kind = rng.randrange(7)
    tokens = tuple(rng.choice(ALPHABET) for _ in range(rng.choice((1, 1, 2))))
    if kind == 0:
        return ReplaceBy(rng.choice(ALPHABET), tokens)
    if kind == 1:
        return ReplaceAnyBy(tokens)
    if kind == 2:
        return Insert(tokens)
    if kind == 3:
        return Delete()
    offset = rng.choice([k for k in range(-window, window + 1) if k != 0] or [1])
    if kind == 4:
        return CopyReplace(offset)
    if kind == 5:
        return CopyInsert(rng.choice((0, offset)))
    return Identity()


def random_program(
    rng: random.Random,
    *,
    passes: int = 1,
    max_rules: int = 4,
    max_conjuncts: int = 2,
    window: int = 2,
    features: Sequence[str] = ("vowel", "voice"),
    tiers: bool = False,
    feature_rules: bool = False,
) -> Program:
    """A program of `passes` passes, each of 1..max_rules rules of 0..max_conjuncts
    predicates; later passes may test the transformations of the pass before. With
    `tiers`, predicates may also be tier tests (`TierIs`); with `feature_rules`,
    transformations may also be `SetFeatures` and `Agree` and tier tests inclusive. Both
    off by default so that the seeded programs of existing benchmarks stay the same."""
    out: list[Pass] = []
    tags: list[Transformation] = []
    for _ in range(passes):
        rules = []
        for _ in range(rng.randint(1, max_rules)):
            preds = tuple(
                _atom(rng, window, tags, features, tiers, feature_rules) for _ in range(rng.randint(0, max_conjuncts))
            )
            rules.append(Rule(preds, _transformation(rng, window, feature_rules)))
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
) -> dict[str, Any]:
    """Self-consistency for one seed: a random program makes `n_train` pairs (by the
    interpreter), the learner (default options) learns them back; reports whether the
    learned program, run by the interpreter, reproduces every training pair (and
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
    result = learn(pairs, FEATURES, Options())
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
