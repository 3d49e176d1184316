"""The DSL's semantics, each case checked on the interpreter and on the transducer."""

from __future__ import annotations

import collections

import pytest
from hypothesis import HealthCheck, given, settings

from backends import BACKENDS, check_backends, check_cdrewrite, run_with
from program_strategies import Case, cases, constructs_used, describe
from fstsynth import dsl
from fstsynth.dsl import (
    BOUNDARY,
    CopyInsert,
    CopyReplace,
    Delete,
    Identity,
    Insert,
    Is,
    IsToken,
    Not,
    Pass,
    Program,
    ReplaceAnyBy,
    ReplaceBy,
    Rule,
    TierIs,
    TransformationApplied,
)

FEATURES = {
    "a": {"vowel": True},
    "i": {"vowel": True},
    "b": {"vowel": False, "voice": True},
    "d": {"vowel": False, "voice": True},
    "t": {"vowel": False, "voice": False},
    "s": {"vowel": False, "voice": False},
}
ALPHABET = tuple(FEATURES) + ("z", "h")
#: The property's cases that also go through the cdrewrite oracle: one in this many
#: (building a grammar's transducers costs several times the other paths together).
CDREWRITE_EVERY = 5


def one_pass(*rules: Rule) -> Program:
    return Program((Pass(tuple(rules)),))


@pytest.fixture(params=BACKENDS)
def backend(request):
    return request.param


def run(backend, program, word, alphabet=ALPHABET):
    return " ".join(run_with(backend, program, tuple(word.split()), FEATURES, alphabet))


def test_empty_program_is_identity(backend):
    assert run(backend, Program(()), "b a t") == "b a t"
    assert run(backend, one_pass(), "b a t") == "b a t"


def test_suffix_by_voicing_and_boundary(backend):
    program = one_pass(
        Rule((IsToken(BOUNDARY, 1), Is("voice", 0)), Insert(("z",))),
        Rule((IsToken(BOUNDARY, 1),), Insert(("s",))),
    )
    assert run(backend, program, "b a d") == "b a d z"
    assert run(backend, program, "b a t") == "b a t s"
    assert run(backend, program, "a") == "a s"


def test_prefix_at_start_position(backend):
    program = one_pass(Rule((IsToken(BOUNDARY, 0),), Insert(("d", "i"))))
    assert run(backend, program, "b a t") == "d i b a t"
    # The start position exists even in an empty word.
    assert run(backend, program, "") == "d i"


def test_first_matching_rule_wins_and_identity_blocks(backend):
    program = one_pass(
        Rule((IsToken("a", 0), IsToken("b", -1)), Identity()),
        Rule((Is("vowel", 0),), ReplaceAnyBy(("i",))),
    )
    assert run(backend, program, "b a t a") == "b a t i"


def test_rules_read_the_pass_input_simultaneously(backend):
    # Each "a" after an "a" becomes "b": in "a a a", both later a's change, because
    # contexts read the input, not the partially rewritten output.
    program = one_pass(Rule((IsToken("a", -1),), ReplaceBy("a", ("b",))))
    assert run(backend, program, "a a a") == "a b b"


def test_replace_by_only_applies_to_its_source(backend):
    program = one_pass(Rule((), ReplaceBy("t", ("d",))), Rule((), Delete()))
    assert run(backend, program, "t a t") == "d d"


def test_multi_token_replacement_and_delete(backend):
    program = one_pass(Rule((), ReplaceBy("s", ("s", "h"))), Rule((IsToken(BOUNDARY, 1),), Delete()))
    assert run(backend, program, "s a s t") == "s h a s h"


def test_copy_replace_and_boundary_makes_copy_not_apply(backend):
    program = one_pass(
        Rule((Not(Is("vowel", 0)),), CopyReplace(1)),
        Rule((), Identity()),
    )
    # Consonants copy the next token; the last consonant has no next token, so the
    # copy does not apply and the next rule (Identity) fires.
    assert run(backend, program, "t a d") == "a a d"


def test_copy_insert_gemination(backend):
    program = one_pass(Rule((IsToken("t", 0),), CopyInsert(0)), Rule((IsToken(BOUNDARY, 0),), CopyInsert(1)))
    assert run(backend, program, "a t a") == "a a t t a"


