"""Chunk alignment: what each source token stands for, judged over the whole column pair.

Public API:
    chunk_alignments(pairs, features, affinity, check, leads) -> list of columns
    realign(pairs, start, features, affinity, check, same) -> list of columns
    columns_of_chunks(source, chunks)

A word-by-word aligner (`alignment.align_pair`) scores one word at a time: for it a
substitution of one consonant for another (`ш о к` -> `ш к о м`: ш:ш к, о:о, к:м)
beats a deletion and an insertion (ш:ш, о:-, к:к, then `о м` added), though across the
column pair `о м` is added to every word and `к` -> `м` is seen nowhere else. Each such
word then teaches a narrow rule of its own.

Here a word is read as units that each write a chunk of the target: the start of the
word (a prefix of up to `AFFIX_CHUNK` tokens), each source token (0 to `TOKEN_CHUNK`
target tokens: deleted, written as one token, or as two, `я` -> `j a`) and the end of
the word (a suffix). p(chunk | unit) is estimated from the chunk counts of the column
pair, smoothed towards a prior that favours a token written as itself or as a like
token (`alignment`'s scores: same token, same base letter, same vowel/consonant class,
learned affinity). Starting from the word-by-word alignments, hard EM with each pair
left out (`realign`): each pair takes its most likely segmentation (Viterbi over every
segmentation, in the style of m2m-aligner, Jiampojamarn et al. 2007) by the counts of
all the other pairs, where that is likelier than its present one; then the counts are
made again. A chunk seen in one word only is no correspondence of the column pair: a
word changes its alignment only where other words share the change. The score of a
chunk does not depend on the word it is in, so a correspondence the column pair
supports is aligned the same way in every word.

Columns follow `alignment`'s convention: a token's chunk is its aligned target token
followed by the rest inserted after it; the suffix is inserted after the last token
(the learner gives it to that token, as it does an insertion from the word-by-word
aligner); in a run of identical source tokens the deleted ones come first.
"""

from __future__ import annotations

import math
from typing import Callable, Mapping, Sequence

import numpy as np

from fstsynth.alignment import Affinity, Leads, deletions_first, token_scorer, align_pair
from fstsynth.features import is_vowel
from fstsynth.types import Features, Token, Word

#: Target tokens one source token may write (2: a letter written as two, `x` -> `k s`).
TOKEN_CHUNK = 2
#: Target tokens the start or the end of a word may write (a prefix, a suffix); longer
#: affixes are shared with the tokens next to them.
AFFIX_CHUNK = 4
#: At most this many rounds of re-alignment (they stop when no pair changes).
ROUNDS = 8
#: Weight of the prior in each unit's chunk probabilities (pseudo-counts): a unit seen a
#: few times keeps near the prior, a frequent one follows its counts.
PRIOR_WEIGHT = 1.0
#: The prior's sharpness: a token is e^SHARPNESS times likelier written as itself than
#: as an unrelated token of its class (`alignment` scores, 1.0 against 0.0).
SHARPNESS = 3.0
#: The prior's share of deleted tokens and of tokens written as two.
DELETE_SHARE = 0.1
SPLIT_SHARE = 0.1

_START = "\x00start"
_END = "\x00end"
_Columns = tuple[tuple[int | None, int | None], ...]
_Key = tuple[str, Word]


class _Prior:
    """The prior p0(chunk | unit): like tokens written for each other, by `alignment`'s
    scores over the column pair's vocabularies."""

    def __init__(self, pairs: Sequence[tuple[Word, Word]], features: Features, affinity: Affinity | None):
        src = sorted({x for s, _ in pairs for x in s})
        tgt = sorted({y for _, t in pairs for y in t})
        vowels = frozenset(tok for tok in set(src) | set(tgt) if is_vowel(tok, features))
        frozen = tuple(sorted((x, y, v) for (x, y), v in (affinity or {}).items() if x != y))
        scores = token_scorer(src, tgt, vowels, frozen) if src and tgt else {}
        self.uniform = 1.0 / max(1, len(tgt))
        self.write: dict[Token, dict[Token, float]] = {}
        for x in src:
            weights = {y: math.exp(SHARPNESS * scores[(x, y)]) for y in tgt}
            total = sum(weights.values())
            self.write[x] = {y: w / total for y, w in weights.items()}

    def __call__(self, unit: str, chunk: Word) -> float:
        if unit in (_START, _END):
            # Shorter affixes likelier, each token any of the target's.
            return 0.5 ** (len(chunk) + 1) * self.uniform ** len(chunk)
        if not chunk:
            return DELETE_SHARE
        # The first token of a chunk is the one the token is aligned to (`alignment`'s
        # convention: the rest is inserted after it), so it is the one like the token;
        # the rest may be any target token.
        first = self.write.get(unit, {}).get(chunk[0], self.uniform)
        if len(chunk) == 1:
            return (1.0 - DELETE_SHARE - SPLIT_SHARE) * first
        return SPLIT_SHARE * first * self.uniform ** (len(chunk) - 1)


