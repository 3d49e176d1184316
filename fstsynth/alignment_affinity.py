"""Which source token corresponds to which target token, learned from a column pair.

Public API:
    learn_affinity(pairs, features, mode, rounds, check) -> dict[(source, target), float]

The learned affinities feed `alignment.align_pair`'s scorer: they only ever raise a
pair's score, and never to the level of an identical token.
"""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

from fstsynth.alignment import align_pair
from fstsynth.features import is_vowel
from fstsynth.types import Features, Token, Word

# Affinities below this Dice coefficient are noise in a few dozen words.
_MIN_DICE = 0.25
_MAX_AFFINITY = 0.9  # below an identical token's 1.0


def _dice_affinity(counts: Mapping[tuple[Token, Token], float], src: Mapping[Token, float],
                   tgt: Mapping[Token, float]) -> dict[tuple[Token, Token], float]:
    out = {}
    for (x, y), c in counts.items():
        if x == y or c < 2:
            continue
        dice = 2 * c / (src[x] + tgt[y])
        if dice >= _MIN_DICE:
            out[(x, y)] = _MAX_AFFINITY * dice
    return out


def _places(word: Word) -> dict[Token, list[float]]:
    """Where in `word` each token stands, as the share of the word before its middle."""
    out: dict[Token, list[float]] = {}
    for k, tok in enumerate(word):
        out.setdefault(tok, []).append((k + 0.5) / len(word))
    return out


def _competitive_links(
    co: Mapping[tuple[Token, Token], float],
    n_src: Mapping[Token, float],
    n_tgt: Mapping[Token, float],
    nearness: Mapping[tuple[Token, Token], float],
) -> dict[tuple[Token, Token], float]:
    """Competitive linking (Melamed 2000): link token pairs one to one, by decreasing
    Dice coefficient, each token at most once; frequent tokens co-occur with
    everything, and linking keeps only the pairs that explain each other best.

    Pairs of equal Dice are linked by `nearness` first (how close to the same place
    in their words the two tokens stand, summed over the words they share): in a few
    words, two letters that always come together co-occur alike with both of their
    transcriptions, and the order of the tokens' names decided which was linked with
    which (Russian `в` with Devanagari `ज`, from `д͡ж ... в` and `ज ... व`)."""
    ranked = sorted(
        ((2 * c / (n_src[x] + n_tgt[y]), nearness.get((x, y), 0.0), x, y) for (x, y), c in co.items() if c >= 2),
        key=lambda item: (-item[0], -item[1], item[2], item[3]),
    )
    used_x: set[Token] = set()
    used_y: set[Token] = set()
    out = {}
    for dice, _, x, y in ranked:
        if dice < _MIN_DICE:
            break
        if x in used_x or y in used_y:
            continue
        used_x.add(x)
        used_y.add(y)
        out[(x, y)] = _MAX_AFFINITY * dice
    return out


def learn_affinity(
    pairs: Sequence[tuple[Word, Word]],
    features: Features,
    mode: str = "global",
    rounds: int = 2,
    check: Callable[[], None] | None = None,
) -> dict[tuple[Token, Token], float]:
    """Which source token corresponds to which (different) target token, learned from
    the training pairs of one column pair.

    Start: competitive linking on word-level co-occurrence of the tokens that the other
    side never uses (a script's letters and their transcription). Then `rounds` of hard
    EM: align every pair with the current affinities and re-estimate them as the Dice
    coefficient of aligned (substituted) token pairs; the co-occurrence links stay as a
    floor, since one bad early alignment must not erase them. Deterministic: counts and
    sorted iteration only. `check` is called before each pair is aligned (a deadline
    raises there).
    """
    src_vocab = {t for s, _ in pairs for t in s}
    tgt_vocab = {t for _, tgt in pairs for t in tgt}
    n_src: dict[Token, float] = {}
    n_tgt: dict[Token, float] = {}
    co: dict[tuple[Token, Token], float] = {}
    nearness: dict[tuple[Token, Token], float] = {}
    for s, t in pairs:
        if check is not None:
            check()
        ss = {x: at for x, at in _places(s).items() if x not in tgt_vocab}
        ts = {y: at for y, at in _places(t).items() if y not in src_vocab}
        for x in ss:
            n_src[x] = n_src.get(x, 0) + 1
        for y in ts:
            n_tgt[y] = n_tgt.get(y, 0) + 1
        for x, x_at in ss.items():
            for y, y_at in ts.items():
                co[(x, y)] = co.get((x, y), 0) + 1
                near = 1.0 - min(abs(i - j) for i in x_at for j in y_at)
                nearness[(x, y)] = nearness.get((x, y), 0.0) + near
    links = _competitive_links(co, n_src, n_tgt, nearness)
    target_tokens = [y for _, t in pairs for y in t]
    if sum(y in src_vocab for y in target_tokens) * 2 >= len(target_tokens):
        # Most target tokens are written as in the source (a word and its inflected
        # form, not a transcription): a token only one side uses is an affix's or a
        # neutralization's, and co-occurrence alone linked the Dutch plural's `ə`,
        # deleted in every singular, with `p`, the devoiced `b`. There, a link of a
        # vowel with a consonant is left out.
        links = {
            (x, y): v for (x, y), v in links.items() if is_vowel(x, features) == is_vowel(y, features)
        }
    affinity = dict(links)
    for _ in range(rounds):
        counts: dict[tuple[Token, Token], float] = {}
        c_src: dict[Token, float] = {}
        c_tgt: dict[Token, float] = {}
        for s, t in pairs:
            if check is not None:
                check()
            for x in s:
                c_src[x] = c_src.get(x, 0) + 1
            for y in t:
                c_tgt[y] = c_tgt.get(y, 0) + 1
            for ci, cj in align_pair(s, t, features, mode, affinity, one_to_one=False):
                if ci is not None and cj is not None:
                    key = (s[ci], t[cj])
                    counts[key] = counts.get(key, 0) + 1
        learned = _dice_affinity(counts, c_src, c_tgt)
        affinity = {k: max(links.get(k, -1.0), learned.get(k, -1.0)) for k in sorted(set(links) | set(learned))}
    return affinity
