"""Phonological features derived from IPA (panphon), for tokens a problem gives none.

Public API:
    DERIVED, ipa_features(tokens), with_ipa_features(features, tokens), without_derived(features)

A problem's own feature table says what its tokens are; a user's TSV often has none,
and then only vowel/consonant classes from Unicode (`alignment.with_vowel_classes`).
Tokens that panphon reads as exactly one IPA segment (`ʐ`, `t͡ʃ`, `kʲ`, and plain
letters that are also IPA symbols) get its features, named with the `DERIVED` prefix
(`ipa.voi`), so that they never mix with the problem's own. A feature holds where
panphon gives it `+`. The learner uses them only where cross-validation on the
training rows says they help (`synthesis.learn`).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Iterable

from fstsynth.types import Features, Token

#: The prefix of derived feature names.
DERIVED = "ipa."
# panphon's features that name a class of sounds rules mention (its tone and airstream
# features are left out: each feature adds candidate tests at every offset).
_NAMES = ("syl", "son", "cons", "cont", "nas", "lat", "strid", "voi", "lab", "cor", "hi", "lo", "back", "round",
          "long")


@lru_cache(maxsize=1)
def _table() -> Any:
    import panphon  # its data ship with it; loaded once, when first needed

    return panphon.FeatureTable()


def ipa_features(tokens: Iterable[Token]) -> dict[Token, dict[str, bool]]:
    """The derived features of each token that panphon reads as one IPA segment."""
    table = _table()
    out: dict[Token, dict[str, bool]] = {}
    for tok in sorted(set(tokens)):
        if table.ipa_segs(tok) != [tok]:
            continue
        segment = table.fts(tok)
        if segment is None:
            continue
        values = dict(segment.items())
        out[tok] = {DERIVED + name: values.get(name) == 1 for name in _NAMES}
    return out


def with_ipa_features(features: Features, tokens: Iterable[Token]) -> dict[Token, dict[str, bool]]:
    """`features` plus the derived features of `tokens` (the tokens the problem gives
    no features for).

    Only the derived features that tell these tokens apart in a way no other feature
    does are kept: one of those true of the same tokens (the first in panphon's order),
    none true of all or none of them or of the same ones as a feature already given.
    Each feature adds candidate tests at every offset, and tests that hold at the same
    places are the same candidates."""
    derived = ipa_features(tokens)
    out = {tok: dict(feats) for tok, feats in features.items()}
    if not derived:
        return out
    known = set(derived)
    seen = {
        frozenset(tok for tok in known if features.get(tok, {}).get(name, False))
        for name in {n for feats in features.values() for n in feats}
    }
    seen |= {frozenset(), frozenset(known)}
    kept = []
    for name in (DERIVED + n for n in _NAMES):
        extension = frozenset(tok for tok in known if derived[tok][name])
        if extension not in seen:
            seen.add(extension)
            kept.append(name)
    for tok, feats in derived.items():
        out.setdefault(tok, {}).update({name: feats[name] for name in kept})
    return out


def without_derived(features: Features) -> Features:
    """`features` without the derived ones (the same object if there are none)."""
    if not any(name.startswith(DERIVED) for feats in features.values() for name in feats):
        return features
    return {tok: {n: v for n, v in feats.items() if not n.startswith(DERIVED)} for tok, feats in features.items()}