def _units(source: Word) -> list[str]:
    return [_START, *source, _END]


def _fits(source: Word, target: Word) -> bool:
    return len(target) <= TOKEN_CHUNK * len(source) + 2 * AFFIX_CHUNK


#: Pairs per block of the lattice arrays (pairs of like lengths together, so that the
#: padding to the longest stays small).
BLOCK = 256


class _Block:
    """Every segmentation of some pairs, as arrays: `ids[p, u, j, k]` is the chunk key
    of pair p's unit u writing target tokens j .. j + k (0: a padding step that writes
    nothing, certain; 1: impossible)."""

    PAD, NONE = 0, 1

    def __init__(
        self, pairs: Sequence[tuple[Word, Word]], index: dict[_Key, int], keys: list[_Key], unit_index: dict[str, int]
    ):
        self.pairs = pairs
        steps = max(len(s) for s, _ in pairs) + 2
        width = max(len(t) for _, t in pairs) + 1
        ids = np.full((len(pairs), steps, width, AFFIX_CHUNK + 1), self.NONE, dtype=np.int64)
        unit_ids = np.full((len(pairs), steps), -1, dtype=np.int64)
        occ = np.zeros((len(pairs), steps))
        for p, (s, t) in enumerate(pairs):
            units = _units(s)
            m = len(t)
            for u, unit in enumerate(units):
                longest = AFFIX_CHUNK if unit in (_START, _END) else TOKEN_CHUNK
                row = ids[p, u]
                for j in range(m + 1):
                    if unit == _END:
                        # The end writes the rest of the target, or nothing can.
                        ks: Sequence[int] = [m - j] if m - j <= longest else []
                    else:
                        ks = range(min(longest, m - j) + 1)
                    for k in ks:
                        key = (unit, t[j : j + k])
                        found = index.get(key)
                        if found is None:
                            found = index[key] = len(keys) + 2
                            keys.append(key)
                        row[j, k] = found
            ids[p, len(units) :, :, 0] = self.PAD
            for u, unit in enumerate(units):
                unit_ids[p, u] = unit_index.setdefault(unit, len(unit_index))
                occ[p, u] = 1 if unit in (_START, _END) else s.count(unit)
        self.ids = ids
        self.unit_ids = unit_ids
        self.occ = occ
        self.lengths = np.array([len(t) for _, t in pairs])

    def leave_one_out(
        self, counts: np.ndarray, totals: np.ndarray, base: np.ndarray, current: np.ndarray
    ) -> np.ndarray:
        """log p(chunk | unit) of every edge by the counts of the other pairs: `counts`
        (per key) and `totals` (per unit) less the pair's own, `current[p, u]` (the key of
        each of its units' chunks, -1 for none in the lattice), smoothed towards `base`."""
        own = (self.ids[..., None] == current[:, None, None, None, :]).sum(axis=-1)
        numerator = counts[self.ids] - own + PRIOR_WEIGHT * base[self.ids]
        denominator = totals[np.maximum(self.unit_ids, 0)] - self.occ + PRIOR_WEIGHT
        with np.errstate(divide="ignore", invalid="ignore"):
            logp = np.log(np.maximum(numerator, 0.0)) - np.log(denominator)[:, :, None, None]
        logp[self.ids == self.PAD] = 0.0
        logp[self.ids == self.NONE] = -np.inf
        return logp

    def best_by(self, logp: np.ndarray) -> tuple[list[list[Word]], np.ndarray]:
        """Each pair's most likely segmentation by the edge scores `logp`, and its score."""
        n_pairs, steps, width, kk = self.ids.shape
        score = np.full((n_pairs, steps + 1, width + kk), -np.inf)
        score[:, 0, 0] = 0.0
        back = np.zeros((n_pairs, steps + 1, width + kk), dtype=np.int64)
        for u in range(steps):
            cand = np.full((kk, n_pairs, width + kk), -np.inf)
            for k in range(kk):
                cand[k, :, k : k + width] = score[:, u, :width] + logp[:, u, :, k]
            back[:, u + 1] = cand.argmax(axis=0)
            score[:, u + 1] = cand.max(axis=0)
        out = []
        for p, (s, t) in enumerate(self.pairs):
            j = len(t)
            chunks: list[Word] = []
            for u in range(steps, 0, -1):
                k = int(back[p, u, j])
                if u <= len(s) + 2:
                    chunks.append(t[j - k : j])
                j -= k
            out.append(chunks[::-1])
        return out, score[np.arange(n_pairs), steps, self.lengths]


