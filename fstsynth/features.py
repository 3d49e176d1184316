"""Phonological features derived from IPA (panphon), for tokens a problem gives none.

Public API:
    DERIVED, ipa_features(tokens), with_ipa_features(features, tokens), without_derived(features)

A problem's own feature table says what its tokens are; a user's TSV often has none,
and then only vowel/consonant classes from Unicode (`alignment.with_vowel_classes`).
Tokens that are exactly one IPA segment of panphon's table (`ʐ`, `t͡ʃ`, `kʲ`, and plain
letters that are also IPA symbols) get its features, named with the `DERIVED` prefix
(`ipa.voi`), so that they never mix with the problem's own. A feature holds where
panphon gives it `+`. The learner uses them only where cross-validation on the
training rows says they help (`synthesis.learn`).
"""

from __future__ import annotations

import csv
import importlib.util
import unicodedata
from functools import lru_cache
from pathlib import Path
from typing import Iterable

from fstsynth.types import Features, Token

#: The prefix of derived feature names.
DERIVED = "ipa."
# panphon's features that name a class of sounds rules mention (its tone and airstream
# features are left out: each feature adds candidate tests at every offset).
_NAMES = ("syl", "son", "cons", "cont", "nas", "lat", "strid", "voi", "lab", "cor", "hi", "lo", "back", "round",
          "long")


@lru_cache(maxsize=1)
def _segments() -> dict[Token, dict[str, bool]]:
    """panphon's table of IPA segments (`data/ipa_all.csv`, shipped with it): segment ->
    feature -> `+`. Read directly, without importing panphon, whose feature table takes
    seconds to build (4 s here): more than learning a small problem."""
    spec = importlib.util.find_spec("panphon")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("panphon is not installed (pip install panphon)")
    path = Path(list(spec.submodule_search_locations)[0]) / "data" / "ipa_all.csv"
    with path.open(encoding="utf-8", newline="") as handle:
        rows = csv.reader(handle)
        header = next(rows)
        columns = [header.index(name) for name in _NAMES]
        return {
            unicodedata.normalize("NFC", row[0]): {DERIVED + name: row[k] == "+" for name, k in zip(_NAMES, columns)}
            for row in rows
            if row
        }


def ipa_features(tokens: Iterable[Token]) -> dict[Token, dict[str, bool]]:
    """The derived features of each token that is one IPA segment in panphon's table."""
    table = _segments()
    return {tok: dict(table[tok]) for tok in sorted(set(tokens)) if tok in table}


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
