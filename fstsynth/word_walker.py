"""The reference walker: one word at a time through a pass's checked tables, in plain
Python (a few list lookups per token and pass, linear in the word's length whatever
it is).

Public API:
    walk_word(p, ids, tags) -> (ids, tags)

The batch walkers (`fstsynth.batch_walker`, numpy; `fstsynth._walk`, C) must give
what this gives; tests/backends.py runs every walker against it.
"""

from __future__ import annotations

from fstsynth.table_format import CONSTANT, CheckedPass, Error, lowest_rule


def walk_word(p: CheckedPass, ids: list[int], tags: list[int]) -> tuple[list[int], list[int]]:
    """The pass's output (token indices, and their tags for the next pass) for a word
    given as token indices and tags: one right-to-left and one left-to-right step per
    token, and at each position (the start position first) the template of the lowest
    rule common to the left, class and right masks."""
    n = len(ids)
    symbol_class, rules = p.symbol_class, p.rules
    cls = [symbol_class[g][i] for i, g in zip(ids, tags)]
    right_mask = p.right_mask
    rho = [p.right_start] * n
    state = p.right_start
    if p.looks_right:
        right_next, right_column = p.right_next, p.right_column
        for at in range(n - 1, -1, -1):
            rho[at] = state
            state = right_next[state][right_column[cls[at]]]
    out_ids: list[int] = []
    out_tags: list[int] = []
    templates, out_tag = p.templates, p.out_tag
    left = p.left_start
    decision = lowest_rule(p.left_mask[left] & p.start_mask & right_mask[state], rules)
    _write(templates[rules + 1 + decision], -1, ids, out_ids)
    out_tags.extend([out_tag[decision]] * len(out_ids))
    left_next, left_column, left_mask, class_mask = p.left_next, p.left_column, p.left_mask, p.class_mask
    for at in range(n):
        c = cls[at]
        decision = lowest_rule(left_mask[left] & class_mask[c] & right_mask[rho[at]], rules)
        items = templates[decision]
        _write(items, at, ids, out_ids)
        out_tags.extend([out_tag[decision]] * len(items))
        left = left_next[left][left_column[c]]
    return out_ids, out_tags


def _write(items: tuple[tuple[int, int], ...], at: int, ids: list[int], out: list[int]) -> None:
    """A template's items at position `at` (-1: the start position) appended to `out`."""
    for kind, value in items:
        if kind == CONSTANT:
            out.append(value)
        elif 0 <= at + value < len(ids):
            out.append(ids[at + value])
        else:
            raise Error("damaged tables: a template reads outside the word")
