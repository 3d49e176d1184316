"""The CoNLL-SIGMORPHON 2017 shared task's non-neural baseline, re-implemented from its
description for tokens (a token is one segment, e.g. `t͡ʃ` or `aː`):

1. Align lemma and form by edit distance, a substitution costing 1.1 (insertions and
   deletions 1), so that an insertion or a deletion is preferred to a substitution.
   Ties go to a match or substitution, then an insertion, then a deletion, taken at the
   first position where the paths part.
2. Cut the aligned pair into prefix | stem | suffix: the prefix is the leading columns
   where either side has a gap, the suffix the trailing ones.
3. Collect, with counts, every suffix-change rule (each tail of the aligned stem +
   suffix, with an end-of-word marker: `a t >` -> `ɪ d >`, `t >` -> `d >`, ..., `>` ->
   `>`) and every prefix-change rule (beginning-of-word marker + prefix + each head of
   the form's stem, on both sides).
4. Inflect with the longest suffix rule whose left side ends the word (ties: the more
   frequent, then the longer right side), then with the most frequent prefix rule whose
   left side begins it.
5. When the training pairs are mostly prefixing (more gap columns at the start than at
   the end of their Hamming alignments, with the lemma shifted against the form), work
   on reversed words throughout.

Same interface as the Phonetisaurus peer (`peer_phonetisaurus.Peer`): train on token
pairs, predict token sequences.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Sequence

Token = str
Word = tuple[Token, ...]
# An aligned word: tokens and gaps (None), as long as its partner.
Aligned = tuple[Token | None, ...]

# The word-boundary markers of the rules. They are compared by identity with these
# strings only inside rule tuples, never with the data's tokens (see `_mark`).
BOW = "\x02<"
EOW = ">\x03"

# Costs in tenths, so that ties are exact: insertion and deletion 1, substitution 1.1.
INDEL_COST = 10
SUBSTITUTION_COST = 11


def align(lemma: Sequence[Token], form: Sequence[Token]) -> tuple[Aligned, Aligned]:
    """The two words aligned by the least edit cost (module doc, step 1)."""
    n, m = len(lemma), len(form)
    # rest[i][j]: the least cost of aligning lemma[i:] with form[j:].
    rest = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n, -1, -1):
        for j in range(m, -1, -1):
            if i == n or j == m:
                rest[i][j] = INDEL_COST * ((n - i) + (m - j))
                continue
            pair = 0 if lemma[i] == form[j] else SUBSTITUTION_COST
            rest[i][j] = min(
                pair + rest[i + 1][j + 1], INDEL_COST + rest[i][j + 1], INDEL_COST + rest[i + 1][j]
            )
    upper: list[Token | None] = []
    lower: list[Token | None] = []
    i = j = 0
    while i < n or j < m:
        if i < n and j < m:
            pair = 0 if lemma[i] == form[j] else SUBSTITUTION_COST
            if pair + rest[i + 1][j + 1] == rest[i][j]:
                upper.append(lemma[i])
                lower.append(form[j])
                i, j = i + 1, j + 1
                continue
        if j < m and (i == n or INDEL_COST + rest[i][j + 1] == rest[i][j]):
            upper.append(None)
            lower.append(form[j])
            j += 1
        else:
            upper.append(lemma[i])
            lower.append(None)
            i += 1
    return tuple(upper), tuple(lower)


def edit_cost(upper: Aligned, lower: Aligned) -> float:
    """The cost of an alignment, in the description's units (for checks and reports)."""
    tenths = sum(
        INDEL_COST if a is None or b is None else (0 if a == b else SUBSTITUTION_COST)
        for a, b in zip(upper, lower)
    )
    return tenths / 10


@dataclass(frozen=True)
class Parts:
    """An aligned pair cut into prefix | stem | suffix, each side with its gaps."""

    lemma_prefix: Aligned
    lemma_stem: Aligned
    lemma_suffix: Aligned
    form_prefix: Aligned
    form_stem: Aligned
    form_suffix: Aligned


def _leading_gaps(word: Aligned) -> int:
    count = 0
    for tok in word:
        if tok is not None:
            break
        count += 1
    return count


def split_parts(lemma: Sequence[Token], form: Sequence[Token]) -> Parts:
    """Align, then cut at the longest gap runs at either end (module doc, step 2)."""
    upper, lower = align(lemma, form)
    width = len(upper)
    lead = max(_leading_gaps(upper), _leading_gaps(lower))
    trail = max(_leading_gaps(upper[::-1]), _leading_gaps(lower[::-1]))
    end = max(lead, width - trail)
    return Parts(upper[:lead], upper[lead:end], upper[end:], lower[:lead], lower[lead:end], lower[end:])


def _solid(word: Sequence[Token | None]) -> Word:
    return tuple(tok for tok in word if tok is not None)


Rule = tuple[Word, Word]


