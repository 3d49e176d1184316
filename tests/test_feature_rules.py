"""Rules in features (issue 25): `SetFeatures`, `Agree`, inclusive tier tests; the
inventory they map tokens into; and the learner finding such rules."""

from __future__ import annotations

import functools
import json
import os
import subprocess
from itertools import combinations
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import LEARN_JOBS
from forked import run_forked
from fstsynth import api, dsl, dsl_parser
from fstsynth.dsl import (
    BOUNDARY,
    Agree,
    Is,
    IsToken,
    Not,
    Pass,
    Program,
    ReplaceBy,
    Rule,
    SetFeatures,
    TierIs,
)
from fstsynth.features import DERIVED, Inventory, readable_bundles, with_ipa_features, with_vowel_classes
from fstsynth.learning import learn_model
from fstsynth.problem import load_features, read_pairs, with_features
from fstsynth.tables import UNK
from fstsynth.interpreter import START, apply_transformation, eval_predicate, run, run_many
from fstsynth.synthesis import Deadline, LearnResult, Options, learn, tagged_examples
from fstsynth.synthesis.feature_changes import MANNER_FEATURES, feature_transformations, with_class_changes
from fstsynth.synthesis.learner import configured
from fstsynth.types import Features

# A small obstruent/vowel inventory: every token has its own bundle, except that
# x and y share one (so a change towards it names no single token).
FEATURES: dict[str, dict[str, bool]] = {
    "p": {"lab": True},
    "b": {"lab": True, "voice": True},
    "t": {"cor": True},
    "d": {"cor": True, "voice": True},
    "k": {"dors": True},
    "g": {"dors": True, "voice": True},
    "m": {"lab": True, "voice": True, "nas": True, "son": True},
    "n": {"cor": True, "voice": True, "nas": True, "son": True},
    "ŋ": {"dors": True, "voice": True, "nas": True, "son": True},
    "a": {"vowel": True, "voice": True, "son": True, "back": True},
    "e": {"vowel": True, "voice": True, "son": True},
    "x": {"dors": True, "cont": True},
    "y": {"dors": True, "cont": True},
}


def tagged(*tokens: str) -> list[tuple[str, None]]:
    return [(tok, None) for tok in tokens]


def test_nodes_print_parse_and_json_round_trip():
    nodes = [
        SetFeatures.of({"voice": False}),
        SetFeatures.of({"voice": True, "cont": False}),
        Agree(("cor", "dors", "lab"), 1),
        Agree(("back",), -1, "vowel"),
        TierIs("vowel", "back", -1, True),
        TierIs("vowel", BOUNDARY, 2, True),
    ]
    for node in nodes:
        assert dsl_parser.parse(str(node)) == node
        assert dsl.from_json(dsl.to_json(node)) == node
        assert hash(node) == hash(dsl_parser.parse(str(node)))
    assert str(SetFeatures.of({"voice": False, "cont": True})) == 'SetFeatures(x, ["+cont", "-voice"])'
    assert str(Agree(("back",), -1, "vowel")) == 'Agree(x, ["back"], "vowel", -1)'
    assert str(TierIs("vowel", "back", -1, True)) == 'TierIs(w, "vowel", "back", -1, inclusive)'
    # An exclusive tier test prints (and stores) as before.
    assert str(TierIs("vowel", "back", -1)) == 'TierIs(w, "vowel", "back", -1)'
    assert "inclusive" not in dsl.to_json(TierIs("vowel", "back", -1))


@pytest.mark.parametrize(
    "text",
    [
        'SetFeatures(x, [])',
        'SetFeatures(x, ["voice"])',
        'SetFeatures(x, ["-voice", "+voice"])',
        'Agree(x, ["back"], 0)',
        'Agree(x, [], 1)',
        'TierIs(w, "vowel", "back", -1, exclusive)',
    ],
)
def test_malformed_feature_nodes_are_refused(text):
    with pytest.raises(dsl_parser.ParseError):
        dsl_parser.parse(text)


@pytest.mark.parametrize(
    "data",
    [
        {"type": "SetFeatures", "values": {}},
        {"type": "SetFeatures", "values": {"voice": "no"}},
        {"type": "Agree", "features": ["back"], "offset": 0},
        {"type": "Agree", "features": "back", "offset": 1},
        {"type": "TierIs", "tier": "vowel", "feature": "back", "index": -1, "inclusive": 1},
    ],
)
def test_malformed_feature_json_is_refused(data):
    with pytest.raises(dsl.Error):
        dsl.from_json(data)


def test_set_features_maps_to_the_token_with_the_bundle():
    devoice = SetFeatures.of({"voice": False})
    word = tagged("b", "a", "g", "t", "n", "z")
    assert apply_transformation(devoice, word, 0, FEATURES) == ("p",)
    assert apply_transformation(devoice, word, 2, FEATURES) == ("k",)
    # Already voiceless: the token itself.
    assert apply_transformation(devoice, word, 3, FEATURES) == ("t",)
    # No voiceless vowel or nasal in the inventory: it does not apply.
    assert apply_transformation(devoice, word, 1, FEATURES) is None
    assert apply_transformation(devoice, word, 4, FEATURES) is None
    # A token with no features, and the start position: it does not apply.
    assert apply_transformation(devoice, word, 5, FEATURES) is None
    assert apply_transformation(devoice, word, START, FEATURES) is None
    # A feature no token has can only be set false.
    assert apply_transformation(SetFeatures.of({"spread": True}), word, 0, FEATURES) is None
    assert apply_transformation(SetFeatures.of({"spread": False}), word, 0, FEATURES) == ("b",)


