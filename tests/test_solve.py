"""Choosing the answer for a `?` cell among the programs that can predict it."""

from __future__ import annotations

from dataclasses import dataclass

from fstsynth import dsl
from fstsynth.model import Model, PairModel
from fstsynth.solve import choose_source, vote
from fstsynth.synthesis import Options


@dataclass
class _Fixed:
    """Stands in for a pair's apply tables: always outputs `output`."""

    output: tuple[str, ...]
    index = {"a": 0, "b": 1}  # the tokens it knows

    def apply(self, word):
        return self.output


def _pm(source: int, target: int, output: str, held_out: float | None) -> PairModel:
    return PairModel(
        source, target, dsl.Program(()), 1.0, 5, 10, _Fixed(tuple(output.split())), None,
        held_out=held_out,
    )


def _model(*pms: PairModel) -> Model:
    columns = tuple(f"c{k}" for k in range(5))
    return Model(columns, {}, Options(), ("a", "b"), {(pm.source, pm.target): pm for pm in pms})


def test_agreeing_programs_outvote_the_single_best():
    model = _model(_pm(1, 0, "x", 0.6), _pm(2, 0, "y", 0.5), _pm(3, 0, "y", 0.4))
    row = [None, ("a",), ("a",), ("b",), None]
    assert choose_source(model, row, 0).source == 1
    word, pm = vote(model, row, 0)
    assert word == ("y",) and pm.source == 2  # the best-ranked program giving "y"


def test_vote_ties_go_to_the_best_ranked_program():
    model = _model(_pm(1, 0, "x", 0.6), _pm(2, 0, "y", 0.3), _pm(3, 0, "y", 0.3))
    row = [None, ("a",), ("a",), ("b",), None]
    word, pm = vote(model, row, 0)
    assert word == ("x",) and pm.source == 1


def test_two_candidates_vote_as_the_ranking_chooses():
    # Equal held-out accuracy: the ranking (then the column index) decides, as before.
    model = _model(_pm(1, 0, "x", 0.5), _pm(2, 0, "y", 0.5))
    row = [None, ("a",), ("a",), None, None]
    assert vote(model, row, 0) == (("x",), choose_source(model, row, 0))
    model = _model(_pm(1, 0, "x", 0.4), _pm(2, 0, "y", 0.5))
    assert vote(model, row, 0)[0] == ("y",)


def test_unmeasured_programs_do_not_outvote_the_ranking():
    model = _model(_pm(1, 0, "x", 0.1), _pm(2, 0, "y", None), _pm(3, 0, "y", None))
    row = [None, ("a",), ("a",), ("b",), None]
    assert vote(model, row, 0)[0] == ("x",)


def test_only_known_cells_vote():
    model = _model(_pm(1, 0, "x", 0.6), _pm(2, 0, "y", 0.5), _pm(3, 0, "y", 0.4))
    row = [None, ("a",), None, ("b",), None]
    assert vote(model, row, 0)[0] == ("x",)
    assert vote(model, [None, None, None, None, None], 0) is None
