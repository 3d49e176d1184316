from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fstsynth.alignment import (
    START,
    align_pair,
    examples_from_alignment,
    examples_from_pair,
)
from fstsynth.alignment_affinity import learn_affinity
from fstsynth.features import is_vowel, with_vowel_classes


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


@pytest.mark.parametrize("mode", ["global", "local"])
@pytest.mark.parametrize(
    "source, target",
    [
        ("p e r r o", "p e r o"),
        ("t i e r r a", "t j e r a"),
        ("a r r", "a r"),
        ("r r a", "r a"),
        ("b e l l o", "b e ʝ o"),
        ("s e l l a", "s e ʝ a"),
        ("k a l l e s s", "k a ʝ e s"),
        ("a a a", "a"),
    ],
)
def test_a_reduced_run_of_one_token_deletes_its_first_and_keeps_the_rest(source, target, mode):
    # Which of two identical tokens is deleted scores the same either way; the aligner's
    # choice varies with the rest of the word, so it is fixed here: the last is kept.
    src, tgt = source.split(), target.split()
    out = outputs(source, target, mode)
    for k in range(1, len(src)):
        if src[k] == src[k - 1] and out[k - 1]:
            assert out[k], f"{source} -> {target}: {out}"
    assert " ".join(o for _, o in sorted(out.items()) if o) == " ".join(tgt)


@pytest.mark.parametrize("mode", ["global", "local"])
def test_an_accented_letter_aligns_with_its_plain_letter(mode):
    # u and é are both vowels, so u:e and é:e tie as plain vowel pairs; the tie broken
    # toward u:e, é:- teaches that é is deleted.
    assert outputs("n e u q u é n", "n e u k e n", mode)[5] == "e"
    assert outputs("n e u q u é n", "n e u k e n", mode)[4] == ""


def test_tokens_that_are_only_diacritics_share_no_letter():
    # Acute and grave as tokens of their own (stress marks): no letter in common, so
    # they score as two different non-vowels, not as one letter with two accents.
    from fstsynth.alignment import SAME_BASE, token_scorer

    acute, grave = "\u0301", "\u0300"
    assert token_scorer([acute], [grave], frozenset(), ())[(acute, grave)] == -0.3
    assert token_scorer(["é"], ["e"], frozenset({"é", "e"}), ())[("é", "e")] == SAME_BASE


@pytest.mark.parametrize(
    "source, target, affinity",
    [
        ("a c e r q u e", "a s e ɾ k e", {("c", "k"): 0.65, ("c", "s"): 0.5, ("r", "ɾ"): 0.8}),
        ("e q u i v o c o", "e k i b o k o", {("c", "k"): 0.65, ("v", "b"): 0.8}),
    ],
)
def test_a_partnered_target_prefers_a_source_token_of_its_own_class(source, target, affinity):
    # k has a learned partner (c), so q:k and u:k score alike; q:k, u:- must win
    # in every word, or `qu` -> `k` is learned twice, once per way of aligning it.
    src, tgt = tuple(source.split()), tuple(target.split())
    exs = examples_from_pair(src, tgt, with_vowel_classes({}, src + tgt), affinity=affinity)
    out = {e.position: " ".join(e.output) for e in exs}
    q = src.index("q")
    assert (out[q], out[q + 1]) == ("k", "")


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


# An invented script (Greek capitals) and its transcription: each letter is one
# sound, a final consonant without "Ω" takes an inherent "a", "Ω" is silent.
SCRIPT_PAIRS = [
    (tuple("ΒΔΩ"), ("b", "d")),
    (tuple("ΔΒ"), ("d", "a", "b", "a")),
    (tuple("ΒΚΩ"), ("b", "k")),
    (tuple("ΚΔ"), ("k", "a", "d", "a")),
    (tuple("ΔΚΩ"), ("d", "k")),
]


def test_affinity_links_each_letter_to_its_sound():
    affinity = learn_affinity(SCRIPT_PAIRS, {})
    for letter, sound in [("Β", "b"), ("Δ", "d"), ("Κ", "k")]:
        best = max((v, y) for (x, y), v in affinity.items() if x == letter)
        assert best[1] == sound
    assert all(x != y for x, y in affinity)


