"""The table walker (`Compiled.fast`, used by `apply_many`) against the pass transducers,
their composition (the exported cascade) and the interpreter, on seeded random programs
and random words (with unseen tokens)."""

from __future__ import annotations

import random

import pytest

from fstsynth.compiler import compile_program, transduce
from fstsynth.interpreter import run
from fstsynth.random_programs import ALPHABET, FEATURES, random_program, random_word


@pytest.mark.parametrize("seed", range(40))
def test_tables_agree_with_cascade_and_interpreter(seed):
    rng = random.Random(seed)
    program = random_program(rng, passes=1 + seed % 2, max_rules=4)
    compiled = compile_program(program, ALPHABET[:-2], FEATURES)
    walk = compiled.fast()
    # Includes tokens the model never saw ("s", "n" are outside its alphabet).
    words = [random_word(rng, ALPHABET, 0, 7) for _ in range(150)]
    batch = compiled.apply_many(words)
    for word, fast in zip(words, batch):
        mapped = compiled.map_unknown(word)
        assert walk(mapped) == fast
        assert fast == compiled.apply(word), (str(program), word)
        assert fast == transduce(compiled.fst, compiled.labels, compiled.tokens, mapped)
        assert fast == run(program, mapped, FEATURES), (str(program), word)


def test_apply_many_without_tables_falls_back_to_the_transducers():
    from fstsynth.compiler import Compiled

    program = random_program(random.Random(3), passes=2)
    compiled = compile_program(program, ALPHABET, FEATURES)
    loaded = Compiled(compiled.passes, compiled.symbols, compiled.labels)
    cascade = Compiled([compiled.fst], compiled.symbols, compiled.labels)
    words = [random_word(random.Random(k), ALPHABET) for k in range(20)]
    assert loaded.apply_many(words) == compiled.apply_many(words) == cascade.apply_many(words)


@pytest.mark.parametrize("seed", range(20))
def test_programs_looking_unboundedly_right_are_walked_as_bimachines(seed):
    from fstsynth.compiler import TwoWayWalker
    from fstsynth.dsl import looks_unboundedly_right

    rng = random.Random(1000 + seed)
    program = random_program(rng, passes=1 + seed % 3, max_rules=5, tiers=True)
    while not looks_unboundedly_right(program):
        program = random_program(rng, passes=1 + seed % 3, max_rules=5, tiers=True)
    compiled = compile_program(program, ALPHABET[:-2], FEATURES)
    assert isinstance(compiled.fast(), TwoWayWalker)
    words = [random_word(rng, ALPHABET, 0, 9) for _ in range(150)]
    for word, fast in zip(words, compiled.apply_many(words)):
        mapped = compiled.map_unknown(word)
        assert fast == run(program, mapped, FEATURES), (str(program), word)
        assert fast == compiled.apply(word), (str(program), word)
