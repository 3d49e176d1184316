"""Alignment: turn word pairs into token-level examples, using lingpy.

Public API:
    Example, align_pair(source, target, ...), examples_from_pair(source, target, ...)
    token_scorer(source, target, vowels, affinity), deletions_first(source, columns)
        (shared with `fstsynth.chunks`)

An `Example` says what one source position must produce: the start position (-1) gets
the tokens before the first aligned source token (a prefix); every source token gets its
aligned target token (or nothing if deleted) followed by the target tokens inserted
after it. Pairs of equal length whose vocabularies do not overlap (word -> stress
digits) are aligned one to one without lingpy.

Tokens are compared by identity, then by their letter without diacritics (`é`/`e`),
then by vowel/consonant class. That says nothing when the two sides are written
differently (a script and its transcription, `ð` -> `j`): `alignment_affinity` learns,
from all the training pairs of a column pair, which source token corresponds to which
target token (hard EM over alignments, started from word-level co-occurrence), and the
scorer then rewards those pairs. It only ever raises a pair's score, and never to the
level of an identical token.
"""

from __future__ import annotations

from collections import Counter

import logging
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, Mapping, Sequence
from fstsynth.features import is_vowel
from fstsynth.types import Token, Word, Features

# lingpy logs at INFO on its first import and may configure the root logger: silence
# it while importing, then put the root logger back as the process had it (a library
# import must leave the application's logging alone).
_root = logging.getLogger()
_root_level, _root_handlers = _root.level, list(_root.handlers)
_disabled = logging.root.manager.disable
logging.disable(logging.INFO)
try:
    from lingpy.align.pairwise import nw_align, sw_align
finally:
    logging.disable(_disabled)
    _root.setLevel(_root_level)
    _root.handlers[:] = _root_handlers
    logging.getLogger("lingpy").setLevel(logging.WARNING)

#: Learned similarity of a source token to a different target token, in (-0.3, 0.9].
Affinity = Mapping[tuple[Token, Token], float]

START = -1
GAP = "-"

@dataclass(frozen=True)
class Example:
    """Source word `word` at `position` must produce `output`."""

    word: Word
    position: int
    output: Word


_FrozenAffinity = tuple[tuple[Token, Token, float], ...]
_Column = tuple[int | None, int | None]
_Columns = tuple[_Column, ...]

#: The score of two different tokens that are the same letter but for diacritics
#: (`é`/`e`): a rare accented letter is seldom frequent enough to get a learned
#: affinity, and as an ordinary vowel pair it ties with any other vowel (`u é` -> `e`
#: aligned u:e, é:-, teaching that é is deleted).
SAME_BASE = 0.5
#: Small enough never to outweigh a real difference in scores, only to break ties.
TIE_BREAK = 0.001
#: The score of two different tokens of one class (two vowels, two consonants) that
#: nothing else relates.
SAME_CLASS = -0.3
#: Two alignment scores closer than this are equal (sums of floats, rounded).
_ROUNDING = 1e-9


def token_scorer(
    a: Sequence[Token], b: Sequence[Token], vowels: frozenset[Token], affinity: _FrozenAffinity
) -> dict:
    learned = {(x, y): v for x, y, v in affinity}
    # A token with a learned partner is unlikely to stand for anything else: pairing it
    # with another token scores like a vowel/consonant clash, so a gap is preferred.
    partnered = {x for x, _, _ in affinity} | {y for _, y, _ in affinity}
    scores = {}
    for x in set(a):
        for y in set(b):
            same_class = (x in vowels) == (y in vowels)
            if x == y:
                scores[(x, y)] = 1.0
            elif (x, y) in learned:
                scores[(x, y)] = learned[(x, y)]
            elif base_letters(x) == base_letters(y) != "":
                scores[(x, y)] = SAME_BASE
            elif x in partnered or y in partnered:
                # A hair better within a class: `q u` -> `k` (k partnered with c) is
                # then always q:k, u:-, never the tie's other half q:-, u:k.
                scores[(x, y)] = -1.0 + (TIE_BREAK if same_class else 0.0)
            else:
                scores[(x, y)] = SAME_CLASS if same_class else -1.0
    return scores


@lru_cache(maxsize=4096)
def base_letters(token: Token) -> str:
    """The token without its diacritics: `é` -> `e`, `ä` -> `a`, `t͡ʃ` -> `tʃ`; empty for a
    token that is only diacritics (a stress mark written as a combining accent), which
    is no letter to share."""
    return "".join(c for c in unicodedata.normalize("NFD", token) if not unicodedata.combining(c))


