"""The pair n-gram WFST peer of scripts/benchmark. `scripts/install-test-deps` installs
it (the `bench` extra); elsewhere these tests skip, and in CI (FSTSYNTH_REQUIRE_TOOLS=1,
set by `.ci/run`) its absence fails them."""

from __future__ import annotations

import os

import pytest

from fstsynth import pairngram
from fstsynth.problem import Problem


@pytest.fixture(autouse=True)
def peer_installed():
    if not pairngram.available():
        message = "phonetisaurus (the 'bench' extra) is not installed"
        if os.environ.get("FSTSYNTH_REQUIRE_TOOLS") == "1":
            pytest.fail(f"FSTSYNTH_REQUIRE_TOOLS=1 but {message}")
        pytest.skip(message)


def test_codec_round_trips_multi_character_tokens():
    codec = pairngram._Codec(["a:", "t͡ʃ", "-", "_"])
    chars = codec.encode(("t͡ʃ", "a:", "-", "_"))
    assert all(len(c) == 1 and len(c.encode()) == 1 and c not in "}|_-" for c in chars)
    assert codec.decode(chars) == ("t͡ʃ", "a:", "-", "_")


@pytest.mark.slow  # the benchmarks' peer, trained
def test_pair_ngram_learns_a_substitution_and_uses_the_first_known_column():
    words = ["b a t a", "t a b a", "b a b a", "a t a", "t a t a b", "b a t", "a b a t a"]
    cells = tuple((tuple(w.split()), tuple(w.replace("b", "p").split())) for w in words)
    cells += ((("t", "a", "b"), None), (None, ("p", "a")))
    problem = Problem("subst", ("a", "b"), cells, ((7, 1), (8, 0)))
    answers = pairngram.solve_with_pair_ngram(problem)
    assert answers[(7, 1)] == ("t", "a", "p")
    assert (8, 0) in answers
