"""The harmonic tier (`features.harmonic_tiers`, issue 25's Finnish and Hungarian
harmony): the vowels that take part in front/back harmony, neutral vowels (front ones
with no back partner: Finnish `i e`) skipped, so that a harmony reads the last
*harmonic* vowel: `v o i` takes a back suffix."""

from __future__ import annotations

import pytest

from conftest import LEARN_JOBS
from fstsynth import dsl, dsl_parser
from fstsynth.dsl import BOUNDARY, Agree, IsToken, Pass, Program, Rule, TierIs
from fstsynth.features import (
    HARMONIC,
    WithUnseen,
    harmonic_tiers,
    inventory,
    read_by_ipa,
    with_ipa_features,
    with_vowel_classes,
)
from fstsynth.interpreter import run
from fstsynth.learning import compile_model, learn_model
from fstsynth.problem import read_pairs
from fstsynth.spe import rule_to_spe
from fstsynth.synthesis import Options
from fstsynth.synthesis.allomorphs import alternates_in

BACK = HARMONIC + "back"


def ipa_features(tokens: str) -> dict[str, dict[str, bool]]:
    """The features a model derives for these (space-separated) IPA tokens."""
    toks = tokens.split()
    return with_ipa_features(with_vowel_classes({}, toks), toks)


def harmonic(features: dict[str, dict[str, bool]]) -> set[str]:
    return {tok for tok, feats in features.items() if feats.get(BACK, False)}


def test_finnish_i_and_e_are_neutral_and_the_rest_take_part():
    features = ipa_features("t k l s a o u æ ø y i e aː æː")
    assert harmonic(features) == {"a", "o", "u", "æ", "ø", "y", "aː", "æː"}
    assert features["i"][BACK] is False and features["t"][BACK] is False


@pytest.mark.parametrize(
    "tokens",
    [
        "t k a e i o u",  # five vowels: no vowel alternates in backness alone
        "t k a e ɯ i o ø u y",  # Turkish: `e` is `a`'s partner (no `æ`), none neutral
        "t k a o u",  # back vowels only
    ],
)
def test_no_harmonic_tier_where_it_would_be_no_new_tier(tokens):
    assert not harmonic(ipa_features(tokens))
    assert not any(BACK in feats for feats in ipa_features(tokens).values())


def test_a_features_file_gets_no_harmonic_tier():
    given = {"a": {"vowel": True, "back": True}, "æ": {"vowel": True}, "i": {"vowel": True}}
    assert harmonic_tiers(given) == given


def test_an_unseen_vowel_takes_part_where_the_model_knows_its_partner():
    features = ipa_features("t k l a o u æ y i e")
    read = read_by_ipa(["ø", "ɯ", "ɛ"], features)
    assert read is not None
    # ø's partner o is known; ɯ is back; ɛ (panphon's e) has no back partner.
    assert read["ø"][BACK] and read["ɯ"][BACK] and not read["ɛ"][BACK]


def test_the_harmonic_tier_is_no_feature_a_change_sets():
    """Hungarian: ɛ is neutral, ø harmonic; rounding ɛ is still ø."""
    features = ipa_features("t k ɒ o u ø y ɛ i")
    assert not features["ɛ"][BACK] and features["ø"][BACK]
    known = inventory(features)
    assert known.resolve("ɛ", (("ipa.round", True),)) == "ø"
    assert known.resolve("ø", (("ipa.back", True),)) == "o"


def test_a_harmonic_tier_test_prints_parses_and_round_trips():
    nodes = [TierIs(BACK, "ipa.back", -1, True), Agree(("ipa.back",), -1, BACK)]
    for node in nodes:
        assert dsl_parser.parse(str(node)) == node
        assert dsl.from_json(dsl.to_json(node)) == node
    rule = Rule((IsToken(BOUNDARY, 1), TierIs(BACK, "ipa.back", -1, True)), dsl.Insert(("s", "a")))
    assert f"{BACK} tier" in rule_to_spe(rule)


