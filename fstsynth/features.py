"""Phonological features derived from IPA (panphon), for tokens a problem gives none.

Public API:
    DERIVED, ipa_features(tokens), with_ipa_features(features, tokens), without_derived(features)
    is_derived(features), read_by_ipa(tokens, features), written_by(features, changes)
    HARMONIC, harmonic_tiers(features), is_harmonic_name(name), harmonic_tier_names(features)
    without_harmonic(features), HARMONY, harmonic_name(feature)
    WithUnseen(features, unseen)
    Inventory, inventory(features)  (feature bundles -> tokens, for SetFeatures and Agree)
    is_vowel(token, features), with_vowel_classes(features, tokens)
    readable_bundles(features, names)

A problem's own feature table says what its tokens are; a user's TSV often has none,
and then only vowel/consonant classes from Unicode (`with_vowel_classes`).
Tokens that are exactly one IPA segment of panphon's table (`ʐ`, `t͡ʃ`, `kʲ`, and plain
letters that are also IPA symbols) get its features, named with the `DERIVED` prefix
(`ipa.voi`), so that they never mix with the problem's own. A feature holds where
panphon gives it `+`. The learner uses them only where cross-validation on the
training rows says they help (`synthesis.learn`).

One feature is derived from the inventory, not from panphon: `ipa.harmonic.back`, the
vowels that take part in front/back harmony (`harmonic_tiers`). It names a tier along
which harmony skips the neutral vowels (Finnish `i e`), never a class a rule changes.
"""

from __future__ import annotations

import csv
import importlib.util
import unicodedata
from functools import lru_cache
from pathlib import Path
from typing import Container, Iterable, Mapping, Sequence

from fstsynth.types import Features, Token

#: The prefix of derived feature names.
DERIVED = "ipa."
# panphon's features that name a class of sounds rules mention (its tone and airstream
# features are left out: each feature adds candidate tests at every offset). `ant`
# tells s from ʃ, so that [-voice] names one token for z and for ʒ.
_NAMES = ("syl", "son", "cons", "cont", "nas", "lat", "strid", "voi", "lab", "cor", "ant", "hi", "lo", "back",
          "round", "long")


#: The prefix of the features derived from the inventory: per feature F of `HARMONY`,
#: the vowels that take part in an F harmony (`harmonic_tiers`).
HARMONIC = DERIVED + "harmonic."
#: The derived features a harmony with neutral vowels may turn on. Front/back harmony is
#: the one whose neutral vowels (front vowels with no back partner: Finnish `i e`,
#: Hungarian `i iː eː`) are skipped; in rounding and height harmonies a vowel with no
#: partner blocks or is changed, and every vowel on their tiers counts.
HARMONY = (DERIVED + "back",)


@lru_cache(maxsize=1)
def _table() -> tuple[tuple[str, ...], dict[Token, tuple[str, ...]]]:
    """panphon's table of IPA segments (`data/ipa_all.csv`, shipped with it): its
    feature names, and segment -> each feature's value (`+`, `-`, `0`). Read directly,
    without importing panphon, whose feature table takes seconds to build (4 s here):
    more than learning a small problem."""
    spec = importlib.util.find_spec("panphon")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("panphon is not installed (pip install panphon)")
    path = Path(list(spec.submodule_search_locations)[0]) / "data" / "ipa_all.csv"
    with path.open(encoding="utf-8", newline="") as handle:
        rows = csv.reader(handle)
        header = next(rows)
        return tuple(header[1:]), {unicodedata.normalize("NFC", row[0]): tuple(row[1:]) for row in rows if row}


@lru_cache(maxsize=1)
def _segments() -> dict[Token, dict[str, bool]]:
    """panphon's segments with the features of `_NAMES`, each true where it is `+`."""
    header, rows = _table()
    columns = [header.index(name) for name in _NAMES]
    return {seg: {DERIVED + name: values[k] == "+" for name, k in zip(_NAMES, columns)} for seg, values in rows.items()}


