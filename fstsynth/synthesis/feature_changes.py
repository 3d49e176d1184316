"""Feature transformations of a pass: the `SetFeatures` and `Agree` right at some
example, with where each is right and where it applies.

Public API:
    feature_transformations(examples, need, features, window, tiers, deadline)
        -> dict[Transformation, tuple[int, int]]   (right, applies: bitsets over examples)
    written_change(known, x, y), changes_after_suffix(examples, features)
    with_class_changes(program, sources, features) -> Program

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
from functools import cache
from itertools import combinations
from typing import Callable, Sequence

from fstsynth.dsl import (
    Agree,
    Is,
    IsToken,
    Not,
    Pass,
    Predicate,
    Program,
    ReplaceBy,
    Rule,
    SetFeatures,
    TaggedToken,
    Transformation,
)
from fstsynth.features import DERIVED, Inventory, inventory, readable_bundles, written_by
from fstsynth.interpreter import START, apply_transformation, eval_predicate, run_many, run_pass_many, tier_token
from fstsynth.synthesis.bitsets import bits
from fstsynth.synthesis.examples import TaggedExample
from fstsynth.synthesis.options import Deadline
from fstsynth.types import Features, Token, Word

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

#: The features derived from IPA that make a segment's manner and phonation, not its
#: place: a change seen on one segment is taken to reach the segments of its class
#: that differ from it in place alone (`with_class_changes`).
MANNER_FEATURES = tuple(DERIVED + name for name in ("syl", "son", "cons", "cont", "nas", "lat", "strid", "voi", "long"))

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


def _class_feature(known: Inventory, token: Token) -> str | None:
    """The class (`vowel` or `cons`, of `CLASS_FEATURES`) `token` is of, where it is
    of one only (None: of neither or both)."""
    classes = [name for name in sorted(CLASS_FEATURES) if known.value(token, name)]
    return classes[0] if len(classes) == 1 else None


def _values_test(values: tuple[tuple[str, bool], ...], offset: int) -> tuple[Predicate, ...]:
    """The tests that the token at `offset` has every one of `values`."""
    return tuple(Is(name, offset) if value else Not(Is(name, offset)) for name, value in values)


def _fewest_values(
    values: tuple[tuple[str, bool], ...],
    fixed: tuple[tuple[str, bool], ...],
    names: Sequence[str],
    bundles: frozenset[tuple[bool, ...]],
) -> tuple[tuple[str, bool], ...]:
    """The fewest of `values` (feature, value) that, with `fixed`, pick out the same
    bundles of `bundles` (each a token's values of `names`, every token the model can
    read: `features.readable_bundles`) as all of them do: a class as a phonologist
    writes it, the features that tell it from the rest of the inventory (`[+cons
    -son -voi -cont]` -> `[-son -voi -cont]` where every non-sonorant is a consonant).
    Of as few, those with the fewest features derived from IPA (the data's own `vowel`,
    `cons` and a features file's read first), then the first in `values`' order; kept
    in that order.

    Minimum set cover: each value rules out the bundles outside the class it is false
    of, and the values kept must rule out all of them. A class change tests at most
    `1 + MOST_FEATURES + len(MANNER_FEATURES)` values, so trying subsets by size is
    cheap (the first sizes answer)."""
    at = {name: k for k, name in enumerate(names)}
    # (A fixed test of a name outside `names`, a harmonic tier's, is left out: the class
    # is then told from more bundles, never from fewer.)
    fixed = tuple((n, v) for n, v in fixed if n in at)
    outside = [
        bundle
        for bundle in bundles
        if all(bundle[at[n]] == v for n, v in fixed) and not all(bundle[at[n]] == v for n, v in values)
    ]
    rules_out = [bits(k for k, bundle in enumerate(outside) if bundle[at[n]] != v) for n, v in values]
    every = (1 << len(outside)) - 1
    for size in range(len(values) + 1):
        fits = []
        for chosen in combinations(range(len(values)), size):
            covered = 0
            for k in chosen:
                covered |= rules_out[k]
            if covered == every:
                fits.append(chosen)
        if fits:
            best = min(fits, key=lambda chosen: (sum(values[k][0].startswith(DERIVED) for k in chosen), chosen))
            return tuple(values[k] for k in best)
    return values  # (not reached: all of them rule out every bundle outside)


def _values_at(predicates: Sequence[Predicate], offset: int) -> tuple[tuple[str, bool], ...]:
    """The feature values `predicates` test the token at `offset` for (`Is`, `Not(Is)`)."""
    found = []
    for pred in predicates:
        negated = isinstance(pred, Not)
        inner = pred.predicate if isinstance(pred, Not) else pred
        if isinstance(inner, Is) and inner.offset == offset:
            found.append((inner.feature, not negated))
    return tuple(found)


# Where each token stands in a pass's input words: (word index, position).
_Places = dict[Token, list[tuple[int, int]]]


def _places(words: Sequence[Sequence[TaggedToken]]) -> _Places:
    """Where each token of `words` stands."""
    found: _Places = {}
    for k, word in enumerate(words):
        for position, (token, _) in enumerate(word):
            found.setdefault(token, []).append((k, position))
    return found


def _class_changes(
    known: Inventory,
    rule: Rule,
    words: Sequence[Sequence[TaggedToken]],
    places: _Places,
    features: Features,
    fewest: Callable[[tuple[tuple[str, bool], ...], tuple[tuple[str, bool], ...]], tuple[tuple[str, bool], ...]],
) -> list[Rule]:
    """`rule`'s `ReplaceBy(x, a, b)` as an assimilation of the tokens of `a`'s class and
    manner to a neighbour that has the values the change sets wherever the rule applies
    to the pass's input `words` (`written_change`, `MANNER_FEATURES`: `ɔ` -> `ɔ̃` before
    `n` is `[+vowel -nas] -> [+nas] / _ [+nas]`), under the rule's own tests: one
    candidate per such neighbour, the next one first (none: not such a change).

    A change with no neighbour to assimilate to is not made the class's: nothing in
    the rows then says which of the token's features condition it (Arabic `n` -> `nː`
    after the article, shown for coronals only: "a nasal lengthens there" lengthens a
    held-out `m`).

    The class is tested with the fewest of those values that pick out the same tokens
    (`fewest`: `_fewest_values` over every token the model can read), so that the rule
    reads as a phonologist writes it and applies to the same tokens, seen or unseen, as
    with all of them. `places`: where each token of `words` stands (`_places`)."""
    tr = rule.transformation
    if not isinstance(tr, ReplaceBy) or len(tr.target) != 1:
        return []
    change = written_change(known, tr.source, tr.target[0])
    klass = _class_feature(known, tr.source)
    if not change or klass is None:
        return []
    # The tokens of the class that change as `a` does: those with `a`'s values of every
    # feature changed (`d` -> `ɾ`, `[-cont -son]` -> `[+cont +son]`, reaches `t`, not `ð`,
    # which is `[+cont]` already), and of its manner (`tː` -> `t` reaches `kː`, not `sː`).
    was = tuple((name, not value) for name, value in change)
    changed = {name for name, _ in change}
    manner = tuple(
        (name, bool(known.value(tr.source, name)))
        for name in MANNER_FEATURES
        if name in known.names and name not in changed
    )
    described = ((klass, True), *was, *manner)
    tests = (*rule.predicates, *_values_test(fewest(described, _values_at(rule.predicates, 0)), 0))
    at = [
        (words[k], position)
        for k, position in places.get(tr.source, ())
        if all(eval_predicate(pred, words[k], position, features) for pred in rule.predicates)
    ]
    found = []
    for offset in (1, -1):
        read = {word[position + offset][0] if 0 <= position + offset < len(word) else None for word, position in at}
        if at and all(tok is not None and all(known.value(tok, n) == v for n, v in change) for tok in read):
            found.append(Rule((*tests, *_values_test(change, offset)), SetFeatures(change)))
    return found


def _of_token(pred: Predicate) -> bool:
    """Whether `pred` reads the token at the position alone (`Is`, `IsToken` at 0)."""
    inner = pred.predicate if isinstance(pred, Not) else pred
    return isinstance(inner, (Is, IsToken)) and inner.offset == 0


def _reached(
    rule: Rule, source: Token, words: Sequence[Sequence[TaggedToken]], places: _Places, features: Features
) -> list[int]:
    """The words `rule`'s tests hold in at some position, those where they hold at a
    token other than `source` (where the token rule it widens does not fire) first.

    Only the positions of tokens its tests of the token alone allow are looked at (a
    class of a few tokens stands at a few of a pass's positions). A word it reaches
    beyond the token rule is where the wider rule writes what the pass did not: the
    words that refute it, checked first (`with_class_changes`)."""
    own = [pred for pred in rule.predicates if _of_token(pred)]
    gained: set[int] = set()
    kept: set[int] = set()
    for token, where in places.items():
        if not all(eval_predicate(pred, ((token, None),), 0, features) for pred in own):
            continue
        into = kept if token == source else gained
        for k, position in where:
            if k not in into and all(eval_predicate(pred, words[k], position, features) for pred in rule.predicates):
                into.add(k)
    return sorted(gained) + sorted(kept - gained)


#: The words a wider rule is checked on first (`with_class_changes`): where the class
#: change is wrong, one of the first words it reaches beyond the token rule shows it,
#: and the rest are not run.
FIRST_CHECKED = 16


def _same_outputs(
    program: Program,
    tried: Program,
    chosen: Sequence[int],
    sources: Sequence[Word],
    features: Features,
    applied: Features,
    expected: dict[int, Word],
) -> bool:
    """Whether `tried` (with `applied`) makes of the `chosen` sources what `program`
    (with `features`) makes of them. `expected`: `program`'s outputs made so far, by
    source index (added to: a source is run once, by the first check that asks)."""
    if not chosen:
        return True
    missing = [k for k in chosen if k not in expected]
    if missing:
        expected.update(zip(missing, run_many(program, [sources[k] for k in missing], features)))
    return run_many(tried, [sources[k] for k in chosen], applied) == [expected[k] for k in chosen]


def with_class_changes(program: Program, sources: Sequence[Word], features: Features) -> Program:
    """`program` with each rule replacing one token by another that differs from it by a
    feature change, where a neighbour has the values it sets (`ReplaceBy(x, ɔ, ɔ̃)`
    two before the end, `b ɔ n` -> `b ɔ̃`), made that change of the tokens of the
    token's class and manner, any place, testing the neighbour too (`[+vowel -nas] ->
    [+nas] / _ [+nas]`, `_class_changes`), where every training word in `sources` comes
    out as it did, with the segments the change writes from known tokens (a model
    applies with them: `features.written_by`).

    A token rule learned from one row (`b ɔ n` -> `b ɔ̃`) reaches no other token: a
    vowel the rows show in that context only in held-out words (`p l ɛ n`) stays as it
    is, where a phonologist writes the change of the class from that one row, an
    assimilation to the nasal after it. Where another token of the class stands in
    that context in training and is kept, or changed otherwise, the token rule stays.
    Each rule is tried in turn, in program order, its candidates first to last; the
    first kept replaces it."""
    known = inventory(features)
    if not known.names:
        return program
    passes = list(program.passes)
    readable: list[frozenset[tuple[bool, ...]]] = []  # made at the first class change

    @cache
    def fewest(
        described: tuple[tuple[str, bool], ...], fixed: tuple[tuple[str, bool], ...]
    ) -> tuple[tuple[str, bool], ...]:
        # (Asked once per rule of a token: the rules of a token share its class.)
        if not readable:
            readable.append(readable_bundles(features, known.names))
        return _fewest_values(described, fixed, known.names, readable[0])

    expected: dict[int, Word] = {}  # the program's output per source, made as checks ask
    for p, pass_ in enumerate(program.passes):
        words: list[list[TaggedToken]] | None = None
        places: _Places = {}
        for rule in pass_.rules:
            if not isinstance(rule.transformation, ReplaceBy):
                continue
            if words is None:
                words = [[(tok, None) for tok in src] for src in sources]
                for before in passes[:p]:
                    words = run_pass_many(before, words, features)
                places = _places(words)
            for wider in _class_changes(known, rule, words, places, features, fewest):
                rules = list(passes[p].rules)
                r = rules.index(rule)
                # (A change of the class the pass makes already, under the same tests, is
                # that rule's: the token rule goes, as it would fire after it.)
                rules[r : r + 1] = [] if wider in rules else [wider]
                tried = Program((*passes[:p], Pass(tuple(rules)), *passes[p + 1 :]))
                # Checked with the segments the change writes from known tokens, as
                # the model applies it (`features.written_by`): `k` at the word start
                # kept in training, the rule lengthening `ʃ` there lengthens `k` too,
                # though no word shows `kː`.
                assert isinstance(wider.transformation, SetFeatures)
                applied = {**features, **written_by(features, [wider.transformation.values])}
                # Only the words the wider rule fires in can come out otherwise: it fires
                # wherever the token rule did (`_class_changes` tests the neighbour at
                # each of those), and elsewhere the pass runs as before.
                # Those it reaches beyond the token rule first, a few (`FIRST_CHECKED`),
                # then the rest: a wrong change is told from a few words, not all.
                reached = _reached(wider, rule.transformation.source, words, places, applied)
                if all(
                    _same_outputs(program, tried, chunk, sources, features, applied, expected)
                    for chunk in (reached[:FIRST_CHECKED], reached[FIRST_CHECKED:])
                ):
                    passes = list(tried.passes)
                    break
    return Program(tuple(passes))
