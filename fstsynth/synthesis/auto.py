"""`auto`: the configuration a program is learned with, chosen by cross-validation.

Public API:
    AUTO_ORDER (the variants `auto` tries, in tie order)
    cv_splits(pairs, k, rows): the splits a configuration is scored on
    SplitScore, split_hits(train, test, features, options, deadline): one split scored
    learn_auto(pairs, features, options, k, pool, deadline) -> LearnResult

Each variant of `AUTO_ORDER` is scored by k-fold cross-validation on the training rows;
where it may pay, so are the variant ahead with plain letters first, the variant ahead
and the feature variant within one standard error of it with the features derived from
IPA, the variant ahead with the whole-affix pass, and configurations aligned by chunks;
the program is learned from all rows with the configuration the one-standard-error
rule picks (the shortest programs among those within one standard error of the best),
or that configuration with a deleted word end first (`Options.deleted_end_first`)
where it is tried and predicts clearly more of the same held-out rows.
`learner.learn` documents the rule in full.
"""

from __future__ import annotations

import logging
import math
from concurrent.futures import Executor, Future
from dataclasses import replace
from typing import Iterable, Mapping, NamedTuple, Sequence

from fstsynth.features import without_derived
from fstsynth.interpreter import run_many
from fstsynth.progress import report
from fstsynth.synthesis.affixes import LONGEST_AFFIX
from fstsynth.synthesis.allomorphs import suffix_allomorphs
from fstsynth.synthesis.first_passes import has_plain_letters
from fstsynth.synthesis.options import Deadline, Options
from fstsynth.synthesis.variant import (
    LearnResult,
    Pairs,
    configured,
    evenly,
    fit,
    forms_of_words,
    learn_variant,
    plain_letters_change,
)
from fstsynth.types import Features

# The variants `auto` tries, in tie order: the paper's best variant overall first.
# nofeature is left out: it is the paper's weakest, and each variant tried costs
# (folds + 1) learning runs.
AUTO_ORDER = ("token", "feature")

log = logging.getLogger(__name__)

#: Past this many rows, `auto` tries the chunk alignment for fewer configurations
#: (`_large_input_chunk_tries`), and `learn`'s summary says the choice read a sample.
LARGE_INPUT = 2000

#: One cross-validation split: rows to learn from, rows to predict.
Split = tuple[Pairs, Pairs]


class SplitScore(NamedTuple):
    """How a configuration did on one split."""

    hits: tuple[bool, ...]  # whether each held-out row is predicted right
    seconds: dict[str, float]  # the learning's
    rules: int  # of the program learned from the training rows
    # Whether some training word changes the token just before word-final tokens its
    # target deletes, in the first learned pass (`LearnResult.changed_before_deleted_end`):
    # where the deletion first may pay.
    deleted_end: bool = False


def split_hits(train: Pairs, test: Pairs, features: Features, options: Options, deadline: Deadline) -> SplitScore:
    """Whether each row of `test` is predicted right by the program learned from
    `train`, the seconds that took, that program's rule count, and whether its first
    learned pass saw a change beside a deleted word end."""
    part = learn_variant(train, features, options, deadline)
    predicted = run_many(part.program, [src for src, _ in test], features)
    hits = tuple(p == tgt for p, (_, tgt) in zip(predicted, test))
    return SplitScore(hits, part.seconds, part.program.rule_count, part.changed_before_deleted_end > 0)


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
        chosen = evenly(pairs, train_rows)
        taken = set(chosen)
        rest = [p for i, p in enumerate(pairs) if i not in taken]
        return [([pairs[i] for i in chosen], [rest[i] for i in evenly(rest, k * rows)])]
    sample = [pairs[i] for i in evenly(pairs, rows)]
    return [
        (
            [p for i, p in enumerate(sample) if i % k != fold],
            [p for i, p in enumerate(sample) if i % k == fold],
        )
        for fold in range(k)
    ]