def test_affinity_makes_the_silent_sign_a_deletion():
    affinity = learn_affinity(SCRIPT_PAIRS, {})
    examples = examples_from_pair(tuple("ΔΒ"), ("d", "a", "b", "a"), {}, "global", affinity, False)
    outputs = {e.position: e.output for e in examples}
    assert outputs == {-1: (), 0: ("d", "a"), 1: ("b", "a")}
    examples = examples_from_pair(tuple("ΒΔΩ"), ("b", "d"), {}, "global", affinity, False)
    assert [e.output for e in examples] == [(), ("b",), ("d",), ()]


def test_equal_length_transcription_is_not_forced_one_to_one():
    # Three letters, three sounds, but "ΔΩ" + inherent vowel: not position by position.
    affinity = learn_affinity(SCRIPT_PAIRS, {})
    columns = align_pair(tuple("ΒΔΩ"), ("b", "a", "d"), {}, "global", affinity, one_to_one=False)
    assert (0, 0) in columns and (1, 2) in columns
    forced = align_pair(tuple("ΒΔΩ"), ("b", "a", "d"), {}, "global", affinity, one_to_one=True)
    assert forced == ((0, 0), (1, 1), (2, 2))


def test_token_map_pass_then_context_rules_learn_the_inherent_vowel():
    from fstsynth.interpreter import run
    from fstsynth.synthesis import Options, learn

    features = with_vowel_classes({}, [t for s, t in SCRIPT_PAIRS for t in s + t])
    result = learn(SCRIPT_PAIRS, features, Options(variant="feature"))
    assert result.train_correct == len(SCRIPT_PAIRS)
    first = result.program.passes[0]
    assert all(not r.predicates for r in first.rules)  # the context-free token map
    # A word never seen: the map and the inherent-vowel rule generalize.
    assert run(result.program, tuple("ΚΒ"), features) == ("k", "a", "b", "a")
    assert run(result.program, tuple("ΚΒΩ"), features) == ("k", "b")


def test_local_alignment_with_a_gap_in_its_core_keeps_every_token():
    # The best local match (b c _ d e / b c x d e) has a gap inside; the flanks after it
    # must start after the core's real tokens, not after its gaps.
    source, target = tuple("a b c x d e f".split()), tuple("z b c d e q".split())
    columns = align_pair(source, target, {}, "local")
    assert sorted(ci for ci, _ in columns if ci is not None) == list(range(len(source)))
    assert sorted(cj for _, cj in columns if cj is not None) == list(range(len(target)))
    assert (3, None) in columns and (6, 5) in columns


@pytest.mark.parametrize("word", ["kitap", "aaa", "r r a", "b o o k k e e p e r", "a - b", "ŋ ɪ ŋ ɪ"])
def test_a_word_equal_to_its_target_is_aligned_as_the_aligner_would(word):
    # align_pair skips the aligner for a word already equal to its target; this is
    # what the aligner itself gives such a word (no gap or mismatch to pay for).
    from fstsynth.alignment import _global

    tokens = tuple(word.split()) if " " in word else tuple(word)
    vowels = frozenset(t for t in tokens if is_vowel(t, {}))
    diagonal = tuple((k, k) for k in range(len(tokens)))
    assert _global(tokens, tokens, vowels) == diagonal
    assert align_pair(tokens, tokens, {}) == diagonal



# Plain and accented letters, IPA with combining marks, and a hyphen (lingpy's gap sign).
_TOKENS = ["a", "á", "e", "é", "i", "í", "u", "ü", "k", "q", "s", "t͡ʃ", "ɡ", "ʝ", "-"]


@st.composite
def _word_pairs(draw: st.DrawFn) -> tuple[tuple[str, ...], tuple[str, ...]]:
    # Words over a few tokens each, so that runs of one token and shared tokens are common.
    tokens = draw(st.lists(st.sampled_from(_TOKENS), min_size=1, max_size=4, unique=True))
    word = st.lists(st.sampled_from(tokens), max_size=7).map(tuple)
    return draw(word), draw(word)