@lru_cache(maxsize=1)
def _by_values() -> dict[tuple[str, ...], tuple[Token, ...]]:
    """panphon's segments by their whole row of values."""
    _header, rows = _table()
    found: dict[tuple[str, ...], list[Token]] = {}
    for seg, values in rows.items():
        found.setdefault(values, []).append(seg)
    return {values: tuple(segs) for values, segs in found.items()}


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
    return harmonic_tiers(out)


def is_harmonic_name(name: str) -> bool:
    """Whether `name` is a feature `harmonic_tiers` derives (a tier, not a class)."""
    return name.startswith(HARMONIC)


def harmonic_tier_names(features: Features) -> tuple[str, ...]:
    """The harmonic tiers `features` has (`harmonic_tiers`), sorted."""
    return tuple(sorted({name for feats in features.values() for name in feats if is_harmonic_name(name)}))


def without_harmonic(features: Features) -> Features:
    """`features` without the harmonic tiers (the same object if there are none)."""
    if not harmonic_tier_names(features):
        return features
    return {tok: {n: v for n, v in feats.items() if not is_harmonic_name(n)} for tok, feats in features.items()}


def harmonic_name(feature: str) -> str:
    """`ipa.back` -> `ipa.harmonic.back`."""
    return HARMONIC + feature[len(DERIVED) :]


def _compared(names: Iterable[str], feature: str) -> tuple[str, ...]:
    """The features two tokens must share to be partners differing in `feature`."""
    return tuple(sorted(name for name in names if name != feature and not is_harmonic_name(name)))


#: Features in which a front vowel may differ from its back partner where the inventory
#: has no closer one: a height step. panphon's `a` is low and its `e` mid, so Turkish `a`
#: (no `æ`) pairs with `e`, which is then no neutral vowel; Finnish `a` has `æ`.
_HEIGHT = (DERIVED + "hi", DERIVED + "lo")


def _bundle(feats: Mapping[str, bool], compared: Sequence[str]) -> tuple[bool, ...]:
    return tuple(bool(feats.get(name, False)) for name in compared)


class _Partners:
    """The vowels of `features` with `feature` (the back vowels), as bundles over the
    other features but the harmonic tiers (`compared`): those with a partner without it
    (the same bundle) and those without one. Tokens only read (`WithUnseen.unseen`) are
    left out: a partner must be a segment the model knows. `names`: every feature
    name of `features`."""

    def __init__(self, features: Features, feature: str, names: Iterable[str]) -> None:
        self.feature = feature
        self.compared = compared = _compared(names, feature)
        unseen: Container[str] = getattr(features, "unseen", frozenset())
        known = [feats for tok, feats in features.items() if tok not in unseen and feats.get("vowel", False)]
        others = {_bundle(feats, compared) for feats in known if not feats.get(feature, False)}
        having = {_bundle(feats, compared) for feats in known if feats.get(feature, False)}
        self.having = having
        self.paired = having & others
        self.unpaired = having - others
        self.height = [k for k, name in enumerate(compared) if name in _HEIGHT]

    def harmonic(self, bundle: tuple[bool, ...]) -> bool:
        """Whether a vowel without the feature, of `bundle`, has a partner: the same
        bundle with it, or, of a back vowel with no such partner, one a height step away."""
        if bundle in self.having:
            return True
        for k in self.height:
            stepped = (*bundle[:k], not bundle[k], *bundle[k + 1 :])
            if stepped in self.unpaired:
                return True
        return False

    def takes_part(self, feats: Mapping[str, bool]) -> bool:
        """Whether a token of `feats` is on the harmonic tier: a vowel with the feature
        (a back vowel), or one with a partner: `æ` of `a`, not `i` where no `ɯ`."""
        if not feats.get("vowel", False):
            return False
        return bool(feats.get(self.feature, False)) or self.harmonic(_bundle(feats, self.compared))



