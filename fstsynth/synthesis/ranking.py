"""The ranking score of rules: the cost of each predicate and transformation.

Public API:
    predicate_cost(pred, variant), transformation_cost(tr), rule_cost(rule, variant),
    program_cost(program, variant)
    constant_copy_cost(tr, token, variant), grows(tr), anchored(rule)
    TIER_COST, TIERS, TIER_INDICES, INCLUSIVE_TIER_INDICES, UNANCHORED_INSERT_COST,
    UNANCHORED_CHANGE_COST, AFFIX_SIDE_DISCOUNT

A lower cost is preferred (the paper's ranking score is its negation). The variant
sets what tokens and features cost: `token` prefers naming tokens, `feature` features,
and `nofeature` cannot use features at all.
"""

from __future__ import annotations

from fstsynth.features import DERIVED, is_harmonic_name
from fstsynth.dsl import (
    BOUNDARY,
    Agree,
    Delete,
    Identity,
    Insert,
    Is,
    IsToken,
    Not,
    Predicate,
    ReplaceAnyBy,
    ReplaceBy,
    Rule,
    SetFeatures,
    TierIs,
    Transformation,
    CopyInsert,
    CopyReplace,
    Program,
)
from fstsynth.rule_shape import shape_of
from fstsynth.types import Token

_TOKEN_COST = {"nofeature": 0.3, "token": 0.2, "feature": 0.6}
_FEATURE_COST = {"nofeature": float("inf"), "token": 0.6, "feature": 0.1}

TIER_COST = 1.3
#: Tiers that tier predicates look along (when the features define them), and how far.
TIERS = ("vowel",)
TIER_INDICES = (1, -1, 2, -2)
#: Features derived from IPA that tier tests read, with feature rules (vowel harmony),
#: and what such a test costs more than one of a feature the data gives.
TIER_DERIVED = ("ipa.back", "ipa.round", "ipa.hi", "ipa.lo")
DERIVED_TIER_COST = 0.3
#: What a test of, or an agreement with, a harmonic tier (`features.harmonic_tiers`: the
#: vowels of a harmony, the neutral ones skipped) costs more than the same on the vowel
#: tier: the nearest vowel is the simpler reading, and the harmonic one is taken where
#: the training rows show it (a back suffix after `i` that follows a back vowel). Where
#: they read alike, an `Agree` along the harmonic tier does nothing in a word of neutral
#: vowels only (Finnish `t i e`), which the vowel tier makes front. Small: ties only.
HARMONIC_TIER_COST = 0.02
#: Inclusive tier tests tried (counting the position itself: "the word's last vowel",
#: read at its last token where a suffix goes). To the right only the exclusive ones:
#: a prefix goes at the start position, from where they read the first vowel already.
INCLUSIVE_TIER_INDICES = (-1,)
#: An inclusive tier test costs this much less than the same test without the position:
#: where the two hold at the same examples (a consonant's, say), the inclusive one
#: reads "the last vowel of the word" at the word's end, which holds of words ending
#: in a vowel too.
INCLUSIVE_DISCOUNT = 0.05

# Insertions are mostly affixes: an insertion not anchored at a word edge is a priori
# unlikely, so it pays this much more than one that tests the boundary.
UNANCHORED_INSERT_COST = 2.0
#: What any other change that tests no word edge pays more, with `Options.edge_prior`
#: (a word and its inflected form): above the dearest edge test (a boundary two
#: positions away, 2.1), so that of two rules making the same changes, the anchored one
#: is taken. Only the edges where the pass inserts or deletes (its affixes) anchor a
#: change (`candidates.affix_edges`).
UNANCHORED_CHANGE_COST = 2.2
#: With the edge prior, a test of a change's context on the side of the pass's affix
#: edge costs this much less (of two contexts one row supports alike, `oː` -> `o`
#: "before r" rather than "after n"): a stem changes in a form because of what the
#: affix brings or takes away next to it, which lies between it and that edge (the `r`
#: made final as `-i s` goes); what lies on its other side the citation form has too.
#: Small enough (three tests at most) to decide ties of cost only.
AFFIX_SIDE_DISCOUNT = 0.01
#: What a neighbour test of a feature derived from IPA (`ipa.hi`) costs more than one of
#: a feature the data gives (`vowel`, `cons`, a features file's): where both hold at
#: the same examples, the class the data names is the simpler reading (English
#: flapping: every training flap follows a high vowel or a glide, and `ipa.hi` took the
#: place of `vowel`), and the derived one is taken where it tells the rows apart. Small
#: (three tests at most stay below the next step of cost): ties only.
DERIVED_IS_COST = 0.03


