"""The law: the transducer, the apply tables and the interpreter give the same output
on every word.

Checked on hand-written programs that use every construct (`programs.py`) on random
words of up to 9 tokens (every word of up to 3 tokens goes through every apply path in
`test_tables.py`), and on the programs learned for every column pair of every benchmark
problem: on their training source words, test source words, and random words over the
alphabet plus unseen tokens.
(`predict` goes through the tables; `tests/test_exports_benchmark.py` runs the learned
transducers through OpenFst, HFST and foma on the same words.)
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import benchmark_problems
from fstsynth.compiler import compile_program
from fstsynth.interpreter import run
from programs import ALPHABET, FEATURES, PROGRAMS

UNSEEN = ("q", "ʘ")


def words(alphabet, max_size=7):
    return st.lists(st.sampled_from(tuple(alphabet) + UNSEEN), max_size=max_size).map(tuple)


@pytest.fixture(scope="module")
def compiled_programs():
    return {name: compile_program(p, ALPHABET, FEATURES) for name, p in PROGRAMS.items()}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(word=words(ALPHABET, max_size=9))
def test_handwritten_programs_agree_on_random_words(name, word, compiled_programs):
    compiled = compiled_programs[name]
    expected = run(PROGRAMS[name], compiled.map_unknown(word), FEATURES)
    assert compiled.apply(word) == expected
    assert compiled.tables().apply(word) == expected


BENCHMARK = [p.stem for p in benchmark_problems()] or ["(benchmark absent)"]


def _pairs(benchmark_models, name):
    problem, model = benchmark_models[name]
    return problem, model, sorted(model.pairs.items())


@pytest.mark.slow  # the benchmark's models: minutes to learn
@pytest.mark.parametrize("name", BENCHMARK)
def test_learned_programs_agree_on_training_and_test_words(name, benchmark_models):
    problem, model, pairs = _pairs(benchmark_models, name)
    assert pairs, f"{name}: no column pair learned"
    for (s, t), pm in pairs:
        sources = problem.known_words(s)  # training rows and test rows alike
        for word in sources:
            assert pm.predict(word) == pm.interpret(word, model.features), (name, s, t, word)


@pytest.mark.slow  # the benchmark's models: minutes to learn
@pytest.mark.parametrize("name", BENCHMARK)
@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_learned_programs_agree_on_random_words(name, benchmark_models, data):
    problem, model, pairs = _pairs(benchmark_models, name)
    alphabet = sorted(problem.alphabet())
    for (s, t), pm in pairs:
        word = data.draw(words(alphabet, max_size=10), label=f"{s}->{t}")
        assert pm.predict(word) == pm.interpret(word, model.features), (name, s, t, word)