def harmonic_tiers(features: Features) -> dict[Token, dict[str, bool]]:
    """`features` plus, for each feature F of `HARMONY` (backness), `ipa.harmonic.F`: the
    vowels that take part in an F harmony, on whose tier a harmony reads the last
    harmonic vowel and skips the neutral ones. A vowel takes part where it has F (a back
    vowel) or the inventory has its partner: a vowel with F and the same values of every
    other feature (`æ` and `a`, `y` and `u`), or, for a vowel with F that has no such
    partner, a height step away (Turkish `e` of `a`, where no `æ`). A front vowel with no
    back partner (Finnish `i e`, no `ɯ ɤ`) is neutral: transparent, `v o i` reads `o`.

    Only for features derived from IPA (`is_derived`: every backend then reads an
    unseen token's by `read_by_ipa`), and only where the tier is a new one: some vowel
    is neutral and some front vowel has a partner differing in F alone (else it is the
    vowel tier, or a system with no vowels alternating in F: `a e i o u`). The partners are the inventory's own,
    not panphon's (which has a back partner for every vowel)."""
    out = {tok: dict(feats) for tok, feats in features.items()}
    if not is_derived(features):
        return out
    names = {name for feats in features.values() for name in feats}
    for feature in HARMONY:
        if feature not in names:
            continue
        partners = _Partners(features, feature, names)
        values = {tok: partners.takes_part(feats) for tok, feats in features.items()}
        vowels = [tok for tok, feats in features.items() if feats.get("vowel", False)]
        neutral = any(not values[tok] for tok in vowels)
        # Some front vowel whose back partner differs in backness alone (`æ` `a`, `y`
        # `u`): a five-vowel system, whose `e` pairs with `a` by a height step only,
        # shows no vowel that alternates in backness alone.
        paired = bool(partners.paired)
        if neutral and paired:
            for tok, value in values.items():
                out[tok][harmonic_name(feature)] = value
    return out


def without_derived(features: Features) -> Features:
    """`features` without the derived ones (the same object if there are none)."""
    if not any(name.startswith(DERIVED) for feats in features.values() for name in feats):
        return features
    return {tok: {n: v for n, v in feats.items() if not n.startswith(DERIVED)} for tok, feats in features.items()}


def is_derived(features: Features) -> bool:
    """Whether `features` were derived from IPA alone: derived features and the
    Unicode vowel/consonant classes, none from a user's features file."""
    names = {name for feats in features.values() for name in feats}
    return any(name.startswith(DERIVED) for name in names) and all(
        name.startswith(DERIVED) or name in ("vowel", "cons") for name in names
    )


def read_by_ipa(tokens: Iterable[Token], features: Features) -> dict[Token, dict[str, bool]] | None:
    """The features of `tokens` (outside `features`) as a model whose `features` were
    derived from IPA would have given them: the Unicode vowel/consonant classes and
    panphon's, limited to the feature names the model has. None if some token is not an
    IPA segment of panphon's table, or the model's features were not derived from IPA
    (a user's features file says what its tokens are: a token outside it has none)."""
    wanted = sorted(set(tokens))
    if not is_derived(features):
        return None
    derived = ipa_features(wanted)
    if len(derived) != len(wanted):
        return None
    names = {name for feats in features.values() for name in feats}
    classes = with_vowel_classes({}, wanted)
    read = {
        tok: {name: value for name, value in {**classes[tok], **derived[tok]}.items() if name in names}
        for tok in wanted
    }
    # The harmonic tiers the model has: an unseen vowel takes part where the model's
    # inventory has its partner (as `harmonic_tiers` decided for the model's tokens).
    for feature in HARMONY:
        name = harmonic_name(feature)
        if name in names:
            partners = _Partners(features, feature, names)
            for feats in read.values():
                feats[name] = partners.takes_part(feats)
    return read


