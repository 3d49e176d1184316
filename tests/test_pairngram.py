"""The pair n-gram WFST peer of scripts/benchmark (skipped without the `bench` extra)."""

from __future__ import annotations

import pytest

from conftest import DATA
from fstsynth import pairngram
from fstsynth.problem import load_problem

pytestmark = pytest.mark.skipif(
    not pairngram.available(), reason="phonetisaurus (the 'bench' extra) is not installed"
)


def test_codec_round_trips_multi_character_tokens():
    codec = pairngram._Codec(["a:", "t͡ʃ", "-", "_"])
    chars = codec.encode(("t͡ʃ", "a:", "-", "_"))
    assert all(len(c) == 1 and c not in "}|_-" for c in chars)
    assert codec.decode(chars) == ("t͡ʃ", "a:", "-", "_")


def test_pair_ngram_learns_a_suffix():
    problem = load_problem(DATA / "plural.tsv")
    rows = [row for row in problem.cells if row[1] is not None]
    # A pair n-gram model over these pairs at least reproduces a training word.
    probe = problem.__class__(
        problem.name, problem.columns, problem.cells + ((rows[0][0], None),),
        problem.queries + ((len(problem.cells), 1),), problem.features,
        problem.kind, None, None, problem.directed,
    )
    again = pairngram.solve_with_pair_ngram(probe)
    assert again[(len(problem.cells), 1)] == rows[0][1]
