"""Features derived from IPA with panphon (`fstsynth.features`)."""

from __future__ import annotations

from fstsynth.features import DERIVED, ipa_features, is_vowel, with_ipa_features, with_vowel_classes, without_derived


def test_one_segment_tokens_get_panphon_features():
    feats = ipa_features(["b", "p", "t͡ʃ", "a", "ab", "ч", "͡"])
    # Only tokens panphon reads as exactly one IPA segment.
    assert set(feats) == {"b", "p", "t͡ʃ", "a"}
    assert feats["b"][DERIVED + "voi"] and not feats["p"][DERIVED + "voi"]
    assert feats["t͡ʃ"][DERIVED + "strid"] and not feats["t͡ʃ"][DERIVED + "cont"]
    assert not feats["a"][DERIVED + "cons"] and feats["a"][DERIVED + "lo"]


def test_derived_features_are_kept_only_where_they_tell_tokens_apart():
    given = {"b": {"vowel": False}, "p": {"vowel": False}, "a": {"vowel": True}}
    out = with_ipa_features(given, ["b", "p", "a"])
    names = {n for feats in out.values() for n in feats if n.startswith(DERIVED)}
    assert DERIVED + "voi" in names  # b, a against p
    assert DERIVED + "syl" not in names  # the same tokens as `vowel`
    assert DERIVED + "nas" not in names  # true of none of them
    assert out["b"]["vowel"] is False  # what was given stays
    assert without_derived(out) == given
    assert without_derived(given) is given


def test_vowel_guess_and_feature_override():
    assert is_vowel("aː", {}) and is_vowel("ø", {}) and not is_vowel("t͡ʃ", {})
    assert not is_vowel("a", {"a": {"vowel": False}})


def test_vowel_classes_from_unicode_when_the_problem_has_none():
    features = with_vowel_classes({"x": {"vowel": True}}, ["x", "а", "н", "ग", "ी", "्", "1"])
    assert features["x"] == {"vowel": True}  # the problem's own word stands
    assert features["а"] == {"vowel": True, "cons": False}  # Cyrillic a
    assert features["н"] == {"vowel": False, "cons": True}
    assert features["ग"] == {"vowel": False, "cons": True}  # Devanagari GA
    assert features["ी"]["vowel"] is True  # vowel sign II
    assert features["्"] == {"vowel": False, "cons": False}  # virama
    assert features["1"] == {"vowel": False, "cons": False}
    assert is_vowel("अ", {}) and not is_vowel("क", {})