def test_a_bundle_of_several_tokens_names_none_but_the_token_itself():
    inventory = Inventory(FEATURES)
    assert inventory.resolve("x", (("cont", True),)) == "x"
    assert inventory.resolve("k", (("cont", True),)) is None  # x or y: no single token


def test_agree_takes_the_values_of_a_neighbour_or_a_tier_token():
    place = Agree(("cor", "dors", "lab"), 1)
    word = tagged("a", "n", "b", "a", "n", "k", "n")
    assert apply_transformation(place, word, 1, FEATURES) == ("m",)
    assert apply_transformation(place, word, 4, FEATURES) == ("ŋ",)
    # Past the word's end, and from a vowel (no place: no placeless nasal): no.
    assert apply_transformation(place, word, 6, FEATURES) is None
    assert apply_transformation(place, tagged("n", "a"), 0, FEATURES) is None
    # From a token with no features: no.
    assert apply_transformation(place, tagged("n", "z"), 0, FEATURES) is None
    harmony = Agree(("back",), -1, "vowel")
    assert apply_transformation(harmony, tagged("a", "t", "e"), 2, FEATURES) == ("a",)
    assert apply_transformation(harmony, tagged("e", "t", "a"), 2, FEATURES) == ("e",)
    # No vowel before: no.
    assert apply_transformation(harmony, tagged("t", "a"), 1, FEATURES) is None


def test_inclusive_tier_tests_count_the_position_itself():
    last_back = TierIs("vowel", "back", -1, True)
    before_back = TierIs("vowel", "back", -1)
    elma = tagged("e", "t", "m", "a")
    kedi = tagged("a", "t", "e", "t")
    assert eval_predicate(last_back, elma, 3, FEATURES)
    assert not eval_predicate(before_back, elma, 3, FEATURES)
    assert not eval_predicate(last_back, kedi, 3, FEATURES)
    assert eval_predicate(TierIs("vowel", "back", 2, True), tagged("a", "t", "a"), 0, FEATURES)
    assert not eval_predicate(TierIs("vowel", "back", 2), tagged("a", "t", "a"), 0, FEATURES)
    # The start position has no token to include.
    assert eval_predicate(TierIs("vowel", BOUNDARY, -1, True), elma, START, FEATURES)
    assert eval_predicate(TierIs("vowel", "back", 2, True), tagged("a", "a"), START, FEATURES)


def test_a_program_in_features_runs_alike_word_by_word_and_on_many_words():
    program = Program(
        (
            Pass(
                (
                    Rule((Is("nas", 0),), Agree(("cor", "dors", "lab"), 1)),
                    Rule((IsToken(BOUNDARY, 1),), SetFeatures.of({"voice": False})),
                    Rule((IsToken(BOUNDARY, 1), TierIs("vowel", "back", -1, True)), Agree(("back",), -1, "vowel")),
                )
            ),
        )
    )
    words = [tuple(w) for w in ("anbag", "enkad", "ante", "abe", "tanz")]
    expected = [tuple(w) for w in ("ambak", "eŋkat", "ante", "abe", "tanz")]
    assert [run(program, w, FEATURES) for w in words] == expected
    assert run_many(program, words, FEATURES) == expected


# ------------------------------------------------------------------ learning feature rules

DATA = Path(__file__).resolve().parent.parent / "data"


def data_pairs(name: str) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """The word pairs of a TSV of data/ (space-separated tokens, # comments)."""
    pairs = []
    for line in (DATA / name).read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            source, target = line.split("\t")
            pairs.append((tuple(source.split()), tuple(target.split())))
    return pairs


def data_features(name: str) -> dict[str, dict[str, bool]]:
    return json.loads((DATA / name).read_text(encoding="utf-8"))


def predict(program: Program, text: str, features: dict[str, dict[str, bool]]) -> str:
    return " ".join(run(program, tuple(text.split()), features))


@functools.cache
def learned(tsv: str, features: str, variant: str) -> LearnResult:
    """The program learned with feature rules from a data/ TSV and its features file,
    once per session: several tests read the same model (`auto`'s folds in LEARN_JOBS
    processes)."""
    options = Options(variant=variant, feature_rules=True)
    return learn(data_pairs(tsv), data_features(features), options, jobs=LEARN_JOBS)


def test_final_devoicing_reaches_voiced_obstruents_never_seen():
    pairs = data_pairs("devoicing.tsv")
    features = data_features("devoicing-features.json")
    seen = {tok for source, target in pairs for tok in source + target}
    assert not {"v", "ʒ"} & {tok for source, _ in pairs for tok in source[-2:]}
    assert "ʒ" not in seen
    result = learned("devoicing.tsv", "devoicing-features.json", "feature")
    assert result.train_correct == result.train_total
    assert any(isinstance(rule.transformation, SetFeatures) for p in result.program.passes for rule in p.rules)
    assert predict(result.program, "l ɔ v ə", features) == "l ɔ f"
    assert predict(result.program, "g a r aː ʒ ə", features) == "g a r aː ʃ"
    # Not before the plural's -n, nor a sonorant.
    assert predict(result.program, "n ɛ r v ə n", features) == "n ɛ r v ə"
    assert predict(result.program, "z ɔ l ə", features) == "z ɔ l"


def test_final_devoicing_is_the_program_auto_picks():
    features = data_features("devoicing-features.json")
    result = learned("devoicing.tsv", "devoicing-features.json", "auto")
    assert result.variant == "feature"
    assert predict(result.program, "g a r aː ʒ ə", features) == "g a r aː ʃ"


