"""Self-consistency (short version of scripts/bench_selfcheck.py): the learner finds a
program reproducing the pairs a seeded random program made, as checked by running the
learned program (the interpreter and the compiled transducer), not by the learner's own
count."""

from __future__ import annotations

import functools
import random

import pytest

from conftest import in_workers
from fstsynth.compiler import compile_program
from fstsynth.dsl import from_json
from fstsynth.interpreter import run
from fstsynth.random_programs import ALPHABET, FEATURES, learn_back, random_program, random_word
from fstsynth.synthesis import Options

# Slow: the random programs draw from eight features (place, manner, height as well as
# voice and vowel, so that SetFeatures and Agree have bundles to map to). The learner
# runs its "feature" variant, the one that can write every construct the programs use:
# under `auto` each seed cost 30-70 s of CPU, nearly all of it the cross-validation that
# picks a variant (tested in test_selection), which says nothing about
# whether the learned program reproduces its training pairs.
pytestmark = pytest.mark.slow

SEEDS = range(6)


def training_pairs(seed: int, n_train: int = 40):
    """The pairs `learn_back` makes for `seed` (it draws the program, then the words)."""
    rng = random.Random(seed)
    program = random_program(rng, passes=1, max_rules=2, max_conjuncts=1)
    words = [random_word(rng, ALPHABET, 1, 7) for _ in range(n_train)]
    return program, [(w, run(program, w, FEATURES)) for w in words]


@pytest.fixture(scope="module")
def reports():
    """Each seed's `learn_back` report (the six learns are independent: two at a time
    where there are two cores), or its error, raised in that seed's test."""
    learn = functools.partial(
        learn_back, passes=1, max_rules=2, max_conjuncts=1, n_train=40, n_heldout=50, options=Options(variant="feature")
    )
    return dict(zip(SEEDS, in_workers(learn, SEEDS)))


@pytest.mark.parametrize("seed", SEEDS)
def test_learns_back_random_one_pass_programs(seed, reports):
    report = reports[seed].result()
    assert report["train_reproduced"] and report["learner_count_right"], report
    learned = from_json(report["learned_json"])
    _, pairs = training_pairs(seed)
    compiled = compile_program(learned, ALPHABET, FEATURES)
    for source, target in pairs:
        assert run(learned, source, FEATURES) == target, (report["learned"], source, target)
        assert compiled.apply(source) == target, (report["learned"], source, target)


def test_the_random_programs_do_change_words():
    # Guards the test above against being vacuous: the same seeds' programs must
    # change some of their training words.
    changed = sum(any(s != t for s, t in training_pairs(seed)[1]) for seed in SEEDS)
    assert changed >= 4