def _encode(source: Word, target: Word, scores: Mapping[tuple[Token, Token], float]):
    """lingpy reads "-" as a gap: hand it safe stand-ins for the tokens, and `scores`
    (`token_scorer`'s) keyed by them."""
    vocab = sorted(set(source) | set(target))
    code = {tok: f"t{k}" for k, tok in enumerate(vocab)}
    a = [code[t] for t in source]
    b = [code[t] for t in target]
    return a, b, {(code[x], code[y]): v for (x, y), v in scores.items()}


def _nw_columns(source: Word, target: Word, a: list[str], b: list[str], scorer: dict) -> _Columns:
    """The columns of lingpy's global alignment of the encoded words `a` and `b`."""
    alm_a, alm_b, _ = nw_align(a, b, scorer=scorer, gap=-1)
    columns: list[tuple[int | None, int | None]] = []
    i = j = 0
    for x, y in zip(alm_a, alm_b):
        ci = cj = None
        if x != GAP:
            ci, i = i, i + 1
        if y != GAP:
            cj, j = j, j + 1
        if ci is not None or cj is not None:
            columns.append((ci, cj))
    assert i == len(source) and j == len(target), "alignment lost tokens"
    return tuple(columns)


def _score(source: Word, target: Word, columns: _Columns, scores: Mapping[tuple[Token, Token], float]) -> float:
    """The alignment's score under `scores` (a gap costs 1)."""
    return sum(-1.0 if i is None or j is None else scores[(source[i], target[j])] for i, j in columns)


@lru_cache(maxsize=65536)
def _global(
    source: Word,
    target: Word,
    vowels: frozenset[Token],
    affinity: _FrozenAffinity = (),
    near: _FrozenAffinity = (),
    runs: tuple[tuple[Word, int], ...] = (),
) -> _Columns:
    """lingpy's global alignment, its ties broken by what the tokens are and where the
    deletions stand.

    Of two alignments with the same score, lingpy returns the one the rounding of its
    sums of floats favors: `r i v a s s a` -> `r i p a` is v:p with `s s a` deleted, or
    `v a s` deleted and s:p (both -0.3), and which one came out changed with the
    scores' last digits (-0.3 as a substitution: v:p; -0.299: s:p). So the candidates
    are lingpy's alignment and the tie's other extreme (`_reversed_columns`), each also
    with `TIE_BREAK` times the share of `near` added to the plain substitutions; of
    those scoring the same as lingpy's without it, the one whose substitutions' summed
    share is the highest (`pʰ:p`, not `l:p`, in `a pʰ ɨ l` -> `a p`), then that deletes
    the most tokens in runs at the word's edges (`_deleted_at_edges`; an affix deleted is at an edge:
    `t͡ɕ ə t͡ɕ ɨ l` -> `t͡ɕ ə t` is t͡ɕ:t with `ɨ l` deleted, not `t͡ɕ ɨ` deleted and l:t),
    then, among alignments making the same substitutions, whose inserted runs the
    column pair's other words insert most often (`runs`, `Leads.runs`: Tagalog `b i l
    i` -> `b i n i l i` is `i n` inserted after b, as in `s i n u l a t`, not `n i`
    after the i; among different substitutions the runs moved Indonesian `m ə` off the
    changed consonant in some words only), then lingpy's. Inserted tokens are left
    where lingpy puts them: put at the edge too, Indonesian's `m ə N-` prefix became
    `m ə` and a substitution of the stem's first consonant (`t u l i s` -> `m ə n u l i s` as t:n), and its rules
    cross-validated at 67.4% instead of 81.4. The share added to the scores alone, one
    alignment, moved the ties it could not tell apart too: Finnish on the Olympiad dev
    split fell from 7 to 4 of 11 queries, its features (vowel, consonant) making every
    share 1 (docs/learning.md)."""
    scores = token_scorer(source, target, vowels, affinity)
    a, b, scorer = _encode(source, target, scores)
    columns = _nw_columns(source, target, a, b, scorer)
    shares = {(x, y): share for x, y, share in near if scores.get((x, y)) == SAME_CLASS}
    candidates = [columns, _reversed_columns(source, target, a, b, scorer)]
    if len(set(shares.values())) >= 2:
        # `TIE_BREAK` times the share added to the plain substitutions.
        nearer = _encode(source, target, {**scores, **{k: scores[k] + TIE_BREAK * v for k, v in shares.items()}})
        candidates += [_nw_columns(source, target, *nearer), _reversed_columns(source, target, *nearer)]
    if all(c == columns for c in candidates):
        return columns
    best = _score(source, target, columns, scores)

    def summed_share(cols: _Columns) -> float:
        return sum(shares.get((source[i], target[j]), 0.0) for i, j in cols if i is not None and j is not None)

    tied = [c for c in candidates if abs(_score(source, target, c, scores) - best) < _ROUNDING]
    # `max` keeps the first of equals: lingpy's own alignment where nothing tells them apart.
    counted = dict(runs)

    def run_support(cols: _Columns) -> int:
        return sum(counted.get(run, 0) for run in _inserted_runs(target, cols))

    def pairs_of(cols: _Columns) -> list[tuple[Token, Token]]:
        return sorted((source[i], target[j]) for i, j in cols if i is not None and j is not None)

    # The runs decide only between alignments making the same substitutions, where
    # just the place of an insertion differs.
    same = all(pairs_of(c) == pairs_of(tied[0]) for c in tied)
    return max(tied, key=lambda c: (round(summed_share(c), 9), _deleted_at_edges(c), run_support(c) if same else 0))


