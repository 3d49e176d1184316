"""The compiler's pass construction (`fstsynth.bimachine`, `fstsynth.compiler`) in
detail: the rule-mask layout, the counts a compiled pass reports, passes of more rules
than one mask word holds, and the stages' agreement with the interpreter on every short
word for programs that use each construct at the edges of the word. Written for the
mutation tests of these modules (`scripts/mutation_test fstsynth/bimachine.py
fstsynth/compiler.py`); each check is one a wrong construction fails."""

from __future__ import annotations

import itertools

import numpy as np
import pynini
import pytest

from fstsynth.bimachine import from_words, group_rows, lowest_rule, mask_words, to_words
from fstsynth.compiler import Error as CompilerError
from fstsynth.compiler import (
    CompositionTooLargeError,
    Transducers,
    compile_program,
    compose_passes,
    fst_from_arcs,
    transduce,
)
from fstsynth.dsl import (
    BOUNDARY,
    CopyInsert,
    CopyReplace,
    Delete,
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
from fstsynth.interpreter import run
from fstsynth.random_programs import ALPHABET, FEATURES


@pytest.mark.parametrize("rules, words", [(1, 1), (63, 1), (64, 1), (65, 2), (128, 2), (129, 3)])
def test_masks_are_words_of_64_rules(rules, words):
    """Rule r is bit r % 64 of word r // 64 (the documented layout of the saved tables)."""
    assert mask_words(rules) == words
    masks = [1 << r for r in range(rules)] + [0, (1 << rules) - 1]
    rows = to_words(masks, rules)
    assert rows.shape == (rules + 2, words) and rows.dtype == np.uint64
    for r in range(rules):
        assert int(rows[r, r // 64]) == 1 << (r % 64)
        assert int(rows[r].sum()) == 1 << (r % 64)
    assert [from_words(row) for row in rows] == masks
    assert [lowest_rule(m, rules) for m in masks[:rules]] == list(range(rules))
    assert lowest_rule(0, rules) == rules  # no rule fired
    assert lowest_rule((1 << rules) - 1, rules) == 0
    assert lowest_rule(0b10100, rules) == 2


@pytest.mark.parametrize("rows", [0, 1, 7, 4096, 4097, 9000])
@pytest.mark.parametrize("width", [0, 1, 3])
def test_group_rows_numbers_rows_in_order_of_first_appearance(rows, width):
    """Both of group_rows' ways (a dictionary; numpy's sort from 4,097 rows on) give what
    a plain loop gives: the decider and the annotations depend on it."""
    rng = np.random.default_rng(rows * 10 + width)
    matrix = rng.integers(-2, 3, size=(rows, width)) if width else np.zeros((rows, 0), dtype=np.int64)
    matrix[:, :1] = rng.integers(0, 2, size=(rows, min(width, 1)))  # few distinct rows
    numbers, firsts = group_rows(matrix)
    seen: dict[tuple, int] = {}
    expected = [seen.setdefault(tuple(row), len(seen)) for row in matrix.tolist()]
    assert numbers.tolist() == expected
    assert firsts == [expected.index(n) for n in range(len(seen))]
    if rows > 4096:  # the numpy way agrees with the dictionary way on the same rows
        head_numbers, head_firsts = group_rows(matrix[:4096])
        assert head_numbers.tolist() == expected[:4096]
        assert head_firsts == [f for f in firsts if f < 4096]


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint8, np.uint64])
@pytest.mark.parametrize("wide", [False, True])
def test_group_rows_past_4096_rows_agrees_with_a_loop_whatever_the_values(dtype, wide):
    """Past 4,096 rows a row is sorted as one mixed-radix integer where its columns'
    ranges allow, else as its bytes (mask words use all 64 bits): both agree with a loop."""
    rng = np.random.default_rng(3)
    matrix = rng.integers(0, 4, size=(6000, 5)).astype(dtype)
    if wide and dtype == np.uint64:
        matrix[::3, 2] |= np.uint64(1 << 63)  # spans past 2**62: the bytes
    elif wide:
        matrix[::3, 2] = np.iinfo(dtype).max  # a column's range as wide as its type
        matrix[1::3, 2] = np.iinfo(dtype).min
    numbers, firsts = group_rows(matrix)
    seen: dict[tuple, int] = {}
    expected = [seen.setdefault(tuple(row), len(seen)) for row in matrix.tolist()]
    assert numbers.tolist() == expected
    assert firsts == [expected.index(n) for n in range(len(seen))]


def _every_short_word(alphabet, longest=3):
    return [w for n in range(longest + 1) for w in itertools.product(alphabet, repeat=n)]


def _agree(program, alphabet=ALPHABET, longest=3, extra=("q",)):
    """Transducers, tables and interpreter give the same output on every word up to
    `longest` tokens (with a token never seen)."""
    compiled = compile_program(program, alphabet, FEATURES)
    tables = compiled.tables()
    words = _every_short_word((*alphabet, *extra), longest)
    expected = [run(program, compiled.map_unknown(w), FEATURES) for w in words]
    for word, wanted in zip(words, expected):
        assert compiled.apply(word) == wanted, (str(program), word)
        assert tables.apply(word) == wanted, (str(program), word)
    assert tables.apply_many(words) == expected
    assert sum(w != out for w, out in zip(words, expected)) > len(words) // 10  # the program does change words
    return compiled


def test_a_pass_of_more_rules_than_a_mask_word_holds():
    """70 rules, the first that fires wins: masks of two words, rules on both sides of
    the word boundary of the mask (63, 64, 65) deciding."""
    tokens = ALPHABET[:6]
    rules = []
    for left, right in itertools.product(tokens, repeat=2):
        rules.append(Rule((IsToken(left, -1), IsToken(right, 1)), ReplaceAnyBy((left, right))))
    rules = rules[:34]
    for left in tokens:
        for center in tokens:
            rules.append(Rule((IsToken(left, -1),), ReplaceBy(center, (left,))))
    rules = rules[:70]
    assert len(rules) == 70
    program = Program((Pass(tuple(rules)),))
    compiled = _agree(program, alphabet=tokens, longest=3, extra=())
    (machine,) = compiled.machines
    assert machine.rules == 70 and machine.tables.left_mask.numpy().shape[1] == 2


def test_a_compiled_pass_reports_its_rules_classes_and_direction():
    looks_left = Program((Pass((
        Rule((IsToken("t", -1),), ReplaceBy("a", ("i",))),
        Rule((Is("voice", -1),), Delete()),
    )),))
    looks_right = Program((Pass((Rule((TierIs("vowel", None, 1),), ReplaceBy("a", ("i",))),)),))
    left = compile_program(looks_left, ALPHABET, FEATURES).machines[0]
    right = compile_program(looks_right, ALPHABET, FEATURES).machines[0]
    assert (left.rules, right.rules) == (2, 1)
    assert not left.looks_right and right.looks_right
    for machine in (left, right):
        classes = machine.tables.symbol_class.numpy()
        assert machine.classes == int(classes.max()) + 1 == machine.tables.class_mask.shape[0]
        assert machine.classes >= 2  # `a` is told apart from the rest


EDGE_PROGRAMS = {
    "insert-at-start-and-end": Program((Pass((
        Rule((IsToken(BOUNDARY, -1),), Insert(("p",))),
        Rule((IsToken(BOUNDARY, 1), Is("vowel", 0)), CopyInsert(0)),
    )),)),
    "copies-from-both-sides": Program((Pass((
        Rule((IsToken(BOUNDARY, -2), IsToken("a", 0)), CopyReplace(1)),
        Rule((Is("vowel", 0), Not(IsToken(BOUNDARY, 2))), CopyReplace(2)),
        Rule((IsToken("t", 0),), CopyReplace(-1)),
        Rule((IsToken(BOUNDARY, 0),), CopyInsert(1)),
    )),)),
    "tiers-both-ways-and-boundaries": Program((Pass((
        Rule((TierIs("vowel", BOUNDARY, -1), Is("vowel", 0)), ReplaceAnyBy(("u",))),
        Rule((Not(TierIs("vowel", "voice", 2)), IsToken("i", 0)), Delete()),
        Rule((TierIs("vowel", BOUNDARY, 1), IsToken("k", 0)), ReplaceBy("k", ("k", "a"))),
    )),)),
    # A copy of the token itself fires at the start position too, where there is no
    # token: it writes nothing there (looking right of the position or not).
    "copy-of-the-token-itself-everywhere": Program((Pass((Rule((), CopyInsert(0)),)),)),
    "copy-of-the-token-itself-before-an-a": Program((Pass((Rule((IsToken("a", 1),), CopyInsert(0)),)),)),
    "tags-read-by-the-next-pass-on-either-side": Program((
        Pass((
            Rule((IsToken("t", 1),), ReplaceBy("a", ("i",))),
            Rule((IsToken(BOUNDARY, 1),), ReplaceAnyBy(("u",))),
        )),
        Pass((
            Rule((TransformationApplied(ReplaceBy("a", ("i",)), 1),), Delete()),
            Rule((TransformationApplied(ReplaceAnyBy(("u",)), -1),), Insert(("p",))),
            Rule((TransformationApplied(ReplaceBy("a", ("i",)), 0),), CopyReplace(-1)),
        )),
    )),
}


#: Enough tokens for every test above to hold and fail (vowels, voiced and voiceless
#: consonants), few enough for every word of up to 3 tokens (and `q`, never seen).
EDGE_ALPHABET = ("a", "i", "u", "t", "k", "b")


@pytest.mark.parametrize("name", sorted(EDGE_PROGRAMS))
def test_constructs_at_the_edges_of_the_word_agree_on_every_short_word(name):
    program = EDGE_PROGRAMS[name]
    compiled = _agree(program, alphabet=EDGE_ALPHABET, longest=3)
    # One transducer per pass (its stages composed: what exports write), and the whole
    # program composed, give the same outputs.
    trans = compiled.transducers
    # Every state of every stage is on some accepted path: a dead state would be
    # carried into every model file and export for nothing.
    for k, stage in enumerate(trans.stages):
        assert stage.copy().connect().num_states() == stage.num_states(), (name, k)
    per_pass = trans.pass_transducers()
    assert len(per_pass) == len(program.passes)
    with pytest.raises(CompilerError, match="no pass"):
        trans.pass_transducer(len(program.passes) + 1)
    whole = trans.composed()
    labels, names = trans.labels, {label: tok for tok, label in trans.labels.items()}
    every_name = {label: name for label, name in trans.symbols}
    every_label = {name: label for label, name in every_name.items()}
    for word in _every_short_word((*EDGE_ALPHABET, "q"), 3):
        mapped = compiled.map_unknown(word)
        expected = run(program, mapped, FEATURES)
        assert transduce(whole, labels, names, mapped) == expected, (name, word)
        between = mapped  # what flows between passes: tokens, tagged where a pass tests tags
        for fst in per_pass:
            between = transduce(fst, every_label, every_name, between)
        assert between == expected, (name, word)


def test_compiled_programs_are_frozen_records():
    """A compiled program, its transducers and its machines are shared (a model's pairs,
    worker processes): none can be changed after compiling. The compiled program and its
    transducers hold FSTs, which cannot be hashed: they are compared and hashed by
    identity, so that they can still be kept in sets and cache keys."""
    import dataclasses

    compiled = compile_program(EDGE_PROGRAMS["copy-of-the-token-itself-everywhere"], EDGE_ALPHABET, FEATURES)
    for record, field in ((compiled, "tokens"), (compiled.transducers, "tokens"), (compiled.machines[0], "tokens")):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(record, field, ())
    again = compile_program(EDGE_PROGRAMS["copy-of-the-token-itself-everywhere"], EDGE_ALPHABET, FEATURES)
    assert len({compiled, compiled.transducers, again, again.transducers}) == 4


@pytest.mark.parametrize("name", sorted(EDGE_PROGRAMS))
def test_a_decider_built_block_by_block_is_the_same_transducer(name, monkeypatch):
    """A pass too big to decide at once (`compiler.DECIDER_BLOCK_CELLS` mask words) is
    decided a few read symbols at a time: down to one symbol per block, the stages are
    the same transducers (up to the numbering of the output chains' states, which
    follows the order outputs are first met)."""
    import fstsynth.compiler as compiler_module

    program = EDGE_PROGRAMS[name]
    whole = compile_program(program, EDGE_ALPHABET, FEATURES).transducers.stages
    monkeypatch.setattr(compiler_module, "DECIDER_BLOCK_CELLS", 1)
    by_symbol = compile_program(program, EDGE_ALPHABET, FEATURES).transducers.stages
    assert len(by_symbol) == len(whole)
    for k, (one, other) in enumerate(zip(whole, by_symbol)):
        assert pynini.isomorphic(one, other), (name, k)


def test_the_empty_program_is_the_identity_on_every_token():
    compiled = compile_program(Program(()), EDGE_ALPHABET, FEATURES)
    assert len(compiled.transducers.stages) == 1 and compiled.machines == ()
    for word in _every_short_word((*EDGE_ALPHABET, "q"), 2):
        mapped = compiled.map_unknown(word)
        assert compiled.apply(word) == mapped == run(Program(()), mapped, FEATURES)
        assert compiled.tables().apply(word) == mapped


def test_compiling_reports_each_pass_and_the_rules_done():
    """What the console's progress line shows while a program compiles: before each pass
    its number (1-based) and the rules finished so far, then all rules done."""
    from fstsynth.progress import Step, listening

    program = EDGE_PROGRAMS["tags-read-by-the-next-pass-on-either-side"]  # two passes, 2 + 3 rules
    seen: list[Step] = []
    with listening(seen.append):
        compile_program(program, EDGE_ALPHABET, FEATURES)
    assert [s for s in seen if s.stage == "compiling rule"] == [
        Step("compiling rule", 0, 5, "pass 1"), Step("compiling rule", 2, 5, "pass 2"),
        Step("compiling rule", 5, 5, "done"),
    ]


def _a_to_b(chain: int, extra: int):
    """Two transducers whose composition maps a^(chain-1) to b^(chain-1): a chain of
    `chain` states copying `a`, and a one-state loop a:b with `extra` more states that
    no path reaches (they count towards the size bound all the same)."""
    import pynini

    first = fst_from_arcs(chain, 0, [chain - 1], np.arange(chain - 1), np.full(chain - 1, 1),
                          np.full(chain - 1, 1), np.arange(1, chain))
    second = fst_from_arcs(extra + 1, 0, [0], np.array([0]), np.array([1]), np.array([2]), np.array([0]))
    symbols = pynini.SymbolTable()
    for label, name in enumerate(("<eps>", "a", "b")):
        symbols.add_symbol(name, label)
    return first, second, symbols


@pytest.mark.parametrize("chain, extra, built", [
    (2000, 2499, True),  # 2,000 x 2,500 = 5,000,000 states at most: at the limit, built
    (141, 35460, False),  # 141 x 35,461 = 5,000,001: over it, refused with the figures
])
def test_compositions_are_refused_exactly_past_the_documented_bound(chain, extra, built):
    """README/compiler: passes (and one pass's stages) whose state counts multiply past
    5,000,000 are not composed (CompositionTooLargeError); up to it they are."""
    first, second, symbols = _a_to_b(chain, extra)
    labels, names = {"a": 1, "b": 2}, {1: "a", 2: "b"}
    word = ("a",) * (chain - 1)
    one_pass = Transducers((first, second), (1, 1), symbols, ("a", "b"))
    if built:
        assert transduce(compose_passes([first, second], symbols), labels, names, word) == ("b",) * (chain - 1)
        assert transduce(one_pass.pass_transducer(1), labels, names, word) == ("b",) * (chain - 1)
    else:
        with pytest.raises(CompositionTooLargeError, match="5,000,001 states, more than the 5,000,000"):
            compose_passes([first, second], symbols)
        with pytest.raises(CompositionTooLargeError, match="5,000,001 states, more than the 5,000,000"):
            one_pass.pass_transducer(1)


def test_a_compiled_program_says_how_long_compiling_took():
    """`Compiled.seconds` (public): the time compile_program took, within the time
    measured around the call."""
    import time

    began = time.perf_counter()
    compiled = compile_program(EDGE_PROGRAMS["copies-from-both-sides"], EDGE_ALPHABET, FEATURES)
    elapsed = time.perf_counter() - began
    assert 0 < compiled.seconds <= elapsed


def test_annotated_symbols_are_named_after_their_pass():
    """The symbols between a pass's two stages (shown in exported symbol files) carry
    the pass's number, 1-based like `stage_pass`: `a<p2:0.1>`, `<s><p2:0>`."""
    program = Program((
        Pass((Rule((IsToken("t", 1),), ReplaceBy("a", ("i",))),)),
        Pass((Rule((IsToken(BOUNDARY, 1),), Delete()),)),
    ))
    trans = compile_program(program, EDGE_ALPHABET, FEATURES).transducers
    assert trans.stage_pass == (1, 1, 2, 2)  # both passes look right: annotator, decider
    names = dict(trans.symbols)
    for k in (0, 2):
        annotator, number = trans.stages[k], trans.stage_pass[k]
        written = {names[arc.olabel] for state in annotator.states() for arc in annotator.arcs(state) if arc.olabel}
        assert written and all(f"<p{number}:" in name for name in written), (number, sorted(written)[:5])
        assert any(name.startswith(f"<s><p{number}:") for name in written)


def test_arc_counts_and_the_token_symbol_table():
    """arc_count (public) counts every arc of every state; token_symbols is the table a
    user's words are written in: epsilon and the word tokens, with the labels the
    transducers use, and nothing internal."""
    from fstsynth.transducers import arc_count

    first, second, _ = _a_to_b(7, 3)
    assert (arc_count(first), arc_count(second)) == (6, 1)
    trans = compile_program(EDGE_PROGRAMS["tags-read-by-the-next-pass-on-either-side"], EDGE_ALPHABET,
                            FEATURES).transducers
    for stage in trans.stages:
        assert arc_count(stage) == sum(1 for state in stage.states() for _ in stage.arcs(state)) > 0
    table = trans.token_symbols()
    assert dict(table) == {0: "<eps>", **{label: tok for tok, label in trans.labels.items()}}
    # The alphabet, the token the program inserts, UNK; the annotated symbols are not in it.
    assert set(trans.tokens) == set(EDGE_ALPHABET) | {"p", "<unk>"} and len(dict(trans.symbols)) > len(dict(table))


def test_many_one_state_passes_are_composed():
    """The size bound counts a pass of one state as one: a cascade of 24 one-state
    passes (2**24 > 5,000,000 were each counted as two) is composed."""
    import pynini

    symbols = pynini.SymbolTable()
    for label, name in enumerate(("<eps>", "a", "b")):
        symbols.add_symbol(name, label)
    a_to_b = fst_from_arcs(1, 0, [0], np.array([0]), np.array([1]), np.array([2]), np.array([0]))
    b_to_b = fst_from_arcs(1, 0, [0], np.array([0]), np.array([2]), np.array([2]), np.array([0]))
    cascade = compose_passes([a_to_b] + [b_to_b] * 23, symbols)
    assert transduce(cascade, {"a": 1, "b": 2}, {1: "a", 2: "b"}, ("a", "a", "a")) == ("b", "b", "b")


def test_a_pass_states_bound_bounds_its_composed_transducer():
    """pass_states_bound(k) (what the report checks before composing a pass) is the
    product of pass k's stages' states, so at least the states of its composition."""
    import math

    program = EDGE_PROGRAMS["tags-read-by-the-next-pass-on-either-side"]
    trans = compile_program(program, EDGE_ALPHABET, FEATURES).transducers
    for k in sorted(set(trans.stage_pass)):
        stages = [fst.num_states() for fst, p in zip(trans.stages, trans.stage_pass) if p == k]
        bound = trans.pass_states_bound(k)
        assert bound == math.prod(stages) >= trans.pass_transducer(k).num_states() > 0, (k, stages)