def test_english_past_reads_final_sounds_by_their_features():
    pairs = data_pairs("english-past.tsv")
    features = data_features("english-features.json")
    assert not {"z", "ð"} & {tok for source, _ in pairs for tok in source}
    result = learned("english-past.tsv", "english-features.json", "feature")
    assert predict(result.program, "b ʌ z", features) == "b ʌ z d"
    assert predict(result.program, "b r iː ð", features) == "b r iː ð d"
    assert predict(result.program, "m ɪ k s", features) == "m ɪ k s t"
    assert predict(result.program, "p l æ n t", features) == "p l æ n t ɪ d"


@pytest.mark.parametrize("variant", ["feature", "auto"])
def test_turkish_plural_follows_the_last_vowel(variant):
    pairs = data_pairs("turkish-plural.tsv")
    features = data_features("turkish-features.json")
    assert all(not features[source[-1]]["vowel"] for source, _ in pairs)
    result = learned("turkish-plural.tsv", "turkish-features.json", variant)
    assert predict(result.program, "e l m a", features) == "e l m a l a r"
    assert predict(result.program, "m a s a", features) == "m a s a l a r"
    assert predict(result.program, "k a h v e", features) == "k a h v e l e r"
    assert result.program.rule_count <= 2


def test_a_change_of_features_is_one_candidate_for_every_token_pair():
    # z -> s, b -> p, g -> k and d -> t: one SetFeatures([-voice]), right at each.
    pairs = [(tuple(w), tuple(w[:-1]) + (d,)) for w, d in (("aaz", "s"), ("ab", "p"), ("ag", "k"), ("ad", "t"))]
    features = {
        **FEATURES,
        "z": {"cor": True, "cont": True, "voice": True},
        "s": {"cor": True, "cont": True},
    }
    examples = [ex for source, target in pairs for ex in tagged_examples(tagged(*source), target, features, "global")]
    need = [k for k, ex in enumerate(examples) if ex.output != ex.identity_output]
    found = feature_transformations(examples, need, features, 2, ("vowel",), Deadline())
    devoice = SetFeatures.of({"voice": False})
    right, applies = found[devoice]
    assert {k for k in need if right >> k & 1} == set(need)
    # It does not apply to the vowels.
    assert not any(applies >> k & 1 for k, ex in enumerate(examples) if ex.token_at(0) == "a")


# ------------------------------------------------------------------ the whole inventory


def test_every_token_of_a_features_file_is_known_to_the_model():
    """English past through `apply`: z and ð are in the features file only, and the
    compiled model reads them by their features (not as `<unk>`)."""
    pairs = data_pairs("english-past.tsv")
    model = api.learn(
        [(" ".join(s), " ".join(t)) for s, t in pairs], features=DATA / "english-features.json", variant="feature"
    )
    assert {"z", "ð", "ʒ"} <= set(model.alphabet)
    pair = next(iter(model.pairs.values()))
    assert pair.predict(("b", "ʌ", "z")) == ("b", "ʌ", "z", "d")
    assert pair.predict(("b", "r", "iː", "ð")) == ("b", "r", "iː", "ð", "d")
    assert pair.interpret(("b", "ʌ", "z"), model.features) == ("b", "ʌ", "z", "d")
    # A token that no features file names stays unknown, as before.
    assert pair.map_unknown(("b", "ʌ", "q")) == ("b", "ʌ", UNK)


# ------------------------------------------------------------------ fewer, broader rules


def test_no_rule_of_a_learned_pass_is_redundant_on_its_training_rows():
    """With feature rules the pass keeps no rule whose rows the others answer as well
    (English past: "-t after a voiceless non-coronal" went, "-t at the end" stayed)."""
    pairs = data_pairs("english-past.tsv")
    features = data_features("english-features.json")
    program = learned("english-past.tsv", "english-features.json", "feature").program
    assert len(program.passes) == 1
    rules = program.passes[0].rules

    def right(kept: tuple[Rule, ...]) -> int:
        shorter = Program((Pass(kept),))
        return sum(run(shorter, source, features) == target for source, target in pairs)

    assert right(rules) == len(pairs)
    for k in range(len(rules)):
        assert right(rules[:k] + rules[k + 1 :]) < len(pairs), f"rule {k} is redundant: {rules[k]}"


def test_features_derived_from_ipa_are_the_inventory_the_program_is_learned_with():
    """IPA data with no features file: the feature variant's SetFeatures must resolve
    over the same features at apply time as in learning, and tier tests read
    backness (Finnish-like harmony of an inclusive last vowel)."""
    every = {"a": {"vowel": True, "ipa.back": True}, "e": {"vowel": True}, "t": {"vowel": False}}
    underived = {tok: {n: v for n, v in f.items() if not n.startswith("ipa.")} for tok, f in every.items()}
    opts, feats = configured(Options(variant="feature", feature_rules=True), every, underived)
    assert feats is every and not opts.derived_tests
    opts, feats = configured(Options(variant="feature", feature_rules=False), every, underived)
    assert feats is underived and opts.derived_tests
    pairs = [
        (tuple(w), tuple(w) + ("s", "a" if back else "e"))
        for w, back in (("tat", True), ("tet", False), ("ta", True), ("te", False), ("tatt", True), ("tett", False))
    ]
    result = learn(pairs, every, Options(variant="token", feature_rules=True))
    assert "ipa.back" in str(result.program)
    assert run(result.program, tuple("teta"), every) == tuple("tetasa")
    assert run(result.program, tuple("tate"), every) == tuple("tatese")


# ------------------------------------------------------------------ through the compiled model