def _inserted_runs(target: Word, columns: Sequence[_Column]) -> list[Word]:
    """The target tokens of each maximal run of inserted columns, in order."""
    runs: list[Word] = []
    current: list[Token] = []
    for i, j in columns:
        if i is None and j is not None:
            current.append(target[j])
            continue
        if current:
            runs.append(tuple(current))
        current = []
    if current:
        runs.append(tuple(current))
    return runs


def _deleted_at_edges(columns: _Columns) -> int:
    """How many source tokens the columns delete in a run that reaches the start or the
    end of the word. Only there is a deletion an affix's: where in the word an inner
    deletion stands says nothing: preferring the one nearer an edge aligned spelling by
    the word's length (`p e r m e t t r e` -> `p ɛ ʀ m ɛ t ʀ` as t:ʀ with the `r`
    deleted, not a `t` of `t t` deleted), and cost German and French spelling -> IPA
    1-2 points of Exact (docs/learning.md)."""
    kept = [j is not None for _, j in columns]
    if not any(kept):
        return len(columns)
    return kept.index(True) + kept[::-1].index(True)


def _reversed_columns(source: Word, target: Word, a: list[str], b: list[str], scorer: dict) -> _Columns:
    """The global alignment of the reversed words, read forwards: of tied alignments,
    lingpy returns one with its gaps as early in the words it is given as it can, so
    this is the tie's other extreme."""
    back = _nw_columns(source[::-1], target[::-1], a[::-1], b[::-1], scorer)
    n, m = len(source), len(target)
    return tuple((None if i is None else n - 1 - i, None if j is None else m - 1 - j) for i, j in reversed(back))


def align_pair(
    source: Word,
    target: Word,
    features: Features,
    mode: str = "global",
    affinity: Affinity | None = None,
    one_to_one: bool | None = None,
    leads: Leads | None = None,
    ending: Word = (),
    beginning: Word = (),
) -> tuple[tuple[int | None, int | None], ...]:
    """Aligned columns (source index or None, target index or None).

    `one_to_one` forces (True) or forbids (False) the position-by-position alignment of
    equal-length pairs; by default a pair gets it when its two vocabularies are disjoint.
    The caller knows better from the whole column pair: a transcription into another
    script is sometimes, by chance, as long as its source.

    `leads` (`learn_leads`): source tokens whose output starts with a target token that
    the aligner inserts before it; that token is given to them.

    `ending` (`shared_ending`): the column pair's suffix. A target ending with it, whose
    source does not, is aligned without it, and the suffix is written after the last
    source token's output.

    `beginning` (`shared_beginning`): the column pair's prefix, likewise: written at the
    start, before the first source token's output. The rest is aligned without `leads`,
    which were counted on whole targets.
    """
    if beginning and target[: len(beginning)] == beginning and source[: len(beginning)] != beginning:
        rest = align_pair(source, target[len(beginning) :], features, mode, affinity, one_to_one, None, ending)
        shifted = tuple((i, None if j is None else j + len(beginning)) for i, j in rest)
        return tuple((None, j) for j in range(len(beginning))) + shifted
    if ending and target[len(target) - len(ending):] == ending and source[len(source) - len(ending):] != ending:
        stem = target[: len(target) - len(ending)]
        columns = align_pair(source, stem, features, mode, affinity, one_to_one, leads)
        return columns + tuple((None, j) for j in range(len(stem), len(target)))
    if source == target:
        # Token for token (what the aligner gives, with no gap or mismatch to pay for),
        # without running it: from the second pass on, most words are already right.
        return tuple((k, k) for k in range(len(source)))
    if one_to_one is None:
        one_to_one = len(source) == len(target) and not (set(source) & set(target))
    if one_to_one and len(source) == len(target):
        return tuple((k, k) for k in range(len(source)))
    if not source or not target:
        return tuple((k, None) for k in range(len(source))) + tuple(
            (None, k) for k in range(len(target))
        )
    vowels = frozenset(t for t in set(source) | set(target) if is_vowel(t, features))
    frozen: _FrozenAffinity = ()
    if affinity:
        tgt = set(target)
        frozen = tuple(
            sorted(
                (x, y, v)
                for x in set(source)
                for y in tgt
                if x != y and (v := affinity.get((x, y))) is not None
            )
        )
    near = _nearness(source, target, features)
    if mode == "local":
        columns = _local(source, target, vowels, frozen, near)
    elif mode == "global":
        columns = _global(source, target, vowels, frozen, near, leads.runs if leads else ())
    else:
        raise ValueError(f"alignment mode must be 'global' or 'local', not {mode!r}")
    scores = token_scorer(source, target, vowels, frozen)
    columns = deletions_first(source, _first_takes_it(source, target, columns, scores))
    return _give_leads(source, target, columns, leads, vowels) if leads else columns