def _edits(a: str, b: str) -> int:
    """Levenshtein distance between two strings, by code points."""
    row = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        diagonal, row[0] = row[0], i
        for j, cb in enumerate(b, 1):
            diagonal, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, diagonal + (ca != cb))
    return row[-1]


def _marks(segment: str) -> set[str]:
    """The diacritics of a segment: its combining marks and modifier letters (`ʲ`, `ː`)."""
    return {
        ch
        for ch in unicodedata.normalize("NFD", segment)
        if unicodedata.combining(ch) or unicodedata.category(ch) == "Lm"
    }


def _nearest(
    token: Token, segments: Iterable[Token], lengthened: bool = False, shown: frozenset[str] = frozenset()
) -> Token | None:
    """Of `segments` (panphon's, all with the same values), the one written most like
    `token` with no diacritic `token` lacks (fewest edits, then fewest code points): `f`
    for `v` devoiced, not `f̝`; `o` for `oː` shortened; none for `l` devoiced (`l̥`: a
    segment a language writes with a letter of its own is one its words show); the
    length mark is allowed where `lengthened` (`ʃː` for `ʃ` lengthened), and the marks
    `shown` (`ʲ` where the words write this change so: `bʲ` for `b` palatalized where
    they show `n` -> `nʲ`; `Inventory.shown_marks`). None also where two are written
    alike (panphon's `ɢʲ` and `ɡʲ` for `kʲ` voiced): no guess."""
    # A segment lengthened (`ʃ` -> `ʃː`, a total assimilation) is written with the length
    # mark where the words write that class long (`_writes_length`): IPA has no letter
    # of its own for a long segment.
    marks = _marks(token) | ({"ː"} if lengthened else set()) | shown
    # panphon writes some segments twice, the same marks in another order (`dˤː` and
    # `dːˤ`): one segment, not two guesses. Of such spellings the one that keeps the
    # token as written, marks added after it, stands for them.
    spellings: dict[tuple[str, ...], Token] = {}
    for seg in sorted(segments):
        if _marks(seg) <= marks:
            letters = tuple(sorted(seg))
            kept = spellings.get(letters)
            if kept is None or (seg.startswith(token) and not kept.startswith(token)):
                spellings[letters] = seg
    ranked = sorted((_edits(token, seg), len(seg), seg) for seg in spellings.values())
    if not ranked or (len(ranked) > 1 and ranked[0][:2] == ranked[1][:2]):
        return None
    return ranked[0][2]


def _writes_length(token: Token, change: tuple[tuple[str, bool], ...], known: "Inventory") -> bool:
    """Whether `change` lengthens `token` and the length mark is how the model's words
    write that: some token of the model (not a source only) of `token`'s class (vowel or
    consonant) is written with `ː`. Where only vowels are shown long (Hungarian `-nak`
    lengthens a final `a` to `aː`), a consonant's length is not a segment the words
    show, and `[+long]` keeps reaching vowels only, as the tokens known make it."""
    if (DERIVED + "long", True) not in change:
        return False
    return is_vowel(token, known.features) in known.shown_long


def _partner(token: Token, change: tuple[tuple[str, bool], ...], known: "Inventory") -> Token | None:
    """The IPA segment outside `known` that `token` with `change` set is: its panphon
    row with the changed values set names it (`_nearest` of the segments with that
    row), kept only where a model derived from IPA gives it the bundle asked for and no
    token of `known` has that bundle. None where there is no such segment, or `token`
    or a changed feature is not panphon's."""
    header, rows = _table()
    panphon_names = [name[len(DERIVED) :] if name.startswith(DERIVED) else "" for name, _ in change]
    if token not in rows or any(name not in header for name in panphon_names):
        return None
    bundle = known.bundle(token)
    if bundle is None:
        return None
    values = list(rows[token])
    wanted = list(bundle)
    for (name, value), panphon_name in zip(change, panphon_names):
        values[header.index(panphon_name)] = "+" if value else "-"
        if name in known.names:
            wanted[known.names.index(name)] = value
    shown = known.shown_marks.get((is_vowel(token, known.features), frozenset(change)), frozenset())
    segment = _nearest(token, _by_values().get(tuple(values), ()), _writes_length(token, change, known), shown)
    if segment is None or segment in known.features or known.has_bundle(tuple(wanted)):
        return None
    read = read_by_ipa([segment], known.features)
    if read is None or tuple(read[segment].get(name, False) for name in known.names) != tuple(wanted):
        return None
    return segment