class _Trials:
    """The configurations cross-validated so far, by rank (the order they were added
    in), with how each did on the held-out rows of `splits`."""

    def __init__(self, splits: list[Split], pool: Executor | None, deadline: Deadline) -> None:
        self.splits, self.pool, self.deadline = splits, pool, deadline
        self.options: list[Options] = []
        self.features: list[Features] = []
        self.hits: list[tuple[bool, ...]] = []  # whether each held-out row is right, over the splits
        self.rules: list[list[int]] = []  # rules of the configuration's program on each split
        # Whether some split's first learned pass changed a token beside a deleted word end.
        self.deleted_end: list[bool] = []
        self.seconds: dict[str, float] = {}
        # Per configuration, the earlier one it learns the same programs as on every
        # split (`_same_as`), whose scores it takes instead of learning them again.
        self.same_as: list[int | None] = []
        self._folds: list[list[Future[SplitScore]]] = []

    @property
    def held(self) -> list[int]:
        """How many held-out rows each configuration predicts right."""
        return [sum(hits) for hits in self.hits]

    def ahead(self) -> int:
        """The earliest configuration with the most held-out rows right."""
        held = self.held
        return held.index(max(held))

    def add_seconds(self, part: Mapping[str, float]) -> None:
        for key, value in part.items():
            self.seconds[key] = self.seconds.get(key, 0.0) + value

    def start(self, opts: Options, feats: Features) -> None:
        """Add a configuration; in workers, its folds start at once."""
        same = self._same_as(opts, feats)
        self.options.append(opts)
        self.features.append(feats)
        self.same_as.append(same)
        if self.pool is not None:
            if same is not None:
                self._folds.append(self._folds[same])
            else:
                self._folds.append(
                    [self.pool.submit(split_hits, *split, feats, opts, self.deadline) for split in self.splits]
                )

    def _same_as(self, opts: Options, feats: Features) -> int | None:
        """The configuration added so far that learns the same program as `opts` on
        every split, if any: the one without plain letters first where the plain-letter
        map is empty on each split's rows (`plain_letters_change`), as in German
        spelling -> IPA, where `ä ö ü` are never aligned with `a o u` (a learning run
        per split spent on a copy: 6% of German's learning at 3,000 pairs)."""
        if not opts.plain_letters:
            return None
        base = replace(opts, plain_letters=False)
        for rank, (other, other_feats) in enumerate(zip(self.options, self.features)):
            if other == base and (other_feats is feats or other_feats == feats):
                changes = any(plain_letters_change(train, feats, opts, self.deadline) for train, _ in self.splits)
                return None if changes else rank
        return None

    def score(self, rank: int, what: str) -> None:
        """Learn and predict each split with configuration `rank` (the next to score)."""
        same = self.same_as[rank]
        if same is not None:
            # Scored already, by an earlier rank: the same programs, the same scores.
            self.hits.append(self.hits[same])
            self.rules.append(list(self.rules[same]))
            self.deleted_end.append(self.deleted_end[same])
            return
        hits: list[bool] = []
        rules: list[int] = []
        deleted_end = False
        for fold, split in enumerate(self.splits):
            report("cross-validating", fold, len(self.splits), what)
            if self.pool is not None:
                part = self._folds[rank][fold].result()
            else:
                part = split_hits(*split, self.features[rank], self.options[rank], self.deadline)
            hits.extend(part.hits)
            rules.append(part.rules)
            deleted_end = deleted_end or part.deleted_end
            self.add_seconds(part.seconds)
        self.hits.append(tuple(hits))
        self.rules.append(rules)
        self.deleted_end.append(deleted_end)

    def try_also(self, opts: Options, feats: Features, what: str) -> int:
        """Cross-validate one more configuration, which competes with the others; its rank."""
        self.start(opts, feats)
        self.score(len(self.options) - 1, what)
        return len(self.options) - 1


