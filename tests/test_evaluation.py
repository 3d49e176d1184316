"""The benchmark scorer, against values computed by hand."""

from __future__ import annotations

import pytest

from fstsynth.evaluation import ProblemScore, chrf_total, score_problem, summarize


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