_affinities = st.dictionaries(
    st.tuples(st.sampled_from(_TOKENS), st.sampled_from(_TOKENS)).filter(lambda p: p[0] != p[1]),
    st.floats(min_value=-0.3, max_value=0.9),
    max_size=4,
)


@settings(max_examples=150, derandomize=True, deadline=None, database=None)
@given(_word_pairs(), _affinities, st.sampled_from(["global", "local"]))
def test_every_alignment_keeps_both_words_in_order(pair, affinity, mode):
    source, target = pair
    features = with_vowel_classes({}, _TOKENS)
    columns = align_pair(source, target, features, mode, affinity)
    assert [i for i, _ in columns if i is not None] == list(range(len(source)))
    assert [j for _, j in columns if j is not None] == list(range(len(target)))
    exs = examples_from_pair(source, target, features, mode, affinity)
    assert [e.position for e in exs] == list(range(START, len(source)))
    assert tuple(t for e in exs for t in e.output) == target


def _shown(source, target, columns):
    return [
        (None if i is None else source[i], None if j is None else target[j]) for i, j in columns
    ]


def test_a_digraph_is_aligned_one_way_in_every_word():
    # n j -> њ: either n or j could take њ at the same score; the aligner once chose by
    # the rest of the word. The first takes it, the second is deleted, in every word.
    from fstsynth.alignment_affinity import learn_affinity

    words = ["konj:коњ", "njiva:њива", "banja:бања", "nos:нос", "jug:југ", "tanjir:тањир", "jazo:јазо"]
    table = dict(zip("konjivabsugtrz", "коњивабсугтрз"))
    table.update({"n": "н", "j": "ј"})
    pairs = [(tuple(a), tuple(b)) for a, b in (w.split(":") for w in words)]
    affinity = learn_affinity(pairs, {})
    for src, tgt in pairs:
        shown = _shown(src, tgt, align_pair(src, tgt, {}, "global", affinity, one_to_one=False))
        if "њ" in tgt:
            k = shown.index(("n", "њ"))
            assert shown[k + 1] == ("j", None), shown


def test_a_letter_written_as_two_takes_both():
    # я -> j a: the aligner matches я with a and leaves j inserted after the token
    # before (or at the start); `leads` gives the j to я in every word.
    from fstsynth.alignment import learn_leads
    from fstsynth.alignment_affinity import learn_affinity

    words = ["моя:moja", "яма:jama", "воля:volja", "мама:mama", "вода:voda", "ляля:ljalja", "лом:lom",
             "мой:moj", "йод:jod", "край:kraj", "вой:voj", "дай:daj"]
    pairs = [(tuple(a), tuple(b)) for a, b in (w.split(":") for w in words)]
    affinity = learn_affinity(pairs, {})
    leads = learn_leads(pairs, {}, "global", affinity)
    assert leads.lead.get(("я", "j"), 0) > 0.5
    for src, tgt in pairs:
        columns = align_pair(src, tgt, {}, "global", affinity, one_to_one=False, leads=leads)
        outputs = {e.position: e.output for e in examples_from_alignment(src, tgt, columns)}
        for k, tok in enumerate(src):
            if tok == "я":
                assert outputs[k] == ("j", "a"), (src, outputs)


def test_an_insertion_that_follows_a_token_more_often_is_left_to_it():
    # A prefix (ge-) is inserted at the start of every word: it follows the start more
    # often than it leads any letter, even one most words start with.
    words = ["slib:geslib", "sla:gesla", "sok:gesok", "klag:geklag", "sip:gesip"]
    for src, outputs in _outputs_with_leads(words):
        assert outputs[-1] == ("g", "e"), (src, outputs)


