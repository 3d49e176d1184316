"""Hand-written programs that together use every DSL construct.

The equivalence tests run each of them on both backends; `test_meta.py` checks that
this corpus covers every predicate and transformation type the DSL defines, so a new
construct cannot be added without being tested here.
"""

from __future__ import annotations

from fstsynth.dsl import (
    BOUNDARY,
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
    TransformationApplied,
)

FEATURES = {
    "a": {"vowel": True, "front": False},
    "e": {"vowel": True, "front": True},
    "i": {"vowel": True, "front": True},
    "u": {"vowel": True, "front": False},
    "p": {"vowel": False, "voice": False},
    "b": {"vowel": False, "voice": True},
    "t": {"vowel": False, "voice": False},
    "d": {"vowel": False, "voice": True},
    "s": {"vowel": False, "voice": False},
    "ŋ": {"vowel": False, "voice": True},
}
ALPHABET = tuple(sorted(FEATURES))

_h = ReplaceBy("s", ("h",))

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
}
