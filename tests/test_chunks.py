"""Chunk alignment (`fstsynth.chunks`): each word's alignment judged by the whole
column pair."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fstsynth.alignment import examples_from_alignment
from fstsynth.features import with_vowel_classes


def _chunk_outputs(pairs, features=None):
    from fstsynth.chunks import chunk_alignments

    if features is None:
        features = with_vowel_classes({}, sorted({t for s, g in pairs for t in (*s, *g)}))
    return [
        {e.position: e.output for e in examples_from_alignment(src, tgt, columns)}
        for (src, tgt), columns in zip(pairs, chunk_alignments(pairs, features))
    ]


_tokens = st.sampled_from(list("abkmnoij"))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.lists(_tokens, max_size=7), st.lists(_tokens, max_size=9)), min_size=1, max_size=6))
def test_chunk_alignment_spells_out_both_words_in_order(rows):
    # Law: whatever the column pair, each source token is aligned once, in order, and
    # the target tokens come out in order, each once.
    from fstsynth.chunks import chunk_alignments

    pairs = [(tuple(a), tuple(b)) for a, b in rows]
    for (src, tgt), columns in zip(pairs, chunk_alignments(pairs, {})):
        assert [i for i, _ in columns if i is not None] == list(range(len(src)))
        assert [j for _, j in columns if j is not None] == list(range(len(tgt)))
        assert all(i is not None or j is not None for i, j in columns)


def test_chunk_alignment_aligns_a_digraph_the_same_way_in_every_word():
    # n j -> њ beside n -> н and j -> ј: which of the two letters takes њ is decided by
    # chunk probabilities that do not depend on the word, so it is the same in all.
    words = ["konj:коњ", "njiva:њива", "banja:бања", "nos:нос", "jug:југ", "tanjir:тањир", "jazo:јазо",
             "panj:пањ", "sinja:сиња"]
    pairs = [(tuple(a), tuple(b)) for a, b in (w.split(":") for w in words)]
    ways = set()
    for (src, _), outputs in zip(pairs, _chunk_outputs(pairs)):
        for k in range(len(src) - 1):
            if src[k : k + 2] == ("n", "j"):
                ways.add((outputs[k], outputs[k + 1]))
    assert len(ways) == 1 and ways <= {(("њ",), ()), ((), ("њ",))}, ways


# Made-up suffixing pairs: o m after the stem, and in `b a l o k`, `s u l o k` the o drops.
_SUFFIX_PAIRS = [
    (tuple(a.split()), tuple(b.split()))
    for a, b in [
        ("p a t", "p a t o m"), ("l u k", "l u k o m"), ("s a k", "s a k o m"), ("d a k", "d a k o m"),
        ("m i k", "m i k o m"), ("r a t", "r a t o m"), ("b a l o k", "b a l k o m"), ("p e s", "p e s o m"),
        ("t e r", "t e r o m"), ("s u l o k", "s u l k o m"),
    ]
]


def test_chunk_alignment_prefers_the_common_suffix_to_a_substitution_of_one_word():
    # Word by word, l:l k, o:o, k:m (a consonant for a consonant) scores better; across
    # the column pair `o m` is added everywhere and k -> m seen nowhere else.
    pairs = _SUFFIX_PAIRS
    outputs = _chunk_outputs(pairs)
    for (src, _), out in zip(pairs, outputs):
        assert out[len(src) - 1] == (src[-1], "o", "m"), out
        if src[-2] == "o":
            assert out[len(src) - 2] == (), out


def test_chunk_alignment_leaves_a_word_equal_to_its_target_token_for_token():
    from fstsynth.chunks import chunk_alignments

    pairs = [(tuple("kat"), tuple("kat")), (tuple("kot"), tuple("kots"))]
    assert chunk_alignments(pairs, {})[0] == ((0, 0), (1, 1), (2, 2))


def test_learning_with_chunk_alignment_writes_the_suffix_once():
    # With chunks "on" the learner aligns each pass's words by `chunk_alignments`: the
    # made-up suffix is then one correspondence, learned as a rule that fires on a word
    # it has not seen (also after a dropped vowel).
    from fstsynth.interpreter import run_many
    from fstsynth.synthesis import Options, learn
    from fstsynth.synthesis.options import Error

    pairs = _SUFFIX_PAIRS
    features = with_vowel_classes({}, sorted({t for s, g in pairs for t in (*s, *g)}))
    result = learn(pairs, features, Options(variant="feature", chunks="on"))
    assert result.train_correct == len(pairs)
    assert run_many(result.program, [tuple("nuk"), tuple("kalok")], features) == [tuple("nukom"), tuple("kalkom")]
    with pytest.raises(Error):
        Options(chunks="sometimes")
