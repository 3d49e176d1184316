"""One variant's program from word pairs (`options.variant`, not `auto`).

Public API:
    LearnResult, learn_variant(pairs, features, options, deadline)
    fit(pairs, features, options, deadline): learn_variant, on a sample past
        `Options.fit_rows`
    with_prefix_default(result, pairs, features, options, deadline): the prefix's
        elsewhere case last (`affixes.prefix_default_pass`)
    configured(options, every, underived): a configuration's options and features

Align every pair into token-level examples, start with a context-free first pass where
one applies (`first_passes`) and the whole-affix pass where asked (`affixes`), then
synthesize passes (`selection.synthesize_pass`): each chosen pass is run on the training
words, the words still wrong are re-aligned against their targets (tags kept) and the
next pass learns from all of them, up to `Options.max_passes`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Sequence, Sized

from fstsynth.alignment import Affinity, Leads, examples_from_alignment, learn_leads, shared_beginning, shared_ending
from fstsynth.alignment_affinity import learn_affinity
from fstsynth.chunks import chunk_alignments
from fstsynth.dsl import Pass, Program, TaggedToken
from fstsynth.features import HARMONY, harmonic_name, harmonic_tier_names, without_harmonic
from fstsynth.interpreter import run_pass_many
from fstsynth.progress import report
from fstsynth.synthesis.allomorphs import allomorph_pass, alternates_in, suffix_allomorphs
from fstsynth.synthesis.affixes import affix_pass, every_prefix, prefix_default_pass
from fstsynth.synthesis.candidates import affix_edges
from fstsynth.synthesis.examples import TaggedExample, changed_before_deleted_end, last_token_kept, tagged_examples
from fstsynth.synthesis.feature_changes import changes_after_suffix
from fstsynth.synthesis.first_passes import is_transcription, plain_letter_pass, token_map_pass
from fstsynth.synthesis.options import CHECK_EVERY, Deadline, Options
from fstsynth.synthesis.ranking import program_cost, rule_cost
from fstsynth.synthesis.selection import synthesize_pass
from fstsynth.types import Features, Word

Pairs = Sequence[tuple[Word, Word]]


@dataclass(frozen=True)
class LearnResult:
    program: Program
    cost: float  # sum of rule costs: lower is preferred
    train_correct: int
    train_total: int
    seconds: dict[str, float] = field(default_factory=dict)
    variant: str = ""  # the variant that learned the program
    # Share of training rows predicted right by programs learned without them
    # (cross-validation; None when not measured): how far the program generalizes.
    held_out: float | None = None
    # The rows the program was synthesized from, when a sample (`fit`): None, all rows.
    sampled: int | None = None
    # Where `auto` chose the configuration on a sample of the rows: how many
    # configurations it scored, the rows its splits read, and all rows; None: on all.
    cv_sample: tuple[int, int, int] | None = None
    # Words of the first learned pass's examples that change the token just before
    # word-final tokens their target deletes (`examples.changed_before_deleted_end`;
    # 0 where the pairs are not words and other forms of them): where some split's
    # program has such words, `auto` tries its configuration with
    # `Options.deleted_end_first`, read off the alignments learning made anyway.
    changed_before_deleted_end: int = 0


def configured(options: Options, every: Features, underived: Features) -> tuple[Options, Features]:
    """A configuration's options and the features it learns with: `underived` (without
    the features derived from IPA), except that with feature rules every variant learns
    with `every` feature, testing the derived ones only along tiers (`atoms`): the
    feature variant's `SetFeatures` and `Agree` must map tokens into the inventory the
    model applies with (a `v` whose voiceless twin only panphon names)."""
    if options.feature_rules and every is not underived:
        return replace(options, derived_tests=False), every
    return options, underived


def with_prefix_default(
    result: LearnResult, pairs: Pairs, features: Features, options: Options, deadline: Deadline
) -> LearnResult:
    """`result` with `affixes.prefix_default_pass` last, where every target of `pairs`
    (a word and another form of it) starts with a prefix no source does. Added to the
    program chosen, not to those `auto` cross-validates: the same pass goes last in
    every configuration, and in the folds it only blurred their differences (Welsh soft
    mutation, its prefix `i`: another configuration chosen in a fold, 30 -> 29 of 35
    cross-validated cells)."""
    prefix = every_prefix(pairs) if options.prefix_default and forms_of_words(pairs) else ()
    if not prefix:
        return result
    default = prefix_default_pass(prefix)
    program = Program((*result.program.passes, default))
    predicted = _predict(program, [src for src, _ in pairs], features, deadline)
    right = sum(p == tgt for p, (_, tgt) in zip(predicted, pairs))
    cost = result.cost + sum(rule_cost(r, result.variant) for r in default.rules)
    return replace(result, program=program, cost=cost, train_correct=right)


def evenly(pairs: Sized, rows: int) -> list[int]:
    """The indices of at most `rows` of `pairs`, evenly spaced (all if no more)."""
    if len(pairs) <= rows:
        return list(range(len(pairs)))
    return [i * len(pairs) // rows for i in range(rows)]


def forms_of_words(pairs: Pairs) -> bool:
    """Whether `pairs` are words and other forms of them (`learn_variant` gives those a
    whole-affix pass where `Options.affixes` asks): not a transcription, nor word ->
    one mark per token."""
    return not _one_to_one(pairs) and not is_transcription(pairs)


def _one_to_one(pairs: Pairs) -> bool:
    """Whether the whole column pair looks like word -> stress marks: always the same
    length, no shared tokens (aligned position by position)."""
    src_vocab = {t for s, _ in pairs for t in s}
    tgt_vocab = {t for _, tgt in pairs for t in tgt}
    return bool(pairs) and all(len(s) == len(t) for s, t in pairs) and not (src_vocab & tgt_vocab)


def fit(pairs: Pairs, features: Features, options: Options, deadline: Deadline | None = None) -> LearnResult:
    """The program one variant learns from `pairs`: `learn_variant` on all of them, or,
    past `options.fit_rows`, on that many rows evenly spaced (`LearnResult.sampled`
    says how many), its counts over all rows. Learning takes more than linear time and
    memory in the rows (every candidate rule holds a bitset over every example), so
    this bounds both; predicting all rows is linear.

    The sample is kept as the rows are, not weighted toward any: the greedy selection
    takes the rule that is right on most examples, so a sample in which some rows count
    beyond their share bends the common rules to them. Adding the rows a first program
    got wrong did so (German spelling -> IPA, 10,000 pairs: a first program from 2,000
    rows missed 26% of the rows, a second from those 2,000 and 1,000 missed ones kept
    by its count over all rows: 353 of 500 held-out words and 1,303 rules, reading
    `schluck` with a long ü, against 379 and 1,076 from 3,000 rows evenly spaced, in
    half the CPU; Spanish, where 75 missed rows weighed one in 28, lost 'y' before a
    vowel). Counted over all rows, a program learned from more of them looks better
    than it predicts: the count is not a fair choice between samples."""
    limit = options.fit_rows
    if deadline is None:
        deadline = Deadline.after(options.time_limit)
    if limit is None or len(pairs) <= limit:
        return learn_variant(pairs, features, options, deadline)
    rows = evenly(pairs, limit)
    result = learn_variant([pairs[i] for i in rows], features, options, deadline)
    started = time.perf_counter()
    report("checking on all rows", 0, len(pairs), options.variant)
    predicted = _predict(result.program, [src for src, _ in pairs], features, deadline)
    seconds = dict(result.seconds)
    seconds["checking"] = seconds.get("checking", 0.0) + time.perf_counter() - started
    right = sum(p == tgt for p, (_, tgt) in zip(predicted, pairs))
    return replace(result, train_correct=right, train_total=len(pairs), sampled=len(rows), seconds=seconds)


def _predict(program: Program, words: Sequence[Word], features: Features, deadline: Deadline) -> list[Word]:
    """`run_many`, the deadline checked between slices of the words."""
    tagged: list[list[TaggedToken]] = [[(tok, None) for tok in word] for word in words]
    for pass_ in program.passes:
        tagged = _run_pass(pass_, tagged, features, deadline)
    return [tuple(tok for tok, _ in word) for word in tagged]


def _run_pass(
    pass_: Pass, words: list[list[TaggedToken]], features: Features, deadline: Deadline
) -> list[list[TaggedToken]]:
    """`run_pass_many` on the words a slice at a time, the deadline checked between."""
    out: list[list[TaggedToken]] = []
    for start in range(0, len(words), CHECK_EVERY):
        deadline.check()
        out.extend(run_pass_many(pass_, words[start : start + CHECK_EVERY], features))
    return out


#: "aligning" is reported every this many words at least (and every 1% of them).
_ALIGN_REPORT = 200


@dataclass(frozen=True)
class _Aligner:
    """How `learn_variant` aligns the words of `pairs` against their targets into
    examples, and what it reads of the column pair first (one-to-one, transcription,
    word forms): the same for every pass, and for `plain_letters_change`."""

    pairs: Pairs
    features: Features
    options: Options
    deadline: Deadline
    affinity: Affinity | None
    leads: Leads | None
    one_to_one: bool
    chunked: bool
    transcription: bool
    forms: bool  # a word and another form of it: neither a transcription nor one-to-one
    ending: Word  # the ending most targets share (`shared_ending`), or none
    beginning: Word

    @classmethod
    def of(cls, pairs: Pairs, features: Features, options: Options, deadline: Deadline) -> _Aligner:
        # The harmonic tiers are tiers the rules read, not features of a segment: the
        # aligner's nearness of two segments (the share of their features they agree
        # in) is taken without them, as before there were any.
        features = without_harmonic(features)
        affinity = (
            learn_affinity(pairs, features, options.alignment, check=deadline.check) if options.affinity else None
        )
        # Position-by-position alignment only when the whole column pair looks like word ->
        # stress marks, not for a pair that happens to be as long as its transcription.
        one_to_one = _one_to_one(pairs)
        chunked = options.chunks == "on" and not one_to_one
        leads = None if one_to_one else learn_leads(pairs, features, options.alignment, affinity, deadline.check)
        transcription = options.token_map and not one_to_one and is_transcription(pairs)
        forms = not transcription and not one_to_one
        ending = shared_ending(pairs) if options.shared_suffix and forms else ()
        beginning = shared_beginning(pairs) if options.shared_suffix and forms else ()
        return cls(
            pairs, features, options, deadline, affinity, leads, one_to_one, chunked, transcription, forms, ending,
            beginning,
        )

    def examples(self, words: list[list[TaggedToken]]) -> list[TaggedExample]:
        """The examples of `words` (the current forms of the pairs' sources) against the
        pairs' targets."""
        targets = [tgt for _, tgt in self.pairs]
        features, affinity, leads, deadline = self.features, self.affinity, self.leads, self.deadline
        examples: list[TaggedExample] = []
        if self.chunked:
            report("aligning", 0, len(words))
            tokens = [tuple(tok for tok, _ in word) for word in words]
            aligned = chunk_alignments(list(zip(tokens, targets)), features, affinity, deadline.check, leads)
            for word, src, tgt, columns in zip(words, tokens, targets, aligned):
                frozen = tuple(word)
                examples.extend(
                    TaggedExample(frozen, e.position, e.output) for e in examples_from_alignment(src, tgt, columns)
                )
            return changes_after_suffix(examples, features) if self.forms else examples
        every = max(_ALIGN_REPORT, len(words) // 100)
        for done, (word, tgt) in enumerate(zip(words, targets)):
            deadline.check()  # alignment is quadratic in word length: bound it too
            if done % every == 0:
                report("aligning", done, len(words))
            examples.extend(
                tagged_examples(
                    word, tgt, features, self.options.alignment, affinity, self.one_to_one, leads, self.ending,
                    self.beginning,
                )
            )
        return changes_after_suffix(examples, features) if self.forms else examples


def plain_letters_change(pairs: Pairs, features: Features, options: Options, deadline: Deadline) -> bool:
    """Whether `options.plain_letters` changes the program `learn_variant` learns from
    `pairs`: False where the plain-letter map it would start with is empty (no letter
    with a diacritic aligned with its plain letter: German `ä ö ü` against IPA), or
    where the column pair is a transcription or one-to-one (the map is not made). Then
    `learn_variant` learns the same program as without it, from the same examples."""
    if not options.plain_letters:
        return False
    aligner = _Aligner.of(pairs, features, options, deadline)
    if aligner.one_to_one or aligner.transcription:
        return False
    words: list[list[TaggedToken]] = [[(tok, None) for tok in src] for src, _ in pairs]
    tgt_vocab = {t for _, tgt in pairs for t in tgt}
    return bool(plain_letter_pass(aligner.examples(words), tgt_vocab).rules)


def learn_variant(
    pairs: Pairs, features: Features, options: Options, deadline: Deadline | None = None
) -> LearnResult:
    """The program one variant (`options.variant`, not `auto`) learns from `pairs`."""
    if deadline is None:
        deadline = Deadline.after(options.time_limit)
    seconds = {"alignment": 0.0, "synthesis": 0.0}
    current: list[list[TaggedToken]] = [[(tok, None) for tok in src] for src, _ in pairs]
    targets = [tgt for _, tgt in pairs]
    passes: list[Pass] = []

    def n_correct(words: list[list[TaggedToken]]) -> int:
        return sum(tuple(t for t, _ in w) == tgt for w, tgt in zip(words, targets))

    score = n_correct(current)
    started = time.perf_counter()
    aligner = _Aligner.of(pairs, features, options, deadline)
    tgt_vocab = {t for _, tgt in pairs for t in tgt}
    one_to_one = aligner.one_to_one
    seconds["alignment"] += time.perf_counter() - started
    examples_of = aligner.examples

    ready: list[TaggedExample] | None = None  # examples of `current`, when already made
    def take_first_pass(pass_: Pass) -> None:
        """A pass made before the learned ones (a map, the affixes, an allomorph): the
        words it rewrites are the next pass's input, to be aligned afresh."""
        nonlocal current, score, ready
        ready = None
        passes.append(pass_)
        current = _run_pass(pass_, current, features, deadline)
        score = n_correct(current)

    transcription, forms = aligner.transcription, aligner.forms
    if transcription or (options.plain_letters and not one_to_one):
        started = time.perf_counter()
        ready = examples_of(current)
        map_pass = token_map_pass(ready) if transcription else plain_letter_pass(ready, tgt_vocab)
        seconds["alignment"] += time.perf_counter() - started
        if map_pass.rules:
            take_first_pass(map_pass)
            if not transcription:
                # The accents are forgotten: the next pass learns from the plain words
                # as a first pass would, with no `TransformationApplied` on this map
                # (which, found in 10,000 words, made a transducer too large to
                # build).
                current = [[(tok, None) for tok, _ in word] for word in current]
    # The edges where the column pair's affixes are, from its first examples: a later
    # pass has the stem's changes left (`candidates.affix_edges`).
    edges: frozenset[int] | None = None
    if options.affixes and forms:
        started = time.perf_counter()
        examples = ready if ready is not None else examples_of(current)
        edges = affix_edges(examples)
        affix = affix_pass(examples, options.affixes)
        seconds["alignment"] += time.perf_counter() - started
        if affix.rules:
            take_first_pass(affix)
    if options.allomorphs and forms:
        allomorphs = suffix_allomorphs(pairs, features)
        if allomorphs:
            take_first_pass(allomorph_pass(allomorphs))
    # The edge prior is for a word and another form of it, not for a transcription; the
    # harmonic tiers for pairs whose suffixes alternate in the harmony's feature.
    tiers = harmonic_tier_names(features)
    harmonic = options.harmonic_tiers and any(
        alternates_in(pairs, features, feature) for feature in HARMONY if harmonic_name(feature) in tiers
    )
    pass_options = replace(options, edge_prior=options.edge_prior and forms, harmonic_tiers=harmonic)
    learned = 0  # passes synthesized so far
    deleted_end_words = 0  # of the first learned pass (`LearnResult.changed_before_deleted_end`)
    for _ in range(options.max_passes):
        if score == len(pairs):
            break
        started = time.perf_counter()
        examples = ready if ready is not None else examples_of(current)
        ready = None
        if edges is None:
            edges = affix_edges(examples)
        # The first learned pass deletes a word's end and leaves the change of the
        # token now last to the next (`Options.deleted_end_first`): it may set no row
        # right by itself.
        deferring = options.deleted_end_first and forms and not learned
        if forms and not learned:
            deleted_end_words = changed_before_deleted_end(examples)
        if deferring:
            examples = last_token_kept(examples)
        seconds["alignment"] += time.perf_counter() - started
        started = time.perf_counter()
        report(f"synthesizing pass {len(passes) + 1}", detail=options.variant)
        pass_ = synthesize_pass(examples, features, pass_options, deadline, edges)
        seconds["synthesis"] += time.perf_counter() - started
        if not pass_.rules:
            break
        new = _run_pass(pass_, current, features, deadline)
        new_score = n_correct(new)
        if new_score <= score and passes and not deferring:
            break
        learned += 1
        passes.append(pass_)
        current, score = new, new_score
    program = Program(tuple(passes))
    return LearnResult(
        program, program_cost(program, options.variant), score, len(pairs), seconds, options.variant,
        changed_before_deleted_end=deleted_end_words,
    )