def learn_auto(
    pairs: Pairs, features: Features, options: Options, k: int, pool: Executor | None, deadline: Deadline
) -> LearnResult:
    splits = cv_splits(pairs, k, options.cv_rows) if k >= 2 else []
    tested = sum(len(test) for _, test in splits)  # held-out rows per configuration
    # Features derived from IPA (`fstsynth.features`) are tried last, with the variant
    # ahead and the feature variant within one standard error of it.
    derived, features = features, without_derived(features)
    trials = _Trials(splits, pool, deadline)
    for variant in AUTO_ORDER:
        trials.start(*configured(replace(options, variant=variant), derived, features))
    for rank, opts in enumerate(list(trials.options)):
        # Every variant is scored even after one predicts every held-out row: another
        # may do as well with clearly fewer rules (final devoicing: one rule in
        # features against one per token pair seen), and that one generalizes to the
        # tokens the rows do not show.
        trials.score(rank, opts.variant)

    def more_to_gain() -> bool:
        return k >= 2 and max(trials.held) < tested

    if more_to_gain() and not options.plain_letters and has_plain_letters(pairs):
        # Plain letters first (`plain_letter_pass`), with the variant ahead so far: it
        # pays where an accent says nothing the target keeps, and loses where it does.
        ahead = trials.ahead()
        plain = replace(trials.options[ahead], plain_letters=True)
        trials.try_also(plain, trials.features[ahead], plain.variant + " + plain letters")
    if more_to_gain() and derived is not features:
        # With them, conjunctions of one atom fewer: they multiply the atoms, and the
        # search with them (100 spelling -> IPA pairs, one run) took 51 s at 3 atoms,
        # 11 s at 2 (7.5 s without them at 3); on 100 pairs of another orthography,
        # held-out Exact was 71.6% at 2 and 67.8% at 3.
        # Tried with the configuration ahead, then with the feature variant's best
        # configuration where it is within one standard error of it (earlier ranks win
        # ties, so the one ahead keeps its place): its `SetFeatures` and `Agree` are the
        # rules that write segments no training row shows, and they need the classes.
        # Arabic's article (sun letters: the coronals): token rules ahead by one row of
        # 24, and they cannot lengthen a consonant no row shows; the feature variant
        # with the IPA tests learns `[+cor] -> [+long] / # _` (17 of 24 against 11).
        # Not the token variant behind a feature one: on Korean coda neutralization
        # (one fold) it only displaced the whole-affix pass by noise (18 of 24 held-out
        # rows against 19), and a cell was lost; nor every configuration in the band:
        # on Spanish spelling (1,000 pairs) the token variant without plain letters
        # behind it with them cost 18% more CPU for the same program.
        for rank in _ahead_and_feature(trials, tested):
            variant_options = trials.options[rank]
            fewer = replace(
                variant_options, max_conjuncts=max(1, variant_options.max_conjuncts - 1), derived_tests=True
            )
            trials.try_also(fewer, derived, fewer.variant + " + IPA features")
    affix_try: int | None = None  # the configuration with the whole-affix pass
    if more_to_gain() and not options.affixes and forms_of_words(pairs):
        # The whole-affix pass first (`affixes.affix_pass`), with the variant ahead: the
        # 2017 baseline's lookup of the longest word end seen, as a program, where it
        # predicts held-out rows better than rules on single segments.
        ahead = trials.ahead()
        affixed = replace(trials.options[ahead], affixes=LONGEST_AFFIX)
        affix_try = trials.try_also(affixed, trials.features[ahead], affixed.variant + " + affixes")
    chunk_tries: list[int] = []  # the configurations aligned by chunks in place of the words
    if more_to_gain() and options.chunks == "cv":
        # Each word-by-word configuration that generalizes as well as the best (within
        # one standard error) is tried aligned by chunks: which one the chunks suit best
        # is not the one that did best word by word (a variant that read a consistent
        # alignment's rules better, when the words were aligned inconsistently, ties).
        within = _within_band(_ranks_but(len(trials.hits), affix_try), trials.held, tested)
        if len(pairs) > LARGE_INPUT:
            within = _large_input_chunk_tries(within, trials.held, trials.rules, tested)
        for rank in within:
            chunked = replace(trials.options[rank], chunks="on")
            chunk_tries.append(trials.try_also(chunked, trials.features[rank], chunked.variant + " + chunk alignment"))
    if more_to_gain() and not options.allomorphs and forms_of_words(pairs) and suffix_allomorphs(pairs, derived):
        # One allomorph of the suffix inserted first (`allomorphs.allomorph_pass`), with
        # the best word-by-word configuration of the feature variant: the passes after
        # it change the inserted tokens, and only feature rules (`Agree`, `SetFeatures`)
        # reach a stem ending no training row shows.
        by_feature = [
            rank
            for rank, opts in enumerate(trials.options)
            if opts.variant == "feature" and rank != affix_try and rank not in chunk_tries
        ]
        if by_feature:
            base = max(by_feature, key=lambda rank: (trials.held[rank], -rank))
            factored = replace(trials.options[base], allomorphs=True)
            trials.try_also(factored, trials.features[base], factored.variant + " + allomorphs")
    # Without cross-validation every variant is learned from all rows and the shortest
    # program wins.
    tied = [_chosen_or_fed(trials, tested, affix_try, chunk_tries)] if k >= 2 else list(range(len(trials.options)))
    if pool is not None and len(tied) > 1:
        futures = [pool.submit(fit, pairs, trials.features[rank], trials.options[rank], deadline) for rank in tied]
        results = [future.result() for future in futures]
    else:
        results = [fit(pairs, trials.features[rank], trials.options[rank], deadline) for rank in tied]
    best_key = None
    best: LearnResult | None = None
    for rank, result in zip(tied, results):
        trials.add_seconds(result.seconds)
        key = (result.program.rule_count, rank)
        if best_key is None or key < best_key:
            held_out = trials.held[rank] / tested if k >= 2 else None
            best_key, best = key, replace(result, held_out=held_out)
    assert best is not None
    # Said in `learn`'s summary where the choice read a sample of the rows.
    read = len({row for split in splits for part in split for row in part})
    cv_sample = (len(trials.hits), read, len(pairs)) if k >= 2 and read < len(set(pairs)) else None
    return replace(best, seconds=trials.seconds, cv_sample=cv_sample)


