"""Token-level examples of a pass, and the transformations consistent with each.

Public API:
    TaggedExample, tagged_examples(word, target, features, mode, affinity, one_to_one, leads, ending,
        beginning)
    consistent_transformations(example, window)
    last_token_kept(examples), changed_before_deleted_end(examples)

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


def _last_kept(word_examples: Sequence[TaggedExample]) -> int | None:
    """Of one word's examples (its start, then each position in order), the index of the
    last position whose output is not empty (None: none is)."""
    for at in range(len(word_examples) - 1, -1, -1):
        if word_examples[at].position == START:
            return None
        if word_examples[at].output:
            return at
    return None


def _changes_to_one(ex: TaggedExample) -> bool:
    """Whether `ex`'s token changes into one other token."""
    return len(ex.output) == 1 and ex.output != ex.identity_output


def _by_word(examples: Sequence[TaggedExample]) -> list[tuple[int, int]]:
    """(first, past the last) index of each word's examples: consecutive, each word's
    from its start example on (`tagged_examples`)."""
    spans: list[tuple[int, int]] = []
    begin = 0
    for i in range(1, len(examples) + 1):
        if i == len(examples) or examples[i].position == START or examples[i].word is not examples[begin].word:
            spans.append((begin, i))
            begin = i
    return spans


def changed_before_deleted_end(examples: Sequence[TaggedExample]) -> int:
    """How many words of `examples` change the token just before word-final tokens their
    target deletes (`m a r e` -> `m a rʲ`)."""
    count = 0
    for a, b in _by_word(examples):
        at = _last_kept(examples[a:b])
        count += at is not None and a + at < b - 1 and _changes_to_one(examples[a + at])
    return count


def last_token_kept(examples: Sequence[TaggedExample]) -> list[TaggedExample]:
    """`examples` with every change of the token that ends up last in its word into
    one other token left out (the token kept as it is), for the next pass: `m a r e` ->
    `m a rʲ` is taught as `e` deleted, `r` kept, and `b u n` -> `b u nʲ` as `n` kept.

    A phonologist deletes the final vowel first and then changes the consonant now
    final (a feeding order: Romanian `v e r d e` -> `v e r zʲ` is the palatalization
    before the plural's word end of `u d` -> `u zʲ`; German `t aː ɡ ə` -> `t aː k` is
    final devoicing). Learned in the same pass as the deletion, the change is
    conditioned on the deleted token still there, one rule per consonant seen before
    it. Learned in the pass after, from every word whose last token changes, it is one
    change before the word's end, which reaches the consonants seen only at the end of
    words that keep theirs."""
    out = list(examples)
    for a, b in _by_word(examples):
        at = _last_kept(examples[a:b])
        if at is not None and _changes_to_one(examples[a + at]):
            ex = examples[a + at]
            out[a + at] = TaggedExample(ex.word, ex.position, ex.identity_output)
    return out
