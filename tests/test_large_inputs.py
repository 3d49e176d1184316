"""Large inputs in `auto` (`synthesis.auto`): fewer chunk-alignment tries past
`LARGE_INPUT` rows, and the sample the choice read, as `learn`'s summary says."""

from __future__ import annotations

from dataclasses import replace

import pytest

from conftest import DATA
from fstsynth.problem import load_problem
from fstsynth.synthesis import Options, learn
from fstsynth.synthesis import auto


@pytest.fixture(scope="module")
def pairs():
    return load_problem(DATA / "plural.tsv").training_pairs(0, 1)


def test_a_large_input_tries_the_earliest_and_the_chosen_configuration_by_chunks():
    # Four configurations within one standard error (900 rows, band about 14): the
    # fourth is clearly the shortest, so the rule picks it; the first is the earliest.
    held, rules = [317, 318, 318, 311], [[191], [181], [181], [170]]
    within = auto._within_band(range(4), held, 900)
    assert within == [0, 1, 2, 3]
    assert auto._one_standard_error(within, held, rules, 900) == 3
    assert auto._large_input_chunk_tries(within, held, rules, 900) == [0, 3]
    # Where the earliest is the one chosen, it is tried alone.
    assert auto._large_input_chunk_tries([0, 2], [300, 290, 295], [[10], [12], [11]], 900) == [0]


def test_small_inputs_do_not_take_the_large_input_path(pairs, monkeypatch):
    def refused(*args: object) -> list[int]:
        raise AssertionError("large-input path taken")

    monkeypatch.setattr(auto, "_large_input_chunk_tries", refused)
    result = learn(pairs, {}, Options(chunks="cv"))
    assert result.program.rule_count > 0
    monkeypatch.setattr(auto, "LARGE_INPUT", len(pairs) - 1)
    with pytest.raises(AssertionError, match="large-input path"):
        learn(pairs, {}, Options(chunks="cv", cv_rows=9))


def test_the_sample_the_choice_read_is_reported(pairs):
    from fstsynth.learning import learn_model

    assert learn(pairs, {}, Options()).cv_sample is None  # every row read
    sampled = learn(pairs, {}, Options(cv_rows=5))  # 3 rows learned from, 15 of the other 17 predicted
    assert sampled.cv_sample is not None
    configurations, read, rows = sampled.cv_sample
    assert configurations >= len(auto.AUTO_ORDER)
    assert read == 18 and rows == len(pairs)
    problem = load_problem(DATA / "plural.tsv")
    pm = learn_model(problem, replace(Options(), cv_rows=5)).pairs[(0, 1)]
    # The model's features let it score more configurations; the sample is the same.
    assert pm.cv_sample is not None and pm.cv_sample[1:] == (read, rows)


def test_learn_says_the_choice_read_a_sample(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from fstsynth.cli import app

    # The 20 rows read as past `Options.cv_rows` would be: 3 learned from, 15 predicted.
    splits = auto.cv_splits
    monkeypatch.setattr(auto, "cv_splits", lambda pairs, k, rows: splits(pairs, k, 5))
    result = CliRunner().invoke(app, ["learn", str(DATA / "plural.tsv"), "-o", str(tmp_path / "model"), "-q"])
    assert result.exit_code == 0, result.output
    assert "configuration chosen by cross-validation on a sample of 18 of 20 pairs" in result.output
