"""The whole-affix pass: the changes at a word edge, memorized with the edge's tokens.

Public API:
    affix_pass(examples, longest), AFFIX_LENGTH, LONGEST_AFFIX
    every_prefix(pairs), prefix_default_pass(prefix)

The CoNLL-SIGMORPHON 2017 non-neural baseline inflects a word with the change of the
longest word end seen in training (`r eː ɡ i s #` -> `r eː k s #` teaches `ɡ i s #` ->
`k s #`, `i s #` -> `s #`, `s #` -> `s #`...). Where a paradigm's forms differ by a
whole affix, that lookup beats rules on single segments, which split the affix's change
into per-token changes that can miss on test words. `affix_pass` writes it as a pass of
the DSL, so that every backend runs it: for each edge sequence seen in training (the
last `longest` tokens, read from the edge inward; the first ones when the changes are
mostly at the start), its most frequent outputs, as one rule per position it changes,
testing every token of the sequence and the word edge beyond it. Rules of longer
sequences come first, so that the first rule to fire at a position is that of the
longest sequence seen that the word has: the baseline's longest match. A sequence whose
outputs are those of the next shorter one (its innermost token kept) gets no rules.

The sequences are `AFFIX_LENGTH` tokens long, or as long as the changes of two words or
more reach from the edge, up to `longest`: an affix may condition a change deeper in
the stem (Latin `d o l oː r i s` -> `d o l o r`, the oː shortened 4 tokens from the end;
Dutch `k l a ɡ e n` -> `ɡ e k l a a ɡ d`), and ends too short to reach it split the
change into rules on single segments; a change only one word makes is lexical, no
affix's. It is a first pass: the passes after it learn what it leaves wrong.
`Options.affixes` sets `longest`; `auto` cross-validates it (up to `LONGEST_AFFIX`) as
one more configuration, which wins only where it predicts held-out rows better (`auto`).
"""

from __future__ import annotations

from collections import Counter
from typing import Callable, Sequence, TypeVar

from fstsynth.dsl import (
    BOUNDARY,
    Delete,
    Identity,
    Insert,
    IsToken,
    Pass,
    Predicate,
    ReplaceAnyBy,
    ReplaceBy,
    Rule,
    Transformation,
)
from fstsynth.interpreter import START
from fstsynth.synthesis.examples import TaggedExample
from fstsynth.types import Token, Word

#: The longest edge sequence `auto`'s affix configuration memorizes. Each token more is
#: an offset more for the transducer's automata, whose states grow as the token classes
#: to the power of the offsets read; a test word seldom shares more with a training word.
AFFIX_LENGTH = 3

#: The longest edge sequence `auto`'s affix configuration memorizes where the changes of
#: the training words reach that deep: a suffix and the stem alternation it conditions.
LONGEST_AFFIX = 5

# An edge sequence's outputs: at the start position (None at the end of the word), then
# at each of its tokens from the edge inward.
_Outputs = tuple[Word | None, tuple[Word, ...]]


def _words(examples: Sequence[TaggedExample]) -> list[tuple[Word, Word, list[Word]]]:
    """Each word of `examples` once, in order: its tokens, its start output and the
    output of each of its tokens."""
    words: dict[int, tuple[Word, list[Word], list[Word]]] = {}
    for ex in examples:
        key = id(ex.word)
        if key not in words:
            tokens = tuple(tok for tok, _ in ex.word)
            words[key] = (tokens, [()], [(tok,) for tok in tokens])
        _, start, outputs = words[key]
        if ex.position == START:
            start[0] = ex.output
        else:
            outputs[ex.position] = ex.output
    return [(tokens, start[0], outputs) for tokens, start, outputs in words.values()]


