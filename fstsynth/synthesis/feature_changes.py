"""Feature transformations of a pass: the `SetFeatures` and `Agree` right at some
example, with where each is right and where it applies.

Public API:
    feature_transformations(examples, need, features, window, tiers, deadline)
        -> dict[Transformation, tuple[int, int]]   (right, applies: bitsets over examples)
    written_change(known, x, y), changes_after_suffix(examples, features)

A change x -> y of one token by another, both in the inventory (`features.Inventory`),
is a change of the features in which they differ: z -> s, b -> p and g -> k are all
`SetFeatures([-voice])`, one transformation, so that one rule can make them all (the
candidate search then finds the class of tokens and contexts it holds in). Where the
token at an offset, or the nearest tier token either side, has the new values of every
feature changed, the change is also `Agree` with it; per place agreed with, also in the
union of the features changed there (n -> m before b and n -> ŋ before k: both
`Agree([cor, dors, lab], 1)`).

Where each is right is computed per group of examples with the same token (and the
same token agreed with), not per example: a pass has many examples and few such
groups.
"""

from __future__ import annotations

from collections import Counter
from typing import Sequence

from fstsynth.dsl import Agree, SetFeatures, Transformation
from fstsynth.features import Inventory, inventory
from fstsynth.interpreter import START, apply_transformation, tier_token
from fstsynth.synthesis.bitsets import bits
from fstsynth.synthesis.examples import TaggedExample
from fstsynth.synthesis.options import Deadline
from fstsynth.types import Features, Token

#: At most this many `SetFeatures` per pass, and `Agree` per place agreed with: the most
#: frequent changes (a transcription with IPA features has a change per odd token pair,
#: each a pool for the candidate search).
MOST_CHANGES = 12
MOST_AGREEMENTS = 4
#: A change of more features than this is no phonological rule's (a letter for a
#: stress mark, say): not proposed.
MOST_FEATURES = 3
#: A change of these (the classes every token is given: `features.with_vowel_classes`)
#: makes a segment something else (a vowel a stress mark), not another segment.
CLASS_FEATURES = frozenset({"vowel", "cons"})

# Where an `Agree` reads: an offset, or (tier, index).
_Source = int | tuple[str, int]


def _source_token(ex: TaggedExample, source: _Source, features: Features) -> Token | None:
    """The token an `Agree` reading `source` reads at the example (None: none)."""
    if isinstance(source, int):
        return ex.token_at(source)
    at = tier_token(source[0], source[1], False, ex.word, ex.position, features)
    return None if at is None else ex.word[at][0]


def _change(known: Inventory, x: Token, y: Token) -> tuple[tuple[str, bool], ...]:
    """The features in which y differs from x, with y's values (empty: no change known)."""
    bx, by = known.bundle(x), known.bundle(y)
    if bx is None or by is None:
        return ()
    return tuple((name, b) for name, a, b in zip(known.names, bx, by) if a != b)


def written_change(known: Inventory, x: Token, y: Token) -> tuple[tuple[str, bool], ...]:
    """The change x -> y as a phonological rule's `SetFeatures` writes it: the features
    in which y differs from x, at most `MOST_FEATURES` of them and none of
    `CLASS_FEATURES`, where the inventory's token with x's features so changed is y
    (empty: none)."""
    change = _change(known, x, y)
    if not change or len(change) > MOST_FEATURES or any(name in CLASS_FEATURES for name, _ in change):
        return ()
    return change if known.resolve(x, change) == y else ()


