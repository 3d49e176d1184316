"""The shared names of the domain, declared once for every module.

Public API:
    Token, Word, Features
(`TaggedToken`, a token with the rule that wrote it, is the DSL's: `fstsynth.dsl`.)
"""

from __future__ import annotations

from typing import Mapping, Tuple

#: One segment of a word: a letter, a phoneme, a stress mark (NFC-normalized).
Token = str
#: A word, as its tokens in order.
Word = Tuple[Token, ...]
#: Token -> feature name -> whether it holds (a missing feature does not hold).
Features = Mapping[Token, Mapping[str, bool]]