def _nearness(source: Word, target: Word, features: Features) -> _FrozenAffinity:
    """For each pair of different source and target tokens that both have features, the
    share of the features named for either that they agree in. A segment changed by a
    rule stays near itself (`pʰ` -> `p`, `b` -> `β`): where a substitution by it ties
    with one by an unrelated segment of the same class (`a pʰ ɨ l` -> `a p` as pʰ:p or
    as l:p, the suffix's last token), the nearer one is the change (`_global`)."""
    out = []
    for x in sorted(set(source)):
        fx = features.get(x)
        if not fx:
            continue
        for y in sorted(set(target)):
            fy = features.get(y)
            if not fy or x == y:
                continue
            names = fx.keys() | fy.keys()
            out.append((x, y, sum(fx.get(n, False) == fy.get(n, False) for n in names) / len(names)))
    return tuple(out)


#: A column pair's suffix (`shared_ending`) ends at least this share of its targets and
#: at most `1 - _SUFFIX_SHARE` of its sources.
_SUFFIX_SHARE = 0.75


def shared_ending(pairs: Sequence[tuple[Word, Word]]) -> Word:
    """The longest ending of two tokens or more that most targets have, few sources, and
    no target in another form differing in one token (Korean `-n ɨ n d a`, Japanese
    `-n a i`), or (): the suffix of a column pair of a word and another form of it.

    Aligned token by token, a suffix is split between the stem's last tokens (`m ə k ə`
    -> `m ə ŋ n ɨ n d a` had `k` -> `ŋ n ɨ n d` and `ə` -> `a`, a substitution of two
    vowels costing less than a deletion and an insertion), and each stem ending becomes
    a rule of its own; aligned as an insertion at the end (`align_pair(ending=)`), it is
    one rule, and the stem's own changes (`k` -> `ŋ`) are left to read."""
    if not pairs:
        return ()
    longest = max(len(tgt) for _, tgt in pairs)
    for length in range(longest, 1, -1):
        tails = Counter(tgt[len(tgt) - length:] for _, tgt in pairs if len(tgt) >= length)
        if not tails:
            continue
        tail, count = min(tails.items(), key=lambda kv: (-kv[1], kv[0]))
        if count < _SUFFIX_SHARE * len(pairs):
            continue
        kept = sum(src[len(src) - length:] == tail for src, _ in pairs)
        # A suffix with alternants (Finnish `-s s a` / `-s s ä`, by vowel harmony) is
        # none: aligned as a block in some words and token by token in the others, its
        # alternation would be seen in no rule. Its part past the alternating token may
        # be one (Japanese `-i m a s ɯ` / `-e m a s ɯ`: `-m a s ɯ`, the vowel before it
        # the stem's): the shorter tails are tried.
        alternants = any(
            sum(a != b for a, b in zip(tgt[len(tgt) - length:], tail)) == 1 for _, tgt in pairs if len(tgt) >= length
        )
        if alternants:
            continue
        return tail if kept <= (1 - _SUFFIX_SHARE) * len(pairs) else ()
    return ()


