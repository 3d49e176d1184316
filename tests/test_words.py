"""Words as typed -> tokens: graphemes, spaced tokens, the longest known tokens, look-alikes."""

from __future__ import annotations

from fstsynth.words import WordSplitter, code_points, look_alike, parse_word, split_graphemes


def test_split_graphemes_keeps_combining_marks():
    assert split_graphemes("śri") == ("ś", "r", "i")
    assert split_graphemes("t͡ʃa") == ("t͡ʃ", "a")
    assert split_graphemes("aːtʰa") == ("aː", "tʰ", "a")
    assert parse_word("  a  b ") == ("a", "b")


def test_word_splitter_prefers_the_longest_known_tokens():
    split = WordSplitter(["t", "ʃ", "tʃ", "a", "aː"])
    assert split("tʃaːt") == ("tʃ", "aː", "t")
    assert split("t ʃ a") == ("t", "ʃ", "a")  # spaced: as given
    assert WordSplitter([])("tʃa") == ("t", "ʃ", "a")


def test_look_alikes_of_trained_tokens():
    alphabet = ["g", "a", "tʃ", "ː", "ʰ", "ə"]
    assert look_alike("\u0261", alphabet) == "g"  # IPA script g
    assert look_alike("\u0430", alphabet) == "a"  # Cyrillic a
    assert look_alike("t\u222b", alphabet) == "tʃ"  # an integral sign for esh
    assert look_alike(":", alphabet) == "ː" and look_alike("\u01dd", alphabet) == "ə"
    assert look_alike("\uff47", alphabet) == "g"  # fullwidth, folded by NFKC
    assert look_alike("q", alphabet) is None and look_alike("g", alphabet) is None
    assert code_points("tʃ") == "U+0074 U+0283"