def _outputs_with_leads(words: list[str]) -> list[tuple[tuple[str, ...], dict[int, tuple[str, ...]]]]:
    """Each `source:target` word's outputs by position, aligned with the affinity and
    the leads learned from all of `words` (letters as tokens, no features)."""
    from fstsynth.alignment import learn_leads
    from fstsynth.alignment_affinity import learn_affinity

    pairs = [(tuple(a), tuple(b)) for a, b in (w.split(":") for w in words)]
    affinity = learn_affinity(pairs, {})
    leads = learn_leads(pairs, {}, "global", affinity)
    aligned = []
    for src, tgt in pairs:
        columns = align_pair(src, tgt, {}, "global", affinity, one_to_one=False, leads=leads)
        aligned.append((src, {e.position: e.output for e in examples_from_alignment(src, tgt, columns)}))
    return aligned


def _edge_outputs(rows: list[str]) -> dict[tuple[str, ...], dict[int, tuple[str, ...]]]:
    """Each source word's outputs by position, aligned as the learner aligns them."""
    from fstsynth.alignment import learn_leads
    from fstsynth.alignment_affinity import learn_affinity

    pairs = [(tuple(a.split()), tuple(b.split())) for a, b in (row.split(":") for row in rows)]
    affinity = learn_affinity(pairs, {})
    leads = learn_leads(pairs, {}, "global", affinity)
    found = {}
    for src, tgt in pairs:
        columns = align_pair(src, tgt, {}, "global", affinity, one_to_one=False, leads=leads)
        found[src] = {e.position: e.output for e in examples_from_alignment(src, tgt, columns)}
    return found


def test_a_prefix_token_stays_with_the_prefix_where_the_next_token_is_seen_only_after_it():
    # Swahili m- / wa-: both words with a ɡ start `m ɡ`, so the `a` of `w a-` leads every
    # ɡ seen; it is the prefix's all the same, at the same place from the word start in
    # every word starting with m, whatever follows.
    rows = ["m ɡ e n i:w a ɡ e n i", "m ɡ o n d͡ʒ w a:w a ɡ o n d͡ʒ w a", "m t u:w a t u",
            "m k u l i m a:w a k u l i m a", "m p i ʃ i:w a p i ʃ i", "m v u v i:w a v u v i",
            "m s i t͡ʃ a n a:w a s i t͡ʃ a n a", "k i t a b u:v i t a b u", "k i s u:v i s u",
            "k i k o m b e:v i k o m b e", "m w a l i m u:w a l i m u", "k i t u:v i t u"]
    found = _edge_outputs(rows)
    for src, outputs in found.items():
        if src[:2] == ("m", "ɡ"):
            assert outputs[0] == ("w", "a") and outputs[1] == ("ɡ",), (src, outputs)


def test_a_prefix_token_that_varies_with_the_next_token_goes_to_it():
    # Spanish in-: the nasal is m before p and b, n before t and d, ŋ before k: no
    # place from the word start predicts it, the first token does.
    rows = ["p o s i β l e:i m p o s i β l e", "p a ɾ:i m p a ɾ", "p u ɾ o:i m p u ɾ o",
            "b a l i ð o:i m b a l i ð o", "t o l e ɾ a n t e:i n t o l e ɾ a n t e",
            "k a p a θ:i ŋ k a p a θ", "k o m o ð o:i ŋ k o m o ð o", "d i ɣ n o:i n d i ɣ n o",
            "k o r e k t o:i ŋ k o r e k t o", "l e ɣ a l:i l e ɣ a l", "r e a l:i r e a l"]
    found = _edge_outputs(rows)
    for src, outputs in found.items():
        if src[0] == "p":
            assert outputs[-1] == ("i",) and outputs[0] == ("m", "p"), (src, outputs)


_TAGALOG_UM = ["t a j o:t u m a j o", "a l i s:u m a l i s", "k a n t a:k u m a n t a",
               "s u l a t:s u m u l a t", "l a b a s:l u m a b a s", "s i ɡ a w:s u m i ɡ a w",
               "u p o:u m u p o", "t a w a ɡ:t u m a w a ɡ", "l a k a d:l u m a k a d",
               "t a k b o:t u m a k b o", "a k j a t:u m a k j a t", "k a i n:k u m a i n",
               "ɡ a w a:ɡ u m a w a", "h a n a p:h u m a n a p", "p a s o k:p u m a s o k"]