def test_transformation_applied_reads_previous_pass(backend):
    first = Pass((Rule((), ReplaceBy("s", ("h",))),))
    second = Pass((Rule((TransformationApplied(ReplaceBy("s", ("h",)), 1),), Insert(("s",))),))
    program = Program((first, second))
    assert run(backend, program, "a s a") == "a s h a"
    # An "h" that was already there is not a rewritten one.
    assert run(backend, program, "a h a") == "a h a"


def test_inserted_tokens_are_tagged_too(backend):
    first = Pass((Rule((IsToken(BOUNDARY, 1),), Insert(("a",))),))
    second = Pass((Rule((TransformationApplied(Insert(("a",)), 0),), ReplaceAnyBy(("i",))),))
    program = Program((first, second))
    # The final "t" and its inserted "a" are both tagged Insert; the first "a" is not.
    assert run(backend, program, "a t") == "a i i"


def test_not_boundary(backend):
    program = one_pass(Rule((Not(IsToken(BOUNDARY, 1)),), Delete()))
    assert run(backend, program, "b a t") == "t"


def test_unknown_token_passes_through(backend):
    program = one_pass(Rule((Is("vowel", 0),), ReplaceAnyBy(("i",))))
    assert run(backend, program, "b a q a", alphabet=ALPHABET) == "b i q i"


def test_unknown_token_is_copied_back(backend):
    program = one_pass(Rule((IsToken(BOUNDARY, 1),), CopyInsert(0)))
    assert run(backend, program, "b a q", alphabet=ALPHABET) == "b a q q"


# ------------------------------------------------------------------ tier predicates

TIER_FEATURES = {
    "a": {"vowel": True},
    "i": {"vowel": True},
    "o": {"vowel": True, "long": True},
    "b": {"vowel": False},
    "t": {"vowel": False},
}
TIER_ALPHABET = ("a", "i", "o", "b", "t", "1", "0")


def tier_run(backend, program, word):
    return " ".join(run_with(backend, program, tuple(word.split()), TIER_FEATURES, TIER_ALPHABET))


def test_tier_last_vowel_gets_stress(backend):
    # The last vowel: a vowel with no vowel to its right, however many consonants follow.
    program = one_pass(
        Rule((Is("vowel", 0), TierIs("vowel", BOUNDARY, 1)), ReplaceAnyBy(("1",))),
        Rule((), ReplaceAnyBy(("0",))),
    )
    assert tier_run(backend, program, "b a t i t t") == "0 0 0 1 0 0"
    assert tier_run(backend, program, "t a") == "0 1"
    assert tier_run(backend, program, "t t") == "0 0"


def test_tier_first_and_second_vowel_to_the_left(backend):
    program = one_pass(
        Rule((Is("vowel", 0), TierIs("vowel", BOUNDARY, -1)), ReplaceAnyBy(("1",))),
        Rule((Is("vowel", 0), TierIs("vowel", BOUNDARY, -2)), ReplaceAnyBy(("0",))),
    )
    # First vowel -> 1; the second vowel (exactly one vowel to its left) -> 0.
    assert tier_run(backend, program, "b a t i b o a") == "b 1 t 0 b o a"


def test_tier_feature_of_next_vowel_and_negation(backend):
    program = one_pass(
        Rule((Is("vowel", 0), TierIs("vowel", "long", 1)), ReplaceAnyBy(("i",))),
        Rule((Not(Is("vowel", 0)), Not(TierIs("vowel", BOUNDARY, 1)), Not(TierIs("vowel", "long", 1))), Delete()),
    )
    # "a" before a long vowel (across consonants) -> "i"; a consonant with a short vowel
    # somewhere after it is deleted; one whose next vowel is long, or with none, stays.
    assert tier_run(backend, program, "a t b o t a b") == "i t b o a b"


