"""The side automata of a pass against the direct construction they replace.

`fstsynth.bimachine` builds each side's automaton on masks (what the cells read decide
about the positions to come). The direct construction, kept here as the reference,
builds it on a window of the cells' signatures (per offset, the truth of every atom
tested there) and the signatures of the nearest tier tokens, then minimizes it. Both
are minimized with respect to the same observations, so the minimal automata are the
same; both number states as a breadth-first walk over the symbols finds them, so the
tables must be equal array for array, not just equivalent."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings

from fstsynth.bimachine import _classes, _compact, _side_automaton, group_rows, pass_tags, program_tokens
from fstsynth.dsl import BOUNDARY
from fstsynth.pass_decisions import BOUNDARY_CELL, Cells, Side, decisions_of, sides_of

from program_strategies import cases


def _window_automaton(side: Side, cells: Cells, classes: list[int], rules: int):
    """The side automaton on windows of signatures, minimized (Moore), in the tables'
    compact form: (steps, start, mask per state, copied tokens per state)."""
    width = side.width
    tier_names = sorted(side.tier_feats)

    def signatures(v: int) -> tuple:
        sig = tuple(tuple(cells.value(a, v) for a in side.atoms[j]) for j in range(width))
        tier_sigs = tuple(
            (cells.has(v, tier), tuple(tuple(cells.has(v, f) for f in feats) for feats in side.tier_feats[tier]))
            for tier in tier_names
        )
        return sig, tier_sigs

    sig_ids: dict[tuple, int] = {}
    class_sig = np.array([sig_ids.setdefault(signatures(rep), len(sig_ids)) for rep in classes], dtype=np.int64)
    boundary_sig, _ = signatures(BOUNDARY_CELL)
    start = (
        tuple(boundary_sig[j:] for j in range(width)),
        tuple((None,) * len(side.tier_feats[tier]) for tier in tier_names),
    )

    def step(state: tuple, read: tuple) -> tuple:
        window, memory = state
        sig, tier_sigs = read
        new_window = (sig,) + tuple(cell[1:] for cell in window[:-1]) if width else ()
        new_memory = tuple(
            (tsig,) + tuple(None if e is None else e[1:] for e in mem[:-1]) if on else mem
            for mem, (on, tsig) in zip(memory, tier_sigs)
        )
        return new_window, new_memory

    ids = {start: 0}
    states = [start]
    rows = []
    for state in states:  # grows as states are found: a breadth-first walk
        row = []
        for read in sig_ids:
            found = ids.setdefault(step(state, read), len(ids))
            if found == len(states):
                states.append(step(state, read))
            row.append(found)
        rows.append(row)

    every = (1 << rules) - 1

    def mask_of(window: tuple, memory: tuple) -> int:
        mask = every
        for j in range(width):
            sig = window[j][0]
            for r, tests in side.cell_tests[j].items():
                if not all(bool(sig[i]) != neg for i, neg in tests):
                    mask &= ~(1 << r)
        for tier, mem in zip(tier_names, memory):
            for r, tests in side.tier_tests[tier].items():
                for q, feature, neg in tests:
                    entry = mem[q]
                    if entry is None:
                        value = feature is BOUNDARY
                    else:
                        value = feature is not BOUNDARY and entry[0][side.tier_feats[tier][q].index(feature)]
                    if value == neg:
                        mask &= ~(1 << r)
        return mask

    copy_at = [(abs(o) - 1, side.atoms[abs(o) - 1].index(("copy",))) for o in side.copy_offsets]
    masks = [mask_of(*state) for state in states]
    copied = [[state[0][j][0][i] for j, i in copy_at] for state in states]
    observed: dict[tuple, int] = {}
    block = np.array([observed.setdefault((m, tuple(c)), len(observed)) for m, c in zip(masks, copied)])
    table = np.array(rows, dtype=np.int64).reshape(len(states), len(sig_ids))
    count = len(observed)
    while True:
        block, first = group_rows(np.concatenate([block[:, None], block[table]], axis=1))
        if len(first) == count:
            break
        count = len(first)
    reps = [block.tolist().index(b) for b in range(count)]
    steps = _compact(block[table[reps]], np.arange(count), class_sig)
    copies = np.array([copied[s] for s in reps], dtype=np.int32).reshape(count, len(copy_at))
    return steps, int(block[0]), [masks[s] for s in reps], copies


@settings(max_examples=40, derandomize=True, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(cases(words_per_case=1))
def test_side_automata_are_the_window_automata_minimized(case):
    """Every pass's two automata, of programs with every construct (offsets to +-3,
    tiers, copies, tags, feature rules), equal the reference's array for array."""
    tokens = tuple(sorted(program_tokens(case.program, case.alphabet, case.features)))
    tags = pass_tags(case.program)
    for k, pass_ in enumerate(case.program.passes):
        decisions = decisions_of(pass_.rules, tokens, case.features)
        cells = Cells(tokens, tags[k], case.features)
        left, center, _, right = sides_of(decisions)
        _, reps = _classes(cells, left, center, right)
        for side in (left, right):
            steps, start, masks, copies = _side_automaton(side, cells, reps, len(decisions), None)
            want_steps, want_start, want_masks, want_copies = _window_automaton(side, cells, reps, len(decisions))
            for got, want in zip(steps, want_steps):
                assert np.array_equal(got, want), (str(pass_), side.side)
            assert (start, masks.per_state()) == (want_start, want_masks), (str(pass_), side.side)
            # Each distinct mask once, each of some state.
            assert len(set(masks.distinct)) == len(masks.distinct) == len(set(masks.of.tolist()))
            assert np.array_equal(copies, want_copies), (str(pass_), side.side)
