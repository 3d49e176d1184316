from __future__ import annotations

import pytest

from fstsynth.alignment import START, align_pair, examples_from_pair, is_vowel


def outputs(source, target, mode="global"):
    exs = examples_from_pair(tuple(source.split()), tuple(target.split()), {}, mode)
    return {e.position: " ".join(e.output) for e in exs}


def test_suffix_attaches_to_the_last_token():
    assert outputs("k a t", "k a t s") == {START: "", 0: "k", 1: "a", 2: "t s"}


@pytest.mark.parametrize("mode", ["global", "local"])
def test_prefix_attaches_to_the_start_position(mode):
    assert outputs("k a t", "u k a t", mode)[START] == "u"


def test_deletion_and_substitution_prefer_like_for_like():
    # m a p p a s -> d i p a s: consonant to consonant, vowel to vowel, one p deleted.
    out = outputs("m a p p a s", "d i p a s")
    assert out[0] == "d" and out[1] == "i"
    assert sorted(out.values()).count("") == 2  # the start position and one p
    assert "".join(out[k] for k in sorted(out)) == "dipas"


def test_equal_length_disjoint_vocabularies_align_one_to_one():
    assert outputs("t a t u l", "0 1 0 0 0") == {START: "", 0: "0", 1: "1", 2: "0", 3: "0", 4: "0"}


def test_hyphen_tokens_are_not_gaps():
    assert outputs("a - b", "a - b c")[2] == "b c"


def test_empty_sides():
    assert outputs("", "a b") == {START: "a b"}
    assert outputs("a b", "") == {START: "", 0: "", 1: ""}


def test_every_target_token_is_produced_once_in_order():
    for src, tgt in [("a b c d", "x a c y d"), ("t͡ʃ o k", "t͡ʃ o k o"), ("a", "b c d")]:
        out = outputs(src, tgt)
        assert " ".join(o for _, o in sorted(out.items()) if o) == tgt


def test_vowel_guess_and_feature_override():
    assert is_vowel("aː", {}) and is_vowel("ø", {}) and not is_vowel("t͡ʃ", {})
    assert not is_vowel("a", {"a": {"vowel": False}})