def test_tier_at_start_position_and_with_offsets(backend):
    program = one_pass(
        # Prefix "t" when the word's first vowel is long.
        Rule((IsToken(BOUNDARY, 0), TierIs("vowel", "long", 1)), Insert(("t",))),
        Rule((IsToken("b", -1), TierIs("vowel", "long", -1)), ReplaceBy("a", ("i",))),
    )
    assert tier_run(backend, program, "b o b a") == "t b o b i"
    assert tier_run(backend, program, "b a b a") == "b a b a"


def test_tier_reads_unknown_tokens_as_off_tier(backend):
    program = one_pass(Rule((Is("vowel", 0), TierIs("vowel", BOUNDARY, 1)), ReplaceAnyBy(("1",))))
    assert tier_run(backend, program, "a q a q") == "a q 1 q"


def test_tier_predicates_agree_on_every_short_word():
    """Exhaustive agreement of the two backends on a program mixing tier predicates
    (both directions, both indices, negated, boundary) with offsets, on every word of
    up to 4 tokens, including an unseen one."""
    import itertools

    from fstsynth.compiler import compile_program
    from fstsynth.interpreter import run as interpret

    program = Program(
        (
            Pass(
                (
                    Rule(
                        (Is("vowel", 0), TierIs("vowel", BOUNDARY, 1), TierIs("vowel", "long", -1)),
                        ReplaceAnyBy(("1",)),
                    ),
                    Rule((Not(TierIs("vowel", BOUNDARY, -2)), IsToken("t", 0)), Delete()),
                    Rule((IsToken(BOUNDARY, 0), Not(TierIs("vowel", "long", 2))), Insert(("b",))),
                    Rule((Not(Is("vowel", 0)), TierIs("vowel", "long", 1), IsToken("a", -1)), CopyInsert(-1)),
                )
            ),
            Pass((Rule((TierIs("vowel", BOUNDARY, 1), Not(IsToken(BOUNDARY, 1))), Insert(("i",))),)),
        )
    )
    compiled = compile_program(program, TIER_ALPHABET, TIER_FEATURES)
    tables = compiled.tables()
    for n in range(5):
        for word in itertools.product(("a", "o", "t", "b", "q"), repeat=n):
            expected = interpret(program, compiled.map_unknown(word), TIER_FEATURES)
            assert compiled.apply(word) == expected, word
            assert tables.apply(word) == expected, word


# ------------------------------------------------------------------ the agreement property

#: What the short run of the property generated: constructs, words, cdrewrite comparisons.
generated: dict[str, collections.Counter] = {"constructs": collections.Counter(), "counts": collections.Counter()}


@settings(max_examples=150, derandomize=True, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(cases(words_per_case=16))
def test_every_backend_agrees_with_the_interpreter_on_random_programs(case: Case) -> None:
    """The one agreement property (`backends.check_backends`): every apply path gives
    the interpreter's output on random programs and words (unseen tokens, the empty word
    and one-token words included); one case in CDREWRITE_EVERY also through the
    cdrewrite oracle, its whole transducer compared with the compiled one where both are
    small (`check_cdrewrite`). `scripts/fuzz_equivalence` is the long run of the same."""
    mismatches = check_backends(case)
    counts = generated["counts"]
    if not mismatches and counts["cases"] % CDREWRITE_EVERY == 0:
        mismatches, _, compared = check_cdrewrite(case)
        counts["oracle"] += 1
        counts["compared"] += compared
    assert not mismatches, describe(case, mismatches)
    generated["constructs"].update(constructs_used(case.program))
    counts["cases"] += 1
    counts["words"] += len(case.words)


def test_the_property_reaches_every_construct_the_unseen_token_and_the_oracle() -> None:
    """The short run must exercise every predicate and transformation type, words with
    unseen tokens, and the oracle's whole-transducer comparison, or its agreement proves
    less than it seems to."""
    if not generated["counts"]["cases"]:
        test_every_backend_agrees_with_the_interpreter_on_random_programs()
    every = set(dsl.PREDICATE_TYPES) | set(dsl.TRANSFORMATION_TYPES)
    missing = every - set(generated["constructs"])
    assert not missing, f"never generated: {sorted(t.__name__ for t in missing)}"
    counts = generated["counts"]
    assert counts["words"] >= 1000, counts
    assert counts["compared"] >= counts["oracle"] // 2 and counts["oracle"] >= 20, counts