def compiled_pair(tsv: str, features: str, variant: str):
    """The compiled model of a data/ TSV with its features file, and its one pair."""
    rows = [line.split("\t") for line in (DATA / tsv).read_text(encoding="utf-8").splitlines()]
    problem = with_features(
        read_pairs([row for row in rows if len(row) == 2 and not row[0].startswith("#")]),
        load_features(DATA / features), features,
    )
    model = learn_model(problem, Options(variant=variant))
    return model, next(iter(model.pairs.values()))


@pytest.mark.parametrize(
    "tsv, features, words",
    [
        (
            "devoicing.tsv", "devoicing-features.json",
            {"l ɔ v ə": "l ɔ f", "g a r aː ʒ ə": "g a r aː ʃ", "n ɛ r v ə n": "n ɛ r v ə"},
        ),
        (
            "turkish-plural.tsv", "turkish-features.json",
            {"e l m a": "e l m a l a r", "m a s a": "m a s a l a r", "k a h v e": "k a h v e l e r"},
        ),
    ],
)
def test_feature_rules_apply_through_the_compiled_tables(tsv, features, words):
    model, pair = compiled_pair(tsv, features, "feature")
    for source, target in words.items():
        word = tuple(source.split())
        assert " ".join(pair.predict(word)) == target
        assert pair.interpret(word, model.features) == pair.predict(word)


# ------------------------------------------------------------------ tokens never seen in training

# Final devoicing written in the features derived from IPA (no features file): the
# plural's -ə goes, then a final obstruent loses its voice.
DEVOICING_IN_IPA = Program(
    (
        Pass((Rule((IsToken("ə", 0), IsToken(BOUNDARY, 1)), dsl.Delete()),)),
        Pass((Rule((dsl.Not(Is("ipa.son", 0)), IsToken(BOUNDARY, 1)), SetFeatures.of({"ipa.voi": False})),)),
    )
)


@pytest.fixture(scope="module")
def ipa_devoicing(tmp_path_factory):
    """The devoicing program compiled over data/devoicing.tsv's tokens with features
    derived from IPA (no features file), saved; and that model."""
    from fstsynth.learning import compile_model
    from fstsynth.model_file import save_model

    problem = read_pairs([[" ".join(s), " ".join(t)] for s, t in data_pairs("devoicing.tsv")])
    model = compile_model({(0, 1): DEVOICING_IN_IPA}, problem)
    directory = tmp_path_factory.mktemp("unseen") / "devoicing"
    save_model(model, directory)
    return model, directory


def test_a_token_never_seen_is_read_by_its_ipa_features(ipa_devoicing):
    model, _ = ipa_devoicing
    pair = model.only_pair()
    assert "ʒ" not in model.alphabet and "ɣ" not in model.alphabet and "ʃ" in model.alphabet
    assert pair.features_of_unseen(["ʒ"]) is not None
    # SetFeatures maps the unseen ʒ to the trained ʃ; a non-final one keeps itself.
    assert model.apply("g a r aː ʒ ə") == "g a r aː ʃ"
    assert model.apply("garaːʒə") == "garaːʃ"
    assert model.apply("ʒ ɔ b ə") == "ʒ ɔ p"
    words = [tuple(w.split()) for w in ("g a r aː ʒ ə", "ʒ ɔ b ə", "r aː d ə")]
    assert pair.predict_many(words) == [pair.predict(w) for w in words]
    assert pair.predict_texts(words) == ["g a r aː ʃ", "ʒ ɔ p", "r aː t"]
    assert [pair.interpret(w, model.features) for w in words] == pair.predict_many(words)
    # No voiceless partner of ɣ among the trained tokens (x is not one): it becomes the
    # IPA segment devoiced ɣ is, which the model never saw either.
    assert "x" not in model.alphabet
    assert model.apply("t aː ɣ ə") == "t aː x"
    assert pair.interpret(("t", "aː", "ɣ", "ə"), model.features) == ("t", "aː", "x")


def test_an_unseen_token_never_matches_a_trained_token():
    """IsToken("z") does not hold of an unseen token with z's derived bundle."""
    program = Program((Pass((Rule((IsToken("z", 0),), dsl.ReplaceBy("z", ("s",))),)),))
    problem = read_pairs([["z a", "s a"], ["b a", "b a"], ["s a", "s a"]])
    from fstsynth.learning import compile_model

    pair = compile_model({(0, 1): program}, problem).only_pair()
    assert pair.features_of_unseen(["ʒ"]) is not None
    assert pair.predict(("ʒ", "a", "z")) == ("ʒ", "a", "s")


def test_a_token_with_no_ipa_reading_is_read_as_unk(ipa_devoicing):
    model, _ = ipa_devoicing
    pair = model.only_pair()
    assert pair.features_of_unseen(["Q"]) is None and pair.features_of_unseen(["ʒ", "☃"]) is None
    for word in (("t", "aː", "Q", "ə"), ("ʒ", "aː", "☃", "ə")):
        read, features = pair.reading(word)
        assert UNK in read and features is model.features
        assert pair.predict(word) == word[:-1]
        assert pair.interpret(word, model.features) == word[:-1]


def test_with_a_features_file_a_token_outside_it_stays_unk():
    model, pair = compiled_pair("devoicing.tsv", "devoicing-features.json", "token")
    assert "ɣ" not in model.alphabet
    assert pair.features_of_unseen(["ɣ"]) is None
    assert pair.reading(("t", "aː", "ɣ", "ə"))[0] == ("t", "aː", UNK, "ə")


def _main() -> None:
    from fstsynth.__main__ import main

    main()


