"""The learner: a program from word pairs, pass by pass, and `auto`'s choice of variant.

Public API:
    LearnResult, learn(pairs, features, options, jobs, deadline)
    AUTO_ORDER (the variants `auto` tries, in tie order)

One variant (`learn_variant`): align every pair into token-level examples, start with
a context-free first pass where one applies (`first_passes`), then synthesize passes
(`selection.synthesize_pass`): each chosen pass is run on the training words, the
words still wrong are re-aligned against their targets (tags kept) and the next pass
learns from all of them, up to `Options.max_passes`.

`auto` scores each variant of `AUTO_ORDER` by k-fold cross-validation on the training
rows and learns the program from all rows with the one the one-standard-error rule
picks (the shortest programs among those within one standard error of the best).
"""

from __future__ import annotations

import gc
import logging
import math
import time
from concurrent.futures import Executor
from dataclasses import dataclass, field, replace
from typing import Iterable, Mapping, Sequence, Sized

from fstsynth.alignment import examples_from_alignment, learn_leads, shared_ending
from fstsynth.alignment_affinity import learn_affinity
from fstsynth.chunks import chunk_alignments
from fstsynth.dsl import Pass, Program, TaggedToken
from fstsynth.features import without_derived
from fstsynth.interpreter import run_many, run_pass_many
from fstsynth.progress import report
from fstsynth.synthesis.affixes import AFFIX_LENGTH, affix_pass
from fstsynth.synthesis.examples import TaggedExample, tagged_examples
from fstsynth.synthesis.first_passes import (
    has_plain_letters,
    is_transcription,
    plain_letter_pass,
    token_map_pass,
)
from fstsynth.synthesis.options import AUTO, CHECK_EVERY, Deadline, Options
from fstsynth.synthesis.ranking import rule_cost
from fstsynth.synthesis.selection import synthesize_pass
from fstsynth.types import Features, Word

Pairs = Sequence[tuple[Word, Word]]

# The variants `auto` tries, in tie order: the paper's best variant overall first.
# nofeature is left out: it is the paper's weakest, and each variant tried costs
# (folds + 1) learning runs.
AUTO_ORDER = ("token", "feature")

log = logging.getLogger(__name__)


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


def learn(
    pairs: Pairs,
    features: Features,
    options: Options = Options(),
    jobs: int = 1,
    deadline: float | None = None,
) -> LearnResult:
    """Learn a program mapping each source word of `pairs` to its target.

    With the `auto` variant, each variant of `AUTO_ORDER` is scored by k-fold
    cross-validation on `pairs` (rows held out, predicted by the program learned from
    the others; on `options.cv_rows` evenly spaced rows when there are more, and as one
    split of fresh rows to predict where rows are plentiful: `cv_splits`). By the
    one-standard-error rule, of the configurations within one standard error of the
    best held-out count, those whose programs the shortest one (fewest rules over the
    splits) is not clearly shorter than (no longer on any split, shorter on some), and
    of those the earliest tried
    (`AUTO_ORDER`, then the extra pass, then the extra features), learns the program
    from all rows (shorter programs generalize better, paper section 5.2). Every
    variant is scored; one that predicts every held-out row stops the search for
    the extra configurations. Where letters with
    diacritics could be written plain first (`plain_letter_pass`), the best variant is
    cross-validated with that pass too, and competes with the others. Never looks at
    anything but the training rows.

    Features derived from IPA (`fstsynth.features`) are tried only by `auto`, after the
    variants, and compete likewise; a variant asked for by name learns without them.

    `deadline` (a `time.monotonic()` value; default: `options.time_limit` from now)
    bounds the whole run, every fold and variant included: past it, `Error`.

    `jobs` > 1 runs the cross-validation folds (and tied variants' final runs) in that
    many worker processes: the same result, sooner on an otherwise idle machine. The
    `seconds` then add up the workers' times.
    """
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, not {jobs}")
    limit = Deadline(deadline) if deadline is not None else Deadline.after(options.time_limit)
    if options.variant != AUTO:
        # Features derived from IPA are used only where cross-validation keeps them.
        opts, feats = configured(options, features, without_derived(features))
        return fit(pairs, feats, opts, limit)
    k = min(options.folds, len(pairs))
    if jobs > 1 and k >= 2:
        from concurrent.futures import ProcessPoolExecutor

        # The workers are processes of their own: their collector can be off (see
        # `fstsynth.learning.collector_paused`); the caller's process keeps its own.
        with ProcessPoolExecutor(max_workers=jobs, initializer=gc.disable) as pool:
            return _learn_auto(pairs, features, options, k, pool, limit)
    return _learn_auto(pairs, features, options, k, None, limit)


