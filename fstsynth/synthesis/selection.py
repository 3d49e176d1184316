"""Selection: one pass as a decision list, built greedily from the candidates.

Public API:
    synthesize_pass(examples, features, options, deadline, edges) -> Pass

Repeatedly take the rule that answers the most still-undecided examples that need a
change, among those that answer no undecided example wrongly; ties go to the better
ranking score, then to the printed form (determinism). Examples a rule fires on are
decided by it. A rule wrong only where `exceptions.Exceptions` tolerates it is taken
with its exception rules before it, its gain then shared among them.
"""

from __future__ import annotations

import bisect
import heapq
from typing import Sequence

from fstsynth.dsl import Pass
from fstsynth.synthesis.atoms import atom_index
from fstsynth.synthesis.bitsets import bit_indices, bits, lowest_bit
from fstsynth.synthesis.candidates import Candidate, Positives, candidates
from fstsynth.synthesis.examples import TaggedExample
from fstsynth.synthesis.exceptions import Exceptions, slots_of
from fstsynth.synthesis.options import Deadline, Options
from fstsynth.types import Features


def synthesize_pass(
    examples: Sequence[TaggedExample],
    features: Features,
    options: Options,
    deadline: Deadline | None = None,
    edges: frozenset[int] | None = None,
) -> Pass:
    """The pass selected from the candidates over `examples`. `deadline`: by default,
    `options.time_limit` from now. `edges`: the affix edges of the edge prior
    (`candidates.affix_edges`; by default the pass's own)."""
    if deadline is None:
        deadline = Deadline.after(options.time_limit)
    index = atom_index(examples, features, options, deadline)
    found, need = candidates(examples, features, options, deadline, index, edges)
    # Gains are counted over each transformation's positive examples (`Positives`): the
    # undecided ones among them, per transformation (`undecided_at`), and where each
    # example sits in those lists (`slots`). The examples needing a change are one more
    # such list, for the exceptions (`Exceptions.needed`).
    needed = Positives(-2, bit_indices(need))
    groups = {id(cand.positives): cand.positives for cand in found}
    groups[id(needed)] = needed
    slots = slots_of(groups.values())
    exceptions = Exceptions(index, need, needed, len(examples), options, found, slots)
    undecided_at = {group.number: (1 << len(group.indices)) - 1 for group in groups.values()}
    chosen = _select(found, need, len(examples), exceptions, slots, undecided_at, deadline)
    if options.feature_rules:
        chosen = without_redundant(chosen, need, len(examples))
    return Pass(tuple(cand.rule for cand in chosen))


#: Passes of more rules than this are kept as selected (each rule tried costs a run of
#: the whole decision list over the examples' bitsets).
PRUNE_AT_MOST = 150


def _right_by(chosen: Sequence[Candidate], keep_right: int, everything: int) -> int:
    """The examples the decision list `chosen` answers right (where none fires, the
    token is kept: right on `keep_right`)."""
    undecided = everything
    right = 0
    for cand in chosen:
        here = undecided & cand.fires
        right |= here & cand.right_where
        undecided &= ~here
    return right | (undecided & keep_right)


def without_redundant(chosen: list[Candidate], need: int, n: int) -> list[Candidate]:
    """`chosen` without the rules it answers as many examples right without: the most
    specific (dearest) tried first. The greedy choice can leave a rule whose examples
    later, broader rules answer as well (English past: "-t after a voiceless non-coronal"
    beside "-t at the end" last); fewer rules state the general pattern."""
    if len(chosen) > PRUNE_AT_MOST:
        return chosen
    everything = (1 << n) - 1
    keep_right = everything & ~need
    right = _right_by(chosen, keep_right, everything)
    kept = list(chosen)
    for cand in sorted(chosen, key=lambda c: -c.cost):
        trial = [c for c in kept if c is not cand]
        if right & ~_right_by(trial, keep_right, everything) == 0:
            kept = trial
    return kept