def _apply_cli(model_dir: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess:
    """`fstsynth apply MODEL_DIR ARGS` as `python -m fstsynth` runs it, in a child forked
    from this process (tests/forked.py): a new interpreter would spend seconds importing
    lingpy, which reading an unseen token by its IPA features imports."""
    argv = ["fstsynth", "apply", str(model_dir), *args]
    code, out, err = run_forked(_main, argv, stdin.encode(), dict(os.environ, PYTHONPATH=str(DATA.parent)))
    return subprocess.CompletedProcess(argv, code, out, err)


def test_apply_reads_unseen_tokens_by_their_features_and_says_so(ipa_devoicing):
    _, directory = ipa_devoicing
    proc = _apply_cli(directory, "--check", "g a r aː ʒ ə", "t aː Q ə", "r aː d ə")
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout.decode() == "g a r aː ʃ\nt aː Q\nr aː t\n"
    warning = proc.stderr.decode()
    assert "read by their IPA features: ʒ (1 word)" in warning
    assert "Q (1 word)" in warning and "ʒ (1 word)" not in warning.split("read by their IPA features")[0]
    trace = _apply_cli(directory, "--trace", "g a r aː ʒ ə")
    assert trace.returncode == 0 and "ʃ" in trace.stdout.decode()


@pytest.mark.parametrize("ascii_lines", [True, False])
def test_the_byte_path_reads_unseen_tokens_as_the_line_path_does(ipa_devoicing, ascii_lines):
    _, directory = ipa_devoicing
    common = "b a g ə" if ascii_lines else "t aː g ə"
    lines = [common] * 300 + ["g a r aː ʒ ə", "t aː Q ə", "ʒ ɔ b ə"]
    proc = _apply_cli(directory, stdin="".join(line + "\n" for line in lines))
    assert proc.returncode == 0, proc.stderr.decode()
    by_line = _apply_cli(directory, *lines[-4:])
    assert proc.stdout.decode().splitlines()[-4:] == by_line.stdout.decode().splitlines()
    assert by_line.stdout.decode().splitlines()[-3:] == ["g a r aː ʃ", "t aː Q", "ʒ ɔ p"]


def test_devoicing_learned_without_a_features_file_reaches_unseen_segments(tmp_path):
    """Learned from data/devoicing.tsv alone (features derived from IPA): `ʒ` never
    occurs in training and `v` never word-finally; both come out devoiced."""
    from fstsynth.model_file import save_model

    problem = read_pairs([[" ".join(s), " ".join(t)] for s, t in data_pairs("devoicing.tsv")])
    model = learn_model(problem, jobs=LEARN_JOBS)
    assert "ʒ" not in model.alphabet
    assert [model.apply(w) for w in ("garaːʒə", "l ɔ v ə", "n ɛ r v ə n")] == ["garaːʃ", "l ɔ f", "n ɛ r v ə"]
    save_model(model, tmp_path / "m")
    proc = _apply_cli(tmp_path / "m", "--check", "g a r aː ʒ ə")
    assert proc.returncode == 0 and proc.stdout.decode() == "g a r aː ʃ\n", proc.stderr.decode()
    assert "<unk>" not in proc.stderr.decode() and "read by their IPA features: ʒ (1 word)" in proc.stderr.decode()


def _devoicing_without(*tokens: str) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """data/devoicing.tsv without the pairs holding any of `tokens`."""
    return [(s, t) for s, t in data_pairs("devoicing.tsv") if not set(tokens) & (set(s) | set(t))]


def test_written_by_names_the_ipa_segment_a_change_writes():
    """`f` is what `v` devoiced is, though no word shows it; `l` and `ŋ` have no
    voiceless twin written with a letter of their own (`l̥`, `ŋ̊` are not proposed), and
    `d` has `t`."""
    from fstsynth.features import written_by
    from fstsynth.learning import inventory

    _alphabet, features = inventory(read_pairs([["l ɔ v ə", "l ɔ v ə"], ["d ɪ ŋ ə", "t ɪ ŋ ə"]]))
    devoiced = (("ipa.voi", False),)
    assert sorted(written_by(features, [devoiced])) == ["f"]
    assert written_by(features, [devoiced])["f"]["ipa.voi"] is False
    assert written_by({"v": {"voice": True}}, [(("voice", False),)]) == {}  # a features file says it all


@pytest.fixture(scope="module")
def devoicing_without_f():
    """The model learned (default options, features derived from IPA) from
    data/devoicing.tsv without the pairs holding `f`, plus a held-out row `l ɔ v ə`."""
    rows = [[" ".join(s), " ".join(t)] for s, t in _devoicing_without("f")] + [["l ɔ v ə", "?"]]
    return learn_model(read_pairs(rows), jobs=LEARN_JOBS)


def test_a_learned_devoicing_writes_segments_no_word_shows(devoicing_without_f):
    """`f` is in no word; `v` is (never word-finally): the model learned with a held-out
    row ending in `v ə` writes `f` there, through the tables and the interpreter alike."""
    pairs = _devoicing_without("f")
    model = devoicing_without_f
    assert "f" in model.alphabet
    pm = model.only_pair()
    assert pm.predict(("l", "ɔ", "v", "ə")) == ("l", "ɔ", "f")
    assert pm.interpret(("l", "ɔ", "v", "ə"), model.features) == ("l", "ɔ", "f")
    # Every training word comes out as without `f`.
    assert pm.train_correct == len(pairs)


def test_an_unseen_segment_becomes_the_ipa_segment_the_change_writes(devoicing_without_f):
    """Neither `ð` nor `θ` in training (nor `β`, `ɸ`): `ð` is read by its IPA features,
    and devoiced it is `θ`, which the model does not know either; tokens it knows map
    as before."""
    model = devoicing_without_f
    pm = model.only_pair()
    assert "SetFeatures" in str(pm.program)
    assert not {"ð", "θ", "β", "ɸ"} & set(model.alphabet)
    for word, want in [("l ɔ ð ə", "l ɔ θ"), ("l ɔ ð ə n", "l ɔ ð ə"), ("h aː z ə", "h aː s"), ("ð ɛ l ə", "ð ɛ l"),
                       ("l ɔ β ə", "l ɔ ɸ")]:
        tokens = tuple(word.split())
        assert " ".join(pm.predict(tokens)) == want
        assert " ".join(pm.interpret(tokens, model.features)) == want


def test_written_by_writes_a_lengthened_segment_with_the_length_mark():
    """Lengthening (a total assimilation, `h aː z` -> `h aː zː ɒ l`) writes `ʃː` for a
    `ʃ` no word shows long: the length mark is what `[+long]` adds in IPA."""
    from fstsynth.features import written_by
    from fstsynth.learning import inventory

    _alphabet, features = inventory(read_pairs([["h aː z ʃ", "h aː zː ʃ"], ["n ɒ p", "n ɒ pː"]]))
    assert sorted(written_by(features, [(("ipa.long", True),)])) == ["hː", "nː", "ɒː", "ʃː"]


def test_written_by_lengthens_a_segment_panphon_writes_in_two_mark_orders():
    """panphon has `dˤː` and `dːˤ`, one segment in two spellings: lengthened, `dˤ` is
    `dˤː` (the token as written, the length mark after it), not no segment at all for
    want of one guess (Arabic's article: `dˤ a w ʔ` -> `ʔ a dˤː a w ʔ`)."""
    from fstsynth.features import written_by
    from fstsynth.learning import inventory

    _alphabet, features = inventory(read_pairs([["s a", "sː a"], ["dˤ a", "dˤ a"], ["ðˤ a", "ðˤ a"]]))
    written = written_by(features, [(("ipa.long", True),)])
    assert "dˤː" in written and "ðˤː" in written
    assert "dːˤ" not in written and "ðːˤ" not in written


def test_written_by_lengthens_only_a_class_the_words_show_long():
    """Where the words show only vowels long (Hungarian `-nak` lengthens a final `ɒ` to
    `aː`), `[+long]` writes no long consonant: the inventory keeps it to vowels, as it
    did before the length mark was written (`n ɒ p` -> `n ɒ p n ɒ k`, not `pː`)."""
    from fstsynth.features import WithUnseen, inventory as feature_inventory, read_by_ipa, written_by
    from fstsynth.learning import inventory

    _alphabet, features = inventory(read_pairs([["k ɒ", "k aː"], ["n ɛ t", "n eː t"]]))
    written = written_by(features, [(("ipa.long", True),)])
    assert written and all(t.rstrip("ː") in ("ɒ", "ɛ") for t in written)
    unseen = read_by_ipa(["p"], features)
    assert unseen is not None
    assert feature_inventory(WithUnseen(features, unseen)).resolve("p", (("ipa.long", True),)) is None


def test_written_by_writes_a_mark_the_words_write_the_same_change_with():
    """Romanian plurals palatalize a final consonant, `n` -> `nʲ`, `p` -> `pʲ`: the words
    write `[+hi]` of a consonant with `ʲ`, so `b` and `v` palatalized are `bʲ`, `vʲ`,
    though no word shows them. Where no word writes a change with a mark (`t` ->
    `t͡sʲ` alone: `t͡sʲ` is no known token with a mark added), none is written."""
    from fstsynth.features import written_by
    from fstsynth.learning import inventory

    palatalized = (("ipa.hi", True),)
    _alphabet, features = inventory(
        read_pairs([["b u n", "b u nʲ"], ["s k u m p", "s k u m pʲ"], ["v e s e l", "v e s e lʲ"], ["l a t", "l a t"]])
    )
    written = written_by(features, [palatalized])
    assert {"bʲ", "vʲ", "tʲ"} <= set(written)
    _alphabet, features = inventory(read_pairs([["b u t", "b u t͡sʲ"], ["v a t", "v a t͡sʲ"]]))
    assert not {"bʲ", "vʲ"} & set(written_by(features, [palatalized]))


def test_a_palatalization_learned_from_other_consonants_reaches_unseen_ones():
    """Learned from final consonants palatalized (`b u n` -> `b u nʲ`), with `b` never
    final and `v` in no word: `a l b` -> `a l bʲ` (two held-out rows make `b` a known
    token) and `k a v` -> `k a vʲ` (read by its IPA features), through the tables
    and the interpreter alike."""
    rows = [["b u n", "b u nʲ"], ["s k u m p", "s k u m pʲ"], ["v e s e l", "v e s e lʲ"], ["o m", "o mʲ"],
            ["b o ɡ a t", "b o ɡ a tʲ"], ["p o r", "p o rʲ"], ["l u p", "l u pʲ"], ["d o m n", "d o m nʲ"],
            ["a l b", "?"], ["o r b", "?"]]
    model = learn_model(read_pairs(rows), jobs=LEARN_JOBS)
    pm = model.only_pair()
    for word, want in [("a l b", "a l bʲ"), ("o r b", "o r bʲ"), ("k a v", "k a vʲ")]:
        tokens = tuple(word.split())
        assert " ".join(pm.predict(tokens)) == want
        assert " ".join(pm.interpret(tokens, model.features)) == want



# Final consonants go; a vowel before a final nasal takes its nasal twin, shown for `a`
# alone (`l a n` -> `l ã`); `õ` and `ẽ` are vowels of other words.
_NASAL_ROWS = [["p a t a t", "p a t a"], ["k o d", "k o"], ["s i s", "s i"], ["m u k", "m u"], ["t e p", "t e"],
               ["b a l o t", "b a l o"], ["r i d", "r i"], ["l a n", "l ã"], ["b õ t", "b õ"], ["ʃ ẽ d", "ʃ ẽ"]]


@pytest.mark.parametrize("variant", ["token", "auto"])
def test_a_token_change_from_one_row_reaches_the_other_vowels_of_its_trigger(variant):
    """From one row (`l a n` -> `l ã`) the token variant learns `a` -> `ã` two before
    the end; it is made the change of the class with the neighbour that has the value
    it sets tested (`[+vowel -nas] -> [+nas] / _ [+nas]`,
    `feature_changes.with_class_changes`): `r o n` -> `r õ`, `p e n` -> `p ẽ`, and a
    vowel before an oral consonant stays oral (`s o k` -> `s o`, as `k o d` -> `k o`
    in training)."""
    model = api.learn([(s, t) for s, t in _NASAL_ROWS], variant=variant)
    got = model.apply_many(["r o n", "p e n", "s o k", "m a n"])
    assert got == ["r õ", "p ẽ", "s o", "m ã"]


def test_a_class_change_leaves_the_cost_of_the_rules_it_keeps():
    """`LearnResult.cost` is the sum of the program's rule costs after the class change
    too (`solve` breaks ties between source columns by it; model.json reports it)."""
    from fstsynth.learning import inventory
    from fstsynth.synthesis.ranking import rule_cost

    pairs = read_pairs(_NASAL_ROWS)
    _alphabet, features = inventory(pairs)
    rows = [(tuple(s.split()), tuple(t.split())) for s, t in _NASAL_ROWS]
    result = learn(rows, features, Options(variant="token"))
    assert any(isinstance(r.transformation, dsl.SetFeatures) for p in result.program.passes for r in p.rules)
    rules = [r for p in result.program.passes for r in p.rules]
    assert result.cost == pytest.approx(sum(rule_cost(r, result.variant) for r in rules))


@pytest.mark.parametrize("oral_o", [False, True])
def test_a_token_change_becomes_its_class_change_unless_training_shows_the_class_kept(oral_o):
    """`a` -> `ã` before `n` (`l a n` -> `l ã n`) becomes `[+vowel -nas] -> [+nas] / _
    n` tested `[+nas]` too (`p e n` -> `p ẽ n`), unless a training row keeps another
    vowel oral there (`d o n` -> `d o n`): the rule stays the token's, and `p e n`
    stays as it is."""
    from fstsynth.learning import inventory
    from fstsynth.synthesis.feature_changes import with_class_changes

    rows = [["l a n", "l ã n"], ["b õ t", "b õ t"], ["p e t", "p e t"], ["ʃ ẽ d", "ʃ ẽ d"]]
    if oral_o:
        rows.append(["d o n", "d o n"])
    _alphabet, features = inventory(read_pairs(rows))
    program = Program((Pass((Rule((IsToken("n", 1),), dsl.ReplaceBy("a", ("ã",))),)),))
    sources = [tuple(s.split()) for s, _ in rows]
    wider = with_class_changes(program, sources, features)
    assert run_many(wider, sources, features) == [tuple(t.split()) for _, t in rows]
    assert run_many(wider, [("p", "e", "n")], features) == [("p", "e", "n") if oral_o else ("p", "ẽ", "n")]
    assert (wider == program) == oral_o


def test_a_token_change_reaches_the_tokens_of_its_manner_only():
    """`tː` -> `t` before `a` (a geminate stop shortened before a short vowel) becomes
    the change of the long stops, `kː` -> `k`, not of every long consonant: `sː` (a
    fricative) stays long."""
    from fstsynth.learning import inventory
    from fstsynth.synthesis.feature_changes import with_class_changes

    rows = [["a tː a", "a t a"], ["o kː o", "o kː o"], ["u sː u", "u sː u"], ["i k a", "i k a"], ["e s a", "e s a"]]
    _alphabet, features = inventory(read_pairs(rows))
    program = Program((Pass((Rule((IsToken("a", 1),), dsl.ReplaceBy("tː", ("t",))),)),))
    sources = [tuple(s.split()) for s, _ in rows]
    wider = with_class_changes(program, sources, features)
    assert wider != program
    assert run_many(wider, [("o", "kː", "a"), ("u", "sː", "a")], features) == [("o", "k", "a"), ("u", "sː", "a")]


@pytest.mark.parametrize("seed", range(8))
def test_class_changes_checked_on_the_words_they_reach_keep_what_a_check_of_every_word_keeps(seed, monkeypatch):
    """`with_class_changes` checks a wider rule on the training words it fires in only
    (`_reached`), those it reaches beyond the token rule first, a few before the rest:
    elsewhere the pass runs as before. Against the check of every word in order
    (`_reached` all of them), on random tables of nasal and oral vowels and consonants
    where the changes differ by row."""
    import random

    from fstsynth.learning import inventory
    from fstsynth.synthesis import feature_changes, learner

    rng = random.Random(seed)
    vowels, nasal_of = "aeiou", dict(zip("aeiou", "ãẽĩõũ"))
    rows = []
    for _ in range(12):
        word = [rng.choice("ptkbdgsmnlr"), rng.choice(vowels), rng.choice("ptkmnls")]
        out = list(word)
        if word[2] in "mn" and rng.random() < 0.8:
            out[1:] = [nasal_of[word[1]]]
        elif rng.random() < 0.3:
            out = out[:2]
        rows.append([" ".join(word), " ".join(out)])
    _alphabet, features = inventory(read_pairs(rows))
    pairs = [(tuple(s.split()), tuple(t.split())) for s, t in rows]
    monkeypatch.setattr(learner, "_with_class_changes", lambda result, *_args: result)
    program = learn(pairs, features, Options(variant="token")).program
    sources = [s for s, _ in pairs]
    reached = feature_changes.with_class_changes(program, sources, features)
    monkeypatch.setattr(feature_changes, "_reached", lambda _rule, _source, words, *_args: list(range(len(words))))
    assert feature_changes.with_class_changes(program, sources, features) == reached


# The class a learned class change (`with_class_changes`) tests: the fewest features
# that pick out the same tokens as its whole description.
# Two classes, three manner features, two features of a features file (so the table is
# no IPA-derived one: the tokens a model reads are the table's and a featureless one).
_CLASS_NAMES = ("vowel", "cons", DERIVED + "son", DERIVED + "voi", DERIVED + "nas", "high", "round")
_CLASS_CHANGEABLE = range(2, len(_CLASS_NAMES))


def _tests_at_zero(rule: Rule) -> tuple[tuple[str, bool], ...]:
    """The feature values `rule` tests the token at the position for."""
    found = []
    for pred in rule.predicates:
        inner = pred.predicate if isinstance(pred, Not) else pred
        if isinstance(inner, Is) and inner.offset == 0:
            found.append((inner.feature, not isinstance(pred, Not)))
    return tuple(found)


def _picked(values: tuple[tuple[str, bool], ...], bundles: frozenset[tuple[bool, ...]]) -> frozenset:
    at = {name: k for k, name in enumerate(_CLASS_NAMES)}
    return frozenset(b for b in bundles if all(b[at[n]] == v for n, v in values))


@st.composite
def _class_tables(draw: st.DrawFn) -> tuple[Features, str, str, str]:
    """A random feature table; a token `a` of one class, `b` it becomes by a change of
    one feature (the only token with that bundle), and a neighbour `n` with the value
    the change sets."""
    bundle = st.tuples(*[st.booleans()] * len(_CLASS_NAMES))
    a_bundle = draw(bundle.filter(lambda b: b[0] != b[1]))
    changed = draw(st.sampled_from(list(_CLASS_CHANGEABLE)))
    b_bundle = tuple(not v if k == changed else v for k, v in enumerate(a_bundle))
    n_bundle = draw(bundle.filter(lambda b: b[changed] == b_bundle[changed]))
    others = draw(st.lists(bundle, max_size=14))
    bundles = list(dict.fromkeys([a_bundle, b_bundle, n_bundle, *others]))
    features = {f"t{k}": dict(zip(_CLASS_NAMES, b)) for k, b in enumerate(bundles)}
    return features, "t0", "t1", f"t{bundles.index(n_bundle)}"


@settings(max_examples=60, deadline=None)
@given(_class_tables())
def test_a_class_change_tests_the_fewest_features_that_pick_out_its_class(table):
    """Over random feature tables, the class `[a's class, a's values of the changed
    features, a's manner]` of a class change is tested by the fewest of those values
    that pick out the same tokens of the table (and a token with no features), seen or
    not: no fewer values do, and of as many, none with fewer features derived from IPA."""
    features, a, b, n = table
    program = Program((Pass((Rule((IsToken(n, 1),), ReplaceBy(a, (b,))),)),))
    sources = [(a, n)]
    wider = with_class_changes(program, sources, features)
    (rule,) = wider.passes[0].rules
    assert isinstance(rule.transformation, SetFeatures)
    assert run_many(wider, sources, features) == run_many(program, sources, features)
    # The whole description, as the class change makes it.
    (changed, _value), = rule.transformation.values
    values = dict(zip(_CLASS_NAMES, features[a].values()))
    klass = "vowel" if values["vowel"] else "cons"
    manner = tuple(name for name in MANNER_FEATURES if name in _CLASS_NAMES and name != changed)
    whole = ((klass, True), (changed, values[changed]), *((name, values[name]) for name in manner))
    tested = _tests_at_zero(rule)
    assert set(tested) <= set(whole)
    bundles = readable_bundles(features, _CLASS_NAMES)
    assert _picked(tested, bundles) == _picked(whole, bundles)
    derived = sum(name.startswith(DERIVED) for name, _ in tested)
    for size in range(len(tested) + 1):
        for chosen in combinations(whole, size):
            if _picked(chosen, bundles) == _picked(whole, bundles):
                assert size == len(tested)
                assert sum(name.startswith(DERIVED) for name, _ in chosen) >= derived


def test_a_nasalized_vowel_class_is_written_by_the_features_that_tell_it_apart():
    """`a` -> `ã` before `n` becomes `[+vowel -nas +voi] -> [+nas] / _ [+nas]`: over
    every IPA segment a model derived from IPA reads (voiceless vowels among them), no
    other manner feature tells the oral voiced vowels from the rest."""
    tokens = ["l", "a", "n", "ã", "b", "o", "õ", "t"]
    features = with_ipa_features(with_vowel_classes({}, tokens), tokens)
    program = Program((Pass((Rule((IsToken("n", 1),), ReplaceBy("a", ("ã",))),)),))
    wider = with_class_changes(program, [("l", "a", "n"), ("b", "o", "t")], features)
    (rule,) = wider.passes[0].rules
    assert rule.predicates == (
        IsToken("n", 1),
        Is("vowel", 0),
        Not(Is(DERIVED + "nas", 0)),
        Is(DERIVED + "voi", 0),
        Is(DERIVED + "nas", 1),
    )
