"""Right states grouped as a decider needs them (`fstsynth.annotations`), against the
whole left x right table of decisions they stand for."""

from __future__ import annotations

import random

import numpy as np
from hypothesis import HealthCheck, given, settings

from fstsynth.annotations import LeftRules, right_groups
from fstsynth.bimachine import PassMachine, group_rows, program_machines, program_tokens
from fstsynth.dsl import IsToken, Pass, Program, ReplaceAnyBy, Rule
from fstsynth.random_programs import ALPHABET, FEATURES, random_program
from fstsynth.table_format import CONSTANT, lowest_rules

from program_strategies import cases


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
    """`right_groups` against the full table for every class of `m` and its start
    position; the number of cases checked."""
    t = m.tables.numpy()
    lefts, rights = t.left_mask[t.left_mask_of], t.right_mask[t.right_mask_of]  # a row per state
    cases_ = [(lefts, t.class_mask[c][None, :] & rights, False) for c in range(m.classes)]
    cases_.append((lefts[t.left_start][None, :], t.start_mask[None, :] & rights, True))
    for left_masks, masks, at_start in cases_:
        kinds, first = right_groups(m, LeftRules(left_masks), masks, at_start, None)
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
    masks = t.class_mask[t.symbol_class[0, tokens.index("a")]][None, :] & t.right_mask[t.right_mask_of]
    assert len({int(row[0]) & 3 for row in masks}) == 3  # {0, 1}, {0} and none of them
    kinds, first = right_groups(m, LeftRules(t.left_mask), masks, False, None)
    expected_kinds, expected_first = _annotations_from_the_full_table(m, t.left_mask[t.left_mask_of], masks, False)
    assert kinds.tolist() == expected_kinds.tolist() and first == expected_first
    assert len(first) < len(group_rows(masks)[1])
