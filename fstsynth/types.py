"""The shared names of the domain, declared once for every module.

Public API:
    Token, Word, Features, TaggedToken
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping, Optional, Tuple

if TYPE_CHECKING:
    from fstsynth.dsl import Transformation

#: One segment of a word: a letter, a phoneme, a stress mark (NFC-normalized).
Token = str
#: A word, as its tokens in order.
Word = Tuple[Token, ...]
#: Token -> feature name -> whether it holds (a missing feature does not hold).
Features = Mapping[Token, Mapping[str, bool]]
#: A token with the transformation that produced it in the previous pass (None: input).
TaggedToken = Tuple[Token, Optional["Transformation"]]
