"""The exception search (`fstsynth.synthesis.exceptions`) against a plain enumeration."""

from __future__ import annotations

import random
from itertools import combinations

import numpy as np
import pytest

from fstsynth.dsl import Identity, IsToken, Predicate, Rule
from fstsynth.synthesis.atoms import AtomIndex
from fstsynth.synthesis.bitsets import bit_indices, bits, column_bits, maximal_rows
from fstsynth.synthesis.candidates import Positives
from fstsynth.synthesis.exceptions import Exceptions, slots_of
from fstsynth.synthesis.options import Options
from fstsynth.synthesis.ranking import rule_cost


def _random_index(rng: random.Random, n: int, atoms: int, density: float) -> AtomIndex:
    table = np.array([[rng.random() < density for _ in range(atoms)] for _ in range(n)], dtype=np.uint8)
    # Atoms of different costs (offsets) and printed forms, so that ties are broken by both.
    usable: list[Predicate] = [IsToken(f"t{a % 5}", a // 5 - 2) for a in range(atoms)]
    return AtomIndex(dict(zip(usable, column_bits(table))), usable, table)


def _expected(index: AtomIndex, anchor: int, left: int, danger_rows: list[int], depth: int,
              variant: str) -> tuple[str, int] | None:
    """The shortest conjunction true at `anchor` and at no danger row; then the one
    true on most of `left`, the cheapest, the smallest printed form: by enumeration."""
    here = [i for i in range(len(index.usable)) if index.table[anchor, i]]
    for size in range(1, depth + 1):
        best = None
        for conj in combinations(here, size):
            if any(all(index.table[r, i] for i in conj) for r in danger_rows):
                continue
            preds = tuple(index.usable[i] for i in conj)
            fires = -1
            for p in preds:
                fires &= index.bits[p]
            rule = Rule(preds, Identity())
            key = (-(fires & left).bit_count(), rule_cost(rule, variant), str(rule))
            if best is None or key < best[0]:
                best = (key, fires)
        if best is not None:
            return best[0][2], best[1]
    return None


def _check(
    seed: int, ranked_at_most: int = Exceptions.RANKED_AT_MOST, kept_at_most: int = Exceptions.KEPT_AT_MOST
) -> list[int]:
    """Compare the search with the enumeration on a random table; the sizes of the
    exceptions found."""
    rng = random.Random(seed)
    n, atoms = rng.randint(8, 40), rng.randint(3, 14)
    index = _random_index(rng, n, atoms, rng.choice([0.5, 0.7, 0.85]))
    need_rows = sorted(rng.sample(range(n), n // 2))
    need = bits(need_rows)
    needed = Positives(-2, need_rows)
    options = Options(variant="token", max_conjuncts=rng.choice([1, 2, 3, 4]))
    exceptions = Exceptions(index, need, needed, n, options, [], slots_of([needed]))
    exceptions.RANKED_AT_MOST = ranked_at_most  # 0: every anchor's conjunctions as arrays
    exceptions.KEPT_AT_MOST = kept_at_most  # 0: nothing kept from one request to the next
    stay = [k for k in range(n) if not need >> k & 1]
    danger = (1 << len(need_rows)) - 1
    sizes = []
    # Danger shrinks as examples get decided: the search must follow it.
    for _ in range(6):
        anchor = rng.choice(stay)
        left = bits({anchor, *rng.sample(stay, min(3, len(stay)))})
        danger_rows = [need_rows[b] for b in bit_indices(danger)]
        expected = _expected(index, anchor, left, danger_rows, options.max_conjuncts, options.variant)
        got = exceptions._one(anchor, left, danger)
        if expected is None:
            assert got is None
        else:
            assert got is not None
            sizes.append(len(got.predicates))
            assert (got.text, got.fires) == expected
            assert got.text == str(got.rule) and got.cost == rule_cost(got.rule, options.variant)
        # Asked again with a narrower `left`, from what was kept for this anchor.
        again = exceptions._one(anchor, 1 << anchor, danger)
        expected = _expected(index, anchor, 1 << anchor, danger_rows, options.max_conjuncts, options.variant)
        assert (None if again is None else (again.text, again.fires)) == expected
        danger &= ~(1 << rng.randrange(len(need_rows)))
    return sizes


@pytest.mark.parametrize("ranked_at_most, kept_at_most",
                         [(Exceptions.RANKED_AT_MOST, Exceptions.KEPT_AT_MOST), (0, Exceptions.KEPT_AT_MOST),
                          (Exceptions.RANKED_AT_MOST, 0)])
@pytest.mark.parametrize("seed", range(30))
def test_identity_exceptions_are_the_shortest_safe_conjunction(seed, ranked_at_most, kept_at_most):
    _check(seed, ranked_at_most, kept_at_most)


def test_the_random_tables_need_exceptions_of_every_size():
    # Else the comparison above would not reach the deeper searches.
    sizes = {size for seed in range(30) for size in _check(seed)}
    assert {1, 2, 3} <= sizes



def test_conjunctions_past_the_bound_are_cut_and_stay_sound():
    # Danger rows holding each pair of atoms and nothing else: no atom nor pair avoids
    # them, every triple does (364 of 14 atoms), past a bound of 50.
    atoms = 14
    pair_rows = list(combinations(range(atoms), 2))
    table = np.zeros((1 + len(pair_rows), atoms), dtype=np.uint8)
    table[0] = 1  # the anchor
    for row, pair in enumerate(pair_rows, 1):
        table[row, list(pair)] = 1
    usable: list[Predicate] = [IsToken(f"t{a % 5}", a // 5 - 2) for a in range(atoms)]
    index = AtomIndex(dict(zip(usable, column_bits(table))), usable, table)
    n = len(table)
    need_rows = list(range(1, n))
    needed = Positives(-2, need_rows)

    def search(bound: int) -> tuple[Exceptions, np.ndarray, np.ndarray]:
        exceptions = Exceptions(index, bits(need_rows), needed, n, Options(variant="token", max_conjuncts=3), [],
                                slots_of([needed]))
        exceptions.CONJUNCTIONS_AT_MOST = bound
        return exceptions, *exceptions._safe_conjunctions(0, (1 << len(need_rows)) - 1)

    _, _, every = search(Exceptions.CONJUNCTIONS_AT_MOST)
    assert len(every) == len(list(combinations(range(atoms), 3)))
    exceptions, columns, kept = search(50)
    assert len(kept) == 50
    assert len({tuple(row) for row in kept}) == 50
    costs = exceptions.atom_costs[columns]
    cheapest = sorted(range(atoms), key=lambda a: costs[a])[:3]
    assert sorted(cheapest) in [list(row) for row in kept]  # the cheapest atoms are kept
    for row in kept:
        assert list(row) == sorted(row)
        assert not any(table[r, columns[row]].all() for r in need_rows)  # sound
    rule = exceptions._one(0, 1, (1 << len(need_rows)) - 1)
    assert rule is not None and len(rule.predicates) == 3
    assert rule.fires & 1 and not any(rule.fires >> r & 1 for r in need_rows)


def _followed_against_fresh(seed: int, followed_at_most: int, wide: bool = False,
                            searched_deeper: list[int] | None = None) -> tuple[int, int]:
    """Shrink the danger of random tables by a few examples at a time: the
    conjunctions each anchor keeps (followed from the larger danger) must be those a
    fresh search finds. How many requests were followed, and how many of those found
    new conjunctions. `wide`: anchors true on past one 64-bit word of atoms.
    `searched_deeper`: appended, per request followed from kept conjunctions of one or
    two atoms, how many depth-3 searches it made (`maximal_rows` calls)."""
    rng = random.Random(seed)
    n, atoms = rng.randint(20, 60), (rng.randint(130, 150) if wide else rng.randint(4, 12))
    index = _random_index(rng, n, atoms, rng.choice([0.5, 0.7, 0.85]))
    need_rows = sorted(rng.sample(range(n), 2 * n // 3))
    needed = Positives(-2, need_rows)
    options = Options(variant="token", max_conjuncts=rng.choice([2, 3]))
    exceptions = Exceptions(index, bits(need_rows), needed, n, options, [], slots_of([needed]))
    exceptions.FOLLOWED_AT_MOST = followed_at_most
    fresh = Exceptions(index, bits(need_rows), needed, n, options, [], slots_of([needed]))
    stay = [k for k in range(n) if k not in set(need_rows)]
    anchors = rng.sample(stay, min(3, len(stay)))
    danger = (1 << len(need_rows)) - 1
    followed = changed = 0
    while danger:
        for anchor in anchors:
            before = exceptions.safe.get(anchor)
            deeper = _maximal_rows_calls.copy()
            exceptions._one(anchor, 1 << anchor, danger)
            kept = exceptions.safe[anchor]
            if (searched_deeper is not None and before is not None and before.danger != danger
                    and 0 < before.conjunctions.shape[1] <= 2 and len(before.conjunctions)):
                searched_deeper.append(len(_maximal_rows_calls) - len(deeper))
            columns, expected = fresh._safe_conjunctions(anchor, danger)
            assert list(kept.columns) == list(columns)
            assert sorted(map(tuple, kept.conjunctions)) == sorted(map(tuple, expected))
            assert kept.conjunctions.shape[1:] == expected.shape[1:] or not len(expected)
            if before is not None and before.danger != danger:
                followed += 1
                changed += before.conjunctions is not kept.conjunctions
        for bit in rng.sample(bit_indices(danger), min(rng.randint(1, 4), danger.bit_count())):
            danger &= ~(1 << bit)
    return followed, changed


#: Every `maximal_rows` call of `exceptions` (the depth-3 search), where a test spies.
_maximal_rows_calls: list[int] = []


@pytest.fixture
def spied_maximal_rows(monkeypatch):
    from fstsynth.synthesis import exceptions as exceptions_module

    def counted(table):
        _maximal_rows_calls.append(len(table))
        return maximal_rows(table)

    monkeypatch.setattr(exceptions_module, "maximal_rows", counted)
    _maximal_rows_calls.clear()
    yield _maximal_rows_calls
    _maximal_rows_calls.clear()


@pytest.mark.parametrize("followed_at_most", [Exceptions.FOLLOWED_AT_MOST, 0])
def test_a_shrinking_danger_is_followed_to_what_a_fresh_search_finds(followed_at_most):
    counts = [_followed_against_fresh(seed, followed_at_most) for seed in range(15)]
    # The comparison reached requests whose conjunctions changed with the danger.
    assert sum(changed for _, changed in counts) > 20
    assert sum(followed for followed, _ in counts) > 200


def test_a_shrinking_danger_is_followed_on_anchors_past_one_word_of_atoms():
    # The kept danger rows are 64-bit words (`bitsets.row_words`): rows of 130 to 150
    # atoms take three.
    counts = [_followed_against_fresh(seed, Exceptions.FOLLOWED_AT_MOST, wide=True) for seed in range(4)]
    assert sum(changed for _, changed in counts) > 5


def test_a_followed_danger_seeks_no_conjunctions_longer_than_those_kept(spied_maximal_rows):
    # Kept conjunctions of one or two atoms stay safe as the danger shrinks: a vanished
    # row's atoms are searched up to that size only, never by the depth-3 search.
    deeper: list[int] = []
    for seed in range(15):
        _followed_against_fresh(seed, Exceptions.FOLLOWED_AT_MOST, searched_deeper=deeper)
    assert len(deeper) > 50 and sum(deeper) == 0


def _least_by_enumeration(on_danger: np.ndarray, costs: np.ndarray, depth: int, bound: int) -> tuple[set, bool]:
    """The conjunctions of the least size true on no danger row, by enumeration: the
    first `bound` in the order of the atoms by cost (stable) if there are more, and
    whether they are all of them."""
    order = sorted(range(on_danger.shape[1]), key=lambda a: costs[a])
    for size in range(1, depth + 1):
        safe = [tuple(sorted(c)) for c in combinations(order, size) if not on_danger[:, list(c)].all(axis=1).any()]
        if safe:
            return set(safe[:bound]), len(safe) <= bound
    return set(), True


def _least_against_enumeration(seed: int) -> tuple[int, bool]:
    """Compare `_least` with the enumeration on a random danger table; the size of
    the conjunctions found (0: none) and whether they are all of them."""
    # Wide rows (past one 64-bit word) and dense ones, so the searches reach size 3.
    rng = np.random.default_rng(seed)
    rows, atoms = int(rng.integers(1, 40)), int(rng.choice([5, 9, 17, 70]))
    on_danger = rng.random((rows, atoms)) < rng.choice([0.3, 0.5, 0.7])
    costs = rng.integers(1, 4, atoms).astype(np.float64)
    depth = int(rng.choice([2, 3, 3]))
    bound = int(rng.choice([5, 1 << 20]))
    index = _random_index(random.Random(seed), 4, atoms, 0.5)
    exceptions = Exceptions(index, 0, Positives(-2, []), 4, Options(variant="token", max_conjuncts=depth), [], {})
    exceptions.CONJUNCTIONS_AT_MOST = bound
    found, whole = exceptions._least(0, on_danger, costs)
    expected, expected_whole = _least_by_enumeration(on_danger, costs, depth, bound)
    assert {tuple(row) for row in found} == expected
    assert len(found) == len(expected) and whole == expected_whole
    return (found.shape[1] if len(found) else 0), whole


@pytest.mark.parametrize("seed", range(60))
def test_least_conjunctions_match_an_enumeration(seed):
    _least_against_enumeration(seed)


@pytest.mark.slow  # every table of the comparison again: 3 to 4 s
def test_the_random_danger_tables_reach_cut_searches_of_three_atoms():
    # Else the comparison above would not reach the depth-3 search nor its cut.
    seen = {_least_against_enumeration(seed) for seed in range(60)}
    assert {(3, True), (3, False), (2, False), (1, True), (0, True)} <= seen


def test_maximal_rows_only_for_searches_past_pairs(monkeypatch):
    """`_least` leaves out the rows within others (`maximal_rows`) only before the
    depth-3 search: for the one product of the pairs it costs more than it saves. The
    enumeration comparison above checks the conjunctions either way."""
    from fstsynth.synthesis import exceptions as exceptions_module

    calls = []

    def counted(table):
        calls.append(len(table))
        return maximal_rows(table)

    monkeypatch.setattr(exceptions_module, "maximal_rows", counted)
    exceptions = Exceptions(_random_index(random.Random(0), 4, 4, 0.5), 0, Positives(-2, []), 4,
                            Options(variant="token", max_conjuncts=3), [], {})
    costs = np.ones(4)
    # No atom is safe, the pair (0, 1) is: a search of pairs alone, no maximal rows.
    pairs = np.array([[1, 0, 1, 1], [0, 1, 1, 1], [1, 0, 0, 1], [1, 0, 1, 1]], dtype=bool)
    found, whole = exceptions._least(0, pairs, costs)
    assert [tuple(row) for row in found] == [(0, 1)] and whole and calls == []
    # Every pair is on some row, no triple on any: the depth-3 search, on maximal rows.
    triples = np.array([[1, 1, 0, 0], [1, 0, 1, 0], [0, 1, 1, 0], [1, 0, 0, 1], [0, 1, 0, 1], [0, 0, 1, 1],
                        [1, 1, 0, 0]], dtype=bool)
    found, whole = exceptions._least(0, triples, costs)
    assert len(found) == 4 and found.shape[1] == 3 and whole and calls == [6]


def _maximal_by_enumeration(table: np.ndarray) -> list[int]:
    """The rows no other row holds every true cell of (of equal rows, the first)."""
    cells = [set(np.flatnonzero(row)) for row in table]
    return [i for i, row in enumerate(cells)
            if not any(j != i and row <= other and (row < other or j < i) for j, other in enumerate(cells))]


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("block", [1, 3, 256])
def test_maximal_rows_match_an_enumeration(seed, block):
    # Repeated rows and rows within others (drawn from a few, then thinned), narrow and
    # past one 64-bit word; blocks of 1 and 3 rows cross block edges.
    rng = np.random.default_rng(seed)
    width = int(rng.choice([1, 6, 70]))
    bases = rng.random((int(rng.integers(1, 6)), width)) < 0.6
    table = bases[rng.integers(0, len(bases), int(rng.integers(1, 30)))]
    table = table & (rng.random(table.shape) < rng.choice([0.8, 1.0]))
    kept = maximal_rows(table.astype(np.uint8), block)
    assert list(kept) == _maximal_by_enumeration(table)
    # What the search relies on: a set of columns lies within some row exactly when
    # it lies within a kept one.
    for columns in combinations(range(min(width, 6)), 2):
        assert table[:, columns].all(axis=1).any() == table[kept][:, columns].all(axis=1).any()


@pytest.mark.parametrize("seed", range(20))
def test_cover_told_whether_the_rule_is_tolerated_finds_what_it_finds_asking_itself(seed):
    # Selection asks `tolerates` before `cover` and passes the answer on: the same
    # exceptions as `cover` asking itself, and none where not tolerated.
    rng = random.Random(seed)
    n, atoms = rng.randint(8, 40), rng.randint(3, 14)
    index = _random_index(rng, n, atoms, rng.choice([0.3, 0.5]))
    need_rows = sorted(rng.sample(range(n), n // 3))
    need, needed = bits(need_rows), Positives(-2, need_rows)
    options = Options(variant="token", max_conjuncts=rng.choice([2, 3]))
    asking, told = (Exceptions(index, need, needed, n, options, [], slots_of([needed])) for _ in range(2))
    danger = (1 << len(need_rows)) - 1
    undecided = (1 << n) - 1
    # Mostly wrong where the tokens must stay (`Identity` exceptions), else anywhere.
    stay = [k for k in range(n) if not need >> k & 1]
    for k in range(8):
        rows = stay if rng.random() < 0.7 else range(n)
        wrong = bits(rng.sample(rows, rng.randint(1, min(3, len(rows)))))
        gain = rng.choice([1, 2, 5, 20, 60])
        expected = asking.cover(k, wrong, danger, gain, undecided)
        got = told.cover(k, wrong, danger, gain, undecided, told.tolerates(gain, wrong))
        assert (None if got is None else [(e.text, e.fires) for e in got]) == (
            None if expected is None else [(e.text, e.fires) for e in expected]
        )
