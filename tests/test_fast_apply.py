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


def test_passes_too_large_for_tables_are_applied_word_by_word(monkeypatch):
    from fstsynth import compiler

    program = random_program(random.Random(5), passes=2, max_rules=4)
    large = compile_program(program, ALPHABET, FEATURES)
    arcs = sum(map(compiler.arc_count, large.passes))
    monkeypatch.setattr(compiler, "TABLES_MAX_ARCS", arcs - 1)
    words = [random_word(random.Random(k), ALPHABET) for k in range(30)]
    assert not large.tables_fit()
    assert large.apply_many(words) == [large.apply(w) for w in words]
    assert large.walker is None  # no tables were built
    monkeypatch.setattr(compiler, "TABLES_MAX_ARCS", arcs)
    fits = compile_program(program, ALPHABET, FEATURES)
    assert fits.tables_fit() and fits.apply_many(words) == large.apply_many(words)
    assert fits.walker is not None


def test_a_loaded_model_too_large_for_tables_is_not_compiled_again(monkeypatch, tmp_path):
    from conftest import DATA
    from fstsynth import compiler, model as model_module
    from fstsynth.model import learn_model, load_model
    from fstsynth.problem import load_problem
    from fstsynth.synthesis import Options

    problem = load_problem(DATA / "paradigm.json")
    learned = learn_model(problem, Options(tiers=False), pairs=problem.column_pairs()[:1])
    learned.save(tmp_path / "m")
    loaded = load_model(tmp_path / "m")
    monkeypatch.setattr(compiler, "TABLES_MAX_ARCS", 0)

    def no_compile(*args, **kwargs):
        raise AssertionError("compiled again")

    monkeypatch.setattr(model_module, "compile_program", no_compile)
    for key, pm in loaded.pairs.items():
        words = problem.known_words(pm.source)
        assert loaded.with_tables(pm).predict_many(words) == learned.pairs[key].predict_many(words)


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
