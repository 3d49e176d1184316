"""Exceptions: the rules that let a broad rule be taken despite a few examples where it
is wrong.

Public API:
    Exceptions, Slots, slots_of(groups), NOISE_GAIN, NOISE_SHARE

Without them the selection, which takes no rule wrong on an undecided example, splits
one broad rule into a narrow rule per context it saw (`i -> j` before a vowel, blocked
by `ci` + vowel, became one rule per preceding consonant) and predicts nothing
for the contexts it did not see. Placed just before the broad rule, each exception
fires first on some of the examples where it is wrong:

- where the tokens must stay, an `Identity` rule that fires on no undecided example
  needing a change (`Exceptions._one`);
- for a rule of `NOISE_GAIN` changes or more, also at a few examples that need another
  change (one in `NOISE_SHARE` of its gain at most): a candidate of the pool right
  wherever it fires (`Exceptions._changing`).
"""

from __future__ import annotations

from typing import Iterable, Mapping

import numpy as np

from fstsynth.dsl import Identity, Predicate, Rule
from fstsynth.synthesis.atoms import AtomIndex
from fstsynth.synthesis.bitsets import column_bits, lowest_bit
from fstsynth.synthesis.candidates import Candidate, Positives
from fstsynth.synthesis.options import Options
from fstsynth.synthesis.ranking import rule_cost

#: A rule making at least this many changes may be taken with exceptions that make
#: other changes, at one example in `NOISE_SHARE` of its gain at most: in data this
#: large an odd word is more likely a loan or a slip than a rule (a loan `hills` ->
#: `ʝ ʝ s`, aligned l:ʝ l:ʝ, blocked "the first `l` of `ll` is silent").
NOISE_GAIN = 20
NOISE_SHARE = 20

#: Where each example sits in the positive examples of each transformation: a list of
#: (group number, bit) per example index.
Slots = Mapping[int, list[tuple[int, int]]]


def slots_of(groups: Iterable[Positives]) -> dict[int, list[tuple[int, int]]]:
    """The `Slots` of these groups of positive examples."""
    slots: dict[int, list[tuple[int, int]]] = {}
    for group in groups:
        for bit, index in enumerate(group.indices):
            slots.setdefault(index, []).append((group.number, bit))
    return slots


