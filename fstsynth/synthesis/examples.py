"""Token-level examples of a pass, and the transformations consistent with each.

Public API:
    TaggedExample, tagged_examples(word, target, features, mode, affinity, one_to_one, leads, ending,
        beginning)
    consistent_transformations(example, window)

An example says what one position of a (tagged) word must produce: the start position
(`START`) gets the tokens before the first source token, every source token its
aligned output (`alignment.examples_from_alignment`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from fstsynth.alignment import Affinity, Leads, align_pair, examples_from_alignment
from fstsynth.dsl import (
    CopyInsert,
    CopyReplace,
    Delete,
    Identity,
    Insert,
    ReplaceAnyBy,
    ReplaceBy,
    TaggedToken,
    Transformation,
)
from fstsynth.interpreter import START
from fstsynth.types import Features, Token, Word


@dataclass(frozen=True)
class TaggedExample:
    """Tagged word `word` at `position` must produce `output`."""

    word: tuple[TaggedToken, ...]
    position: int
    output: Word

    def token_at(self, offset: int) -> Token | None:
        index = self.position + offset
        return self.word[index][0] if 0 <= index < len(self.word) else None

    def tag_at(self, offset: int) -> Transformation | None:
        index = self.position + offset
        return self.word[index][1] if 0 <= index < len(self.word) else None

    @property
    def identity_output(self) -> Word:
        return () if self.position == START else (self.word[self.position][0],)


def tagged_examples(
    word: Sequence[TaggedToken],
    target: Word,
    features: Features,
    mode: str,
    affinity: Affinity | None = None,
    one_to_one: bool | None = None,
    leads: Leads | None = None,
    ending: Word = (),
    beginning: Word = (),
) -> list[TaggedExample]:
    tokens = tuple(tok for tok, _ in word)
    columns = align_pair(tokens, target, features, mode, affinity, one_to_one, leads, ending, beginning)
    frozen = tuple(word)
    return [
        TaggedExample(frozen, e.position, e.output)
        for e in examples_from_alignment(tokens, target, columns)
    ]


def consistent_transformations(ex: TaggedExample, window: int) -> list[Transformation]:
    """Inverse semantics: the transformations whose output here is `ex.output`."""
    out = ex.output
    found: list[Transformation] = []
    if ex.position == START:
        if out:
            found.append(Insert(out))
            if len(out) == 1:
                found.extend(
                    CopyInsert(i) for i in range(1, window + 1) if ex.token_at(i) == out[0]
                )
        # Empty outputs at the start are right for every transformation but the
        # insertions (`candidates.candidates` adds them).
        return found
    x = ex.word[ex.position][0]
    if out == (x,):
        found.append(Identity())
    if not out:
        found.append(Delete())
    elif len(out) == 1 or out[0] != x:  # x followed by more is Insert's job
        found.append(ReplaceAnyBy(out))
        if out != (x,):
            found.append(ReplaceBy(x, out))
    if len(out) >= 2 and out[0] == x:
        found.append(Insert(out[1:]))
    if len(out) == 1:
        found.extend(
            CopyReplace(i)
            for i in range(-window, window + 1)
            if i != 0 and ex.token_at(i) == out[0]
        )
    if len(out) == 2 and out[0] == x:
        found.extend(
            CopyInsert(i) for i in range(-window, window + 1) if ex.token_at(i) == out[1]
        )
    return found