def predicate_cost(pred: Predicate, variant: str) -> float:
    if isinstance(pred, Not):
        return predicate_cost(pred.predicate, variant) + 0.3
    if isinstance(pred, TierIs):
        # Farther-reaching than a neighbour test: a little dearer, so local rules win ties.
        base = TIER_COST + 0.5 * (abs(pred.index) - 1) - (INCLUSIVE_DISCOUNT if pred.inclusive else 0.0)
        if pred.feature is not BOUNDARY and pred.feature.startswith(DERIVED):
            # A tier read in a feature the data did not give: where a test of a
            # neighbour fits as well, the neighbour's.
            base += DERIVED_TIER_COST
        if is_harmonic_name(pred.tier):
            base += HARMONIC_TIER_COST
        return base + (0.1 if pred.feature is BOUNDARY else _FEATURE_COST[variant])
    base = 1.0 + 0.5 * abs(pred.offset)
    if isinstance(pred, IsToken):
        return base + (0.1 if pred.token is BOUNDARY else _TOKEN_COST[variant])
    if isinstance(pred, Is):
        derived = DERIVED_IS_COST if pred.feature.startswith(DERIVED) else 0.0
        return base + _FEATURE_COST[variant] + derived
    return base + 0.2  # TransformationApplied


def transformation_cost(tr: Transformation) -> float:
    if isinstance(tr, Identity):
        return 0.5
    if isinstance(tr, Delete):
        return 1.0
    if isinstance(tr, ReplaceAnyBy):
        return 1.0 + 0.2 * len(tr.target)
    if isinstance(tr, ReplaceBy):
        return 1.3 + 0.2 * len(tr.target)
    if isinstance(tr, Insert):
        return 1.0 + 0.2 * len(tr.tokens)
    if isinstance(tr, SetFeatures):
        # Below `ReplaceBy` of one token: where both fit the same examples, the change
        # of features is the one that also holds of tokens not seen.
        return 1.2 + 0.1 * (len(tr.values) - 1)
    if isinstance(tr, Agree):
        reach = 0.3 * abs(tr.offset) + (0.3 if tr.tier is not None else 0.0)
        if tr.tier is not None and is_harmonic_name(tr.tier):
            reach += HARMONIC_TIER_COST
        return 1.0 + reach + 0.1 * (len(tr.features) - 1)
    return 1.0 + 0.3 * abs(tr.offset)  # CopyReplace, CopyInsert


def constant_copy_cost(tr: CopyReplace | CopyInsert, token: Token, variant: str) -> float:
    """What a copy pays more where every change it makes copies the same `token`: on
    that evidence it is the fixed change (`ReplaceBy`, `Insert` of `token`) under a test
    of `token` where the copy reads, and it pays that test. A copy says more than a
    fixed change (that whatever stands there is repeated), which only rows copying
    different tokens show; from rows that all copy one token the fixed change is the
    simpler hypothesis (Latin `h o n oː r` -> `h o n o r`: `oː` -> `o` before `r`, not
    "the vowel two back", which made `a m oː r` -> `a m a r`)."""
    return predicate_cost(IsToken(token, tr.offset), variant)


def anchored(rule: Rule) -> bool:
    """Does the rule test a word edge?"""
    return any(not test.negated for test in shape_of(rule).boundary_tests)


def grows(tr: Transformation) -> bool:
    """Does `tr` output more tokens than it reads (an insertion, in effect)?"""
    return isinstance(tr, (Insert, CopyInsert)) or (
        isinstance(tr, (ReplaceBy, ReplaceAnyBy)) and len(tr.target) > 1
    )


def rule_cost(rule: Rule, variant: str) -> float:
    cost = transformation_cost(rule.transformation) + sum(
        predicate_cost(p, variant) for p in rule.predicates
    )
    if grows(rule.transformation) and not anchored(rule):
        cost += UNANCHORED_INSERT_COST
    return cost


def program_cost(program: Program, variant: str) -> float:
    """The sum of the program's rule costs (`LearnResult.cost`)."""
    return sum(rule_cost(rule, variant) for pass_ in program.passes for rule in pass_.rules)