class Exceptions:
    """Finds, for a candidate, the exception rules it needs (`cover`), and says which
    candidates may have any (`tolerates`).

    `needed` lists the examples that need a change (`need`): the only ones an
    `Identity` exception can endanger. Selection keeps which of them are undecided, as
    for a transformation's positive examples, so `needed` must be one of the groups of
    `slots` (selection's, over the candidates' `positives` and `needed`)."""

    def __init__(
        self,
        index: AtomIndex,
        need: int,
        needed: Positives,
        n: int,
        options: Options,
        pool: list[Candidate],
        slots: Slots,
    ) -> None:
        self.index = index
        self.need = need
        self.needed = needed
        # For the exceptions that make a change (`_changing`): the pool by
        # transformation, and where each example sits in the positive examples.
        self.by_group: dict[int, list[Candidate]] = {}
        for cand in pool:
            self.by_group.setdefault(cand.positives.number, []).append(cand)
        self.slots = slots
        # Per anchor example, the changing exception found (kept: it stays right as
        # examples get decided), or, if none, how many examples were undecided then.
        self.changing: dict[int, Candidate | int] = {}
        self.limit = options.exceptions
        self.depth = max(1, options.max_conjuncts)
        self.variant = options.variant
        # `Identity` is right exactly where no change is needed; it gains nothing (no
        # positive examples), so an exception never counts in `undecided_at`.
        self.right = ((1 << n) - 1) & ~need
        self.no_positives = Positives(-1, [])
        self.found: dict[int, list[Candidate]] = {}  # by candidate index
        # `_one` tests conjunctions on bitsets over `needed` (made when first needed):
        # ops on ints as long as the example list were most of its cost.
        self.need_bits: list[int] | None = None  # per atom of `index.usable`
        self.here: dict[int, list[tuple[Predicate, int]]] = {}  # atoms true at an example
        # Anchors where no rule was found, with the size of the danger then: while it is
        # the same (it only shrinks), none would be found again.
        self.failed: dict[int, int] = {}

    def tolerates(self, gain: int, wrong: int) -> bool:
        """Whether a rule of this gain may be taken with exceptions where it is wrong:
        everywhere the tokens must stay, and, for a rule of `NOISE_GAIN` or more, at a
        few examples needing another change (one word in `NOISE_SHARE` of its gain)."""
        if not self.limit:
            return False
        changing = wrong & self.need
        return not changing or self.tolerates_changes(gain, changing)

    def tolerates_changes(self, gain: int, changing: int) -> bool:
        """`tolerates` where the rule is wrong on the examples `changing` (not none)
        that need a change."""
        return bool(self.limit) and gain >= NOISE_GAIN and changing.bit_count() * NOISE_SHARE <= gain

    def cover(self, k: int, wrong: int, danger: int, gain: int, undecided: int) -> list[Candidate] | None:
        """Exception rules (at most `limit`) that together fire on every example of
        `wrong`, each right on every undecided example where it fires: `Identity` rules
        firing on no undecided example that needs a change (`danger`, a bitset over
        `needed`), and for the few examples needing another change (`tolerates`), rules
        of the candidate pool. None if the search finds none such. Found once per
        candidate `k`, then only cut down."""
        if not self.tolerates(gain, wrong):
            # Exceptions that change tokens for any rule (any rule right where it
            # fires) gained 0.3 points of held-out Exact on 1,000 spelling -> IPA pairs
            # (97.0% -> 97.3%) but lost 1.3 points on small problems, and learning took
            # 3x as long: hence only for broad rules.
            return None
        cached = self.found.get(k)
        if cached is not None:
            # Still right as examples get decided (they fire on fewer undecided ones);
            # drop those no longer needed.
            return [e for e in cached if e.fires & wrong]
        rules: list[Candidate] = []
        left = wrong
        while left:
            if len(rules) == self.limit:
                return None
            # Those changing tokens first: an `Identity` exception may then fire on
            # their examples too (they are decided by the time it is reached).
            changing = left & self.need
            if changing:
                rule = self._changing(lowest_bit(changing), changing, undecided)
            else:
                rule = self._one(lowest_bit(left), left, danger)
            if rule is None:
                return None
            rules.append(rule)
            left &= ~rule.fires
        self.found[k] = rules
        return rules

    def _changing(self, anchor: int, left: int, undecided: int) -> Candidate | None:
        """The candidate firing at `anchor` and right on every undecided example where
        it fires with the fewest predicates; among those, the one firing on most of
        `left`, then the cheapest, then the smallest printed form. Found once per
        anchor."""
        count = undecided.bit_count()
        seen = self.changing.get(anchor)
        if isinstance(seen, Candidate):
            return seen
        if seen == count:
            return None
        best = None
        best_key = None
        # Only the transformations right at the anchor, and of those the candidates
        # firing there: tested on the small positive-example bitsets, not the long ones.
        for number, bit in self.slots.get(anchor, ()):
            for cand in self.by_group.get(number, ()):  # `needed` has no candidates
                if not cand.gainable >> bit & 1 or cand.fires & cand.wrong_where & undecided:
                    continue
                key = (len(cand.predicates), -(cand.fires & left).bit_count(), cand.cost, cand.text)
                if best_key is None or key < best_key:
                    best, best_key = cand, key
        self.changing[anchor] = best if best is not None else count
        return best

    def _one(self, anchor: int, left: int, danger: int) -> Candidate | None:
        """The shortest rule `... => Identity` true at example `anchor` that fires on no
        example of `danger`; among those, the one firing on most of `left`, then the
        cheapest, then the smallest printed form."""
        if self.need_bits is None:
            self.need_bits = column_bits(self.index.table[self.needed.indices])
        here = self.here.get(anchor)
        if here is None:
            # The table's row, not a test of each atom's long bitset.
            usable, need_bits = self.index.usable, self.need_bits
            here = self.here[anchor] = [
                (usable[i], need_bits[i]) for i in np.flatnonzero(self.index.table[anchor])
            ]
        danger_size = danger.bit_count()  # danger only shrinks: its size tells it
        if self.failed.get(anchor) == danger_size:
            return None
        # On the examples needing a change, a conjunction of the least size avoiding
        # danger narrows at each step (else one atom less would do), so "adds nothing"
        # tested there prunes none of them: the same rules are found as by a search on
        # all examples.
        best: tuple[tuple[int, int, float, str], Rule, int] | None = None
        frontier: list[tuple[tuple[Predicate, ...], int, int]] = [((), -1, -1)]
        atoms = self.index.bits
        for depth in range(1, self.depth + 1):
            grown = []
            for preds, where, last in frontier:
                for idx in range(last + 1, len(here)):
                    p, pbits = here[idx]
                    both = where & pbits
                    if both == where:
                        continue  # adds nothing
                    longer = preds + (p,)
                    if both & danger:
                        grown.append((longer, both, idx))
                        continue
                    fires = -1
                    for q in longer:
                        fires &= atoms[q]
                    covered = (fires & left).bit_count()
                    if best is not None and covered < -best[0][1]:
                        continue  # the cost and printed form only break ties
                    rule = Rule(longer, Identity())
                    key = (depth, -covered, rule_cost(rule, self.variant), str(rule))
                    if best is None or key < best[0]:
                        best = (key, rule, fires)
            if best is not None:
                break  # a deeper rule cannot be better
            frontier = grown
        if best is None:
            self.failed[anchor] = danger_size
            return None
        key, rule, fires = best
        return Candidate(
            rule.predicates, rule.transformation, fires, 0, self.no_positives, key[2], key[3], self.need, self.right
        )
