"""The scorers, against values computed by hand: the benchmark's (Exact, chrF) and a
model's on gold pairs (`fstsynth evaluate`: Exact, WER, PER)."""

from __future__ import annotations

import pytest

from conftest import DATA
from fstsynth.spe import rule_to_spe
from fstsynth.evaluation import ProblemScore, chrf_total, edit_distance, score_problem, summarize


def test_chrf_one_cell_by_hand():
    # unigrams: 2 of 3 match both ways -> F = 2/3; bigrams: "a b" of {"a b", "b c"}
    # vs {"a b", "b d"} -> F = 1/2; total = (2/3 + 1/2) / 2 = 7/12.
    assert chrf_total([("a b c".split(), "a b d".split())]) == pytest.approx(7 / 12)


def test_chrf_sums_counts_over_cells_before_f():
    # unigrams: matches 1+0, hypothesis 1+2, reference 1+1 -> P = 1/3, R = 1/2,
    # F = 2PR/(P+R) = 0.4; bigrams: no match -> 0; total 0.2. (Averaging F per cell
    # would give (1 + 0)/2 for unigrams instead.)
    pairs = [(["a"], ["a"]), (["b", "c"], ["x"])]
    assert chrf_total(pairs) == pytest.approx(0.2)


def test_chrf_counts_repeated_ngrams_with_clipping():
    # hyp "a a a" vs ref "a b": unigram matches min(3, 1) = 1, P = 1/3, R = 1/2 -> 0.4;
    # bigrams {"a a": 2} vs {"a b": 1}: 0. Total 0.2.
    assert chrf_total([("a a a".split(), "a b".split())]) == pytest.approx(0.2)


def test_chrf_perfect_and_empty():
    assert chrf_total([("a b".split(), "a b".split())]) == pytest.approx(1.0)
    assert chrf_total([([], "a b".split())]) == 0.0


def test_score_problem_exact_and_chrf():
    problem = {"type": "morphology", "data": [["a b", "?"], ["?", "c"], ["d", "e"]]}
    solution = {"data": [["a b", "a b c"], ["c d", "c"], ["d", "e"]]}
    answer = {"data": [["a b", "a b d"], ["c d", "c"], ["d", "e"]]}
    score = score_problem("p", problem, answer, solution)
    assert (score.cells, score.exact_hits) == (2, 1)
    assert score.exact == 0.5
    # unigrams: match 2 + 2, hyp 3 + 2, ref 3 + 2 -> F = 4/5; bigrams: 1 + 1 of 2 + 1
    # -> F = 2/3; total (4/5 + 2/3) / 2 = 11/15.
    assert score.chrf == pytest.approx(11 / 15)


def test_stress_problems_have_no_chrf():
    problem = {"type": "stress", "data": [["t a", "?"]]}
    score = score_problem("s", problem, {"data": [["t a", "0 1"]]}, {"data": [["t a", "1 0"]]})
    assert score.chrf is None and score.exact == 0.0


def test_summarize_macro_micro_and_thresholds():
    scores = [
        ProblemScore("m1", "morphology", 4, 4, 1.0),  # 100%
        ProblemScore("m2", "morphology", 2, 1, 0.5),  # 50%
        ProblemScore("s1", "stress", 4, 3, None),  # 75%
        ProblemScore("t1", "transliteration", 10, 0, 0.2),  # 0%
    ]
    summary = summarize(scores)
    assert summary["overall"]["exact"] == pytest.approx((1 + 0.5 + 0.75 + 0) / 4)
    assert summary["overall"]["chrf"] == pytest.approx((1.0 + 0.5 + 0.2) / 3)  # stress left out
    assert summary["by_type"]["morphology"]["exact"] == pytest.approx(0.75)
    assert summary["by_type"]["stress"]["chrf"] is None
    assert summary["micro_exact"] == pytest.approx(8 / 20)
    assert (summary["at_least_50"], summary["at_least_75"], summary["perfect"]) == (3, 2, 1)


# ------------------------------------------------------------- a model on gold pairs


@pytest.mark.parametrize(
    "a, b, distance",
    [
        ("", "", 0),
        ("abc", "", 3),
        ("", "ab", 2),
        ("kitten", "sitting", 3),
        (["f", "ʊ", "t", "s"], ["f", "iː", "t"], 2),
        ("abc", "abc", 0),
        ("ab", "ba", 2),
    ],
)
def test_edit_distance_by_hand(a, b, distance):
    a, b = list(a), list(b)
    assert edit_distance(a, b) == distance
    assert edit_distance(b, a) == distance


@pytest.fixture(scope="module")
def plural_model():
    import fstsynth

    return fstsynth.learn(DATA / "plural.tsv", features=DATA / "plural-features.json")


def test_exact_on_held_out_pairs_equals_counting_by_hand(plural_model):
    """data/plural-test.tsv: 12 pairs; the model predicts each with the rules of the
    training pairs, so all but the two irregular plurals (f ʊ t, ʃ iː p) come out right."""
    from fstsynth.evaluation import evaluate_pairs

    lines = [
        line.split("\t")
        for line in (DATA / "plural-test.tsv").read_text(encoding="utf-8").splitlines()
        if line and not line.startswith("#")
    ]
    pm = plural_model.pair()
    # Counting by hand: apply each source, compare with its target as strings.
    hits = sum(plural_model.apply(source) == target for source, target in lines)
    assert (len(lines), hits) == (12, 10)
    result = evaluate_pairs(pm, DATA / "plural-test.tsv")
    assert (result.words, result.correct, result.exact) == (12, 10, 10 / 12)
    assert result.wer == pytest.approx(2 / 12)
    # PER: f ʊ t -> f ʊ t s against f iː t is 2 edits, ʃ iː p -> ʃ iː p s is 1; the
    # targets have 54 tokens.
    assert (result.edits, result.target_tokens) == (3, 54)
    assert result.per == 3 / 54
    (foot, sheep) = result.errors
    assert (foot.source, foot.prediction, foot.target, foot.edits) == (
        ("f", "ʊ", "t"), ("f", "ʊ", "t", "s"), ("f", "iː", "t"), 2
    )
    (fired,) = sheep.firings  # one rule fires: the suffix after the last token
    assert (fired.pass_number, fired.position, fired.token, fired.output) == (1, 3, "p", ("p", "s"))
    assert str(fired) == f"pass 1, at 3 (p): rule {fired.rule_number}, {rule_to_spe(fired.rule)}  =>  p s"


def test_evaluation_json_keys_and_error_cap(plural_model):
    figures = plural_model.evaluate(DATA / "plural-test.tsv", errors=1)
    assert list(figures)[:6] == ["words", "correct", "exact", "wer", "per", "token_edits"]
    assert {"words", "correct", "exact", "wer", "per", "errors"} <= set(figures)
    assert figures["words"] == 12 and figures["correct"] == 10 and len(figures["errors"]) == 1
    assert figures["errors"][0]["source"] == "f ʊ t" and figures["errors"][0]["rules"]


def test_unspaced_gold_words_are_split_as_apply_splits_them(plural_model):
    # "kiːz" is split into k iː z (iː is one token of the model), not k i ː z.
    figures = plural_model.evaluate([("kiː", "kiːz"), ("bʌs", "b ʌ s ɪ z")])
    assert (figures["words"], figures["correct"], figures["per"]) == (2, 2, 0.0)
