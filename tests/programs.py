"""Hand-written programs that together use every DSL construct.

The equivalence tests run each of them on both backends; `test_meta.py` checks that
this corpus covers every predicate and transformation type the DSL defines, so a new
construct cannot be added without being tested here.
"""

from __future__ import annotations

from fstsynth.dsl import (
    BOUNDARY,
    Agree,
    CopyInsert,
    CopyReplace,
    Delete,
    Identity,
    Insert,
    Is,
    IsToken,
    TierIs,
    Not,
    Pass,
    Program,
    ReplaceAnyBy,
    ReplaceBy,
    Rule,
    SetFeatures,
    TransformationApplied,
)

# Height and place give every token its own bundle, so that `SetFeatures` and `Agree`
# map tokens to tokens (b -> p by [-voice], a -> e by [+front]); ŋ has no voiceless
# counterpart, so [-voice] does not apply to it.
FEATURES = {
    "a": {"vowel": True, "front": False},
    "e": {"vowel": True, "front": True},
    "i": {"vowel": True, "front": True, "high": True},
    "u": {"vowel": True, "front": False, "high": True},
    "p": {"vowel": False, "voice": False, "lab": True},
    "b": {"vowel": False, "voice": True, "lab": True},
    "t": {"vowel": False, "voice": False, "cor": True},
    "d": {"vowel": False, "voice": True, "cor": True},
    "s": {"vowel": False, "voice": False, "cor": True, "cont": True},
    "ŋ": {"vowel": False, "voice": True, "nas": True},
}
ALPHABET = tuple(sorted(FEATURES))

_h = ReplaceBy("s", ("h",))
_devoice = SetFeatures.of({"voice": False})

PROGRAMS: dict[str, Program] = {
    "suffix-by-voicing": Program(
        (
            Pass(
                (
                    Rule((IsToken(BOUNDARY, 1), Is("voice", 0)), Insert(("d",))),
                    Rule((IsToken(BOUNDARY, 1), Not(Is("vowel", 0))), Insert(("t",))),
                    Rule((IsToken(BOUNDARY, 1),), Insert(("t", "a"))),
                )
            ),
        )
    ),
    "prefix-and-assimilation": Program(
        (
            Pass(
                (
                    Rule((IsToken(BOUNDARY, 0), IsToken("p", 1)), Insert(("a", "ŋ"))),
                    Rule((IsToken(BOUNDARY, 0),), CopyInsert(1)),
                    Rule((IsToken("ŋ", 0), Is("voice", 1)), CopyReplace(1)),
                )
            ),
        )
    ),
    "harmony-and-deletion": Program(
        (
            Pass(
                (
                    Rule((Is("front", -2), Is("vowel", 0)), ReplaceAnyBy(("e",))),
                    Rule((IsToken("a", -1), IsToken("a", 0)), Delete()),
                    Rule((Not(IsToken(BOUNDARY, -1)), IsToken("t", 0), Is("vowel", 1)), ReplaceBy("t", ("d",))),
                    Rule((IsToken("u", 0),), Identity()),
                    Rule((Is("vowel", 0), IsToken(BOUNDARY, 2)), ReplaceAnyBy(("i", "u"))),
                )
            ),
        )
    ),
    "two-passes-with-tags": Program(
        (
            Pass((Rule((), _h), Rule((IsToken(BOUNDARY, 1),), Insert(("a",))))),
            Pass(
                (
                    # A tag is the whole transformation: pass 1 made "a" with Insert(a),
                    # never with Insert(u) or ReplaceBy(t, h), so these two never fire.
                    Rule((TransformationApplied(Insert(("u",)), 0),), Delete()),
                    Rule((TransformationApplied(ReplaceBy("t", ("h",)), 0),), Delete()),
                    Rule((TransformationApplied(_h, 1),), Insert(("s",))),
                    Rule((Not(TransformationApplied(Identity(), 0)), IsToken("a", 0)), ReplaceAnyBy(("u",))),
                    Rule((TransformationApplied(Insert(("a",)), 0), Not(IsToken("a", 0))), CopyInsert(-1)),
                )
            ),
        )
    ),
    "gemination-and-copies": Program(
        (
            Pass(
                (
                    Rule((Is("voice", 0), Is("vowel", -1), Not(Is("vowel", 0))), CopyInsert(0)),
                    Rule((IsToken("e", 0),), CopyReplace(-2)),
                    Rule((IsToken("i", 0),), CopyReplace(2)),
                )
            ),
            Pass((Rule((IsToken("b", 0), IsToken("b", 1)), Delete()),)),
        )
    ),
    "stress-and-harmony-on-tiers": Program(
        (
            Pass(
                (
                    Rule((Is("vowel", 0), TierIs("vowel", BOUNDARY, 1)), ReplaceAnyBy(("1",))),
                    Rule((Is("vowel", 0), TierIs("vowel", "front", -1)), ReplaceAnyBy(("e",))),
                    Rule((Not(Is("vowel", 0)), Not(TierIs("voice", BOUNDARY, -2))), Delete()),
                )
            ),
        )
    ),
    "features-set-agree-and-inclusive-tiers": Program(
        (
            Pass(
                (
                    Rule((Not(Is("vowel", 0)), IsToken(BOUNDARY, 1)), _devoice),  # final devoicing
                    Rule((Not(Is("vowel", 0)), Not(Is("vowel", 1))), Agree(("voice",), 1)),
                    Rule((Is("vowel", 0),), Agree(("front",), -1, "vowel")),  # harmony
                    Rule((IsToken("a", 0),), Agree(("front", "high"), 2, "vowel")),
                )
            ),
            Pass(
                (
                    Rule((TransformationApplied(_devoice, 0), Is("lab", 0)), Insert(("s",))),
                    # "the last vowel of the word", counting the last token itself
                    Rule((IsToken(BOUNDARY, 1), TierIs("vowel", "front", -1, True)), Insert(("i",))),
                    Rule((IsToken(BOUNDARY, 1), Not(TierIs("vowel", "high", -2, True))), Insert(("u",))),
                    Rule((Is("vowel", 0), TierIs("vowel", BOUNDARY, 2, True)), Agree(("high",), -1)),
                    Rule((TierIs("vowel", BOUNDARY, 1, True), Not(TierIs("vowel", BOUNDARY, -1, True))), Delete()),
                )
            ),
        )
    ),
}