def test_a_lead_seen_at_several_places_from_the_word_start_stays_with_its_token():
    # A one-token infix -m- (made up from Tagalog -um-, which is two tokens and kept
    # whole: the next test) before the root's first vowel, the second token or the
    # first: where a leads it, the m is a's in every word, not the word start's.
    found = _edge_outputs([row.replace("u m", "m") for row in _TAGALOG_UM])
    for src, outputs in found.items():
        first_a = src.index("a") if "a" in src else None
        if first_a is not None and first_a <= 1 and "u" not in src[:first_a]:
            assert outputs[first_a] == ("m", "a"), (src, outputs)


def test_an_infix_of_two_tokens_the_same_in_every_word_is_kept_whole():
    # Tagalog -um- after the root's first consonant, um- before a vowel. Its `m`, the
    # same in every word, is not given to the vowel after it (`a` -> `m a`, `u` -> `m
    # u`: one rule per vowel), unlike Spanish in-'s nasal, which varies with the next
    # consonant: the infix is written whole, at one place in every word.
    found = _edge_outputs(_TAGALOG_UM)
    for src, outputs in found.items():
        if src[0] in "aeiou":
            assert outputs[-1] == ("u", "m") and outputs[0] == (src[0],), (src, outputs)
        else:
            assert outputs[0] == (src[0], "u", "m") and outputs[1] == (src[1],), (src, outputs)


def test_a_vowel_letter_seen_once_written_as_two_vowels_takes_both():
    # ú -> ʉ u in one word only: no share says whose the inserted ʉ is, and the aligner
    # leaves it after the consonant before (r -> r ʉ). A vowel between a consonant and
    # a vowel written as a vowel is the vowel's: ú -> ʉ u, as á -> ɔ a in the other
    # words. The inherent vowel that most of a consonant's occurrences are followed by
    # stays the consonant's.
    from fstsynth.alignment import learn_leads
    from fstsynth.alignment_affinity import learn_affinity

    words = ["rúma:rʉuma", "ráði:rɔaji", "vágur:vɔavur", "pláta:plɔata", "ráma:rɔama", "mat:mat"]
    pairs = [(tuple(a), tuple(b)) for a, b in (w.split(":") for w in words)]
    affinity = learn_affinity(pairs, {})
    leads = learn_leads(pairs, {}, "global", affinity)
    assert ("ú", "ʉ") not in leads.lead
    src, tgt = pairs[0]
    columns = align_pair(src, tgt, {}, "global", affinity, one_to_one=False, leads=leads)
    outputs = {e.position: e.output for e in examples_from_alignment(src, tgt, columns)}
    assert outputs[0] == ("r",) and outputs[1] == ("ʉ", "u"), outputs

    inherent = ["kta:kata", "kmo:kamo", "kpu:kapu", "kla:kala", "ke:kae"]
    pairs = [(tuple(a), tuple(b)) for a, b in (w.split(":") for w in inherent)]
    leads = learn_leads(pairs, {}, "global", None)
    src, tgt = pairs[-1]
    columns = align_pair(src, tgt, {}, "global", None, one_to_one=False, leads=leads)
    outputs = {e.position: e.output for e in examples_from_alignment(src, tgt, columns)}
    assert outputs[0] == ("k", "a") and outputs[1] == ("e",), outputs

    # A rewritten consonant keeps the vowel after it: `c a` -> `ć i a` is a palatal
    # `ć i`, and a stays a.
    rewritten = ["campo:ćiamp", "fat:fat", "pan:pan", "sacco:sać"]
    pairs = [(tuple(a), tuple(b)) for a, b in (w.split(":") for w in rewritten)]
    affinity = learn_affinity(pairs, {})
    leads = learn_leads(pairs, {}, "global", affinity)
    src, tgt = pairs[0]
    columns = align_pair(src, tgt, {}, "global", affinity, one_to_one=False, leads=leads)
    outputs = {e.position: e.output for e in examples_from_alignment(src, tgt, columns)}
    assert outputs[0] == ("ć", "i") and outputs[1] == ("a",), outputs