class _Lattice:
    """The segmentations of all the pairs, in blocks of like lengths, and the chunk
    keys they use."""

    def __init__(self, pairs: Sequence[tuple[Word, Word]], check: Callable[[], None] | None):
        self.keys: list[_Key] = []
        self.unit_index: dict[str, int] = {}
        index: dict[_Key, int] = {}
        self.index = index
        order = sorted(range(len(pairs)), key=lambda p: (len(pairs[p][0]), len(pairs[p][1])))
        self.order = order
        self.blocks = []
        for start in range(0, len(order), BLOCK):
            if check is not None:
                check()
            self.blocks.append(
                _Block([pairs[p] for p in order[start : start + BLOCK]], index, self.keys, self.unit_index)
            )


def realign(
    pairs: Sequence[tuple[Word, Word]],
    start: Sequence[_Columns],
    features: Features,
    affinity: Affinity | None = None,
    check: Callable[[], None] | None = None,
    same: Sequence[Word] = (),
    rounds: int = ROUNDS,
) -> list[_Columns]:
    """The alignments `start` of `pairs`, each changed where the rest of the column pair
    makes another segmentation likelier (hard EM, leave one out): every round, each pair
    gets its most likely segmentation by the chunk counts of all the other pairs' present
    alignments (and of the words in `same`, equal to their targets), if that is likelier
    than its own. A chunk seen in one word only is no correspondence of the column pair:
    with its own counts left out, a word keeps its alignment unless other words share
    the change."""
    prior = _Prior([*pairs, *((w, w) for w in same)], features, affinity)
    known: dict[_Key, float] = {}
    for word in same:
        for key in ((_START, ()), (_END, ()), *((x, (x,)) for x in word)):
            known[key] = known.get(key, 0.0) + 1.0
    columns = list(start)
    current = [_chunk_keys(s, t, c) for (s, t), c in zip(pairs, start)]
    fit = [p for p, (s, t) in enumerate(pairs) if _fits(s, t)]
    if not fit:
        return columns
    lattice = _Lattice([pairs[p] for p in fit], check)
    base = np.array([0.0, 0.0] + [prior(*key) for key in lattice.keys])
    for _ in range(rounds):
        count = dict(known)
        for keys in current:
            for key in keys:
                count[key] = count.get(key, 0.0) + 1.0
        total: dict[str, float] = {}
        for (unit, _chunk), c in count.items():
            total[unit] = total.get(unit, 0.0) + c
        counts = np.zeros(len(lattice.keys) + 2)
        for key, k in lattice.index.items():
            counts[k] = count.get(key, 0.0)
        totals = np.array([total.get(unit, 0.0) for unit in lattice.unit_index])
        changed = []
        rank = 0
        for block in lattice.blocks:
            if check is not None:
                check()
            members = [fit[p] for p in lattice.order[rank : rank + len(block.pairs)]]
            rank += len(block.pairs)
            mine = np.full(block.unit_ids.shape, -1, dtype=np.int64)
            for b, p in enumerate(members):
                for u, key in enumerate(current[p]):
                    mine[b, u] = lattice.index.get(key, -1)
            found, scores = block.best_by(block.leave_one_out(counts, totals, base, mine))
            for b, p in enumerate(members):
                keys = list(zip(_units(pairs[p][0]), found[b]))
                # Ties keep the present alignment (and end the rounds).
                if keys != current[p] and scores[b] > _own_score(current[p], count, total, prior) + 1e-9:
                    changed.append((p, keys))
        if not changed:
            break
        for p, keys in changed:
            current[p] = keys
            columns[p] = columns_of_chunks(pairs[p][0], [chunk for _, chunk in keys])
    return columns


