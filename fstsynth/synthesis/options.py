"""Learning options, the learner's error, and the one deadline of a learning run.

Public API:
    Options, Error, VARIANTS, AUTO, Deadline, CHECK_EVERY
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from fstsynth.errors import UserError

VARIANTS = ("nofeature", "token", "feature")
#: `auto` picks one of VARIANTS per column pair by cross-validation on the training rows.
AUTO = "auto"


class Error(UserError):
    """Learning was asked for something it cannot do (bad option, limit reached)."""


@dataclass(frozen=True)
class Options:
    variant: str = AUTO
    window: int = 2
    max_conjuncts: int = 3
    max_passes: int = 3
    alignment: str = "global"
    beam: int = 400
    # Seconds for a column pair: alignment, synthesis (every cross-validation fold and
    # variant of `auto` included) and compilation together (`Deadline`).
    time_limit: float | None = None
    # Learn which source token corresponds to which target token before aligning
    # (`alignment_affinity.learn_affinity`): needed when the two columns use different symbols.
    affinity: bool = True
    # Alignment by the chunks of the whole column pair (`fstsynth.chunks`): "off" (word
    # by word), "on", or "cv" (`auto` also tries it, and takes it where cross-validation
    # says it generalizes better, or as well with fewer rules on every split).
    chunks: str = "cv"
    # For a transcription into other symbols, start with a context-free token map pass
    # (`token_map_pass`); then `max_passes` passes of rules.
    token_map: bool = True
    # Otherwise, start by writing letters with diacritics that no target uses as plain
    # letters (`plain_letter_pass`). `auto` tries it by cross-validation where it applies.
    plain_letters: bool = False
    # Start with a whole-affix pass (`affixes.affix_pass`): the changes of the word ends
    # (or starts) of up to this many tokens seen in training, the longest match first,
    # as the CoNLL-SIGMORPHON 2017 baseline inflects; 0: none. `auto` tries it (with
    # `affixes.LONGEST_AFFIX`, the ends as deep as the changes need) by cross-validation,
    # for a word and another form of it.
    affixes: int = 0
    # Start with a pass inserting one allomorph of the suffix where the suffixes the
    # targets add are allomorphs of one shape (`allomorphs.allomorph_pass`): the passes
    # after it learn the changes (voicing, harmony) of the inserted tokens. `auto` tries
    # it by cross-validation where the suffixes are so.
    allomorphs: bool = False
    # Align the suffix that most targets of a word -> form column pair end with, and
    # few sources (`alignment.shared_ending`), as an insertion at the word's end, not
    # split between the stem's last tokens.
    shared_suffix: bool = True
    # For a word and another form of it, where every training target starts with a
    # prefix no source starts with (`affixes.every_prefix`), a last pass writes it before
    # a word the rule passes left without it (`affixes.prefix_default_pass`): a stem whose
    # first token no training word starts with still gets the prefix.
    prefix_default: bool = True
    # Predicates on tiers (`TierIs`: the nearest vowels left and right) as candidates.
    tiers: bool = True
    # Rules in features: the `feature` variant also tries transformations of features
    # (`SetFeatures`, `Agree`: `synthesis.feature_changes`), which generalize to tokens
    # the training rows never showed, and every variant tries inclusive tier tests
    # ("the word's last vowel"); passes drop rules the others do as well without.
    feature_rules: bool = True
    # Atoms may test features derived from IPA (`fstsynth.features`). With feature rules
    # the feature variant learns over every feature (its `SetFeatures` and `Agree` map
    # tokens into the inventory the model applies with) but tests derived ones only in
    # `auto`'s "+ IPA features" configuration (`variant.configured`).
    derived_tests: bool = True
    # A change of a word into another form of it (not a transcription: most target
    # tokens are source tokens) that tests no word edge pays `UNANCHORED_CHANGE_COST`,
    # as an insertion does `UNANCHORED_INSERT_COST`: where every training change of a
    # token happens at the same distance from a word edge (ð -> t before a final ə),
    # the edge conditions it (the forms of a paradigm differ by their affixes), and a
    # rule changing the token everywhere is as good only on those rows. Only ties of
    # gain are decided so: a change seen away from the edge too is not anchored.
    edge_prior: bool = True
    # With feature rules, tier tests and agreements along the harmonic tiers
    # (`features.harmonic_tiers`: a harmony's vowels, the neutral ones skipped), where
    # the suffixes the targets add alternate in the harmony's feature
    # (`allomorphs.alternates_in`): harmony is an alternation among the forms of a word,
    # and read everywhere the tier found accidents in spelling -> IPA (de, fr, es 1,000
    # pairs: 70.8 -> 70.2, 76.6 -> 76.0, 98.6 -> 98.4).
    harmonic_tiers: bool = True
    # Folds of the cross-validation by which `auto` picks a variant per column pair.
    folds: int = 3
    # The cross-validation reads at most this many rows, evenly spaced (the program is
    # still learned from all rows): with more, the choice costs more than the program.
    # (1,000 spelling -> IPA pairs: the same program from 300 as from 1,000, learned
    # in 28 s instead of 46 s.)
    cv_rows: int = 300
    # Past this many rows, a program is learned from this many of them, evenly spaced
    # (`variant.fit`): learning grows faster than linearly with the rows, and its
    # memory with them.
    # None: always from all rows.
    fit_rows: int | None = 3000
    # A broad rule wrong only on examples that need no change may be taken with up to
    # this many `Identity` rules before it that keep those examples as they are, and a
    # very broad one also with rules making another change at a few odd examples
    # (`exceptions.Exceptions`); 0: never.
    exceptions: int = 3
    # A deletion testing no word edge is a candidate only under conditions where the
    # token is silent in at least this share of the examples they hold at (decided ones
    # too): a letter is silent where something licenses it (a double letter, a digraph),
    # and conditions that hold mostly where it is sounded name no such thing. Taken
    # after the rules that sound it, such a deletion fits the rows but drops the letter
    # from unseen words those rules do not reach. A licence may be two-sided (Spanish
    # `u` after `g` before `e`, `i`): a deletion testing one side passes too where the
    # token next to the position on the other side tells its silent positions from
    # its sounded ones. At a word edge, a deletion removes an affix, which exceptions
    # before it may hold back. 0: any deletion.
    silent_share: float = 0.5
    # The first learned pass leaves the change of each word's last token (after the
    # deletions at its end) to the pass after it (`examples.last_token_kept`): the
    # deletion of a word's end first, then the change beside its new end (Romanian
    # `m a r e` -> `m a rʲ`, as `b u n` -> `b u nʲ`). `auto` tries it with the
    # configuration it chose, where that configuration's first learned pass changes the
    # token before a deleted end on some split, and keeps it where cross-validation says.
    deleted_end_first: bool = False

    def __post_init__(self) -> None:
        if self.variant not in (*VARIANTS, AUTO):
            raise Error(
                f"variant must be one of {', '.join((*VARIANTS, AUTO))}, not {self.variant!r}"
            )
        if self.folds < 2:
            raise Error(f"folds must be at least 2, not {self.folds}")
        if self.cv_rows < self.folds:
            raise Error(f"cv_rows must be at least folds ({self.folds}), not {self.cv_rows}")
        if self.chunks not in ("off", "on", "cv"):
            raise Error(f"chunks must be 'off', 'on' or 'cv', not {self.chunks!r}")
        if self.alignment not in ("global", "local"):
            raise Error(f"alignment must be 'global' or 'local', not {self.alignment!r}")
        if not 0 <= self.window <= 6:
            raise Error(f"window must be between 0 and 6, not {self.window}")
        if not 1 <= self.max_passes <= 10:
            raise Error(f"max_passes must be between 1 and 10, not {self.max_passes}")
        if not 0 <= self.exceptions <= 10:
            raise Error(f"exceptions must be between 0 and 10, not {self.exceptions}")
        if self.fit_rows is not None and self.fit_rows < 3:
            raise Error(f"fit_rows must be at least 3 (or None), not {self.fit_rows}")
        if not 0 <= self.affixes <= 6:
            raise Error(f"affixes must be between 0 and 6, not {self.affixes}")
        if not 0 <= self.silent_share <= 1:
            raise Error(f"silent_share must be between 0 and 1, not {self.silent_share}")
        if not 0 <= self.max_conjuncts <= 4:
            raise Error(f"max_conjuncts must be between 0 and 4, not {self.max_conjuncts}")


#: Loops over examples or words check the deadline every this many (a check costs a
#: clock read; a step of this many stays well under the overshoot allowed).
CHECK_EVERY = 2048


@dataclass(frozen=True)
class Deadline:
    """A moment (`time.monotonic()`) past which learning stops with `Error`; None: never.

    One deadline is made per column pair and handed down to every step (each fold and
    variant of `auto`, the final runs, compilation), so that the time limit bounds them
    together. `time.monotonic()` is system-wide on the platforms this runs on, so worker
    processes read the same clock."""

    at: float | None = None

    @classmethod
    def after(cls, seconds: float | None) -> Deadline:
        return cls(None if seconds is None else time.monotonic() + seconds)

    def check(self) -> None:
        if self.at is not None and time.monotonic() > self.at:
            raise Error("time limit reached while learning (raise --time-limit)")