# ------------------------------------------------------------------ a column pair's suffix


def test_the_suffix_most_targets_share_is_found():
    from fstsynth.alignment import shared_ending

    korean = [
        (tuple("m ə k ə".split()), tuple("m ə ŋ n ɨ n d a".split())),
        (tuple("t a t a".split()), tuple("t a n n ɨ n d a".split())),
        (tuple("i p ə".split()), tuple("i m n ɨ n d a".split())),
        (tuple("a n a".split()), tuple("a n n ɨ n d a".split())),
    ]
    assert shared_ending(korean) == tuple("n ɨ n d a".split())
    # Sources that end so too: no suffix of the column pair (a stem change).
    assert shared_ending([(t, ("z",) + t[1:]) for _, t in korean]) == ()
    # Endings that differ (English -s/-z/-ɪz): none.
    plural = [(("k", "æ", "t"), ("k", "æ", "t", "s")), (("d", "ɔ", "g"), ("d", "ɔ", "g", "z"))]
    assert shared_ending(plural) == ()
    # A suffix with an alternant (Finnish -ssa/-ssä), even one most targets have: none.
    finnish = [(tuple(f"t a l o {n}".split()), tuple(f"t a l o {n} s s a".split())) for n in "ktpsr"]
    assert shared_ending(finnish) == ("s", "s", "a")
    harmony = finnish + [(("m", "e", "t", "s", "ä"), ("m", "e", "t", "s", "ä", "s", "s", "ä"))]
    assert shared_ending(harmony) == ()
    # An alternant only at the affix's inner edge (Japanese `-i m a s ɯ` / `-e m a s ɯ`,
    # the vowel the stem's): the part past it is the suffix.
    stems = ("k a k", "n o m", "t o b", "j o m")
    polite = [(tuple(f"{stem} ɯ".split()), tuple(f"{stem} i m a s ɯ".split())) for stem in stems]
    polite.append((tuple("t a b e ɾ ɯ".split()), tuple("t a b e m a s ɯ".split())))
    assert shared_ending(polite) == ("m", "a", "s", "ɯ")


def test_a_shared_suffix_is_aligned_as_an_insertion_at_the_end():
    from fstsynth.alignment import align_pair, examples_from_alignment

    source, target = tuple("m ə k ə".split()), tuple("m ə ŋ n ɨ n d a".split())
    ending = tuple("n ɨ n d a".split())
    columns = align_pair(source, target, {}, ending=ending)
    outputs = [e.output for e in examples_from_alignment(source, target, columns)]
    # The start, m, ə, k -> ŋ, and the final ə -> the suffix alone.
    assert outputs == [(), ("m",), ("ə",), ("ŋ",), ending]
    # Without it, the suffix is split between the stem's last tokens.
    split = [e.output for e in examples_from_alignment(source, target, align_pair(source, target, {}))]
    assert split[-1] != ending


_ARTICLE = [
    ("b o k a", "l a β o k a"),
    ("l u n a", "l a l u n a"),
    ("k a s a", "l a k a s a"),
    ("d u ð a", "l a ð u ð a"),
]


def test_a_prefix_shared_by_the_targets_is_the_starts_insertion():
    from fstsynth.alignment import shared_beginning

    pairs = [(tuple(s.split()), tuple(t.split())) for s, t in _ARTICLE]
    assert shared_beginning(pairs) == ("l", "a")
    # Without it, `l u n a` had its `l` aligned with the article's.
    columns = align_pair(pairs[1][0], pairs[1][1], {}, beginning=("l", "a"))
    assert {e.position: " ".join(e.output) for e in examples_from_alignment(*pairs[1], columns)} == {
        START: "l a", 0: "l", 1: "u", 2: "n", 3: "a"
    }


def test_a_prefix_that_goes_on_past_the_shared_part_is_none():
    from fstsynth.alignment import shared_beginning

    # `m ə` then a nasal by the stem's first consonant, inserted in most words.
    rows = [("b a w a", "m ə m b a w a"), ("d o r o ŋ", "m ə n d o r o ŋ"), ("ɡ a n t i", "m ə ŋ ɡ a n t i"),
            ("t u l i s", "m ə n u l i s"), ("b ə l i", "m ə m b ə l i")]
    assert shared_beginning([(tuple(s.split()), tuple(t.split())) for s, t in rows]) == ()