def _chosen_or_fed(trials: _Trials, tested: int, affix_try: int | None, chunk_tries: list[int]) -> int:
    """The configuration cross-validation picks (`_chosen`), or, where its first
    learned pass changed the token just before a word end its targets delete on some
    split (`SplitScore.deleted_end`: `m a r e` -> `m a rʲ`), the same configuration
    with the deletion first and the change of every word's last token in the pass
    after it (`Options.deleted_end_first`: the feeding order, so that `v e r d e` ->
    `v e r zʲ` learns the `d` -> `zʲ` of `u d`), where that predicts more of the same
    held-out rows beyond one standard error of the difference (`_beyond_paired_error`).

    Tried on the chosen configuration alone, not on every one: spelling -> IPA has
    such rows too (French `s o n t` -> `s ɔ̃`, German `e r` -> `ɐ`), and trying every
    configuration twice would double its learning time."""
    chosen = _chosen(trials, tested, affix_try, chunk_tries)
    opts = trials.options[chosen]
    # The lead must be 2 rows at least (`_beyond_paired_error`): where the chosen one
    # misses fewer, the try cannot win.
    if trials.deleted_end[chosen] and not opts.deleted_end_first and trials.held[chosen] <= tested - 2:
        fed = replace(opts, deleted_end_first=True)
        fed_try = trials.try_also(fed, trials.features[chosen], fed.variant + " + deleted end first")
        if _beyond_paired_error(trials.hits[fed_try], trials.hits[chosen]):
            chosen = fed_try
    _log_trials(trials, tested, chosen)
    return chosen


