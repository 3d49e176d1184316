"""Alignment: turn word pairs into token-level examples, using lingpy.

Public API:
    Example, align_pair(source, target, ...), examples_from_pair(source, target, ...)
    is_vowel(token, features)

An `Example` says what one source position must produce: the start position (-1) gets
the tokens before the first aligned source token (a prefix); every source token gets its
aligned target token (or nothing if deleted) followed by the target tokens inserted
after it. Pairs of equal length whose vocabularies do not overlap (word -> stress
digits) are aligned one to one without lingpy.
"""

from __future__ import annotations

import logging
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Mapping, Sequence

# lingpy floods the log on first import and installs a root handler at INFO.
logging.disable(logging.INFO)
try:
    from lingpy.align.pairwise import nw_align, sw_align
finally:
    logging.disable(logging.NOTSET)
    logging.getLogger("lingpy").setLevel(logging.WARNING)
    logging.getLogger().setLevel(logging.WARNING)

Token = str
Word = tuple[Token, ...]
Features = Mapping[Token, Mapping[str, bool]]

START = -1
GAP = "-"

_VOWEL_LETTERS = set("aeiouyæøœɑɒɐəɘɚɛɜɝɞɤɨɪɯɵɶʉʊʌʏɔɿʮåäöüáéíóúàèìòùâêîôûāēīōūăĕĭŏŭąęįųǫ")


def is_vowel(token: Token, features: Features) -> bool:
    """A vowel by the problem's `vowel` feature, or else by its first letter."""
    feats = features.get(token)
    if feats is not None and "vowel" in feats:
        return bool(feats["vowel"])
    base = unicodedata.normalize("NFD", token)[:1].lower()
    return base in _VOWEL_LETTERS


@dataclass(frozen=True)
class Example:
    """Source word `word` at `position` must produce `output`."""

    word: Word
    position: int
    output: Word


def _scorer(a: Sequence[Token], b: Sequence[Token], features: Features) -> dict:
    scores = {}
    for x in set(a):
        for y in set(b):
            if x == y:
                scores[(x, y)] = 1.0
            elif is_vowel(x, features) == is_vowel(y, features):
                scores[(x, y)] = -0.3
            else:
                scores[(x, y)] = -1.0
    return scores


def _encode(source: Word, target: Word, vowels: frozenset[Token]):
    """lingpy reads "-" as a gap: hand it safe stand-ins for the tokens."""
    vocab = sorted(set(source) | set(target))
    code = {tok: f"t{k}" for k, tok in enumerate(vocab)}
    feats = {code[t]: {"vowel": t in vowels} for t in vocab}
    a = [code[t] for t in source]
    b = [code[t] for t in target]
    return a, b, _scorer(a, b, feats)


@lru_cache(maxsize=65536)
def _global(
    source: Word, target: Word, vowels: frozenset[Token]
) -> tuple[tuple[int | None, int | None], ...]:
    a, b, scorer = _encode(source, target, vowels)
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


def align_pair(
    source: Word, target: Word, features: Features, mode: str = "global"
) -> tuple[tuple[int | None, int | None], ...]:
    """Aligned columns (source index or None, target index or None)."""
    if len(source) == len(target) and not (set(source) & set(target)):
        return tuple((k, k) for k in range(len(source)))
    if not source or not target:
        return tuple((k, None) for k in range(len(source))) + tuple(
            (None, k) for k in range(len(target))
        )
    vowels = frozenset(t for t in set(source) | set(target) if is_vowel(t, features))
    if mode == "local":
        return _local(source, target, vowels)
    if mode != "global":
        raise ValueError(f"alignment mode must be 'global' or 'local', not {mode!r}")
    return _global(source, target, vowels)


def _local(source: Word, target: Word, vowels: frozenset[Token]):
    """Smith-Waterman for the best-matching core, then global alignment of the flanks."""
    a, b, scorer = _encode(source, target, vowels)
    (pre_a, core_a, post_a), (pre_b, core_b, post_b), _ = sw_align(a, b, scorer=scorer)
    columns: list[tuple[int | None, int | None]] = []
    offset_a = offset_b = 0

    def add_global(sa: list[str], sb: list[str]) -> None:
        nonlocal offset_a, offset_b
        if sa and sb:
            sub = _global(
                tuple(source[offset_a : offset_a + len(sa)]),
                tuple(target[offset_b : offset_b + len(sb)]),
                vowels,
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
    source: Word, target: Word, features: Features, mode: str = "global"
) -> list[Example]:
    return examples_from_alignment(source, target, align_pair(source, target, features, mode))