def rules_of_pair(lemma: Sequence[Token], form: Sequence[Token]) -> tuple[set[Rule], set[Rule]]:
    """(prefix rules, suffix rules) of one training pair (module doc, step 3)."""
    parts = split_parts(lemma, form)
    ins = (*parts.lemma_stem, *parts.lemma_suffix, EOW)
    outs = (*parts.form_stem, *parts.form_suffix, EOW)
    suffix_rules = {(_solid(ins[k:]), _solid(outs[k:])) for k in range(min(len(ins), len(outs)))}
    prefix_rules = set()
    stem = parts.form_stem
    for k in range(len(stem)):
        head = stem[:k]
        prefix_rules.add(
            (_solid((BOW, *parts.lemma_prefix, *head)), _solid((BOW, *parts.form_prefix, *head)))
        )
    return prefix_rules, suffix_rules


def _hamming_alignment(lemma: Sequence[Token], form: Sequence[Token]) -> tuple[Aligned, Aligned]:
    """The best Hamming alignment of the two words shifted against each other (the
    original's `halign`): the lemma slid along the form, or the form along the lemma."""
    n, m = len(lemma), len(form)
    best: tuple[int, Aligned, Aligned] | None = None
    candidates: list[tuple[Aligned, Aligned]] = []
    for pad in range(m + 1):
        candidates.append(((None,) * pad + tuple(lemma) + (None,) * (m - pad), (None,) * n + tuple(form)))
    for pad in range(n + 1):
        candidates.append(((None,) * m + tuple(lemma), (None,) * (n - pad) + tuple(form) + (None,) * pad))
    for upper, lower in candidates:
        score = sum(1 for a, b in zip(upper, lower) if a != b)
        if best is None or score < best[0]:
            best = (score, upper, lower)
    assert best is not None
    kept = [(a, b) for a, b in zip(best[1], best[2]) if a is not None or b is not None]
    return tuple(a for a, _ in kept), tuple(b for _, b in kept)


def mostly_prefixing(pairs: Sequence[tuple[Sequence[Token], Sequence[Token]]]) -> bool:
    """Whether the pairs' Hamming alignments have more gaps at the start than at the end
    (module doc, step 5)."""
    at_start = at_end = 0
    for lemma, form in pairs:
        upper, lower = _hamming_alignment(lemma, form)
        at_start += _leading_gaps(upper) + _leading_gaps(lower)
        at_end += _leading_gaps(upper[::-1]) + _leading_gaps(lower[::-1])
    return at_start > at_end


@dataclass
class Baseline:
    """The rules learned from one set of pairs, and how to apply them."""

    reverse: bool = False
    prefix_rules: Counter[Rule] = field(default_factory=Counter)
    suffix_rules: Counter[Rule] = field(default_factory=Counter)

    @classmethod
    def train(cls, pairs: Sequence[tuple[Sequence[Token], Sequence[Token]]]) -> "Baseline":
        model = cls(reverse=mostly_prefixing(pairs))
        for lemma, form in pairs:
            if model.reverse:
                lemma, form = tuple(lemma)[::-1], tuple(form)[::-1]
            prefix_rules, suffix_rules = rules_of_pair(lemma, form)
            model.prefix_rules.update(prefix_rules)
            model.suffix_rules.update(suffix_rules)
        return model

    def best_suffix_rule(self, marked: Word) -> Rule | None:
        """The longest rule whose left side ends `marked` (module doc, step 4)."""
        found = [
            (len(lhs), count, len(rhs), (lhs, rhs))
            for (lhs, rhs), count in self.suffix_rules.items()
            if marked[len(marked) - len(lhs) :] == lhs
        ]
        return max(found)[3] if found else None

    def best_prefix_rule(self, marked: Word) -> Rule | None:
        """The most frequent rule whose left side begins `marked`; ties go to the
        longer left side, then the longer right side (the original's `max` kept
        whichever it met first: set order, not reproducible)."""
        found = [
            (count, len(lhs), len(rhs), (lhs, rhs))
            for (lhs, rhs), count in self.prefix_rules.items()
            if marked[: len(lhs)] == lhs
        ]
        return max(found)[3] if found else None

    def predict(self, lemma: Sequence[Token]) -> Word:
        word = tuple(lemma)[::-1] if self.reverse else tuple(lemma)
        marked = (BOW, *word, EOW)
        rule = self.best_suffix_rule(marked)
        if rule is not None:
            marked = marked[: len(marked) - len(rule[0])] + rule[1]
        rule = self.best_prefix_rule(marked)
        if rule is not None:
            marked = rule[1] + marked[len(rule[0]) :]
        out = tuple(tok for tok in marked if tok not in (BOW, EOW))
        return out[::-1] if self.reverse else out


class Peer:
    """Train on (source, target) token pairs, predict the queries (the interface of
    `peer_phonetisaurus.Peer`; this peer always gives a prediction)."""

    def __init__(self) -> None:
        self.model: Baseline | None = None

    def run(self, train: Sequence[tuple[Word, Word]], queries: Sequence[Word]) -> list[Word | None]:
        self.model = Baseline.train([(s, t) for s, t in train if s and t])
        return [self.model.predict(q) if q else None for q in queries]
