"""One suffix, several surface forms (`synthesis.allomorphs`): one allomorph inserted
first, feature rules making the others."""

from __future__ import annotations

from collections import Counter

from conftest import LEARN_JOBS
from fstsynth import api
from fstsynth.dsl import BOUNDARY, Insert, IsToken, Pass, Rule
from fstsynth.synthesis.allomorphs import allomorph_pass, suffix_allomorphs

Pairs = list[tuple[tuple[str, ...], tuple[str, ...]]]


def pairs_of(rows: list[tuple[str, str]]) -> Pairs:
    return [(tuple(a.split()), tuple(b.split())) for a, b in rows]


# A made-up language (no suite problem): the suffix -dA, its consonant voiceless after
# a voiceless segment, its vowel back after a back last vowel. No training stem ends in
# a voiced fricative, a velar nasal, a postalveolar or a vowel other than a and i.
HARMONY_ROWS = [
    ("k a l", "k a l d a"), ("m i r", "m i r d e"), ("s o p", "s o p t a"), ("t e k", "t e k t e"),
    ("b u n", "b u n d a"), ("n i m", "n i m d e"), ("p a s", "p a s t a"), ("l e s", "l e s t e"),
    ("r o m a", "r o m a d a"), ("s e l i", "s e l i d e"), ("d u k", "d u k t a"), ("v i p", "v i p t e"),
    ("z a r", "z a r d a"), ("b e n", "b e n d e"), ("m o l", "m o l d a"), ("k i l e", "k i l e d e"),
    ("t a p", "t a p t a"), ("n e k", "n e k t e"),
]  # fmt: skip


def test_allomorphs_of_one_shape_are_found():
    found = suffix_allomorphs(pairs_of(HARMONY_ROWS), {})
    assert found == Counter({("d", "a"): 5, ("t", "a"): 4, ("d", "e"): 5, ("t", "e"): 4})


def test_suffixes_of_other_shapes_are_no_allomorphs():
    # A vowel where another has a consonant.
    assert not suffix_allomorphs(pairs_of([("k a l", "k a l d a"), ("m i r", "m i r a d")]), {})
    # One suffix only: nothing to factor.
    assert not suffix_allomorphs(pairs_of([("k a l", "k a l d a"), ("m i r", "m i r d a")]), {})
    # A suffix of another length (an epenthesis no feature rule makes) beside them.
    rows = [("k a l", "k a l d a"), ("m i r", "m i r d e"), ("s o p", "s o p t a"), ("t e k", "t e k i t e")]
    assert not suffix_allomorphs(pairs_of(rows), {})
    # Most rows add no suffix.
    rows = [("k a l", "k a l d a"), ("m i r", "m i r d e"), ("s o p", "s o b"), ("t e k", "t e g")]
    assert not suffix_allomorphs(pairs_of(rows), {})


def test_the_pass_inserts_the_most_frequent_allomorph_at_the_end():
    allomorphs = Counter({("d", "a"): 5, ("t", "a"): 4, ("d", "e"): 5})
    assert allomorph_pass(allomorphs) == Pass((Rule((IsToken(BOUNDARY, 1),), Insert(("d", "a"))),))


def test_voicing_and_harmony_of_the_suffix_reach_stem_endings_never_seen():
    model = api.learn([list(row) for row in HARMONY_ROWS], variant="auto", jobs=LEARN_JOBS)
    tests = {
        "t e ʒ": "t e ʒ d e",
        "r a ʃ": "r a ʃ t a",
        "p u ŋ": "p u ŋ d a",
        "s i t͡ʃ": "s i t͡ʃ t e",
        "k o r u": "k o r u d a",
    }
    got = model.apply_many([tuple(word.split()) for word in tests])
    assert {word: " ".join(out) for word, out in zip(tests, got)} == tests
    assert model.pair().program.passes[0] == allomorph_pass(suffix_allomorphs(pairs_of(HARMONY_ROWS), {}))
