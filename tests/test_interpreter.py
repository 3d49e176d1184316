"""The interpreter's many-word runners give exactly what running word by word gives."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from fstsynth.dsl import Identity, IsToken, Pass, Program, ReplaceBy, Rule
from fstsynth.interpreter import run, run_many, run_pass, run_pass_many
from program_strategies import Case, cases


@settings(max_examples=300, derandomize=True, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(cases())
def test_run_many_agrees_with_run(case: Case) -> None:
    expected = [run(case.program, word, case.features) for word in case.words]
    assert run_many(case.program, case.words, case.features) == expected


def test_run_pass_many_keeps_rule_order_and_tags() -> None:
    # A rule naming another token at position 0 than its ReplaceBy reads never fires;
    # the boundary test at offset 0 holds only at the start position.
    pass_ = Pass((
        Rule((IsToken("a", 0),), ReplaceBy("b", ("x",))),
        Rule((IsToken("b", -1),), ReplaceBy("a", ("y",))),
        Rule((IsToken(None, 0),), ReplaceBy("a", ("z",))),
        Rule((), ReplaceBy("a", ("w",))),
    ))
    words = [[("a", None), ("b", None), ("a", None)], [], [("c", Identity())]]
    assert run_pass_many(pass_, words, {}) == [run_pass(pass_, w, {}) for w in words]
    assert run_many(Program((pass_,)), [("b", "a", "a")], {}) == [("b", "y", "w")]