def written_by(features: Features, changes: Iterable[tuple[tuple[str, bool], ...]]) -> dict[Token, dict[str, bool]]:
    """IPA segments outside `features` that `SetFeatures` of `changes` would write
    from a token of `features`, with the features a model derived from IPA gives them.

    The tokens a model knows are those its words show, so where a change neutralizes
    (final devoicing) its outputs of the segments only held-out words have are missing
    (`v` devoiced is `f`, in no training word): the rule then does not apply there.
    For features derived from IPA (`is_derived`; a user's features file says what its
    inventory is), each such output is found by `_partner`. It is added only where no
    token has its bundle, so the tokens of `features` map and are read as before; two
    added segments of one bundle are both left out."""
    if not is_derived(features):
        return {}
    known = inventory(features)
    found: dict[Token, dict[str, bool]] = {}
    by_bundle: dict[tuple[bool, ...], set[Token]] = {}
    for change in sorted(set(changes)):
        for tok in sorted(features):
            if known.resolve(tok, change) is not None:
                continue
            segment = _partner(tok, change, known)
            if segment is None:
                continue
            read = read_by_ipa([segment], features)
            assert read is not None  # `_partner` read it so
            found[segment] = read[segment]
            by_bundle.setdefault(tuple(read[segment].get(name, False) for name in known.names), set()).add(segment)
    alone = {next(iter(segs)) for segs in by_bundle.values() if len(segs) == 1}
    return {seg: feats for seg, feats in found.items() if seg in alone}


class WithUnseen(dict[Token, Mapping[str, bool]]):
    """A model's features plus those of tokens it never saw (`unseen`), by which the
    interpreter reads a word holding them. An unseen token is a source only: the
    `Inventory` never maps a trained token to it (the model cannot write a token it does
    not know), though it may keep itself."""

    def __init__(self, features: Features, unseen: Features) -> None:
        super().__init__(features)
        self.update(unseen)
        self.unseen = frozenset(unseen)


