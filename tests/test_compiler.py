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
from hypothesis import HealthCheck, given, settings

from fstsynth import compiler
from fstsynth.bimachine import PassMachine, group_rows, program_machines, program_tokens
from fstsynth.compiler import TimeLimitError, compile_program, fst_from_arcs
from fstsynth.dsl import IsToken, Pass, Program, ReplaceAnyBy, ReplaceBy, Rule, TierIs
from fstsynth.interpreter import run
from fstsynth.transducers import StageTooLargeError, UnbuiltTransducers
from fstsynth.progress import listening
from fstsynth.random_programs import ALPHABET, FEATURES, random_program
from fstsynth.table_format import CONSTANT, lowest_rules

from program_strategies import cases


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


def _annotations_from_the_full_table(
    m: PassMachine, left_masks: np.ndarray, masks: np.ndarray, at_start: bool
) -> tuple[np.ndarray, list[int]]:
    """The annotator's grouping of right states straight from its definition: the
    whole left x right table of decisions, and the tokens those decisions copy."""
    t = m.tables.numpy()
    decisions = lowest_rules(np, left_masks[:, None, :] & masks[None, :, :], t.rules)
    columns = [decisions.T]
    for n, offset in enumerate(m.right_copy_offsets):
        reads = np.array([
            any(kind != CONSTANT and value == offset for kind, value in m.template(d, at_start))
            for d in range(t.rules + 1)
        ])
        columns.append(np.where(reads[decisions].any(axis=0), m.right_copy[:, n], -2)[:, None])
    return group_rows(np.concatenate(columns, axis=1))


def _check_annotations(m: PassMachine) -> int:
    """`_annotations` against the full table for every class of `m` and its start
    position; the number of cases checked."""
    t = m.tables.numpy()
    cases_ = [(t.left_mask, t.class_mask[c][None, :] & t.right_mask, False) for c in range(m.classes)]
    cases_.append((t.left_mask[t.left_start][None, :], t.start_mask[None, :] & t.right_mask, True))
    for left_masks, masks, at_start in cases_:
        kinds, first = compiler._annotations(m, compiler._LeftRules(left_masks), masks, at_start, None)
        expected_kinds, expected_first = _annotations_from_the_full_table(m, left_masks, masks, at_start)
        assert kinds.tolist() == expected_kinds.tolist() and first == expected_first, str(m.tables.rules)
    return len(cases_)


def test_right_states_are_grouped_as_the_full_left_x_right_table_groups_them():
    checked = 0
    for seed in range(12):
        program = random_program(random.Random(seed), passes=2, max_rules=6)
        tokens = tuple(sorted(program_tokens(program, ALPHABET, FEATURES)))
        for m in program_machines(program, tokens, FEATURES):
            if not m.looks_right:
                continue
            checked += _check_annotations(m)
    assert checked >= 50


@settings(max_examples=40, derandomize=True, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(cases(words_per_case=1))
def test_annotations_group_right_states_as_the_full_table_on_every_construct(case):
    """The same law on programs with every construct (tiers, copies to +-3, tags,
    feature rules), for every class and the start position."""
    tokens = tuple(sorted(program_tokens(case.program, case.alphabet, case.features)))
    for m in program_machines(case.program, tokens, case.features):
        _check_annotations(m)


def test_right_states_whose_extra_rules_never_decide_share_an_annotation():
    """After `t t` the right mask has rules 0 and 1, after `t b` rule 0 alone; rule 1
    holds in no left state that rule 0 does not: both decide alike everywhere, so the
    two right states must share one annotation (grouping by the masks would not)."""
    program = Program((Pass((
        Rule((IsToken("a", -1), IsToken("t", 1)), ReplaceAnyBy(("i",))),
        Rule((IsToken("a", -1), IsToken("t", 1), IsToken("t", 2)), ReplaceAnyBy(("u",))),
        Rule((IsToken("i", -1), IsToken("b", 1)), ReplaceAnyBy(("a",))),
    )),))
    tokens = tuple(sorted(program_tokens(program, ALPHABET, FEATURES)))
    (m,) = program_machines(program, tokens, FEATURES)
    t = m.tables.numpy()
    masks = t.class_mask[t.symbol_class[0, tokens.index("a")]][None, :] & t.right_mask
    assert len({int(row[0]) & 3 for row in masks}) == 3  # {0, 1}, {0} and none of them
    kinds, first = compiler._annotations(m, compiler._LeftRules(t.left_mask), masks, False, None)
    expected_kinds, expected_first = _annotations_from_the_full_table(m, t.left_mask, masks, False)
    assert kinds.tolist() == expected_kinds.tolist() and first == expected_first
    assert len(first) < len(group_rows(masks)[1])


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
    table = t.left_mask.shape[0] * t.right_mask.shape[0] * t.left_mask.shape[1] * 8  # bytes of left x right masks
    assert t.left_mask.shape[0] > 500 and t.right_mask.shape[0] > 500 and table > 100 * 2**20
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
    lefts, rights, symbols = t.left_mask.shape[0] + 1, t.right_mask.shape[0] + 1, t.symbol_class.size + 1
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
