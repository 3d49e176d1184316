"""Words as typed -> tuples of tokens: spaced tokens, grapheme clusters, known tokens.

Public API:
    nfc(text), parse_word(text, split_unspaced=False), split_graphemes(text) -> Word
    WordSplitter(alphabet)(text) -> Word, splitter_for(alphabet) -> WordSplitter
    is_spaced(text) -> bool
    look_alike(token, alphabet) -> Token | None, code_points(text) -> str

Every token is NFC-normalized, so that `é` typed as one code point or as `e` + combining
accent is the same token everywhere downstream. A word written with spaces is its
space-separated tokens; one without is split into characters (grapheme clusters) or,
where the tokens are known (a model's alphabet, the tokens a features table names), into
the longest known tokens (`WordSplitter`).
"""

from __future__ import annotations

import functools
import unicodedata
from typing import Iterable

import regex

from fstsynth.types import Token, Word


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


_TIE_BARS = ("\u0361", "\u035c")  # t͡ʃ: joins the letters on either side


def split_graphemes(text: str) -> Word:
    """Split a string without spaces into user-perceived characters.

    Unicode grapheme clusters, adjusted for phonetic writing: a tie bar joins the next
    letter (`t͡ʃ` is one token) and modifier letters such as `ː`, `ʰ`, `ʲ` stay with the
    letter before them (`aː`, `tʰ`).
    """
    tokens: list[str] = []
    join_next = False
    for cluster in regex.findall(r"\X", nfc(text)):
        attaches = tokens and (
            join_next or all(unicodedata.category(ch) == "Lm" for ch in cluster)
        )
        if attaches:
            tokens[-1] += cluster
        else:
            tokens.append(cluster)
        join_next = cluster.endswith(_TIE_BARS)
    return tuple(nfc(t) for t in tokens)


def parse_word(text: str, *, split_unspaced: bool = False) -> Word:
    """Turn a cell into tokens: space-separated, or graphemes if asked and unspaced."""
    text = nfc(text).strip()
    if not text:
        return ()
    if split_unspaced and " " not in text and "\t" not in text:
        return split_graphemes(text)
    return tuple(text.split())


#: Characters easily typed or pasted for one another (the first of each group stands for
#: the group): Latin letters and their Cyrillic, Greek and IPA look-alikes, apostrophes
#: and stress marks, colons and the length mark. Compatibility forms (a fullwidth `ｇ`, a
#: superscript `ʰ`) are folded by NFKC before these.
_LOOK_ALIKE_GROUPS = (
    "gɡ", "aаɑα", "eе", "oоο", "pрρ", "cсϲ", "xхχ", "yу", "iіι", "jј", "sѕ", "hһ", "kκк",
    "AАΑ", "BВΒ", "EЕΕ", "HНΗ", "KКΚ", "MМΜ", "OОΟ", "PРΡ", "TТΤ", "XХΧ", "CС", "YУΥ", "IІΙ",
    "JЈ", "SЅ", "əǝә", "ɛε", "ɸφ", "ʊυ", "ɣγ", "ʃ∫", "ʔɂ", "'’ʼʹ′ˈ", ":ː∶˸",
)
_LOOK_ALIKE = {char: group[0] for group in _LOOK_ALIKE_GROUPS for char in group}


def _skeleton(token: Token) -> str:
    return "".join(_LOOK_ALIKE.get(char, char) for char in unicodedata.normalize("NFKC", token))


def look_alike(token: Token, alphabet: Iterable[Token]) -> Token | None:
    """A token of `alphabet` that `token` looks like but is not (`ɡ`, U+0261, typed for
    `g`; a Cyrillic `а` for a Latin `a`), or None. The first in sorted order if several."""
    skeleton = _skeleton(token)
    return min((t for t in alphabet if t != token and _skeleton(t) == skeleton), default=None)


def code_points(text: str) -> str:
    """`U+0261`, or `U+0074 U+0283` for a token of several characters."""
    return " ".join(f"U+{ord(char):04X}" for char in text)


def is_spaced(text: str) -> bool:
    """Whether a word is written as tokens separated by spaces (or is one token)."""
    return any(ch.isspace() for ch in text.strip())


@functools.lru_cache(maxsize=16)
def splitter_for(alphabet: tuple[Token, ...]) -> "WordSplitter":
    """The `WordSplitter` of an alphabet, made once (`model.apply` is called word by word)."""
    return WordSplitter(alphabet)


class WordSplitter:
    """Turns a word as typed into tokens: space-separated tokens as they are; a word
    without spaces split into the longest tokens of `alphabet` (a model's, or the tokens
    a problem names), characters (grapheme clusters) elsewhere."""

    def __init__(self, alphabet: Iterable[Token] = ()) -> None:
        self.alphabet = frozenset(alphabet)
        # Only tokens of several characters can change a split into characters.
        self._long = {t for t in self.alphabet if len(split_graphemes(t)) > 1}
        self._longest = max((len(split_graphemes(t)) for t in self._long), default=1)

    def __call__(self, text: str) -> Word:
        text = nfc(text).strip()
        if not text or is_spaced(text):
            return parse_word(text)
        graphemes = split_graphemes(text)
        if not self._long:
            return graphemes
        out = []
        k = 0
        while k < len(graphemes):
            for size in range(min(self._longest, len(graphemes) - k), 0, -1):
                candidate = "".join(graphemes[k : k + size])
                if size == 1 or candidate in self._long:
                    out.append(candidate)
                    k += size
                    break
        return tuple(out)