class Inventory:
    """The tokens of a `Features` mapping by their feature bundles: what `SetFeatures`
    and `Agree` map a token to.

    A token's bundle is its value for every feature the mapping names (a missing one is
    false). `resolve(x, changes)` is the token whose bundle is x's with `changes` set:
    x itself if it has that bundle, else the one token that has it (never a token of
    `WithUnseen.unseen`); for x a token of `WithUnseen.unseen` that no token's bundle
    answers, the IPA segment x becomes (`_partner`: `f` of an unseen `v` devoiced);
    None (the transformation does not apply) where x has no features, or no token or
    several tokens other than x have the bundle. Only the mapping decides, so that
    every backend computes the same token map from the model's features."""

    def __init__(self, features: Features) -> None:
        self.features = features
        # The harmonic tiers are functions of the other features, never changed: a
        # token's partner in a feature is another token whatever its harmonic value
        # (`ɛ` rounded is `ø`, neutral the one, harmonic the other).
        self.names: tuple[str, ...] = tuple(
            sorted({name for feats in features.values() for name in feats if not is_harmonic_name(name)})
        )
        self._position = {name: k for k, name in enumerate(self.names)}
        self._bundles: dict[Token, tuple[bool, ...]] = {
            tok: tuple(bool(feats.get(name, False)) for name in self.names) for tok, feats in features.items()
        }
        self._tokens: dict[tuple[bool, ...], list[Token]] = {}
        self._sources_only: frozenset[Token] = getattr(features, "unseen", frozenset())
        for tok in sorted(set(self._bundles) - self._sources_only):
            self._tokens.setdefault(self._bundles[tok], []).append(tok)
        self._resolved: dict[tuple[Token, tuple[tuple[str, bool], ...]], Token | None] = {}
        # The classes (True: vowels, False: consonants) some token of which is written
        # long, with `ː` (`_writes_length`).
        self.shown_long: frozenset[bool] = frozenset(
            is_vowel(tok, features) for tok in self._bundles if tok not in self._sources_only and "ː" in _marks(tok)
        )
        self.shown_marks = self._shown_marks()

    def _shown_marks(self) -> dict[tuple[bool, frozenset[tuple[str, bool]]], frozenset[str]]:
        """Per class (True: vowels) and change, the diacritics the model's words write
        that change with: a mark `m` where a known token is another known token of that
        class with `m` added and the two differ by exactly the change (Romanian `n` and
        `nʲ`: `ʲ` writes `[+hi]` of a consonant). A segment a change makes of a token no
        word shows it for is then written as the words write that change of the tokens
        they show (`bʲ` of a held-out `b` palatalized), where without it no segment
        with a diacritic the token lacks is written (`_nearest`). The length mark has
        its own, broader, test (`_writes_length`)."""
        known = {tok: bundle for tok, bundle in self._bundles.items() if tok not in self._sources_only}
        shown: dict[tuple[bool, frozenset[tuple[str, bool]]], set[str]] = {}
        for tok, bundle in known.items():
            decomposed = unicodedata.normalize("NFD", tok)
            for mark in _marks(tok) - {"ː"}:
                base = unicodedata.normalize("NFC", decomposed.replace(mark, ""))
                base_bundle = known.get(base)
                if base_bundle is None or base == tok:
                    continue
                change = frozenset((n, b) for n, a, b in zip(self.names, base_bundle, bundle) if a != b)
                if change:
                    shown.setdefault((is_vowel(tok, self.features), change), set()).add(mark)
        return {key: frozenset(marks) for key, marks in shown.items()}

    def bundle(self, token: Token) -> tuple[bool, ...] | None:
        """The token's bundle (in `names` order), None if it has no features."""
        return self._bundles.get(token)

    def has_bundle(self, bundle: tuple[bool, ...]) -> bool:
        """Whether some token (not only a source) has `bundle`."""
        return bundle in self._tokens

    def value(self, token: Token, feature: str) -> bool | None:
        """The token's value of `feature`, None if the token has no features."""
        bundle = self._bundles.get(token)
        if bundle is None:
            return None
        at = self._position.get(feature)
        return False if at is None else bundle[at]

    def resolve(self, token: Token, changes: tuple[tuple[str, bool], ...]) -> Token | None:
        """The token with `token`'s bundle but `changes` set (see the class)."""
        key = (token, changes)
        if key in self._resolved:
            return self._resolved[key]
        found: Token | None = None
        bundle = self._bundles.get(token)
        if bundle is not None:
            wanted = list(bundle)
            possible = True
            for name, value in changes:
                at = self._position.get(name)
                if at is None:
                    # A feature no token has: only "false" leaves a bundle that exists.
                    possible = possible and not value
                else:
                    wanted[at] = value
            having = self._tokens.get(tuple(wanted), []) if possible else []
            if possible and tuple(wanted) == bundle:
                found = token
            elif len(having) == 1:
                found = having[0]
            elif not having and token in self._sources_only:
                # A token never seen in training, read by its IPA features (`WithUnseen`):
                # the segment it becomes where the model knows none (`f` of an unseen `v`
                # devoiced). Tokens the model knows map as the tables map them.
                found = _partner(token, changes, self)
        self._resolved[key] = found
        return found


_INVENTORIES: dict[int, Inventory] = {}