def shared_beginning(pairs: Sequence[tuple[Word, Word]]) -> Word:
    """`shared_ending` at the other edge: the prefix of a column pair (Spanish `l a` +
    noun), aligned as an insertion at the start (`align_pair(beginning=)`). Aligned token
    by token, it is written with the stem's first token where that token changes (`b o k
    a` -> `l a β o k a` as b:`l a β`), and as the start's insertion in the other words:
    a rule per stem-initial token, and the prefix missing before the ones no training
    word starts with.

    None unless the rest of the target is no longer than the source in `_SUFFIX_SHARE`
    of the words that have it (the prefix is all they insert): elsewhere the prefix goes
    on past it with material that alternates by the stem (Indonesian `m ə` + a nasal
    taking the place of the stem's first consonant, `m ə n d o r o ŋ`, `m ə n u l i
    s`), which the start's rules write with the rest of the prefix, as without it."""
    prefix = shared_ending([(src[::-1], tgt[::-1]) for src, tgt in pairs])[::-1]
    having = [(src, tgt) for src, tgt in pairs if tgt[: len(prefix)] == prefix and src[: len(prefix)] != prefix]
    longer = sum(len(tgt) - len(prefix) > len(src) for src, tgt in having)
    return prefix if prefix and longer <= (1 - _SUFFIX_SHARE) * len(having) else ()


@dataclass(frozen=True)
class Leads:
    """Which inserted target tokens start the next source token's output (`learn_leads`).

    `lead[(x, y)]`: the share of the occurrences of source token `x` whose output the
    aligner leaves preceded by an inserted `y`, where that is most of them;
    `follow[(p, y)]`: the share of the occurrences of `p` (None: the start of the word)
    followed by an inserted `y`. An inserted `y` between `p` and `x` goes to `x` when
    it leads `x` more often than it follows `p`: the `j` of `я` -> `j a` leads `я`; the
    inherent vowel of a consonant letter follows it; a prefix follows the start.
    `follows[(p, y)]`: in how many words `p` is followed by an inserted `y`.

    Near the word start, a token that leads `x` there in every training word may
    belong to the prefix instead, the two confounded where `x` is seen only there
    (Swahili `m ɡ e n i` -> `w a ɡ e n i`, with both training `ɡ` after the prefix's `m`:
    the `a` of `w a-` leads each). What tells them apart is the rest of the column
    pair: affix material stands at the same place from the word start in every word
    that starts the same way (`edge`), whatever follows it; a token conditioned by the
    next one (Spanish `i m-` before `p`, `i n-` before `t`) does not. A lead seen at two
    places from the word start or more is the token's wherever it sits (Tagalog `-u m-`
    before the root's first vowel, the first token or the second): only one seen at a
    single place (`anchored`) is weighed against the edge.
    `starts[p]`: the indices of the training words whose source starts with the tokens
    `p` (at most `_EDGE` of them); `targets`: their targets.
    `runs`: the runs of inserted target tokens the aligner inserts in most of the
    column pair's words (one more word counted, as for `lead`), each with the number
    of words it is inserted in (`_global` breaks ties by them).
    `varied`: the source vowels written as themselves after two different inserted
    vowels or more, each in `_VARIED` words or more (`_vowel_of_vowel`).
    `split`: the runs of inserted tokens after which, before a source token, two
    different last tokens or more are inserted, each in `_VARIED` words or more: that
    last token varies with what follows (Spanish `i m p`, `i n t`, `i ŋ k`: the nasal
    is the next consonant's, and leads it); after any other run, it is the same in
    every word (Tagalog `i n`, `u m`), part of one insertion, kept with the run."""

    lead: Mapping[tuple[Token, Token], float]
    follow: Mapping[tuple[Token | None, Token], float]
    follows: Mapping[tuple[Token | None, Token], int] = field(default_factory=dict)
    starts: Mapping[Word, tuple[int, ...]] = field(default_factory=dict)
    targets: tuple[Word, ...] = ()
    anchored: frozenset[tuple[Token, Token]] = frozenset()
    runs: tuple[tuple[Word, int], ...] = ()
    varied: frozenset[Token] = frozenset()
    split: frozenset[Word] = frozenset()
    _edge: dict[tuple[Word, int, Token], float] = field(default_factory=dict, compare=False, repr=False)

    def edge(self, start: Word, index: int, token: Token) -> float:
        """The share of the training words whose source starts with `start` and whose
        target has `token` at `index` (one more word counted, as for the other
        shares); 0 where `start` is longer than `_EDGE` tokens or starts no word."""
        key = (start, index, token)
        if key not in self._edge:
            words = self.starts.get(start, ())
            having = sum(index < len(self.targets[k]) and self.targets[k][index] == token for k in words)
            self._edge[key] = having / (len(words) + 1)
        return self._edge[key]