def _at_start(words: Sequence[tuple[Word, Word, list[Word]]], longest: int) -> bool:
    """Whether the changes are mostly within `longest` tokens of the word's start (a
    start insertion included) rather than of its end."""
    first = last = 0
    for tokens, start, outputs in words:
        n = len(tokens)
        changed = [i for i in range(n) if outputs[i] != (tokens[i],)]
        first += bool(start) + sum(i < longest for i in changed)
        last += sum(i >= n - longest for i in changed)
    return first > last


def _length(words: Sequence[tuple[Word, Word, list[Word]]], at_start: bool, longest: int) -> int:
    """How many tokens from the edge the pass memorizes: `AFFIX_LENGTH`, or the depth of
    the deepest change that two words or more make, at most `longest`."""
    depths: Counter[int] = Counter()
    for tokens, _, outputs in words:
        n = len(tokens)
        changed = {i + 1 if at_start else n - i for i in range(n) if outputs[i] != (tokens[i],)}
        depths.update(changed)
    shared = [depth for depth, count in depths.items() if count >= 2]
    return min(longest, max([AFFIX_LENGTH, *shared]))


def _transformation(token: Token | None, output: Word) -> Transformation:
    """The transformation writing `output` for `token` (None: for any token)."""
    if token is not None and output == (token,):
        return Identity()
    if not output:
        return Delete()
    if token is not None and len(output) >= 2 and output[0] == token:
        return Insert(output[1:])
    return ReplaceAnyBy(output) if token is None else ReplaceBy(token, output)


def _applied(tr: Transformation, token: Token) -> Word:
    """What `_transformation(None, ...)`'s result writes for `token`."""
    if isinstance(tr, Identity):
        return (token,)
    if isinstance(tr, Insert):
        return (token, *tr.tokens)
    if isinstance(tr, ReplaceAnyBy):
        return tr.target
    return ()


def affix_pass(examples: Sequence[TaggedExample], longest: int = AFFIX_LENGTH) -> Pass:
    """The whole-affix pass of `examples` (the aligned examples of a first pass): see
    the module doc. Ties between outputs go to the more frequent, then the longer (as
    the baseline's), then the first in printed order."""
    words = _words(examples)
    # Which edge the changes are at is judged within `AFFIX_LENGTH` tokens of each: a
    # stem's deep change is as near the other edge of a short word.
    at_start = _at_start(words, min(longest, AFFIX_LENGTH))
    longest = _length(words, at_start, longest)
    seen: dict[tuple[Token, ...], Counter[_Outputs]] = {}
    # The change every word has at the edge itself, whatever the token there: at the
    # start, the tokens written before the word; at the end, what the last token becomes.
    start_changes: Counter[Word] = Counter()
    end_changes: Counter[Transformation] = Counter()
    for tokens, start, outputs in words:
        if not tokens:
            continue
        ordered = tokens if at_start else tokens[::-1]
        written = outputs if at_start else outputs[::-1]
        if at_start:
            if len(written[0]) > 1:
                # What the aligner wrote with the first token, all but its last token,
                # is written before the word (`p` -> `m ə m` is `m ə` + `p` -> `m`): so
                # that a first token never seen still gets the prefix.
                start, written = start + written[0][:-1], [written[0][-1:], *written[1:]]
            start_changes[start] += 1
        else:
            end_changes[Identity() if written[0] == (ordered[0],) else _transformation(None, written[0])] += 1
        for length in range(1, min(longest, len(ordered)) + 1):
            outs: _Outputs = (start if at_start else None, tuple(written[:length]))
            seen.setdefault(ordered[:length], Counter())[outs] += 1
    start_edge: Word = _most_frequent(start_changes, len) if start_changes else ()
    end_edge: Transformation = _most_frequent(end_changes, lambda tr: 0) if end_changes else Identity()
    rules_by_length: list[list[Rule]] = [[] for _ in range(longest + 1)]
    if at_start and start_edge:
        rules_by_length[0].append(Rule((IsToken(BOUNDARY, 0),), Insert(start_edge)))
    if not at_start and not isinstance(end_edge, Identity):
        rules_by_length[0].append(Rule((IsToken(BOUNDARY, 1),), end_edge))
    sign = 1 if at_start else -1  # the direction from the edge inward
    # What a word with each sequence at its edge gets from the pass.
    effective: dict[tuple[Token, ...], _Outputs] = {}
    for key in sorted(seen, key=lambda k: (len(k), k)):
        # What it would get from the rules of shorter sequences: theirs, and its
        # innermost token kept.
        if len(key) == 1:
            edge_out = (key[0],) if at_start else _applied(end_edge, key[0])
            fallback: _Outputs = (start_edge if at_start else None, (edge_out,))
        else:
            shorter = effective[key[:-1]]
            fallback = (shorter[0], (*shorter[1], (key[-1],)))
        chosen = effective[key] = _most_frequent(seen[key], _size)
        rules = rules_by_length[len(key)]
        if chosen[0] != fallback[0]:
            tests = tuple(IsToken(tok, i + 1) for i, tok in enumerate(key))
            rules.append(Rule((IsToken(BOUNDARY, 0), *tests), Insert(chosen[0]) if chosen[0] else Identity()))
        for slot, (output, was) in enumerate(zip(chosen[1], fallback[1])):
            if output == was:
                continue
            # Every token of the sequence and the edge beyond it, at their offsets
            # from the token at `slot`.
            tests = tuple(IsToken(tok, sign * (i - slot)) for i, tok in enumerate(key) if i != slot)
            tr = _transformation(key[slot], output)
            here: tuple[Predicate, ...] = () if isinstance(tr, ReplaceBy) else (IsToken(key[slot], 0),)
            rules.append(Rule((*here, *tests, IsToken(BOUNDARY, sign * (-1 - slot))), tr))
    return Pass(tuple(rule for rules in reversed(rules_by_length) for rule in rules))