def changes_after_suffix(examples: Sequence[TaggedExample], features: Features) -> list[TaggedExample]:
    """`examples` with each change of a word's last token fused with the suffix after it
    (`h aː z` -> `h aː zː ɒ l`: `z` -> `zː ɒ l`) taken as the suffix alone (`z` -> `z ɒ
    l`), where the change is one a feature rule writes (`written_change`:
    `z` -> `zː` is `[+long]`).

    The suffix is affix material, written after the stem whatever its last segment; the
    stem's change is a one-token change conditioned by it. Learned together, they are
    one change of several tokens per stem-final segment seen (`ReplaceBy(z, zː ɒ l)`),
    which reaches no segment the training rows do not show. The suffix written, the next
    pass aligns the change alone (`z` -> `zː` before `ɒ l`), which feature rules
    generalize. For a word and another form of it, not a transcription (`x` -> `k s` is
    one letter's spelling)."""
    known = inventory(features)
    if not known.names:
        return list(examples)
    out = []
    for ex in examples:
        if ex.position == len(ex.word) - 1 and len(ex.output) >= 2:
            x = ex.word[ex.position][0]
            if ex.output[0] != x and written_change(known, x, ex.output[0]):
                ex = TaggedExample(ex.word, ex.position, (x, *ex.output[1:]))
        out.append(ex)
    return out


def feature_transformations(
    examples: Sequence[TaggedExample],
    need: Sequence[int],
    features: Features,
    window: int,
    tiers: Sequence[str],
    deadline: Deadline,
) -> dict[Transformation, tuple[int, int]]:
    """The feature transformations right at some example of `need` (indices of examples
    that need a change), each with (where it is right, where it applies)."""
    known = inventory(features)
    if not known.names:
        return {}
    sources: list[_Source] = [i for i in range(-window, window + 1) if i != 0]
    # (A harmonic tier is no feature of the inventory's bundles: asked for where the
    # features have it.)
    named = {name for feats in features.values() for name in feats}
    sources += [(tier, index) for tier in tiers if tier in named for index in (-1, 1)]
    set_counts: Counter[SetFeatures] = Counter()
    agree_counts: dict[_Source, Counter[tuple[str, ...]]] = {}
    for k in need:
        ex = examples[k]
        if ex.position == START or len(ex.output) != 1:
            continue
        x, y = ex.word[ex.position][0], ex.output[0]
        change = _change(known, x, y)
        if not change or len(change) > MOST_FEATURES or any(name in CLASS_FEATURES for name, _ in change):
            continue
        if known.resolve(x, change) == y:
            set_counts[SetFeatures(change)] += 1
        for source in sources:
            z = _source_token(ex, source, features)
            if z is None or known.bundle(z) is None:
                continue
            if all(known.value(z, name) == value for name, value in change):
                agree_counts.setdefault(source, Counter())[tuple(name for name, _ in change)] += 1
    found: list[Transformation] = [tr for tr, _ in set_counts.most_common(MOST_CHANGES)]
    for source, counts in agree_counts.items():
        names = [n for n, _ in counts.most_common(MOST_AGREEMENTS)]
        union = tuple(sorted({name for group in names for name in group}))
        if len(names) > 1 and union not in names:
            names.append(union)
        for group in names:
            found.append(Agree(group, source) if isinstance(source, int) else Agree(group, source[1], source[0]))
    groups: dict[_Source | None, list[list[int]]] = {}
    return {tr: _where(tr, examples, features, groups, deadline) for tr in found}


def _where(
    tr: Transformation,
    examples: Sequence[TaggedExample],
    features: Features,
    groups: dict[_Source | None, list[list[int]]],
    deadline: Deadline,
) -> tuple[int, int]:
    """(where `tr` is right, where it applies) over `examples`, computed once per group
    of examples with the same token and the same token read. `groups`: per place read
    (None: none), those groups, made as needed (shared by the transformations of a
    pass)."""
    source: _Source | None = None
    if isinstance(tr, Agree):
        source = tr.offset if tr.tier is None else (tr.tier, tr.offset)
    if source not in groups:
        deadline.check()
        by_key: dict[tuple[Token, Token | None], list[int]] = {}
        for k, ex in enumerate(examples):
            if ex.position != START:
                read = None if source is None else _source_token(ex, source, features)
                by_key.setdefault((ex.word[ex.position][0], read), []).append(k)
        groups[source] = list(by_key.values())
    right: list[int] = []
    applies: list[int] = []
    for members in groups[source]:
        ex = examples[members[0]]
        made = apply_transformation(tr, ex.word, ex.position, features)
        if made is None:
            continue
        applies.extend(members)
        right.extend(k for k in members if examples[k].output == made)
    return bits(right), bits(applies)