def _chosen(trials: _Trials, tested: int, affix_try: int | None, chunk_tries: list[int]) -> int:
    """The configuration cross-validation picks.

    The one-standard-error rule: among the configurations whose held-out count is
    within one standard error of the best (sqrt(p(1 - p) / n) of a share p over n
    rows), those whose programs the shortest (fewest rules over the splits) is not
    clearly shorter than (no longer on any split, shorter on some); of those the
    earliest (the simpler configuration: the paper's best variant first, the extra
    pass and the extra features last). Held-out counts closer than that are noise
    (100 rows at 73%: 4.4 rows), and so is a lead in rules that some split reverses
    (259 rules against 268 over three splits, but 92 against 90 on one of them):
    neither breaks a tie. Of programs that generalize alike the clearly shorter
    states the broader rules.

    Aligned by chunks, the best configuration (by the same rule among the chunk tries)
    is taken where it predicts more held-out rows than the best word-by-word one
    beyond one standard error, or, predicting some and no fewer than the chosen one,
    with fewer rules on every split: where the column pair's words are aligned
    consistently, the same correspondences cost fewer rules in every sample (3
    splits of 100 noun forms: 79 held-out rows either way, 19/12/23 rules against
    27/22/26). A lead in rules on some splits only is what the alignment itself does
    to a program's length, and counts for nothing; nor does a tie where no held-out
    row is right.
    """
    held, rules = trials.held, trials.rules
    by_word = [rank for rank in _ranks_but(len(held), affix_try) if rank not in chunk_tries]
    chosen = _one_standard_error(by_word, held, rules, tested)
    if chunk_tries:
        most = max(held[rank] for rank in by_word)
        band = _standard_error(most, tested)
        by_chunks = _one_standard_error(chunk_tries, held, rules, tested)
        beyond = held[by_chunks] > most + band
        shorter = held[by_chunks] >= held[chosen] > 0 and all(a < b for a, b in zip(rules[by_chunks], rules[chosen]))
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
            _beyond_paired_error(trials.hits[affix_try], hits)
            for rank, hits in enumerate(trials.hits)
            if rank != affix_try
        ):
            chosen = affix_try
    return chosen


def _log_trials(trials: _Trials, tested: int, chosen: int) -> None:
    for rank, opts in enumerate(trials.options):
        log.debug(
            "auto: %s (conjuncts %d, plain letters %s, affixes %d, allomorphs %s, chunks %s, deleted end first %s): "
            "%d of %d held-out rows, %d rules %s%s, rows right %s",
            opts.variant, opts.max_conjuncts, opts.plain_letters, opts.affixes, opts.allomorphs, opts.chunks,
            opts.deleted_end_first, trials.held[rank], tested, sum(trials.rules[rank]), trials.rules[rank],
            " (chosen)" if rank == chosen else "", "".join("+" if hit else "." for hit in trials.hits[rank]),
        )


def _ahead_and_feature(trials: _Trials, tested: int) -> list[int]:
    """The configuration ahead, then, if that is not of the feature variant, the feature
    variant's configuration with the most held-out rows right (the earliest of those)
    where it is within one standard error of the one ahead."""
    ahead = trials.ahead()
    if trials.options[ahead].variant == "feature":
        return [ahead]
    within = _within_band(range(len(trials.options)), trials.held, tested)
    by_feature = [rank for rank in within if trials.options[rank].variant == "feature"]
    return [ahead, *sorted(by_feature, key=lambda rank: (-trials.held[rank], rank))[:1]]


def _large_input_chunk_tries(
    within: list[int], held: Sequence[int], rules: Sequence[Sequence[int]], tested: int
) -> list[int]:
    """Of the configurations `within` one standard error of the best, those a large
    input tries aligned by chunks: the earliest (the simplest, which the rule prefers
    among equals) and the one the one-standard-error rule picks. Each try learns a
    fold as dear as a word-by-word one (French and German at 10,000 pairs: 11 to 40 s
    of CPU each, the derived features' and the plain letters' dearest), and on a
    cross-validation sample of 1,100 rows every configuration is within the band of
    the others more often than not (German: all four word-by-word ones)."""
    chosen = _one_standard_error(within, held, rules, tested)
    return sorted({within[0], chosen})


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