def _own_score(keys: Sequence[_Key], count: Mapping[_Key, float], total: Mapping[str, float], prior: _Prior) -> float:
    """log-likelihood of a pair's chunks by the counts of the other pairs (`realign`)."""
    own: dict[_Key, int] = {}
    own_unit: dict[str, int] = {}
    for key in keys:
        own[key] = own.get(key, 0) + 1
        own_unit[key[0]] = own_unit.get(key[0], 0) + 1
    score = 0.0
    for key in keys:
        numerator = count.get(key, 0.0) - own[key] + PRIOR_WEIGHT * prior(*key)
        denominator = total.get(key[0], 0.0) - own_unit[key[0]] + PRIOR_WEIGHT
        score += math.log(numerator) - math.log(denominator) if numerator > 0 else -math.inf
    return score


def _chunk_keys(source: Word, target: Word, columns: _Columns) -> list[_Key]:
    """The units' chunks of an alignment: the start's, each token's (its aligned target
    token and those inserted after it), the end's (those inserted after the last)."""
    chunks: list[list[Token]] = [[] for _ in range(len(source) + 2)]
    unit = 0
    for i, j in columns:
        if i is not None:
            unit = i + 1
            if j is not None:
                chunks[unit].append(target[j])
        elif j is not None:
            chunks[len(source) + 1 if unit == len(source) else unit].append(target[j])
    return [(unit_, tuple(chunk)) for unit_, chunk in zip(_units(source), chunks)]


def columns_of_chunks(source: Word, chunks: Sequence[Word]) -> _Columns:
    """Aligned columns (`alignment` convention) of a segmentation: the start's chunk
    inserted first, each token's chunk its aligned token and the rest inserted after it
    (nothing: deleted), the end's chunk inserted last."""
    columns: list[tuple[int | None, int | None]] = []
    j = 0
    for u, chunk in enumerate(chunks):
        if 1 <= u <= len(source):
            if chunk:
                columns.append((u - 1, j))
                columns.extend((None, j + d) for d in range(1, len(chunk)))
            else:
                columns.append((u - 1, None))
        else:
            columns.extend((None, j + d) for d in range(len(chunk)))
        j += len(chunk)
    return deletions_first(source, tuple(columns))


def chunk_alignments(
    pairs: Sequence[tuple[Word, Word]],
    features: Features,
    affinity: Affinity | None = None,
    check: Callable[[], None] | None = None,
    leads: Leads | None = None,
) -> list[_Columns]:
    """Each pair's aligned columns: the word-by-word aligner's (`alignment.align_pair`
    with `affinity` and `leads`), changed where the rest of the column pair supports
    another segmentation (`realign`). A word equal to its target is aligned token for
    token, and its tokens counted as written as themselves. `check` is called between
    steps (a deadline raises there). The same column pair is aligned once per process
    (`auto` learns it once per variant)."""
    tokens = sorted({tok for s, t in pairs for tok in (*s, *t)})
    vowels = frozenset(tok for tok in tokens if is_vowel(tok, features))
    learned = tuple(sorted((x, y, v) for (x, y), v in (affinity or {}).items()))
    led = None if leads is None else (tuple(sorted(leads.lead.items())), tuple(sorted(leads.follow.items(), key=str)))
    key = (tuple(pairs), vowels, learned, led)
    found = _CACHE.pop(key, None)
    if found is None:
        # Only the vowel classes of the features are read (by the scores).
        classes: Features = {tok: {"vowel": tok in vowels} for tok in tokens}
        differ = [(s, t) for s, t in pairs if s != t]
        start = [align_pair(s, t, classes, "global", affinity, one_to_one=False, leads=leads) for s, t in differ]
        same = [s for s, t in pairs if s == t]
        changed = dict(zip(differ, realign(differ, start, classes, affinity, check, same)))
        found = tuple(tuple((k, k) for k in range(len(s))) if s == t else changed[(s, t)] for s, t in pairs)
    _CACHE[key] = found  # the most recent last
    while len(_CACHE) > _CACHED:
        del _CACHE[next(iter(_CACHE))]
    return list(found)


_CACHED = 8
_CACHE: dict[tuple, tuple[_Columns, ...]] = {}
