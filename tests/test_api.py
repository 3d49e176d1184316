"""The top-level Python API: fstsynth.learn / load / Model, on the project's data."""

from __future__ import annotations

import subprocess
import sys

import pytest

import fstsynth
from conftest import DATA, ROOT
from fstsynth.errors import UserError
from fstsynth.model import Error

PAIRS = [
    ("kat", "kats"), ("dɔg", "dɔgz"), ("bʊk", "bʊks"), ("bæg", "bægz"), ("kʌp", "kʌps"),
    ("bɛd", "bɛdz"), ("pɛn", "pɛnz"), ("mæp", "mæps"), ("bʌs", "bʌsɪz"), ("dɪʃ", "dɪʃɪz"),
]


@pytest.fixture(scope="module")
def model():
    return fstsynth.learn(PAIRS, features=DATA / "plural-features.json", variant="feature")


def test_importing_fstsynth_loads_neither_pynini_nor_lingpy():
    code = "import sys, fstsynth; print(sorted(m for m in ('pynini', 'lingpy') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_words_in_the_style_they_were_typed(model):
    assert model.apply("p ɪ g") == "p ɪ g z"
    assert model.apply("pɪg") == "pɪgz"  # unspaced in, unspaced out
    assert model.apply(("f", "ɒ", "k", "s")) == ("f", "ɒ", "k", "s", "ɪ", "z")  # tokens in, tokens out
    assert model.apply_many(["s l ʌ g", "stæmp"]) == ["s l ʌ g z", "stæmps"]


def test_tokens_given_as_such_are_read_in_nfc():
    # `é` learned precomposed; given decomposed (`e` + U+0301), in a string or as a token.
    model = fstsynth.learn([("té", "te"), ("pét", "pet"), ("ta", "ta"), ("pa", "pa"), ("ét", "et"), ("ke", "ke")])
    assert model.apply(("k", "é")) == ("k", "e")
    assert model.apply(("k", "e\u0301")) == ("k", "e")
    assert model.apply("ke\u0301") == "ke"


def test_rules_fst_and_a_saved_model(model, tmp_path):
    assert "Insert(x, " in str(model.rules) and model.rules is model.pair().program
    import pynini

    fst = model.fst
    assert isinstance(fst, pynini.Fst) and fst.num_states() > 0
    model.save(tmp_path / "m")
    loaded = fstsynth.load(tmp_path / "m")
    assert isinstance(loaded, fstsynth.Model)
    assert loaded.apply_many(["pɪg", "b ʌ s"]) == ["pɪgz", "b ʌ s ɪ z"]
    assert str(loaded.rules) == str(model.rules)


def test_evaluate_gives_the_command_s_figures(model):
    figures = model.evaluate([("p ɪ g", "p ɪ g z"), ("f ʊ t", "f iː t")])
    assert (figures["words"], figures["correct"], figures["exact"]) == (2, 1, 0.5)
    assert figures["errors"][0]["target"] == "f iː t"


def test_a_model_of_several_column_pairs_picks_one_with_pair(paradigm_feature):
    model = paradigm_feature  # fstsynth.learn(DATA / "paradigm.json", variant="feature"), once per session
    with pytest.raises(Error, match=r"pick one with model.pair\(source, target\)"):
        model.apply("t i b e")
    locative = model.pair("stem", "in stem")
    assert locative.apply("t i b e") == "t i b e d e"
    assert locative.apply_many(["kopu"]) == ["kopuda"]
    assert model.pair("stem", "my stem").apply("k o p u") == "a ŋ k o p u"


def test_learn_refuses_bad_options_and_pairs():
    with pytest.raises(UserError, match="variant must be one of"):
        fstsynth.learn(PAIRS, variant="fancy")
    with pytest.raises(UserError, match="time limit must be a positive"):
        fstsynth.learn(PAIRS, time_limit=0)
    with pytest.raises(UserError, match="pair 1: expected"):
        fstsynth.learn(["kat"])


def test_learning_leaves_the_garbage_collector_on_for_the_caller_s_other_threads():
    """The collector is process-wide: a library that turned it off while it learns would
    turn it off under every other thread of the application too."""
    import gc

    from fstsynth.progress import listening

    collector_on = []  # as seen at each step learning reports, from inside learning
    with listening(lambda step: collector_on.append(gc.isenabled())):
        fstsynth.learn(PAIRS, variant="token")
    assert len(collector_on) > 3 and all(collector_on)
    assert gc.isenabled()
