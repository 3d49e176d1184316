"""The CoNLL-SIGMORPHON 2017 baseline peer (scripts/peer_conll2017.py) on tiny hand
examples: alignment costs, the prefix | stem | suffix cut, rule extraction, the
longest-match choice and the reversal for prefixing pairs."""

from __future__ import annotations

import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT / "scripts"))

from peer_conll2017 import (  # noqa: E402
    BOW,
    EOW,
    Baseline,
    Peer,
    align,
    edit_cost,
    mostly_prefixing,
    rules_of_pair,
    split_parts,
)


def w(text: str) -> tuple[str, ...]:
    return tuple(text.split())


def test_a_substitution_costs_1_1_and_beats_a_deletion_plus_an_insertion() -> None:
    upper, lower = align(w("k a t"), w("k a d"))
    assert (upper, lower) == (w("k a t"), w("k a d"))
    assert edit_cost(upper, lower) == 1.1


def test_an_insertion_is_preferred_to_a_substitution() -> None:
    # "a b" -> "b": deleting a (1) beats substituting a -> b and deleting b (2.1).
    upper, lower = align(w("a b"), w("b"))
    assert (upper, lower) == (w("a b"), (None, "b"))
    assert edit_cost(upper, lower) == 1.0
    upper, lower = align(w("w ɔ k"), w("w ɔ k t"))
    assert (upper, lower) == ((*w("w ɔ k"), None), w("w ɔ k t"))


def test_tokens_of_several_characters_align_as_one_segment() -> None:
    upper, lower = align(w("b a t͡ʃ"), w("b a d͡ʒ ɯ"))
    assert (upper, lower) == ((*w("b a t͡ʃ"), None), w("b a d͡ʒ ɯ"))
    assert edit_cost(upper, lower) == 2.1


def test_the_pair_is_cut_at_the_gap_runs_at_either_end() -> None:
    parts = split_parts(w("s u l a t"), w("m a s u l a t"))
    assert parts.lemma_prefix == (None, None) and parts.form_prefix == w("m a")
    assert parts.lemma_stem == parts.form_stem == w("s u l a t")
    assert parts.lemma_suffix == parts.form_suffix == ()
    parts = split_parts(w("t a ɡ ə"), w("t a k"))
    assert parts.lemma_stem == w("t a ɡ") and parts.form_stem == w("t a k")
    assert parts.lemma_suffix == w("ə") and parts.form_suffix == (None,)


def test_equal_costs_go_to_the_substitution_first() -> None:
    # t u l i s -> m ə n u l i s: "t/m, insert ə n" and "insert m ə, t/n" both cost
    # 3.1; the path that substitutes at the first position where they part wins, so
    # there is no prefix here (the reversal step is what handles prefixing data).
    upper, lower = align(w("t u l i s"), w("m ə n u l i s"))
    assert upper == ("t", None, None, *w("u l i s"))
    assert edit_cost(upper, lower) == 3.1
    assert split_parts(w("t u l i s"), w("m ə n u l i s")).lemma_prefix == ()


def test_suffix_rules_are_every_tail_with_the_end_marker() -> None:
    prefix_rules, suffix_rules = rules_of_pair(w("t a ɡ ə"), w("t a k"))
    assert suffix_rules == {
        (w("t a ɡ ə") + (EOW,), w("t a k") + (EOW,)),
        (w("a ɡ ə") + (EOW,), w("a k") + (EOW,)),
        (w("ɡ ə") + (EOW,), w("k") + (EOW,)),
        (w("ə") + (EOW,), (EOW,)),
        ((EOW,), (EOW,)),
    }
    # No prefix change: the prefix rules only copy heads of the stem.
    assert prefix_rules == {((BOW,), (BOW,)), ((BOW, "t"), (BOW, "t")), ((BOW, "t", "a"), (BOW, "t", "a"))}


def test_prefix_rules_carry_the_prefix_and_heads_of_the_forms_stem() -> None:
    prefix_rules, _ = rules_of_pair(w("s u l a t"), w("m a s u l a t"))
    assert ((BOW,), (BOW, "m", "a")) in prefix_rules
    assert ((BOW, "s", "u"), (BOW, "m", "a", "s", "u")) in prefix_rules
    assert len(prefix_rules) == 5  # heads of length 0-4 of the form's stem "s u l a t"


def test_the_longest_matching_suffix_rule_wins_over_a_more_frequent_shorter_one() -> None:
    pairs = [(w("h ʊ n d ə"), w("h ʊ n t")), (w("t a ɡ ə"), w("t a k")), (w("b ɛ ʁ ɡ ə"), w("b ɛ ʁ k"))]
    baseline = Baseline.train(pairs)
    # "ə >" -> ">" is seen 3 times, "ɡ ə >" -> "k >" twice: the longer one applies.
    assert baseline.suffix_rules[(w("ə") + (EOW,), (EOW,))] == 3
    assert baseline.best_suffix_rule((BOW, *w("v eː ɡ ə"), EOW)) == (w("ɡ ə") + (EOW,), w("k") + (EOW,))
    assert baseline.predict(w("v eː ɡ ə")) == w("v eː k")
    assert baseline.predict(w("m o n d ə")) == w("m o n t")
    # Nothing longer than "ə >" matches: the schwa is just dropped.
    assert baseline.predict(w("z aɪ l ə")) == w("z aɪ l")


def test_length_ties_go_to_the_more_frequent_rule() -> None:
    pairs = [(w("k a t"), w("k a t s")), (w("m a t"), w("m a t s")), (w("b a t"), w("b a t z"))]
    baseline = Baseline.train(pairs)
    assert baseline.predict(w("r a t")) == w("r a t s")


def test_mostly_prefixing_pairs_are_learned_on_reversed_words() -> None:
    prefixing = [(w("s u l a t"), w("m a s u l a t")), (w("b a s a"), w("m a b a s a"))]
    assert mostly_prefixing(prefixing)
    assert not mostly_prefixing([(w("k a t"), w("k a t s")), (w("d ɔ ɡ"), w("d ɔ ɡ z"))])
    baseline = Baseline.train(prefixing)
    assert baseline.reverse
    assert baseline.predict(w("l u t o")) == w("m a l u t o")


def test_the_peer_interface_trains_and_predicts_every_query() -> None:
    peer = Peer()
    train = [(w("k æ t"), w("k æ t s")), (w("k ʌ p"), w("k ʌ p s")), (w("d ɔ ɡ"), w("d ɔ ɡ z"))]
    assert peer.run(train, [w("h æ t"), ()]) == [w("h æ t s"), None]
