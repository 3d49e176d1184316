"""The compiler's construction: stages, progress reports, deadlines, arcs written in
OpenFst's binary format."""

from __future__ import annotations

import random
import time

import numpy as np
import pynini
import pytest

from fstsynth.compiler import TimeLimitError, compile_program, fst_from_arcs
from fstsynth.dsl import IsToken, Pass, Program, ReplaceBy, Rule, TierIs
from fstsynth.progress import listening
from fstsynth.random_programs import ALPHABET, FEATURES, random_program


def test_fst_from_arcs_is_the_fst_pynini_builds():
    rng = np.random.default_rng(0)
    states, arcs = 40, 300
    src, dst = rng.integers(0, states, arcs), rng.integers(0, states, arcs)
    il, ol = rng.integers(0, 9, arcs), rng.integers(0, 9, arcs)
    built = fst_from_arcs(states, 3, [0, 7], src, il, ol, dst)
    assert built.verify() and built.start() == 3 and built.num_states() == states
    expected = pynini.Fst()
    for _ in range(states):
        expected.add_state()
    expected.set_start(3)
    one = pynini.Weight.one("tropical")
    for final in (0, 7):
        expected.set_final(final)
    for k in np.argsort(src, kind="stable"):
        expected.add_arc(int(src[k]), pynini.Arc(int(il[k]), int(ol[k]), one, int(dst[k])))
    assert pynini.isomorphic(built, expected) and str(built) == str(expected)


def test_a_pass_looking_right_has_an_annotator_and_a_decider():
    looks_left = Program((Pass((Rule((IsToken("t", -1),), ReplaceBy("a", ("i",))),)),))
    looks_right = Program((Pass((Rule((TierIs("vowel", None, 1),), ReplaceBy("a", ("i",))),)),))
    assert len(compile_program(looks_left, ALPHABET, FEATURES).transducers.stages) == 1
    compiled = compile_program(looks_right, ALPHABET, FEATURES)
    assert compiled.transducers.stage_keys("pair-0-1") == ["pair-0-1.pass1.1", "pair-0-1.pass1.2"]
    # The annotator guesses what lies right of each symbol: several arcs per input
    # label from one state; the decider is deterministic.
    annotator, decider = compiled.transducers.stages
    assert any(
        len([a.ilabel for a in annotator.arcs(q)]) > len({a.ilabel for a in annotator.arcs(q)})
        for q in annotator.states()
    )
    for q in decider.states():
        labels = [a.ilabel for a in decider.arcs(q) if a.ilabel]
        assert len(labels) == len(set(labels))
    assert compiled.apply(("a", "t", "a", "t")) == ("a", "t", "i", "t")


def test_compilation_reports_its_progress_rule_by_rule():
    program = random_program(random.Random(4), passes=3, max_rules=5)
    steps = []
    with listening(steps.append):
        compile_program(program, ALPHABET, FEATURES)
    reports = [s for s in steps if s.stage == "compiling rule"]
    assert [s.done for s in reports] == sorted(s.done for s in reports)
    assert reports[-1].done == reports[-1].total == program.rule_count
    assert len(reports) == len(program.passes) + 1


def test_a_deadline_in_the_past_stops_compilation():
    program = random_program(random.Random(2), passes=2, max_rules=5)
    with pytest.raises(TimeLimitError, match="^time limit reached while compiling the rules"):
        compile_program(program, ALPHABET, FEATURES, deadline=time.monotonic() - 1)
