"""The random cases of `program_strategies.py` hold the words the agreement property
needs (the property itself, over every backend: tests/test_backends.py; its long run:
`scripts/fuzz_equivalence`), and the unseen-token path end to end (`PairModel.predict`
vs `PairModel.interpret`).
"""

from __future__ import annotations

from hypothesis import given, settings

from fstsynth.compiler import UNK
from fstsynth.learning import learn_model
from fstsynth.model import restore_unknown
from fstsynth.problem import Problem
from program_strategies import UNSEEN_TOKENS, Case, cases

@settings(max_examples=50, derandomize=True, deadline=None, database=None)
@given(cases())
def test_generated_words_include_boundary_and_unseen_cases(case: Case) -> None:
    assert () in case.words
    assert all((tok,) in case.words for tok in case.alphabet)
    assert any(tok in UNSEEN_TOKENS for word in case.words for tok in word)


# ------------------------------------------------------------------ unseen tokens


def test_unseen_tokens_through_a_learned_model() -> None:
    """Words with one or several kinds of unseen token: the transducer (with
    `restore_unknown`) and the interpreter (on the same mapped word) give one answer."""
    pairs = [("p a t", "p a t t"), ("d o g", "d o g g"), ("k a", "k a a"), ("t i", "t i i")]
    cells = tuple((tuple(s.split()), tuple(t.split())) for s, t in pairs)
    problem = Problem("redup", ("s", "t"), cells, (), directed=True)
    model = learn_model(problem)
    pm = model.pair()
    words = [("q",), ("p", "q"), ("q", "ʔ"), ("ʔ", "a", "q"), ("q", "q", "ʔ"), (), ("<unk>", "q")]
    for word in words:
        assert pm.predict(word) == pm.interpret(word, model.features), word
    # The last token is copied: an unseen last token comes back, twice.
    assert pm.predict(("p", "a", "q")) == ("p", "a", "q", "q")
    # IPA segments the model never saw are read by their features (the model's come from
    # IPA): the last one is copied as any token.
    assert pm.predict(("q", "ʔ")) == ("q", "ʔ", "ʔ")
    # Two kinds of unseen token with no features, and a different number of <unk> out
    # than in: which is which cannot be known from the transducer's output, so <unk> is
    # printed (README).
    assert pm.predict(("☃", "★")) == (UNK, UNK, UNK)


def test_restore_unknown_rules() -> None:
    mapped = (UNK, "a", UNK)
    # One kind of unseen token: every <unk> in the output is that token.
    assert restore_unknown(("q", "a", "q"), mapped, (UNK, UNK, "a")) == ("q", "q", "a")
    # Several kinds, as many <unk> as in the input: put back in order.
    assert restore_unknown(("q", "a", "ʔ"), mapped, ("a", UNK, UNK)) == ("a", "q", "ʔ")
    # Several kinds, a different count: ambiguous, left as <unk>.
    assert restore_unknown(("q", "a", "ʔ"), mapped, (UNK,)) == (UNK,)