#: The source tokens before an insertion that the edge test (`Leads.edge`) reads: a
#: prefix's own material in the source is a few tokens at most, and beyond it few
#: words start the same way.
_EDGE = 3


def _give_leads(
    source: Word,
    target: Word,
    columns: tuple[tuple[int | None, int | None], ...],
    leads: Leads,
    vowels: frozenset[Token] = frozenset(),
) -> tuple[tuple[int | None, int | None], ...]:
    """The same alignment with each inserted target token that leads the next source
    token's output (`Leads`) given to that token: `я` -> `j a` aligned -:j, я:a (the `j`
    inserted after the token before) becomes я:j, -:a.

    A pair the column pair has no share for (a letter seen once or twice) goes by class
    instead (`_vowel_of_vowel`)."""
    out = list(columns)
    before: int | None = None  # the last source index seen
    kept = False  # whether source[before] is written as itself
    for k in range(len(out) - 1):
        (i, j), (i2, j2) = out[k], out[k + 1]
        if i is not None:
            before, kept = i, j is not None and target[j] == source[i]
        # The last of two inserted tokens or more stays with them where it is the same
        # in every word (`Leads.split`): a run inserted whole (Tagalog infix `i n`)
        # split, its last token given to the next source token (`a` -> `n a`, `u` ->
        # `n u`), is written by one rule per vowel after it.
        whole = k > 0 and out[k - 1][0] is None and _run_before(target, out, k) not in leads.split
        if not whole and i is None and j is not None and i2 is not None and j2 is not None:
            last = None if before is None else source[before]
            share = leads.lead.get((source[i2], target[j]))
            after = leads.follow.get((last, target[j]), 0.0)
            if share is not None and share > after and i2 <= _EDGE and (source[i2], target[j]) in leads.anchored:
                after = max(after, leads.edge(source[:i2], j, target[j]))
            if share is None and kept and _vowel_of_vowel(last, target[j], source[i2], target[j2], leads, vowels):
                share = 1.0
            if share is not None and share > after:
                out[k], out[k + 1] = (i2, j), (None, j2)
                # The next insertion follows i2 now, which writes another token first.
                before, kept = i2, target[j] == source[i2]
    return tuple(out)


def _run_before(target: Word, columns: Sequence[_Column], k: int) -> Word:
    """The target tokens inserted in the run of columns just before `columns[k]`."""
    start = k
    while start > 0 and columns[start - 1][0] is None and columns[start - 1][1] is not None:
        start -= 1
    return tuple(target[j] for _, j in columns[start:k] if j is not None)


def _vowel_of_vowel(
    last: Token | None, inserted: Token, vowel: Token, written: Token, leads: Leads, vowels: frozenset[Token]
) -> bool:
    """Whether a vowel `inserted` after `last`, a consonant written as itself, is the
    output of the next source token `vowel`, written as the vowel `written` (`r ú` ->
    `r ʉ u`: ú is written as two vowels, not r as `r ʉ`; English `i` -> German `e i`).
    Not where the consonant is followed by that vowel in other words too (an inherent
    vowel), nor after a consonant that is rewritten (the caller checks): there the
    vowel is likelier a mark of that change (`c a` -> `ć i a`, a palatal `ć i`).

    Nor where `vowel` is written as itself and, across the column pair, different
    vowels are inserted before it (`Leads.varied`): a vowel written as two is one
    output, the same vowel before it in every word (English `i` -> German `e i`); an
    inserted vowel that varies before a vowel that stays depends on something else (the
    root's vowel: Swahili applicative `s o m a` -> `s o m e a`, `p i k a` -> `p i k i
    a`), an insertion of its own. Given to the `a`, it read as `a` -> `e a`, learned
    per consonant before it, and a consonant no training word ends with got no
    applicative."""
    return (
        last is not None
        and last not in vowels
        and inserted in vowels
        and vowel in vowels
        and written in vowels
        and leads.follows.get((last, inserted), 0) <= 1
        and not (written == vowel and vowel in leads.varied)
    )


#: An inserted vowel counts towards `Leads.varied` once it stands before the vowel in
#: this many words: one odd alignment is not a pattern.
_VARIED = 2


