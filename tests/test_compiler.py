"""The compiler's construction: stages, progress reports, deadlines, arcs written in
OpenFst's binary format."""

from __future__ import annotations

import itertools
import random
import time
import tracemalloc

import numpy as np
import pynini
import pytest

from fstsynth import compiler
from fstsynth.compiler import TimeLimitError, compile_program, fst_from_arcs
from fstsynth.dsl import IsToken, Pass, Program, ReplaceAnyBy, ReplaceBy, Rule, TierIs
from fstsynth.interpreter import run
from fstsynth.transducers import StageTooLargeError, UnbuiltTransducers
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


def _shadowed_window_program(tokens: tuple[str, ...]) -> Program:
    """A pass whose automata remember three tokens on each side (a rule per window of
    three), the right windows' rules shadowed by a rule without tests: many left and
    right states, few decisions."""
    windows = list(itertools.product(tokens, repeat=3))
    left = [Rule((IsToken(x, -1), IsToken(y, -2), IsToken(z, -3)), ReplaceAnyBy(("a",))) for x, y, z in windows]
    right = [Rule((IsToken(x, 1), IsToken(y, 2), IsToken(z, 3)), ReplaceAnyBy(("i",))) for x, y, z in windows]
    return Program((Pass(tuple([*left, Rule((), ReplaceAnyBy(("u",))), *right])),))


@pytest.mark.slow
def test_a_pass_with_a_large_left_x_right_table_compiles_in_bounded_memory():
    program = _shadowed_window_program(ALPHABET[:9])
    tracemalloc.start()
    try:
        compiled = compile_program(program, ALPHABET, FEATURES)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    t = compiled.machines[0].tables.numpy()
    lefts, rights = t.left_mask_of.shape[0], t.right_mask_of.shape[0]  # states
    table = lefts * rights * t.left_mask.shape[1] * 8  # bytes of left x right masks
    assert lefts > 500 and rights > 500 and table > 100 * 2**20
    assert peak < table / 4, (peak, table)
    rng = random.Random(5)
    for _ in range(30):
        word = tuple(rng.choice(ALPHABET) for _ in range(rng.randint(1, 8)))
        assert compiled.apply(word) == run(program, word, FEATURES) == compiled.tables().apply(word)


def test_a_program_with_a_stage_past_the_arc_bound_has_its_tables_and_no_transducers(monkeypatch):
    program = Program((Pass((Rule((TierIs("vowel", None, 1),), ReplaceBy("a", ("i",))),)),))
    monkeypatch.setattr(compiler, "MAX_STAGE_ARCS", 10)
    compiled = compile_program(program, ALPHABET, FEATURES)
    assert isinstance(compiled.stages, UnbuiltTransducers)
    with pytest.raises(StageTooLargeError, match="^pass 1's annotator would have [0-9,]+ arcs"):
        compiled.apply(("a", "t"))
    word = ("a", "t", "a", "t")
    assert compiled.tables().apply(word) == run(program, word, FEATURES) == ("a", "t", "i", "t")


@pytest.mark.parametrize("counted_all", [False, True])
def test_a_decider_past_the_arc_bound_is_found_before_its_annotator_is_built(monkeypatch, counted_all):
    """Many left states, few right ones: the annotator fits the bound, the decider does
    not. Its symbols are counted class by class, and the count stops once past the
    bound ("or more"), or is whole when only the last class passes it."""
    left_windows = [Rule((IsToken(x, -1), IsToken(y, -2)), ReplaceBy("b", ("p",))) for x in "atik" for y in "atik"]
    program = Program((Pass((Rule((IsToken("a", -1), IsToken("t", 1)), ReplaceBy("a", ("i",))), *left_windows)),))
    full = compile_program(program, ALPHABET, FEATURES)
    t = full.machines[0].tables.numpy()
    lefts, rights, symbols = t.left_mask_of.shape[0] + 1, t.right_mask_of.shape[0] + 1, t.symbol_class.size + 1
    decider = full.transducers.stages[1]
    read = len({a.ilabel for q in decider.states() for a in decider.arcs(q)} - {0})  # annotated and start symbols
    limit = (read - 1) * lefts if counted_all else rights * symbols
    assert limit >= rights * symbols  # the annotator fits
    if not counted_all:  # the first class alone is past the bound
        assert np.count_nonzero(t.symbol_class == 0) > limit // lefts
    monkeypatch.setattr(compiler, "MAX_STAGE_ARCS", limit)
    compiled = compile_program(program, ALPHABET, FEATURES)
    assert isinstance(compiled.stages, UnbuiltTransducers)
    assert compiled.stages.reason.startswith("pass 1's decider would have ")
    assert ("or more" in compiled.stages.reason) != counted_all
    if counted_all:
        assert f"({lefts:,} states x {read:,} symbols)" in compiled.stages.reason
    word = ("t", "a", "a", "t")
    assert compiled.tables().apply(word) == run(program, word, FEATURES) == full.tables().apply(word)
