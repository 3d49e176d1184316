"""The whole-affix pass (`synthesis.affixes`): the 2017 baseline's longest-match lookup of
word ends (or starts), as a pass of the DSL that every backend runs alike."""

from __future__ import annotations

import pytest

from fstsynth import dsl_parser
from fstsynth.dsl import Program
from fstsynth.interpreter import run
from fstsynth.learning import compile_model
from fstsynth.problem import read_pairs
from fstsynth.synthesis import Options, learn, tagged_examples
from fstsynth.synthesis.affixes import AFFIX_LENGTH, LONGEST_AFFIX, affix_pass, every_prefix, prefix_default_pass
from fstsynth.synthesis.options import Error

Pairs = list[tuple[tuple[str, ...], tuple[str, ...]]]


def pairs_of(rows: list[tuple[str, str]]) -> Pairs:
    return [(tuple(a.split()), tuple(b.split())) for a, b in rows]


def examples_of(pairs: Pairs) -> list:
    return [
        ex
        for src, tgt in pairs
        for ex in tagged_examples([(tok, None) for tok in src], tgt, {}, "global")
    ]


def reproduces_training(pairs: Pairs) -> Program:
    """The affix pass learned from `pairs`, as a program, once checked to reproduce every
    training pair (the longest word end seen is the word itself)."""
    affix = Program((affix_pass(examples_of(pairs)),))
    wrong = [(src, tgt, got) for src, tgt in pairs if (got := run(affix, src, {})) != tgt]
    assert not wrong, wrong
    return affix


# Latin genitive -> nominative: -is goes, with ɡ -> k before it, and a dental goes too.
LATIN = pairs_of(
    [
        ("r eː ɡ i s", "r eː k s"),
        ("ɡ r e ɡ i s", "ɡ r e k s"),
        ("d u k i s", "d u k s"),
        ("o p i s", "o p s"),
        ("l a u d i s", "l a u s"),
        ("f r a u d i s", "f r a u s"),
        ("n o k t i s", "n o k s"),
        ("a e t aː t i s", "a e t aː s"),
    ]
)

# Prefixing: meN- whose nasal replaces a voiceless stop (Indonesian-like).
PREFIXED = pairs_of(
    [
        ("p u k u l", "m ə m u k u l"),
        ("p a k a i", "m ə m a k a i"),
        ("t u l i s", "m ə n u l i s"),
        ("t a r i k", "m ə n a r i k"),
        ("b a c a", "m ə m b a c a"),
        ("b e l i", "m ə m b e l i"),
        ("d a p a t", "m ə n d a p a t"),
        ("l i h a t", "m ə l i h a t"),
    ]
)


def test_the_longest_word_end_seen_decides():
    affix = reproduces_training(LATIN)
    # A word end seen: `ɡ i s #`, `d i s #`, `t i s #`.
    assert run(affix, tuple("l eː ɡ i s".split()), {}) == tuple("l eː k s".split())
    assert run(affix, tuple("m e r k eː d i s".split()), {}) == tuple("m e r k eː s".split())
    # Only `i s #` seen: what it does, whatever stands before it.
    assert run(affix, tuple("u r b i s".split()), {}) == tuple("u r b s".split())
    # No word end seen at all: the change every training word has at its end (the last
    # token kept here) is all there is.
    assert run(affix, tuple("k o n s u l".split()), {}) == tuple("k o n s u l".split())


def test_a_sequence_that_changes_nothing_more_than_a_shorter_one_has_no_rules():
    affix = affix_pass(examples_of(LATIN))
    # `k i s #` does what `i s #` does (its k kept): no rule tests a k before `i s`.
    assert not any("IsToken(x, 'k', -1)" in str(rule) and "IsToken(x, 's', 1)" in str(rule) for rule in affix.rules)
    # The longer sequences' rules come first.
    distances = [max(abs(getattr(p, "offset", 0)) for p in rule.predicates) for rule in affix.rules]
    assert distances == sorted(distances, reverse=True)


def _reach(affix) -> int:
    """The farthest offset the pass's rules read."""
    return max(abs(getattr(p, "offset", 0)) for rule in affix.rules for p in rule.predicates)


# Liquid stems: -is goes and a long oː before the r is shortened, 4 tokens from the end.
SHORTENED = [("a m oː r i s", "a m o r"), ("d o l oː r i s", "d o l o r"), ("k o n s u l i s", "k o n s u l")]


