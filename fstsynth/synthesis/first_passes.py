"""Context-free first passes: a token map for transcriptions, plain letters otherwise.

Public API:
    is_transcription(pairs), token_map_pass(examples)
    plain_letter_pass(examples, target_vocab), has_plain_letters(pairs)

Each is a pass of `ReplaceBy` rules with no conditions, learned from counts over the
aligned examples: part of the program (and so of the transducer), after which the rule
passes only learn what depends on context.
"""

from __future__ import annotations

from typing import Sequence

from fstsynth.alignment import base_letters
from fstsynth.dsl import Pass, ReplaceBy, Rule
from fstsynth.interpreter import START
from fstsynth.synthesis.examples import TaggedExample
from fstsynth.types import Token, Word

# A column pair is a transcription (another script or notation) when most target
# tokens never occur on the source side.
_TRANSCRIPTION_SHARE = 0.5


def is_transcription(pairs: Sequence[tuple[Word, Word]]) -> bool:
    src_vocab = {t for s, _ in pairs for t in s}
    target_tokens = [t for _, tgt in pairs for t in tgt]
    if not target_tokens:
        return False
    foreign = sum(t not in src_vocab for t in target_tokens)
    return foreign / len(target_tokens) > _TRANSCRIPTION_SHARE


def _output_counts(examples: Sequence[TaggedExample]) -> dict[Token, dict[Token | None, int]]:
    """For each source token, how often each token starts its aligned output (None:
    aligned with nothing)."""
    counts: dict[Token, dict[Token | None, int]] = {}
    for ex in examples:
        if ex.position == START:
            continue
        x = ex.word[ex.position][0]
        first = ex.output[0] if ex.output else None
        by = counts.setdefault(x, {})
        by[first] = by.get(first, 0) + 1
    return dict(sorted(counts.items()))


def token_map_pass(examples: Sequence[TaggedExample]) -> Pass:
    """A context-free first pass mapping each source token to the target token it is
    most often aligned with (the paper's token map for transliteration, written as
    `ReplaceBy` rules so that it is part of the program and of the transducer); a
    token whose output is most often the same two or more tokens (`щ` -> `š č`) is
    mapped to them all.

    The rules after it then only learn what depends on context (an inherent vowel, a
    sign that is not pronounced), over the target's own tokens, where features and
    tokens generalize. Tokens most often aligned to nothing or to themselves are kept.
    """
    outputs: dict[Token, dict[Word, int]] = {}
    for ex in examples:
        if ex.position != START:
            seen = outputs.setdefault(ex.word[ex.position][0], {})
            seen[ex.output] = seen.get(ex.output, 0) + 1
    # The letters each target token trails in some of their outputs and not in others.
    optional: dict[Token, set[Token]] = {}
    for x, written in outputs.items():
        for y in {y for out in written for y in out[1:]}:
            if any(y not in out[1:] for out in written):
                optional.setdefault(y, set()).add(x)
    rules = []
    for x, by in _output_counts(examples).items():
        best = min(by.items(), key=lambda kv: (-kv[1], kv[0] is not None, kv[0] or ""))[0]
        if best is None or best == x:
            continue
        # The whole output where one output of several tokens is the most frequent of
        # all (a letter written as two): else the first token only, which the passes
        # after it complete where the context says.
        whole, count = min(outputs[x].items(), key=lambda kv: (-kv[1], kv[0]))
        # A token that two other letters or more are written with in some words and
        # without in others is the context's (a virama between consonants, an inherent
        # vowel at the end), however often this letter shows it: the passes after write
        # it, for every letter alike. (A digraph's `h`, in `s h` and `c h`, is always
        # there.)
        context = any(len(optional.get(y, set()) - {x}) >= 2 for y in whole[1:])
        longest = len(whole) > 1 and whole[0] == best and 2 * count > sum(outputs[x].values()) and not context
        rules.append(Rule((), ReplaceBy(x, whole if longest else (best,))))
    return Pass(tuple(rules))


def plain_letter_pass(examples: Sequence[TaggedExample], target_vocab: set[Token]) -> Pass:
    """A context-free first pass writing each letter with diacritics that no target
    uses as its plain letter (`í` -> `i`: the letter without its diacritics,
    `alignment.base_letters`), where the two are aligned at least once.

    The rules after it learn such a letter's changes together with the plain letter's:
    where `í` and `i` both become `j` before a vowel except after c/g, `í` alone is too
    rare to teach it. It also loses what the diacritic said (where a stress
    accent stood), so `auto` takes it only where cross-validation says it helps.
    """
    rules = []
    for x, by in _output_counts(examples).items():
        plain = _plain_letter(x, target_vocab)
        if plain is not None and by.get(plain):
            rules.append(Rule((), ReplaceBy(x, (plain,))))
    return Pass(tuple(rules))


def _plain_letter(token: Token, target_vocab: set[Token]) -> Token | None:
    """The letter `token` is without its diacritics, if it has some and no target uses
    it (`plain_letter_pass`)."""
    plain = base_letters(token)
    return plain if token not in target_vocab and plain not in ("", token) else None


def has_plain_letters(pairs: Sequence[tuple[Word, Word]]) -> bool:
    """Whether `plain_letter_pass` could map anything: a source letter with diacritics
    that no target uses, whose plain letter some target uses."""
    src_vocab = {t for s, _ in pairs for t in s}
    tgt_vocab = {t for _, tgt in pairs for t in tgt}
    return any(_plain_letter(x, tgt_vocab) in tgt_vocab for x in src_vocab)
