"""One suffix, several surface forms: insert one of them, let feature rules make the rest.

Public API:
    suffix_allomorphs(pairs, features), allomorph_pass(allomorphs)
    alternates_in(pairs, features, feature)

Where most forms of a column pair are their word plus a suffix, and the suffixes are
allomorphs of one shape (Turkish past `-dɯ -di -du -dy -tɯ -ti -tu -ty`: as long as one
another, a vowel where the others have a vowel, a consonant where they have a
consonant), a phonologist inserts one suffix and lets feature rules make the others
(voicing agreement with the stem's last segment, harmony with its last vowel). Learned
token by token, each allomorph is an insertion with contexts of its own (`∅ -> t ɯ / k
_ #`, `/ p _ #`), and a stem ending in a segment no training row shows takes none or
the wrong one. `allomorph_pass` is a first pass inserting the most frequent allomorph
at every word's end; the passes after it see the inserted tokens (tagged with that
`Insert`) and learn what changes them, in features where the variant has them. It uses
the DSL's `Insert` only, so every backend runs it; `auto` cross-validates it as one more
configuration (`Options.allomorphs`).
"""

from __future__ import annotations

from collections import Counter
from typing import Sequence

from fstsynth.dsl import BOUNDARY, Insert, IsToken, Pass, Rule
from fstsynth.features import is_vowel
from fstsynth.types import Features, Word

#: At least this share of the rows must be their word plus one of the allomorphs: the
#: suffix is the column pair's affix, not the change of a few words.
SUFFIXED_SHARE = 0.75


def _added_suffixes(pairs: Sequence[tuple[Word, Word]]) -> Counter[Word]:
    """The suffixes the targets add to their whole source word, with the rows of each."""
    return Counter(tgt[len(src) :] for src, tgt in pairs if len(tgt) > len(src) and tgt[: len(src)] == src)


def suffix_allomorphs(pairs: Sequence[tuple[Word, Word]], features: Features) -> Counter[Word]:
    """The suffixes the targets add to their whole source word, with counts, where they
    are allomorphs of one shape (see the module doc): two or more distinct ones, every
    suffix a target adds of one length, on at least `SUFFIXED_SHARE` of the rows, with
    a vowel at each slot where any has one and a consonant where any has one; else
    empty."""
    same = _added_suffixes(pairs)
    # Every suffix of one length: one of another length (English -ɪz beside -s, -z) is
    # an insertion no feature rule makes, and the passes after the first, which see the
    # stem's last token no longer at the word's end, anchored its rules to no edge
    # (English plural, one fold: `d͡ʒ ʌ d͡ʒ` -> `d͡ʒ ɪ ʌ d͡ʒ ɪ z`).
    lengths = {len(suffix) for suffix in same}
    if len(same) < 2 or len(lengths) > 1 or same.total() < SUFFIXED_SHARE * len(pairs):
        return Counter()
    length = lengths.pop()
    for slot in range(length):
        if len({is_vowel(suffix[slot], features) for suffix in same}) > 1:
            return Counter()
    return same


def allomorph_pass(allomorphs: Counter[Word]) -> Pass:
    """A first pass inserting the most frequent of `allomorphs` (ties: the first
    printed) after every word's last token."""
    representative = min(allomorphs.items(), key=lambda kv: (-kv[1], kv[0]))[0]
    return Pass((Rule((IsToken(BOUNDARY, 1),), Insert(representative)),))


def alternates_in(pairs: Sequence[tuple[Word, Word]], features: Features, feature: str) -> bool:
    """Whether the suffixes the targets add to their whole source word alternate in
    `feature` at a vowel: two of one length differing only in vowels, one of which has
    it where the other has not (Finnish `-ssa`/`-ssä`, Hungarian `-nɒk`/`-nɛk` in
    backness). The evidence of a harmony: the harmonic tiers (`features.harmonic_tiers`)
    are read where it is shown."""
    by_shape: dict[Word, list[Word]] = {}
    for suffix in _added_suffixes(pairs):
        # The suffix with its vowels left out: suffixes of one shape differ in vowels only.
        shape = tuple(tok if not is_vowel(tok, features) else "" for tok in suffix)
        by_shape.setdefault(shape, []).append(suffix)
    for same in by_shape.values():
        for k, a in enumerate(same):
            for b in same[k + 1 :]:
                for x, y in zip(a, b):
                    if x != y and bool(features.get(x, {}).get(feature)) != bool(features.get(y, {}).get(feature)):
                        return True
    return False
