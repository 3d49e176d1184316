"""scripts/bench_realworld's data: epitran's segments read as the library reads IPA."""

from __future__ import annotations


import pytest

from conftest import script_module
from fstsynth.words import split_graphemes


def _bench_realworld():
    return script_module("bench_realworld")


def test_a_lone_combining_mark_joins_the_segment_before_it():
    """epitran writes `bêtes` as `b ə ̂ t`, the accent of the `ê` it mapped left alone:
    joined to the `ə`, as the same IPA written without spaces is split."""
    joined = _bench_realworld()._marks_joined
    assert joined(["b", "ə", "\u0302", "t"]) == ("b", "ə\u0302", "t") == split_graphemes("bə\u0302t")
    assert joined(["m", "ə", "\u0300", "l"]) == ("m", "ə\u0300", "l")
    assert joined(["a", "\u0301"]) == ("\u00e1",)  # NFC after joining
    assert joined(["\u0302", "a"]) == ("\u0302", "a")  # nothing before it
    assert joined(["a", "ː", "ɑ\u0303"]) == ("a", "ː", "ɑ\u0303")  # a modifier letter is a segment


@pytest.mark.slow  # epitran takes 10 to 20 seconds to load its French
def test_french_ipa_has_no_lone_mark():
    epitran = pytest.importorskip("epitran")
    bench = _bench_realworld()
    assert epitran.Epitran("fra-Latn").trans_list("bêtes")[2] == "\u0302"  # what is joined
    pairs = bench.TASKS["fr-ipa"][1](60)
    assert pairs and not any(
        tok and all(bench.unicodedata.category(ch) == "Mn" for ch in tok) for _, ipa in pairs for tok in ipa
    )