def _ipa_outputs(source: str, target: str) -> dict[int, str]:
    from fstsynth.features import with_ipa_features

    src, tgt = tuple(source.split()), tuple(target.split())
    tokens = sorted(set(src) | set(tgt))
    features = with_ipa_features(with_vowel_classes({}, tokens), tokens)
    exs = examples_from_alignment(src, tgt, align_pair(src, tgt, features))
    return {e.position: " ".join(e.output) for e in exs}


@pytest.mark.parametrize(
    "source, target, position, output",
    [
        # The stem's consonant neutralized, the suffix deleted: pʰ:p, not l:p.
        ("a pʰ ɨ l", "a p", 1, "p"),
        # s:t, not l:t.
        ("m a s ɨ l", "m a t", 2, "t"),
    ],
)
def test_a_substitution_tie_goes_to_the_nearer_segment(source, target, position, output):
    assert _ipa_outputs(source, target)[position] == output


def test_a_tie_no_feature_tells_apart_deletes_the_suffix_at_the_edge():
    # Vowel and consonant classes only (Finnish on the Olympiad dev split): the two
    # alignments score the same; lingpy's sums of floats chose s:- ä:- s:- inside.
    out = outputs("m e t s ä s s ä", "m e t s ä")
    assert [out[k] for k in range(8)] == ["m", "e", "t", "s", "ä", "", "", ""]


def test_an_inner_deletion_is_not_moved_towards_the_nearer_edge():
    # Tied: a `t` of `t t` deleted, or the `r` (nearer the end) deleted and t:ʀ. Where
    # in the word an inner deletion stands says nothing; lingpy's own choice stays.
    assert _ipa_outputs("p e r m e t t r e", "p ɛ ʀ m ɛ t ʀ")[6] == "t"
    assert _ipa_outputs("p e r m e t t r e", "p ɛ ʀ m ɛ t ʀ")[7] == "ʀ"


def test_a_varying_vowel_inserted_before_a_vowel_written_as_itself_stays_inserted():
    # Swahili applicative `s o m a` -> `s o m e a`, `p i k a` -> `p i k i a`: e or i
    # (by the root's vowel) inserted before the final a, which stays a. Given to the a
    # (a -> e a), the a's output would be learned per consonant before it.
    words = ["soma:somea", "pika:pikia", "leta:letea", "lima:limia", "omba:ombea", "ruka:rukia"]
    for src, outputs in _outputs_with_leads(words):
        assert outputs[len(src) - 1] == ("a",), (src, outputs)

    # The same vowel before it in every word is the vowel's own (English i -> German
    # e i): it goes to the i, as before.
    _src, outputs = _outputs_with_leads(["ripe:reif", "fine:fein", "bite:beiße", "wide:weit", "mat:mat"])[1]
    assert outputs[1] == ("e", "i"), outputs


def test_an_infix_is_one_run_inserted_at_one_place_in_every_word():
    # Tagalog -in- after the root's first consonant. Left to the aligner, `b i l i` ->
    # `b i n i l i` is `n i` inserted after the i (a tie), and leads split `i n`
    # elsewhere (`u` -> `n u`, `a` -> `n a`): three ways, no one rule. The column
    # pair's most frequent run breaks the tie, and a run is not split.
    from fstsynth.alignment import learn_leads

    words = [
        "sulat:sinulat", "basa:binasa", "kain:kinain", "bili:binili", "tawag:tinawag",
        "hugas:hinugas", "kuha:kinuha", "sabi:sinabi", "pili:pinili", "hiram:hiniram",
    ]
    pairs = [(tuple(a), tuple(b)) for a, b in (w.split(":") for w in words)]
    affinity = learn_affinity(pairs, {})
    leads = learn_leads(pairs, {}, "global", affinity)
    for src, tgt in pairs:
        columns = align_pair(src, tgt, {}, "global", affinity, one_to_one=False, leads=leads)
        outputs = [e.output for e in examples_from_alignment(src, tgt, columns)]
        assert outputs[1] == (src[0], "i", "n"), (src, outputs)
        assert all(out == (tok,) for tok, out in zip(src[1:], outputs[2:])), (src, outputs)