def _select(
    found: list[Candidate],
    need: int,
    n: int,
    exceptions: Exceptions,
    slots: dict[int, list[tuple[int, int]]],
    undecided_at: dict[int, int],
    deadline: Deadline,
) -> list[Candidate]:
    undecided = (1 << n) - 1
    rules: list[Candidate] = []
    # Each round takes the candidate with the least (-gain, cost, text, index) among
    # those with gain > 0 and no wrong answer on undecided examples. Gains only shrink
    # as examples get decided, so a heap keyed by a past gain holds a lower bound of
    # each key (lazy greedy): an entry popped with its gain still current is the best,
    # without rescoring every candidate each round. Same choices as a full scan.
    # The key is one int, -gain * m + rank, rank being the place in (cost, text, index)
    # order: ordered as the tuple, far cheaper to push and pop.
    m = len(found)
    # The (cost, text, index) order: a stable sort by cost, then each run of equal cost
    # by text (stable again). One sort on tuples compared tuples (a tenth of a small
    # problem's synthesis); one by text over all candidates compared long printed forms
    # many more times than within the runs.
    texts = [cand.text for cand in found]
    costs = [cand.cost for cand in found]
    order = sorted(range(m), key=costs.__getitem__)
    start = 0
    while start < m:
        end = bisect.bisect_right(order, costs[order[start]], start, key=costs.__getitem__)
        if end - start > 1:
            order[start:end] = sorted(order[start:end], key=texts.__getitem__)
        start = end
    gainable = [cand.gainable for cand in found]
    group_of = [cand.positives.number for cand in found]
    heap = []
    for rank, k in enumerate(order):
        gain = gainable[k].bit_count()
        if gain:
            heap.append(-gain * m + rank)
    heapq.heapify(heap)
    # A candidate wrong on some undecided example cannot be taken until every such
    # example is decided. Rather than popping and re-pushing it every round (which made
    # selection quadratic: the broad, high-gain rules wrong somewhere stay on top), it
    # waits on one of those examples (a witness) and is looked at again only when a
    # chosen rule decides that example: then it gets a new witness, or goes back on the
    # heap with its old key (still a lower bound of its current key).
    waiting: dict[int, list[int]] = {}
    # Where a waiting candidate is wrong is made again from its atoms when it is looked
    # at (`wrong_now`), not kept: a long bitset per waiting candidate was most of
    # learning's memory on large passes (German 3,000 pairs: ~926 MB).
    wrong_where = [cand.wrong_where for cand in found]
    predicates = [cand.predicates for cand in found]
    atom_bits = [cand.positives.atom_bits for cand in found]

    def wrong_now(k: int, undecided: int) -> int:
        # Where candidate k fires and is wrong among the undecided examples, from the
        # atoms in turn: the long bitset of where it fires is not made (a candidate
        # right everywhere stops at 0).
        wrong = wrong_where[k] & undecided
        bits_of = atom_bits[k]
        for pred in predicates[k]:
            if not wrong:
                break
            wrong &= bits_of[pred]
        return wrong

    # With exceptions, a candidate wrong only where tokens must stay is ranked by its
    # gain shared among itself and the exception rules it needs: its effective gain,
    # gain // (exceptions + 1). That one can grow, as its exceptions drop out when the
    # examples they were for get decided, so it cannot be the heap key: the heap keeps
    # the whole gain (an upper bound of the effective gain, and still only shrinking).
    # A candidate needing exceptions is scored when popped, kept aside if it is the
    # best so far, and the round ends once the heap's least key is past the best
    # effective key; those kept aside go back on the heap with their whole gain. Same
    # choices as a full scan by effective key, given each candidate's exceptions
    # (found once, then only cut down).
    # Such a candidate put aside stays as it is until an example its gain or its wrong
    # set holds is decided: till then its gain, where it is wrong, `tolerates` and
    # `cover` (its exceptions, once found, only cut down to where it is wrong) are
    # unchanged. So they are kept (`aside_kept`: where it is wrong, whether tolerated,
    # and, once its exceptions are found, its effective key and them) and scored again
    # only once one of those examples is decided (`depends`: the candidates put aside,
    # by example). It still comes off the heap at its place, so every other candidate
    # is looked at, and first searched for exceptions, in the same round as when each
    # was rescored whenever popped (German 3,000 pairs: 2.1M such pops in 662 rounds).
    aside_kept: dict[int, tuple[int, bool, int | None, list[Candidate]]] = {}
    depends: dict[int, list[int]] = {}
    # The candidates entered in `depends`: once each, as what they depend on only
    # shrinks (the undecided examples among fixed ones).
    registered: set[int] = set()

    def keep_aside(k: int, gain: int, rank: int, wrong: int, tolerated: bool) -> None:
        # Candidate k put aside with this gain and `wrong`, as `aside_kept` keeps it:
        # with its effective key and exceptions once these were found and while they
        # leave it some gain (else `cover` is asked again, as it then says so).
        again = exceptions.kept(k, wrong)
        if again is not None and gain > len(again):
            aside_kept[k] = (wrong, tolerated, -(gain // (len(again) + 1)) * m + rank, again)
        else:
            aside_kept[k] = (wrong, tolerated, None, [])
        if k not in registered:
            registered.add(k)
            indices = found[k].positives.indices
            for bit in bit_indices(gainable[k] & undecided_at[group_of[k]]):
                depends.setdefault(indices[bit], []).append(k)
            for index in bit_indices(wrong):
                depends.setdefault(index, []).append(k)

    def witness(wrong: int) -> int:
        # Until those are decided, a rule wrong where a change is needed waits on one
        # (unless it is broad enough to take exceptions there: `tolerates`).
        return lowest_bit(wrong & need or wrong)

    while undecided & need:
        deadline.check()
        best = None
        best_key = 0
        excepted: list[Candidate] = []
        aside: list[int] = []  # keys popped for candidates needing exceptions
        while heap:
            key = heap[0]
            if best is not None and key > best_key:
                break  # every key left is a lower bound past the best
            past = key // m  # -gain when pushed
            rank = key - past * m
            k = order[rank]
            kept = aside_kept.get(k)
            if kept is None:
                gain = (gainable[k] & undecided_at[group_of[k]]).bit_count()
                if gain == 0:
                    heapq.heappop(heap)
                    continue  # never again: undecided only shrinks
                if gain != -past:
                    # Popped and pushed back with its gain now, in one sift: the keys
                    # are ints, so the pops come in the same order whatever the heap's
                    # layout.
                    heapq.heapreplace(heap, -gain * m + rank)
                    continue
                heapq.heappop(heap)
                wrong = wrong_now(k, undecided)
                if not wrong:
                    # Its key is exact and the least on the heap, hence below `best_key`.
                    best, excepted = found[k], []
                    break
                tolerated = exceptions.tolerates(gain, wrong)
                shared: int | None = None
            else:
                # Nothing it depends on was decided since it was put aside: its key is
                # exact, and the rest as kept.
                heapq.heappop(heap)
                gain = -past
                wrong, tolerated, shared, kept_exceptions = kept
            if shared is not None:
                aside.append(key)
                if best is None or shared < best_key:
                    best, best_key, excepted = found[k], shared, kept_exceptions
                continue
            if best is not None and tolerated and -(gain // 2) * m + rank > best_key:
                # Even with one exception it cannot beat this round's best: no search.
                aside.append(key)
                if kept is None:
                    keep_aside(k, gain, rank, wrong, tolerated)
                continue
            danger = undecided_at[exceptions.needed.number]
            excepting = exceptions.cover(k, wrong, danger, gain, undecided, tolerated) if gain > 1 else None
            if excepting is None or gain <= len(excepting):
                waiting.setdefault(witness(wrong), []).append(key)
                aside_kept.pop(k, None)
                continue
            aside.append(key)
            shared = -(gain // (len(excepting) + 1)) * m + rank
            if best is None or shared < best_key:
                best, best_key, excepted = found[k], shared, excepting
            keep_aside(k, gain, rank, wrong, tolerated)
        for key in aside:
            heapq.heappush(heap, key)
        if best is None:
            break
        fires = best.fires
        for rule in excepted:
            rules.append(rule)
            fires |= rule.fires
        rules.append(best)
        # The exceptions' examples are decided too (kept as they are): through
        # `decided`, like the rule's, so the waiting lists and `undecided_at` follow.
        decided = undecided & fires
        undecided &= ~fires
        cleared: dict[int, list[int]] = {}
        for index in bit_indices(decided):
            for number, bit in slots.get(index, ()):
                cleared.setdefault(number, []).append(bit)
            for k in depends.pop(index, ()):
                aside_kept.pop(k, None)
            for key in waiting.pop(index, ()):
                # `witness` and `exceptions.tolerates` spelt out: this loop runs for
                # every candidate waiting on a decided example.
                k = order[key % m]
                wrong = wrong_now(k, undecided)
                if wrong:
                    changing = wrong & need
                    if not (
                        exceptions.tolerates_changes((gainable[k] & undecided_at[group_of[k]]).bit_count(), changing)
                        if changing
                        else exceptions.limit
                    ):
                        waiting.setdefault(lowest_bit(changing or wrong), []).append(key)
                        continue
                heapq.heappush(heap, key)
        for number, cleared_bits in cleared.items():
            undecided_at[number] &= ~bits(cleared_bits)
    return rules
