"""The learner: a program from word pairs, with the variant asked for or by `auto`.

Public API:
    LearnResult, learn(pairs, features, options, jobs, deadline)

One variant's passes are `variant.learn_variant`'s; `auto`'s choice of a configuration
by cross-validation is `auto.learn_auto`'s.
"""

from __future__ import annotations

import gc
from dataclasses import replace

from fstsynth.features import without_derived
from fstsynth.synthesis.auto import learn_auto
from fstsynth.synthesis.options import AUTO, Deadline, Options
from fstsynth.synthesis.feature_changes import with_class_changes
from fstsynth.synthesis.ranking import program_cost
from fstsynth.synthesis.variant import LearnResult, Pairs, configured, fit, forms_of_words, with_prefix_default
from fstsynth.types import Features

__all__ = ["LearnResult", "learn"]


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
    cross-validated with that pass too, and competes with the others. Where, on some
    split, the first learned pass of the configuration so chosen changes the token just
    before word-final tokens a target deletes (`m a r e` -> `m a rʲ`), that
    configuration is cross-validated once more with the deletion first and the change
    of every word's last token in the pass after it (`Options.deleted_end_first`), and
    learns the program instead where it predicts more of the same held-out rows by one
    standard error of the difference and by 2 rows at least (`auto._beyond_paired_error`).
    Never looks at anything but the training rows.

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
        result = with_prefix_default(fit(pairs, feats, opts, limit), pairs, feats, opts, limit)
        return _with_class_changes(result, pairs, feats)
    k = min(options.folds, len(pairs))
    if jobs > 1 and k >= 2:
        from concurrent.futures import ProcessPoolExecutor

        # The workers are processes of their own: their collector can be off (see
        # `fstsynth.learning.collector_paused`); the caller's process keeps its own.
        with ProcessPoolExecutor(max_workers=jobs, initializer=gc.disable) as pool:
            result = learn_auto(pairs, features, options, k, pool, limit)
    else:
        result = learn_auto(pairs, features, options, k, None, limit)
    # The prefix's elsewhere case goes last in the program chosen (`with_prefix_default`).
    return _with_class_changes(with_prefix_default(result, pairs, features, options, limit), pairs, features)


def _with_class_changes(result: LearnResult, pairs: Pairs, features: Features) -> LearnResult:
    """`result` with its token changes made the changes of their classes where the
    training rows cannot tell (`feature_changes.with_class_changes`), for a word and
    another form of it: a stem's alternation, not a letter's transcription."""
    if not forms_of_words(pairs):
        return result
    program = with_class_changes(result.program, [src for src, _ in pairs], features)
    if program == result.program:
        return result
    # The cost follows the rules (`solve` breaks ties between source columns by it).
    cost = result.cost + program_cost(program, result.variant) - program_cost(result.program, result.variant)
    return replace(result, program=program, cost=cost)