def inventory(features: Features) -> Inventory:
    """The `Inventory` of `features`, made once per mapping (the interpreter asks for it
    at every position where a feature transformation is tried). A mapping is taken to
    stay as it is while it is in use, as every `Features` of a model or problem does;
    a cached inventory is remade if its mapping's token count changed."""
    known = _INVENTORIES.get(id(features))
    if known is not None and known.features is features and len(known._bundles) == len(features):
        return known
    if len(_INVENTORIES) >= 16:
        _INVENTORIES.clear()
    made = _INVENTORIES[id(features)] = Inventory(features)
    return made


_VOWEL_LETTERS = set(
    "aeiouyæøœɑɒɐəɘɚɛɜɝɞɤɨɪɯɵɶʉʊʌʏɔɿʮåäöüáéíóúàèìòùâêîôûāēīōūăĕĭŏŭąęįųǫ"
    "аеёиоуыэюяіїєѣ"  # Cyrillic
    "αεηιουωάέήίόύώ"  # Greek
)
# Brahmic scripts (Devanagari and its kin) name their vowels in Unicode: independent
# vowel letters "<SCRIPT> LETTER AA" and dependent signs "<SCRIPT> VOWEL SIGN AA".
_BRAHMIC_VOWELS = {"A", "AA", "I", "II", "U", "UU", "E", "EE", "AI", "O", "OO", "AU"}


def _unicode_vowel(char: str) -> bool:
    name = unicodedata.name(char, "")
    if " VOWEL SIGN " in name:
        return True
    script, sep, letter = name.partition(" LETTER ")
    if not sep or script.startswith(("LATIN", "CYRILLIC", "GREEK")):
        return False
    return letter in _BRAHMIC_VOWELS or letter.startswith("VOCALIC ")


def is_vowel(token: Token, features: Features) -> bool:
    """A vowel by the problem's `vowel` feature, or else by its first letter."""
    feats = features.get(token)
    if feats is not None and "vowel" in feats:
        return bool(feats["vowel"])
    base = unicodedata.normalize("NFD", token)[:1].lower()
    return base in _VOWEL_LETTERS or (bool(base) and _unicode_vowel(base))


def with_vowel_classes(features: Features, tokens: Sequence[Token]) -> dict[Token, dict[str, bool]]:
    """The problem's features, plus `vowel`/`cons` for every token that has no `vowel`
    feature, from what its first character is (Unicode knowledge, not the data).

    The vowel/consonant distinction is the one the paper adds by hand to every problem
    it can; a user's TSV or a problem in another script often gives none, and without
    it a rule such as "insert a vowel after a consonant" cannot be said in general.
    A sign that is neither (a virama, a stress digit, an apostrophe) gets both false.
    """
    out = {tok: dict(f) for tok, f in features.items()}
    for tok in sorted(set(tokens)):
        feats = out.setdefault(tok, {})
        if "vowel" in feats:
            continue
        vowel = is_vowel(tok, features)
        base = unicodedata.normalize("NFD", tok)[:1]
        feats["vowel"] = vowel
        if "cons" not in feats:
            feats["cons"] = not vowel and bool(base) and unicodedata.category(base).startswith("L")
    return out


def readable_bundles(features: Features, names: Sequence[str]) -> frozenset[tuple[bool, ...]]:
    """The values of `names` (in that order; a missing one is false) of every token a
    model with `features` can read a word with: its own tokens, every IPA segment of
    panphon's table where the features were derived from IPA (read as `read_by_ipa`
    reads a token never seen in training), and a token with no features (`<unk>`, a
    token outside a features file). A test of the token at a position holds of the
    same tokens as another, seen or unseen, where it holds of the same bundles."""
    readings: list[Mapping[str, bool]] = [*features.values(), {}]
    if is_derived(features):
        read = read_by_ipa(_segments(), features)
        assert read is not None  # every segment of the table is one IPA segment
        readings += read.values()
    return frozenset(tuple(bool(feats.get(name, False)) for name in names) for feats in readings)