def learn_leads(
    pairs: Sequence[tuple[Word, Word]],
    features: Features,
    mode: str = "global",
    affinity: Affinity | None = None,
    check: Callable[[], None] | None = None,
) -> Leads:
    """Source tokens whose aligned output is, in most of their occurrences, preceded by
    the same inserted target token: a letter written as two (`я` -> `j a`, `x` -> `k s`)
    that the aligner, matching one of the two, splits as an insertion after the token
    before plus a substitution. Given to the letter (`align_pair(leads=)`), the
    letter's output is the same in every word, and one rule writes it."""
    seen: dict[Token | None, int] = {}
    before: dict[tuple[Token, Token], int] = {}
    after: dict[tuple[Token | None, Token], int] = {}
    starts: dict[Word, list[int]] = {}
    places: dict[tuple[Token, Token], set[int]] = {}  # where each lead is seen, from the start
    # (x, y): in how many words an inserted vowel y stands before the vowel x kept.
    kept_after: Counter[tuple[Token, Token]] = Counter()
    inserted: Counter[Word] = Counter()
    aligned: list[tuple[tuple[int | None, int | None], ...]] = []
    # For each run of inserted tokens but its last, the last tokens seen after it,
    # before a source token, with the number of words each is seen in.
    endings: dict[Word, Counter[Token]] = {}
    for index, (s, t) in enumerate(pairs):
        for n in range(min(len(s), _EDGE) + 1):
            starts.setdefault(s[:n], []).append(index)
        if check is not None:
            check()
        columns = align_pair(s, t, features, mode, affinity, one_to_one=False)
        aligned.append(columns)
        inserted.update(set(_inserted_runs(t, columns)))
        for k, (i, j) in enumerate(columns[1:-1], 1):
            if i is None and j is not None and columns[k - 1][0] is None and columns[k + 1][0] is not None:
                endings.setdefault(_run_before(t, columns, k), Counter())[t[j]] += 1
    split = frozenset(run for run, last in endings.items() if sum(n >= _VARIED for n in last.values()) >= 2)
    for (s, t), columns in zip(pairs, aligned):
        seen[None] = seen.get(None, 0) + 1
        last: Token | None = None  # the source token the next insertion follows
        for k, (i, j) in enumerate(columns):
            if i is None:
                # An insertion: it follows `last`, and leads the next source token.
                nxt = columns[k + 1] if k + 1 < len(columns) else (None, None)
                if j is not None and (nxt[0] is None or nxt[1] is not None):
                    key = (last, t[j])
                    after[key] = after.get(key, 0) + 1
                    # The end of a run is kept with it unless it varies (`Leads.split`).
                    whole = k > 0 and columns[k - 1][0] is None and _run_before(t, columns, k) not in split
                    if not whole and nxt[0] is not None and nxt[1] is not None:
                        lead_key = (s[nxt[0]], t[j])
                        before[lead_key] = before.get(lead_key, 0) + 1
                        places.setdefault(lead_key, set()).add(nxt[0])
                        if s[nxt[0]] == t[nxt[1]] and is_vowel(t[j], features) and is_vowel(s[nxt[0]], features):
                            kept_after[lead_key] += 1
                continue
            last = s[i]
            seen[last] = seen.get(last, 0) + 1
    # Shares with one more occurrence counted, in which the token did not come with the
    # insertion: on a few words, two of three is no "most".
    lead = {
        (x, y): count / (seen[x] + 1) for (x, y), count in sorted(before.items()) if 2 * count > seen[x] + 1
    }
    follow = {key: count / (seen[key[0]] + 1) for key, count in sorted(after.items(), key=str)}
    edges = {start: tuple(words) for start, words in starts.items()}
    anchored = frozenset(key for key in lead if len(places[key]) == 1)
    inserted_before = Counter(x for (x, _), count in kept_after.items() if count >= _VARIED)
    varied = frozenset(x for x, kinds in inserted_before.items() if kinds >= 2)
    # Only a run inserted in most words (one more counted, as for the leads) is the
    # column pair's own insertion, whose place is worth deciding a tie by: Tagalog `i n`
    # in 16 words of 19. Indonesian `m ə` alone, in 9 of 29 with the IPA features (the
    # nasal after it varies, or the next consonant is written as it), moved `p u k u
    # l` -> `m ə m u k u l` from p:`m ə m` to `m ə` then p:m, in those words only.
    runs = tuple(sorted((run, n) for run, n in inserted.items() if 2 * n > len(pairs) + 1))
    return Leads(lead, follow, after, edges, tuple(t for _, t in pairs), anchored, runs, varied, split)