def every_prefix(pairs: Sequence[tuple[Word, Word]]) -> Word:
    """The tokens every target starts with and no source does (up to `LONGEST_AFFIX`
    of them), or (): the prefix each form of the column pair has, whatever its stem
    (Indonesian `m ə` of `m ə n u l i s`, `m ə ŋ ɡ a m b a r`, `m ə r a s a`)."""
    if not pairs:
        return ()
    first = pairs[0][1]
    length = 0
    while length < min(len(first), LONGEST_AFFIX) and all(
        len(tgt) > length and tgt[length] == first[length] for _, tgt in pairs
    ):
        length += 1
    prefix = first[:length]
    if not prefix or any(src[:length] == prefix for src, _ in pairs):
        return ()
    return prefix


def prefix_default_pass(prefix: Word) -> Pass:
    """A last pass writing `prefix` before a word the passes before it left without it:
    the elsewhere case of the prefix. The start's rules write a prefix by the stem's
    first token (Indonesian `m ə n` before `t`, `m ə ŋ` before `k`), each learned from
    the words that start so; a word whose first token no training word starts with
    (`m a s a k`, `r a s a`) got none of it. Every training form has `prefix`, so it is
    what such a word gets (the baseline's most frequent affix, here the part all share);
    a word that has it already is kept."""
    starts = tuple(IsToken(tok, offset + 1) for offset, tok in enumerate(prefix))
    return Pass(
        (
            Rule((IsToken(BOUNDARY, 0), *starts), Identity()),
            Rule((IsToken(BOUNDARY, 0),), Insert(prefix)),
        )
    )


def _size(outputs: _Outputs) -> int:
    """The tokens an edge sequence's outputs write."""
    return len(outputs[0] or ()) + sum(len(o) for o in outputs[1])


T = TypeVar("T")


def _most_frequent(counts: Counter[T], size: Callable[[T], int]) -> T:
    """The most frequent of `counts`; ties: the largest by `size`, then the first printed."""
    return min(counts.items(), key=lambda kv: (-kv[1], -size(kv[0]), str(kv[0])))[0]