def configured(options: Options, every: Features, underived: Features) -> tuple[Options, Features]:
    """A configuration's options and the features it learns with: `underived` (without
    the features derived from IPA), except that with feature rules every variant learns
    with `every` feature, testing the derived ones only along tiers (`atoms`): the
    feature variant's `SetFeatures` and `Agree` must map tokens into the inventory the
    model applies with (a `v` whose voiceless twin only panphon names)."""
    if options.feature_rules and every is not underived:
        return replace(options, derived_tests=False), every
    return options, underived


#: One cross-validation split: rows to learn from, rows to predict.
Split = tuple[Pairs, Pairs]


def _fold(
    train: Pairs, test: Pairs, features: Features, options: Options, deadline: Deadline
) -> tuple[tuple[bool, ...], dict[str, float], int]:
    """Whether each row of `test` is predicted right by the program learned from
    `train`, the seconds that took, and that program's rule count."""
    part = learn_variant(train, features, options, deadline)
    predicted = run_many(part.program, [src for src, _ in test], features)
    hits = tuple(p == tgt for p, (_, tgt) in zip(predicted, test))
    return hits, part.seconds, part.program.rule_count


def _evenly(pairs: Sized, rows: int) -> list[int]:
    """The indices of at most `rows` of `pairs`, evenly spaced (all if no more)."""
    if len(pairs) <= rows:
        return list(range(len(pairs)))
    return [i * len(pairs) // rows for i in range(rows)]


def cv_splits(pairs: Pairs, k: int, rows: int) -> list[Split]:
    """The splits `auto` scores a configuration on: `k` folds of at most `rows` rows
    (evenly spaced), each predicted by a program learned from the other folds. Where
    there are enough rows for one training set of a fold's size and `rows` other rows
    to predict, that one split instead, predicting the other rows (at most `k * rows`:
    predicting costs little beside learning): folds reuse rows for testing because rows
    are scarce; with rows to spare, fresh ones test as many predictions or more at 1/k
    of the learning runs (1,000 pairs: 1 run of 200 rows per configuration instead of
    3, predicting 800 rows instead of 300)."""
    train_rows = rows * (k - 1) // k
    if len(pairs) >= train_rows + rows:
        chosen = _evenly(pairs, train_rows)
        taken = set(chosen)
        rest = [p for i, p in enumerate(pairs) if i not in taken]
        return [([pairs[i] for i in chosen], [rest[i] for i in _evenly(rest, k * rows)])]
    sample = [pairs[i] for i in _evenly(pairs, rows)]
    return [
        (
            [p for i, p in enumerate(sample) if i % k != fold],
            [p for i, p in enumerate(sample) if i % k == fold],
        )
        for fold in range(k)
    ]


def _learn_auto(
    pairs: Pairs, features: Features, options: Options, k: int, pool: Executor | None, deadline: Deadline
) -> LearnResult:
    seconds: dict[str, float] = {}
    splits = cv_splits(pairs, k, options.cv_rows) if k >= 2 else []
    tested = sum(len(test) for _, test in splits)  # held-out rows per configuration
    # Features derived from IPA (`fstsynth.features`) are tried last, with the variant
    # ahead.
    derived, features = features, without_derived(features)

    def add_seconds(part: Mapping[str, float]) -> None:
        for key_, value in part.items():
            seconds[key_] = seconds.get(key_, 0.0) + value

    # Each variant, with the features it learns with.
    variants: list[Options] = []
    variant_features: list[Features] = []
    for variant in AUTO_ORDER:
        opts, feats = configured(replace(options, variant=variant), derived, features)
        variants.append(opts)
        variant_features.append(feats)
    # In workers, every variant's folds are started at once.
    folds = (
        [
            [pool.submit(_fold, *split, feats, opts, deadline) for split in splits]
            for opts, feats in zip(variants, variant_features)
        ]
        if pool is not None and k >= 2
        else None
    )

    def held_out_rows(rank: int, opts: Options, feats: Features, what: str) -> tuple[tuple[bool, ...], list[int]]:
        """Whether each held-out row over the splits is right, and the rules of each
        split's program."""
        hits: list[bool] = []
        rules: list[int] = []
        for fold, split in enumerate(splits):
            report("cross-validating", fold, len(splits), what)
            if folds is not None:
                right, part_seconds, part_rules = folds[rank][fold].result()
            else:
                right, part_seconds, part_rules = _fold(*split, feats, opts, deadline)
            hits.extend(right)
            rules.append(part_rules)
            add_seconds(part_seconds)
        return tuple(hits), rules

    def record(hits: tuple[bool, ...], rules: list[int]) -> None:
        hits_by_rank.append(hits)
        held_by_rank.append(sum(hits))
        rules_by_rank.append(rules)

    def try_also(opts: Options, feats: Features, what: str) -> None:
        """Cross-validate one more configuration; it competes with the others."""
        if folds is not None:
            assert pool is not None
            folds.append([pool.submit(_fold, *split, feats, opts, deadline) for split in splits])
        record(*held_out_rows(len(variants), opts, feats, what))
        variants.append(opts)
        variant_features.append(feats)

    hits_by_rank: list[tuple[bool, ...]] = []  # whether each held-out row is right, over the splits
    held_by_rank: list[int] = []  # how many of them
    rules_by_rank: list[list[int]] = []  # rules of the configuration's program on each split
    for rank, opts in enumerate(variants):
        # Every variant is scored even after one predicts every held-out row: another
        # may do as well with clearly fewer rules (final devoicing: one rule in
        # features against one per token pair seen), and that one generalizes to the
        # tokens the rows do not show.
        record(*(held_out_rows(rank, opts, variant_features[rank], opts.variant) if k >= 2 else ((), [])))
    most = max(held_by_rank)
    if k >= 2 and most < tested and not options.plain_letters and has_plain_letters(pairs):
        # Plain letters first (`plain_letter_pass`), with the variant ahead so far: it
        # pays where an accent says nothing the target keeps, and loses where it does.
        ahead = held_by_rank.index(most)
        plain = replace(variants[ahead], plain_letters=True)
        try_also(plain, variant_features[ahead], plain.variant + " + plain letters")
    most = max(held_by_rank)
    if k >= 2 and most < tested and derived is not features:
        # With them, conjunctions of one atom fewer: they multiply the atoms, and the
        # search with them (100 spelling -> IPA pairs, one run) took 51 s at 3 atoms,
        # 11 s at 2 (7.5 s without them at 3); on 100 pairs of another orthography,
        # held-out Exact was 71.6% at 2 and 67.8% at 3.
        ahead = held_by_rank.index(most)
        fewer = replace(
            variants[ahead], max_conjuncts=max(1, variants[ahead].max_conjuncts - 1), derived_tests=True
        )
        try_also(fewer, derived, fewer.variant + " + IPA features")
    most = max(held_by_rank)
    affix_try: int | None = None  # the configuration with the whole-affix pass
    if k >= 2 and most < tested and not options.affixes and _forms_of_words(pairs):
        # The whole-affix pass first (`affixes.affix_pass`), with the variant ahead: the
        # 2017 baseline's lookup of the longest word end seen, as a program, where it
        # predicts held-out rows better than rules on single segments.
        ahead = held_by_rank.index(most)
        affixed = replace(variants[ahead], affixes=AFFIX_LENGTH)
        affix_try = len(held_by_rank)
        try_also(affixed, variant_features[ahead], affixed.variant + " + affixes")
    most = max(held_by_rank)
    chunk_tries: list[int] = []  # the configurations aligned by chunks in place of the words
    if k >= 2 and most < tested and options.chunks == "cv":
        # Each word-by-word configuration that generalizes as well as the best (within
        # one standard error) is tried aligned by chunks: which one the chunks suit best
        # is not the one that did best word by word (a variant that read a consistent
        # alignment's rules better, when the words were aligned inconsistently, ties).
        for rank in _within_band(_ranks_but(len(held_by_rank), affix_try), held_by_rank, tested):
            chunked = replace(variants[rank], chunks="on")
            chunk_tries.append(len(held_by_rank))
            try_also(chunked, variant_features[rank], chunked.variant + " + chunk alignment")
    # The one-standard-error rule: among the configurations whose held-out count is
    # within one standard error of the best (sqrt(p(1 - p) / n) of a share p over n
    # rows), those whose programs the shortest (fewest rules over the splits) is not
    # clearly shorter than (no longer on any split, shorter on some); of those the
    # earliest (the simpler configuration: the paper's best variant first, the extra
    # pass and the extra features last). Held-out counts closer than that are noise
    # (100 rows at 73%: 4.4 rows), and so is a lead in rules that some split reverses
    # (259 rules against 268 over three splits, but 92 against 90 on one of them):
    # neither breaks a tie. Of programs that generalize alike the clearly shorter
    # states the broader rules. Without cross-validation every variant is learned
    # from all rows and the shortest program wins.
    #
    # Aligned by chunks, the best configuration (by the same rule among the chunk tries)
    # is taken where it predicts more held-out rows than the best word-by-word one
    # beyond one standard error, or, predicting some and no fewer than the chosen one,
    # with fewer rules on every split: where the column pair's words are aligned
    # consistently, the same correspondences cost fewer rules in every sample (3
    # splits of 100 noun forms: 79 held-out rows either way, 19/12/23 rules against
    # 27/22/26). A lead in rules on some splits only is what the alignment itself does
    # to a program's length, and counts for nothing; nor does a tie where no held-out
    # row is right.
    if k >= 2:
        by_word = [rank for rank in _ranks_but(len(held_by_rank), affix_try) if rank not in chunk_tries]
        chosen = _one_standard_error(by_word, held_by_rank, rules_by_rank, tested)
        if chunk_tries:
            most = max(held_by_rank[rank] for rank in by_word)
            band = _standard_error(most, tested)
            by_chunks = _one_standard_error(chunk_tries, held_by_rank, rules_by_rank, tested)
            beyond = held_by_rank[by_chunks] > most + band
            shorter = (
                held_by_rank[by_chunks] >= held_by_rank[chosen] > 0
                and all(a < b for a, b in zip(rules_by_rank[by_chunks], rules_by_rank[chosen]))
            )
            if beyond or shorter:
                chosen = by_chunks
        if affix_try is not None:
            # The memorized word ends are taken only where they predict more held-out
            # rows than every rule program beyond one standard error of the
            # difference: on a few rows, a lead within it was noise, and the rules the
            # passes after it learned from the rows it left wrong (Finnish inessive ->
            # nominative, 10 held-out rows: 3 right against 2) were wrong on most new
            # words. Both predict the same rows, so the difference is measured row by
            # row (`_beyond_paired_error`): a lead of 2 rows of 22 that the other gets
            # right on none is no noise, though each count's own error is 2.2 rows.
            if all(
                _beyond_paired_error(hits_by_rank[affix_try], hits)
                for rank, hits in enumerate(hits_by_rank)
                if rank != affix_try
            ):
                chosen = affix_try
        tied = [chosen]
        for rank, opts in enumerate(variants[: len(held_by_rank)]):
            log.debug(
                "auto: %s (conjuncts %d, plain letters %s, affixes %d, chunks %s): %d of %d held-out rows, "
                "%d rules %s%s, rows right %s",
                opts.variant, opts.max_conjuncts, opts.plain_letters, opts.affixes, opts.chunks,
                held_by_rank[rank], tested,
                sum(rules_by_rank[rank]), rules_by_rank[rank], " (chosen)" if rank == chosen else "",
                "".join("+" if hit else "." for hit in hits_by_rank[rank]),
            )
    else:
        tied = list(range(len(variants)))
    if pool is not None and len(tied) > 1:
        futures = [pool.submit(fit, pairs, variant_features[rank], variants[rank], deadline) for rank in tied]
        results = [future.result() for future in futures]
    else:
        results = [fit(pairs, variant_features[rank], variants[rank], deadline) for rank in tied]
    best_key = None
    best: LearnResult | None = None
    for rank, result in zip(tied, results):
        add_seconds(result.seconds)
        key = (result.program.rule_count, rank)
        if best_key is None or key < best_key:
            held_out = held_by_rank[rank] / tested if k >= 2 else None
            best_key, best = key, replace(result, held_out=held_out)
    assert best is not None
    return replace(best, seconds=seconds)


def _forms_of_words(pairs: Pairs) -> bool:
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


def _ranks_but(count: int, left_out: int | None) -> list[int]:
    """The configurations' ranks below `count`, but `left_out`."""
    return [rank for rank in range(count) if rank != left_out]


def _standard_error(right: int, tested: int) -> float:
    """One standard error of a held-out count: sqrt(p(1 - p) / n) of its share p of n
    rows, in rows."""
    return math.sqrt(right * (tested - right) / tested) if tested else 0.0


def _beyond_paired_error(hits: Sequence[bool], other: Sequence[bool]) -> bool:
    """Whether `hits` (rows predicted right) beat `other` on the same rows by one
    standard error of the difference or more, and by more than one row: of b rows only
    `hits` gets right and c only `other`, b - c >= sqrt(b + c) (McNemar's: under equal
    accuracy, each row where they differ is either's at even odds) and b - c >= 2 (one
    row, b = 1 and c = 0, is exactly one standard error, and no evidence)."""
    only = sum(a and not b for a, b in zip(hits, other))
    only_other = sum(b and not a for a, b in zip(hits, other))
    lead = only - only_other
    return lead >= 2 and lead * lead >= only + only_other


def _within_band(ranks: Iterable[int], held: Sequence[int], tested: int) -> list[int]:
    """The configurations of `ranks` whose held-out counts are within one standard error
    of the best of them."""
    ranks = list(ranks)
    most = max(held[rank] for rank in ranks)
    band = _standard_error(most, tested)
    return [rank for rank in ranks if held[rank] >= most - band]


def _one_standard_error(ranks: Iterable[int], held: Sequence[int], rules: Sequence[Sequence[int]], tested: int) -> int:
    """By the one-standard-error rule, the configuration of `ranks` to learn with: of
    those within one standard error of the best held-out count, those the shortest
    (fewest rules over the splits) is not clearly shorter than, and of those the
    earliest."""
    within = _within_band(ranks, held, tested)
    shortest = min(within, key=lambda rank: (sum(rules[rank]), rank))
    return min(rank for rank in within if not _clearly_shorter(rules[shortest], rules[rank]))


def _clearly_shorter(rules: Sequence[int], other: Sequence[int]) -> bool:
    """Whether programs of `rules` rules per split are shorter than those of `other`:
    no longer on any split, shorter on some."""
    return all(a <= b for a, b in zip(rules, other)) and any(a < b for a, b in zip(rules, other))


def fit(pairs: Pairs, features: Features, options: Options, deadline: Deadline | None = None) -> LearnResult:
    """The program one variant learns from `pairs`: `learn_variant` on all of them, or,
    past `options.fit_rows`, on a sample (`LearnResult.sampled` says how many rows).

    The sample is two thirds of `fit_rows` rows, evenly spaced; the program learned from
    them is run on every row, and the rows it gets wrong (evenly spaced among them) fill
    the sample up to `fit_rows` for a second program. Of the two, the one reproducing
    more rows of all is kept (ties: fewer rules), its counts over all rows. The wrong
    rows are what the sample misses (rare spellings, exceptions), which the greedy
    selection needs to see; the common ones are in any sample. Learning takes more than
    linear time and memory in the rows (every candidate rule holds a bitset over every
    example), so this bounds both; predicting all rows is linear."""
    limit = options.fit_rows
    if deadline is None:
        deadline = Deadline.after(options.time_limit)
    if limit is None or len(pairs) <= limit:
        return learn_variant(pairs, features, options, deadline)
    seconds: dict[str, float] = {}
    sample = set(_evenly(pairs, limit * 2 // 3))
    best: tuple[tuple[int, int], LearnResult] | None = None
    for _round in range(2):
        rows = sorted(sample)
        result = learn_variant([pairs[i] for i in rows], features, options, deadline)
        for key_, value in result.seconds.items():
            seconds[key_] = seconds.get(key_, 0.0) + value
        started = time.perf_counter()
        report("checking on all rows", 0, len(pairs), options.variant)
        predicted = _predict(result.program, [src for src, _ in pairs], features, deadline)
        seconds["checking"] = seconds.get("checking", 0.0) + time.perf_counter() - started
        wrong = [i for i, (p, (_, tgt)) in enumerate(zip(predicted, pairs)) if p != tgt]
        right = len(pairs) - len(wrong)
        key = (-right, result.program.rule_count)
        if best is None or key < best[0]:
            best = (key, replace(result, train_correct=right, train_total=len(pairs), sampled=len(rows)))
        missed = [i for i in wrong if i not in sample]
        if not missed or len(sample) >= limit:
            break
        sample.update(missed[k] for k in _evenly(missed, limit - len(sample)))
    assert best is not None
    return replace(best[1], seconds=seconds)


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
    affinity = learn_affinity(pairs, features, options.alignment, check=deadline.check) if options.affinity else None
    # Position-by-position alignment only when the whole column pair looks like word ->
    # stress marks, not for a pair that happens to be as long as its transcription.
    tgt_vocab = {t for _, tgt in pairs for t in tgt}
    one_to_one = _one_to_one(pairs)
    chunked = options.chunks == "on" and not one_to_one
    leads = None if one_to_one else learn_leads(pairs, features, options.alignment, affinity, deadline.check)
    seconds["alignment"] += time.perf_counter() - started

    def examples_of(words: list[list[TaggedToken]]) -> list[TaggedExample]:
        examples: list[TaggedExample] = []
        if chunked:
            report("aligning", 0, len(words))
            tokens = [tuple(tok for tok, _ in word) for word in words]
            aligned = chunk_alignments(list(zip(tokens, targets)), features, affinity, deadline.check, leads)
            for word, src, tgt, columns in zip(words, tokens, targets, aligned):
                frozen = tuple(word)
                examples.extend(
                    TaggedExample(frozen, e.position, e.output) for e in examples_from_alignment(src, tgt, columns)
                )
            return examples
        every = max(_ALIGN_REPORT, len(words) // 100)
        for done, (word, tgt) in enumerate(zip(words, targets)):
            deadline.check()  # alignment is quadratic in word length: bound it too
            if done % every == 0:
                report("aligning", done, len(words))
            examples.extend(
                tagged_examples(word, tgt, features, options.alignment, affinity, one_to_one, leads, ending)
            )
        return examples

    ready: list[TaggedExample] | None = None  # examples of `current`, when already made
    transcription = options.token_map and not one_to_one and is_transcription(pairs)
    forms = not transcription and not one_to_one
    ending = shared_ending(pairs) if options.shared_suffix and forms else ()
    if transcription or (options.plain_letters and not one_to_one):
        started = time.perf_counter()
        ready = examples_of(current)
        map_pass = token_map_pass(ready) if transcription else plain_letter_pass(ready, tgt_vocab)
        seconds["alignment"] += time.perf_counter() - started
        if map_pass.rules:
            ready = None
            passes.append(map_pass)
            current = _run_pass(map_pass, current, features, deadline)
            if not transcription:
                # The accents are forgotten: the next pass learns from the plain words
                # as a first pass would, with no `TransformationApplied` on this map
                # (which, found in 10,000 words, made a transducer too large to
                # build).
                current = [[(tok, None) for tok, _ in word] for word in current]
            score = n_correct(current)
    if options.affixes and forms:
        started = time.perf_counter()
        examples = ready if ready is not None else examples_of(current)
        affix = affix_pass(examples, options.affixes)
        seconds["alignment"] += time.perf_counter() - started
        if affix.rules:
            ready = None
            passes.append(affix)
            current = _run_pass(affix, current, features, deadline)
            score = n_correct(current)
    # The edge prior is for a word and another form of it, not for a transcription.
    pass_options = replace(options, edge_prior=options.edge_prior and forms)
    for _ in range(options.max_passes):
        if score == len(pairs):
            break
        started = time.perf_counter()
        examples = ready if ready is not None else examples_of(current)
        ready = None
        seconds["alignment"] += time.perf_counter() - started
        started = time.perf_counter()
        report(f"synthesizing pass {len(passes) + 1}", detail=options.variant)
        pass_ = synthesize_pass(examples, features, pass_options, deadline)
        seconds["synthesis"] += time.perf_counter() - started
        if not pass_.rules:
            break
        new = _run_pass(pass_, current, features, deadline)
        new_score = n_correct(new)
        if new_score <= score and passes:
            break
        passes.append(pass_)
        current, score = new, new_score
    program = Program(tuple(passes))
    cost = sum(rule_cost(r, options.variant) for p in passes for r in p.rules)
    return LearnResult(program, cost, score, len(pairs), seconds, options.variant)