def _settle(
    columns: _Columns, swap: Callable[[_Column, _Column], tuple[_Column, _Column] | None]
) -> _Columns:
    """`columns` with `swap` applied to adjacent columns until it applies nowhere."""
    out = list(columns)
    moved = True
    while moved:
        moved = False
        for k in range(len(out) - 1):
            swapped = swap(out[k], out[k + 1])
            if swapped is not None:
                out[k], out[k + 1] = swapped
                moved = True
    return tuple(out)


def _first_takes_it(
    source: Word, target: Word, columns: _Columns, scores: Mapping[tuple[Token, Token], float]
) -> _Columns:
    """The same alignment with, where two different adjacent source tokens stand for one
    target token and either could take it at the same score, the first one taking it
    and the second deleted: `n j` -> `њ` is always n:њ, j:- (never n:-, j:њ, which
    scores the same). The aligner breaks such ties by the rest of the word, so without
    this one digraph is split two ways across the training words and each way needs its
    own rules; with one convention a digraph costs two rules (replace the first,
    delete the second)."""

    def swap(left: _Column, right: _Column) -> tuple[_Column, _Column] | None:
        (i, j), (i2, j2) = left, right
        if (
            j is None and i is not None and i2 is not None and j2 is not None
            and i2 == i + 1 and source[i] != source[i2]
            and scores[(source[i], target[j2])] == scores[(source[i2], target[j2])]
        ):
            return (i, j2), (i2, None)
        return None

    return _settle(columns, swap)


def deletions_first(source: Word, columns: _Columns) -> _Columns:
    """The same alignment with, in every run of identical source tokens, the deleted
    ones first: `r r` -> `r` is always aligned r:-, r:r (never r:r, r:-, which scores the
    same). The aligner breaks such ties by the rest of the word, so without this one
    geminate is split two ways across the training words and each way needs its own
    rules (1,000 spelling -> IPA pairs: held-out Exact 94.3% -> 96.8%; keeping the
    first of the run instead: 96.3%; small problems unchanged)."""

    def swap(left: _Column, right: _Column) -> tuple[_Column, _Column] | None:
        (i, j), (i2, j2) = left, right
        if (
            j2 is None and i is not None and i2 is not None and j is not None
            and i2 == i + 1 and source[i] == source[i2]
        ):
            return (i, None), (i2, j)
        return None

    return _settle(columns, swap)


def _local(
    source: Word, target: Word, vowels: frozenset[Token], affinity: _FrozenAffinity = (), near: _FrozenAffinity = ()
):
    """Smith-Waterman for the best-matching core, then global alignment of the flanks
    (ties among those broken by `near`, as `_global` does)."""
    a, b, scorer = _encode(source, target, token_scorer(source, target, vowels, affinity))
    (pre_a, core_a, post_a), (pre_b, core_b, post_b), _ = sw_align(a, b, scorer=scorer)
    columns: list[tuple[int | None, int | None]] = []
    offset_a = offset_b = 0

    def add_global(sa: list[str], sb: list[str]) -> None:
        nonlocal offset_a, offset_b
        # The core comes back aligned, with gaps: only real tokens advance the offsets.
        sa = [x for x in sa if x != GAP]
        sb = [y for y in sb if y != GAP]
        if sa and sb:
            sub = _global(
                tuple(source[offset_a : offset_a + len(sa)]),
                tuple(target[offset_b : offset_b + len(sb)]),
                vowels,
                affinity,
                near,
            )
            columns.extend(
                (None if ci is None else ci + offset_a, None if cj is None else cj + offset_b)
                for ci, cj in sub
            )
        else:
            columns.extend((offset_a + k, None) for k in range(len(sa)))
            columns.extend((None, offset_b + k) for k in range(len(sb)))
        offset_a += len(sa)
        offset_b += len(sb)

    add_global(list(pre_a), list(pre_b))
    add_global(list(core_a), list(core_b))
    add_global(list(post_a), list(post_b))
    return tuple(columns)


def examples_from_alignment(
    source: Word, target: Word, columns: Sequence[tuple[int | None, int | None]]
) -> list[Example]:
    outputs: dict[int, list[Token]] = {p: [] for p in range(START, len(source))}
    current = START
    for ci, cj in columns:
        if ci is not None:
            current = ci
        if cj is not None:
            outputs[current].append(target[cj])
    return [Example(source, p, tuple(outputs[p])) for p in range(START, len(source))]


def examples_from_pair(
    source: Word,
    target: Word,
    features: Features,
    mode: str = "global",
    affinity: Affinity | None = None,
    one_to_one: bool | None = None,
) -> list[Example]:
    return examples_from_alignment(
        source, target, align_pair(source, target, features, mode, affinity, one_to_one)
    )