_INDONESIAN_MEN = [
    "t u l i s:m ə n u l i s",
    "p u k u l:m ə m u k u l",
    "b a t͡ʃ a:m ə m b a t͡ʃ a",
    "d ə ŋ a r:m ə n d ə ŋ a r",
    "ɡ a m b a r:m ə ŋ ɡ a m b a r",
    "k i r i m:m ə ŋ i r i m",
    "a m b i l:m ə ŋ a m b i l",
    "i k u t:m ə ŋ i k u t",
    "t a n a m:m ə n a n a m",
    "p a k a i:m ə m a k a i",
    "s a p u:m ə ɲ a p u",
    "t͡ʃ a r i:m ə ɲ t͡ʃ a r i",
    "d͡ʒ u a l:m ə ɲ d͡ʒ u a l",
    "l i h a t:m ə l i h a t",
    "r a s a:m ə r a s a",
    "m i n u m:m ə m i n u m",
    "n i l a i:m ə n i l a i",
    "t a r i k:m ə n a r i k",
    "p i l i h:m ə m i l i h",
    "b ə l i:m ə m b ə l i",
    "b a w a:m ə m b a w a",
    "d a p a t:m ə n d a p a t",
    "ɡ o r e ŋ:m ə ŋ ɡ o r e ŋ",
    "k u p a s:m ə ŋ u p a s",
    "u k u r:m ə ŋ u k u r",
    "s u r u h:m ə ɲ u r u h",
    "d͡ʒ a ɡ a:m ə ɲ d͡ʒ a ɡ a",
    "t o l o ŋ:m ə n o l o ŋ",
    "m a s a k:m ə m a s a k",
]


def test_an_inserted_run_decides_only_where_the_alignments_make_the_same_changes():
    # Indonesian meN- (the problem's rows): a voiceless first consonant becomes the
    # nasal (`k i r i m` -> `m ə ŋ i r i m`). `m ə` inserted then k:ŋ ties with
    # alignments that change other tokens; the column pair's most frequent run (`m ə`)
    # breaking that tie wrote `m ə` at the word start for k and s but with the
    # consonant for p and t. The runs only choose where an insertion stands among
    # alignments making the same substitutions.
    rows = _INDONESIAN_MEN
    found = _edge_outputs(rows)
    starts = {src: outputs[-1] for src, outputs in found.items() if src[0] in "ptks"}
    assert len(set(starts.values())) == 1, starts


def test_a_run_inserted_in_few_words_breaks_no_tie():
    # Indonesian meN- with the IPA features: `m ə` alone is inserted in 3 words of 29
    # (before l r n), `ə m` after m or p in others. Counted as the column pair's run,
    # it moved `p u k u l` -> `m ə m u k u l` from p:`m ə m` to `m ə` then p:m, and
    # `m ə m` off m, in those words only, and the rules learned from them no longer
    # wrote the nasal before unseen h (held out 12 -> 10 of 14). Only a run inserted
    # in most words (Tagalog `i n`, the previous test) decides where an insertion goes.
    from dataclasses import replace

    from fstsynth.alignment import learn_leads
    from fstsynth.features import ipa_features

    pairs = [(tuple(a.split()), tuple(b.split())) for a, b in (row.split(":") for row in _INDONESIAN_MEN)]
    features = ipa_features({tok for pair in pairs for word in pair for tok in word})
    affinity = learn_affinity(pairs, features)
    leads = learn_leads(pairs, features, "global", affinity)
    for src, tgt in pairs:
        with_runs = align_pair(src, tgt, features, "global", affinity, one_to_one=False, leads=leads)
        without = align_pair(src, tgt, features, "global", affinity, one_to_one=False, leads=replace(leads, runs=()))
        assert with_runs == without, src