# A suffix harmony over the vowels that alternate, the neutral `i e` skipped: a back
# suffix after a back vowel wherever it stands, a front one otherwise.
HARMONY = Program(
    (
        Pass(
            (
                Rule((IsToken(BOUNDARY, 1), TierIs(BACK, "ipa.back", -1, True)), dsl.Insert(("s", "a"))),
                Rule((IsToken(BOUNDARY, 1),), dsl.Insert(("s", "æ"))),
            )
        ),
        Pass((Rule((IsToken("s", -1), IsToken(BOUNDARY, 1)), Agree(("ipa.back",), -1, BACK)),)),
    )
)
WORDS = {
    "t a l o": "t a l o s a",
    "k o t i": "k o t i s a",
    "t a l i k e": "t a l i k e s a",
    "k y t i": "k y t i s æ",
    "t i k e": "t i k e s æ",
    # Vowels the model never saw, read by their IPA features (no length among them):
    # `uː` back, `iː` neutral.
    "p uː t i": "p uː t i s a",
    "p iː t i": "p iː t i s æ",
}


def test_the_harmonic_tier_reads_alike_in_every_backend():
    problem = read_pairs([["t a l o", "t a l o"], ["k y l æ", "k y l æ"], ["t i k e", "t i k e"], ["p ø", "p ø"]])
    model = compile_model({(0, 1): HARMONY}, problem)
    pair = model.only_pair()
    assert BACK in model.features["a"]
    words = [tuple(word.split()) for word in WORDS]
    assert [" ".join(out) for out in pair.predict_many(words)] == list(WORDS.values())
    for word in words:
        assert pair.interpret(word, model.features) == pair.predict(word)
        # The transducers read a token they never saw as `<unk>` (`PairModel.transduce`).
        if set(word) <= set(model.alphabet):
            assert pair.transduce(word) == pair.predict(word)


def test_the_interpreter_reads_an_unseen_vowel_by_the_models_partners():
    features = ipa_features("t k l s a o æ y i e")
    unseen = read_by_ipa(["u", "ø"], features)
    assert unseen is not None
    extended = WithUnseen(features, unseen)
    assert run(HARMONY, tuple("k u t i".split()), extended) == tuple("k u t i s a".split())
    # ø's partner o is known: ø takes part, and is front.
    assert run(HARMONY, tuple("k o t ø".split()), extended) == tuple("k o t ø s æ".split())


# A made-up harmony table: the suffix -sa/-sæ after the last back/front vowel, `i e`
# neutral. The training words show `i` after back and front vowels alike.
TRAINING = [
    ("t a l o", "t a l o s a"),
    ("k u t a", "k u t a s a"),
    ("p o r a", "p o r a s a"),
    ("t a l i", "t a l i s a"),
    ("k o t i", "k o t i s a"),
    ("m u k e", "m u k e s a"),
    ("k y l æ", "k y l æ s æ"),
    ("p ø t y", "p ø t y s æ"),
    ("t æ l i", "t æ l i s æ"),
    ("k y t i", "k y t i s æ"),
    ("m ø k e", "m ø k e s æ"),
    ("t i k i", "t i k i s æ"),
    ("p e t i", "p e t i s æ"),
]
HELD_OUT = {
    "p o t i k i": "p o t i k i s a",
    "l u m e t i": "l u m e t i s a",
    "k ø t i k i": "k ø t i k i s æ",
    "t e l i": "t e l i s æ",
}


def test_a_harmony_with_transparent_vowels_is_learned():
    problem = read_pairs([[" ".join(s), " ".join(t)] for s, t in TRAINING])
    model = learn_model(problem, Options(), jobs=LEARN_JOBS)
    pair = model.only_pair()
    assert BACK in str(pair.program)
    for source, target in HELD_OUT.items():
        assert model.apply(source) == target, (source, str(pair.program))


def test_the_tier_is_read_where_the_suffixes_alternate_in_backness():
    features = ipa_features("t k l s sː n a o u æ ø y i e ɒ ɛ")
    inessive = [(tuple("talo"), tuple("talo") + ("sː", "a")), (tuple("kylæ"), tuple("kylæ") + ("sː", "æ"))]
    assert alternates_in(inessive, features, "ipa.back")
    # One suffix, or suffixes alternating in a consonant only: no harmony shown.
    assert not alternates_in([(s, t[:-1] + ("a",)) for s, t in inessive], features, "ipa.back")
    voicing = [(tuple("talo"), tuple("talo") + ("t", "a")), (tuple("kylæ"), tuple("kylæ") + ("n", "a"))]
    assert not alternates_in(voicing, features, "ipa.back")
    # A spelling -> sound map adds no suffix.
    assert not alternates_in([(tuple("kue"), tuple("kwe")), (tuple("ya"), tuple("ja"))], features, "ipa.back")