def test_the_ends_reach_as_deep_as_the_changes_of_two_words():
    pairs = pairs_of(SHORTENED) + LATIN
    affix = Program((affix_pass(examples_of(pairs), LONGEST_AFFIX),))
    assert all(run(affix, src, {}) == tgt for src, tgt in pairs)
    # `oː r i s #` seen in two words: a third is shortened too.
    assert run(affix, tuple("s o r oː r i s".split()), {}) == tuple("s o r o r".split())
    # Ends of the default length do not reach the oː.
    short = Program((affix_pass(examples_of(pairs)),))
    assert run(short, tuple("s o r oː r i s".split()), {}) == tuple("s o r oː r".split())


def test_a_deep_change_of_one_word_does_not_lengthen_the_ends():
    # Only `a m oː r i s` shortens its vowel: a lexical fact, not an affix's.
    pairs = pairs_of(SHORTENED[::2]) + LATIN
    assert _reach(affix_pass(examples_of(pairs), LONGEST_AFFIX)) == _reach(affix_pass(examples_of(pairs), AFFIX_LENGTH))


def test_changes_at_the_start_are_read_from_the_start():
    affix = reproduces_training(PREFIXED)
    assert run(affix, tuple("t i d u r".split()), {}) == tuple("m ə n i d u r".split())
    assert run(affix, tuple("b u k a".split()), {}) == tuple("m ə m b u k a".split())
    # A first token never seen: the prefix every word gets.
    assert run(affix, tuple("r a s a".split()), {}) == tuple("m ə r a s a".split())


def test_the_pass_prints_and_parses_back():
    affix = affix_pass(examples_of(LATIN))
    program = Program((affix,))
    assert dsl_parser.parse(str(program)) == program


@pytest.mark.parametrize("pairs, words", [(LATIN, ["l eː ɡ i s", "m e r k eː d i s", "u r b i s", "m"]),
                                          (PREFIXED, ["t i d u r", "b u k a", "r a s a", "p"])])
def test_the_compiled_pass_runs_as_the_interpreter(pairs, words):
    program = Program((affix_pass(examples_of(pairs)),))
    problem = read_pairs([[" ".join(s), " ".join(t)] for s, t in pairs])
    pair = compile_model({(0, 1): program}, problem).only_pair()
    for word in words:
        tokens = tuple(word.split())
        assert pair.predict(tokens) == pair.interpret(tokens, {}) == run(program, tokens, {})


def test_a_learned_program_starts_with_the_affix_pass_when_asked():
    result = learn(LATIN, {}, Options(variant="token", affixes=3))
    first = result.program.passes[0]
    assert first == affix_pass(examples_of(LATIN), 3)
    assert result.train_correct == len(LATIN)


def test_the_prefix_every_form_has_and_no_word():
    assert every_prefix(PREFIXED) == ("m", "ə")
    # Sources that start with it too: the targets' shared start says nothing of an affix.
    assert every_prefix(PREFIXED + pairs_of([("m ə j a", "m ə m ə j a")])) == ()
    assert every_prefix(LATIN) == ()


def test_a_first_token_no_training_word_starts_with_still_gets_the_prefix():
    # Issue 25 (Indonesian meN-): the start's rules write the prefix by the stem's first
    # token; a stem starting otherwise got none of it.
    for variant in ("token", "feature"):
        result = learn(PREFIXED, {}, Options(variant=variant))
        assert result.program.passes[-1] == prefix_default_pass(("m", "ə"))
        assert result.train_correct == len(PREFIXED)
        assert run(result.program, tuple("r a s a".split()), {}) == tuple("m ə r a s a".split())
        assert run(result.program, tuple("t i d u r".split()), {}) == tuple("m ə n i d u r".split())
    without = learn(PREFIXED, {}, Options(variant="token", prefix_default=False))
    assert run(without.program, tuple("r a s a".split()), {}) == tuple("r a s a".split())


def test_the_prefix_default_compiles_as_the_interpreter_runs_it():
    program = Program((prefix_default_pass(("m", "ə")),))
    problem = read_pairs([[" ".join(s), " ".join(t)] for s, t in PREFIXED])
    pair = compile_model({(0, 1): program}, problem).only_pair()
    for word in ["r a s a", "m ə n u l i s", "m a s a k", "m"]:
        tokens = tuple(word.split())
        assert pair.predict(tokens) == pair.interpret(tokens, {}) == run(program, tokens, {})


def test_affixes_out_of_range_are_refused():
    with pytest.raises(Error, match="affixes"):
        Options(affixes=7)
