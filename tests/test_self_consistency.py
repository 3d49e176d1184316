"""Self-consistency (short version of scripts/bench_selfcheck.py): the learner finds a
program reproducing the pairs a seeded random program made."""

from __future__ import annotations

import random

import pytest

from fstsynth.interpreter import run
from fstsynth.random_programs import ALPHABET, FEATURES, learn_back, random_program, random_word


@pytest.mark.parametrize("seed", range(6))
def test_learns_back_random_one_pass_programs(seed):
    report = learn_back(seed, passes=1, max_rules=2, max_conjuncts=1, n_train=40, n_heldout=50)
    assert report["train_reproduced"], report


def test_the_random_programs_do_change_words():
    # Guards the test above against being vacuous: the same seeds' programs must
    # change some of their training words (learn_back draws the program first).
    changed = 0
    for seed in range(6):
        rng = random.Random(seed)
        program = random_program(rng, passes=1, max_rules=2, max_conjuncts=1)
        words = [random_word(rng, ALPHABET, 1, 7) for _ in range(40)]
        changed += any(run(program, w, FEATURES) != w for w in words)
    assert changed >= 4
