"""The Pynini grammar export (`export --format pynini`) and the cdrewrite oracle.

The grammar builds every pass from the rules' shapes with `pynini.cdrewrite` (one per
rule, first-match-wins by marking), sharing nothing with the bimachine: its outputs are
checked against the interpreter's, and its transducers against the compiled ones with
`same_function` (exact), on the hand-written corpus, on random programs and on every
dev-split model. `tests/test_backends.py` runs every behavioural case on it too
(backend "cdrewrite").
"""

from __future__ import annotations

import ast
import itertools
import math
import os
import subprocess
import sys

import pynini
import pytest
from pynini.lib import rewrite

from backends import (
    SAME_FUNCTION_MAX_STATES,
    cdrewrite_grammar,
    check_pynini_export,
    same_function,
)
from conftest import DATA, ROOT, benchmark_problems, needs_benchmark
from exporters.export import export_model
from exporters.pynini_grammar import GrammarPair, grammar_source, load_grammar
from fstsynth.compiler import compile_program
from fstsynth.dsl import Pass, Program
from fstsynth.interpreter import run
from programs import ALPHABET, FEATURES, PROGRAMS

#: What a grammar may import: Pynini and the standard library.
ALLOWED_IMPORTS = {"pynini", "os", "sys", "tempfile", "dataclasses", "typing"}


def _freeze(features):
    return tuple(sorted((t, tuple(sorted(f.items()))) for t, f in features.items()))


@pytest.fixture(scope="module")
def plural_model(tmp_path_factory):
    from fstsynth.learning import learn_model
    from fstsynth.model_file import save_model
    from fstsynth.problem import load_features, load_problem, with_features
    from fstsynth.synthesis import Options

    problem = with_features(load_problem(DATA / "plural.tsv"), load_features(DATA / "plural-features.json"), "")
    directory = tmp_path_factory.mktemp("plural") / "model"
    model = learn_model(problem, Options(variant="feature"))  # the README's 3 rules, sooner than `auto`
    save_model(model, directory)
    return model, directory


def _bare_env() -> dict[str, str]:
    """The environment of a user who has Pynini but not fstsynth on the path."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


# ------------------------------------------------------------------ the module


def test_grammar_imports_only_pynini_and_prints_every_rule():
    program = PROGRAMS["two-passes-with-tags"]
    compiled = compile_program(program, ALPHABET, FEATURES)
    source = grammar_source([GrammarPair("pair-0-1", "tags", program)], compiled.tokens, FEATURES, "corpus")
    tree = ast.parse(source)
    nodes = list(ast.walk(tree))
    imported = {alias.name.split(".")[0] for node in nodes if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module.split(".")[0] for node in nodes if isinstance(node, ast.ImportFrom) and node.module}
    assert imported <= ALLOWED_IMPORTS, imported - ALLOWED_IMPORTS
    # One `rule(...)` call per DSL rule, each below its DSL form.
    calls = [line for line in source.splitlines() if line.lstrip().startswith(("pass1.rule(", "pass2.rule("))]
    assert len(calls) == program.rule_count
    for pass_ in program.passes:
        for rule in pass_.rules:
            assert f"#   {rule}" in source
    assert "made_by(Insert(['a']))" in source and "~made_by(Identity())" in source


def test_tokens_keep_the_labels_of_the_models_symbol_table(plural_model, tmp_path):
    model, directory = plural_model
    grammar_py = tmp_path / "plural.py"
    export_model(model, "pynini", grammar_py)
    grammar = load_grammar(grammar_py.read_text(encoding="utf-8"))
    fst = grammar.cascade(grammar.PAIRS["pair-0-1"](), grammar.TOKENS, grammar.CLASSES)
    theirs = pynini.SymbolTable.read_text(str(directory / "symbols.txt"))
    assert dict(fst.input_symbols()) == dict(theirs) == dict(fst.output_symbols())


# ------------------------------------------------------------------ the oracle: hand-written programs


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_cdrewrite_agrees_with_the_interpreter_and_the_compiled_transducer(name):
    program = PROGRAMS[name]
    compiled = compile_program(program, ALPHABET, FEATURES)
    grammar, _, fst = cdrewrite_grammar(program, compiled.tokens, _freeze(FEATURES))
    for word in (w for n in range(4) for w in itertools.product((*ALPHABET, "q"), repeat=n)):
        mapped = compiled.map_unknown(word)
        assert tuple(grammar.rewrite(fst, list(mapped))) == run(program, mapped, FEATURES), (name, word)
    assert same_function(fst, compiled.transducers.composed())


def test_same_function_tells_programs_apart():
    """The exact comparison can fail: each corpus program without its last rule is
    another function (on this corpus), and `same_function` says so."""
    for name, program in PROGRAMS.items():
        last = program.passes[-1]
        shorter = Program((*program.passes[:-1], Pass(last.rules[:-1])))
        compiled = compile_program(program, ALPHABET, FEATURES)
        _, _, fst = cdrewrite_grammar(program, compiled.tokens, _freeze(FEATURES))
        other = compile_program(shorter, compiled.tokens, FEATURES).transducers.composed()
        assert not same_function(fst, other), name


# ------------------------------------------------------------------ the export, as a user runs it


def test_export_runs_as_a_script_and_gives_applys_outputs(plural_model, tmp_path):
    model, directory = plural_model
    grammar_py, far_path = tmp_path / "plural.py", tmp_path / "plural.far"
    done = subprocess.run(
        [sys.executable, "-m", "fstsynth", "export", str(directory), "--format", "pynini", "-o", str(grammar_py)],
        capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    assert done.returncode == 0, done.stderr
    done = subprocess.run([sys.executable, str(grammar_py), str(far_path)], capture_output=True, text=True,
                          env=_bare_env(), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    far = pynini.Far(str(far_path), mode="r")
    assert far.get_key() == "pair-0-1"
    fst = far.get_fst()
    far.next()
    assert far.done()
    table = fst.input_symbols()
    assert table is not None and fst.output_symbols() is not None
    pm = model.pair()
    words = [tuple(line.split()) for line in (DATA / "plural-words.txt").read_text(encoding="utf-8").splitlines()]
    grammar = load_grammar(grammar_py.read_text(encoding="utf-8"))
    for word in words:
        expected = pm.predict(word)
        assert tuple(grammar.rewrite(fst, list(word))) == expected, word
        if all(table.member(t) for t in word):  # the README's way, for known tokens
            assert rewrite.top_rewrite(" ".join(word), fst, table, table) == " ".join(expected)


def test_unseen_tokens_are_read_as_unk_and_put_back(plural_model, tmp_path):
    """As documented in the grammar and the README: the transducer has no arc for a
    token outside its table; `<unk>` stands for it, and the grammar's `rewrite` maps
    unseen tokens to `<unk>` and puts them back where they are kept, as `apply` does."""
    model, _ = plural_model
    grammar_py = tmp_path / "plural.py"
    export_model(model, "pynini", grammar_py)
    grammar = load_grammar(grammar_py.read_text(encoding="utf-8"))
    fst = grammar.cascade(grammar.PAIRS["pair-0-1"](), grammar.TOKENS, grammar.CLASSES)
    table = fst.input_symbols()
    assert not table.member("ʘ")
    with pytest.raises(pynini.FstStringCompilationError):
        pynini.accep("p ʘ", token_type=table)
    pm = model.pair()
    for word in [("ʘ",), ("p", "ɪ", "ʘ"), ("ʘ", "q"), ("q", "a", "ʔ"), ("<unk>", "q")]:
        assert tuple(grammar.rewrite(fst, list(word))) == pm.predict(word), word
    unk = pm.predict(("p", "ɪ", "<unk>"))
    assert rewrite.top_rewrite("p ɪ <unk>", fst, table, table) == " ".join(unk)


def test_passes_are_written_one_by_one_on_request(tmp_path):
    program = PROGRAMS["gemination-and-copies"]
    compiled = compile_program(program, ALPHABET, FEATURES)
    grammar_py, far_path = tmp_path / "g.py", tmp_path / "g.far"
    grammar_py.write_text(grammar_source([GrammarPair("pair-0-1", "g", program)], compiled.tokens, FEATURES))
    done = subprocess.run([sys.executable, str(grammar_py), str(far_path), "--passes"], capture_output=True,
                          text=True, env=_bare_env(), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    far = pynini.Far(str(far_path), mode="r")
    fsts = {}
    while not far.done():
        fsts[far.get_key()] = far.get_fst()
        far.next()
    assert sorted(fsts) == ["pair-0-1.pass1", "pair-0-1.pass2"]
    grammar = load_grammar(grammar_py.read_text(encoding="utf-8"))
    composed = pynini.compose(fsts["pair-0-1.pass1"], fsts["pair-0-1.pass2"])
    composed.set_input_symbols(fsts["pair-0-1.pass1"].input_symbols())
    for word in [(), ("a", "b", "e"), ("i", "d", "a", "b", "b")]:
        assert tuple(grammar.rewrite(composed, list(word))) == run(program, word, FEATURES)
    bad = subprocess.run([sys.executable, str(grammar_py), str(far_path), "pair-9-9"], capture_output=True,
                         text=True, env=_bare_env(), cwd=tmp_path)
    assert bad.returncode == 2 and "unknown column pair 'pair-9-9'" in bad.stderr


# ------------------------------------------------------------------ every dev-split model


@pytest.mark.slow  # learns every dev-split problem, then builds and runs each grammar
@needs_benchmark
@pytest.mark.parametrize("name", [p.stem for p in benchmark_problems()] or ["(none)"])
def test_dev_split_grammar_gives_applys_outputs(name, benchmark_models, tmp_path):
    """The done-when line: for every dev-split model, `export --format pynini` run with
    the project's Python gives a FAR whose transducers produce exactly `apply`'s outputs
    (unseen tokens included), and the cdrewrite build of each program agrees with the
    interpreter, and exactly with the compiled transducers where those are small."""
    problem, model = benchmark_models[name]
    found = check_pynini_export(model, problem, tmp_path)
    assert found["words"] > 0
    assert not found["mismatches"], found["mismatches"][:3]
    grammar = found["grammar"]
    for (s, t), pm in sorted(model.pairs.items()):
        # The exported FAR's cascade, not a second build of it: composing the passes is
        # most of the check's time (minangkabau 0 -> 1: 3 passes, a million states).
        exported = found["far"][f"pair-{s}-{t}"]
        for row in problem.cells:
            if row[s] is not None:
                mapped = pm.map_unknown(row[s])
                assert tuple(grammar.rewrite(exported, list(mapped))) == run(pm.program, mapped, model.features)
        trans = pm.transducers()
        # Exactly where both are small (their composition and the relation walked are
        # up to the products of their states), over the pair's own labels: the FAR's
        # are the whole model's, so the pair's grammar is built again, small as it is.
        stages = math.prod(f.num_states() for f in trans.stages)
        if stages * exported.num_states() <= SAME_FUNCTION_MAX_STATES * 50:
            _, _, fst = cdrewrite_grammar(pm.program, tuple(sorted(pm.tables.tokens)), _freeze(model.features))
            assert same_function(fst, trans.composed()), (name, s, t)


# ------------------------------------------------------------------ inclusive tier tests

INCLUSIVE_FEATURES = {
    "a": {"vowel": True, "back": True},
    "i": {"vowel": True},
    "o": {"vowel": True, "back": True, "long": True},
    "t": {"vowel": False},
    "k": {"vowel": False, "back": True},
}


@pytest.mark.parametrize("index", [-2, -1, 1, 2])
def test_inclusive_tier_tests_agree_with_the_interpreter(index):
    """Tier tests counting the position's own token, on both sides, of a feature, of
    the tier's end and negated, at the start position too (an insertion), on every word
    of up to 4 tokens (one unseen)."""
    from fstsynth.dsl import BOUNDARY, Insert, Is, Not, ReplaceAnyBy, Rule, TierIs

    program = Program((
        Pass((
            Rule((TierIs("vowel", "back", index, True), Is("vowel", 0)), ReplaceAnyBy(("1",))),
            Rule((Not(TierIs("vowel", BOUNDARY, index, True)),), ReplaceAnyBy(("2",))),
            Rule((Not(TierIs("vowel", "long", index, True)), Not(Is("vowel", 0))), Insert(("3",))),
            Rule((TierIs("vowel", BOUNDARY, index, True),), Insert(("4",))),
        )),
    ))
    compiled_tokens = tuple(sorted({*INCLUSIVE_FEATURES, "1", "2", "3", "4", "<unk>"}))
    grammar, _, fst = cdrewrite_grammar(program, compiled_tokens, _freeze(INCLUSIVE_FEATURES))
    for word in (w for n in range(5) for w in itertools.product(("a", "i", "o", "t", "k", "<unk>"), repeat=n)):
        expected = run(program, word, INCLUSIVE_FEATURES)
        assert tuple(grammar.rewrite(fst, list(word))) == expected, (index, word)


def test_titles_and_tokens_of_any_text_make_a_valid_module():
    """Column names and tokens are the user's: quotes, backslashes, brackets and line
    breaks stay text in the module."""
    from fstsynth.dsl import IsToken, ReplaceBy, Rule

    odd = ('"', "\\", '"""', "[x]", "a'b")
    program = Program((Pass((Rule((IsToken('"""', -1),), ReplaceBy("\\", ("[x]", "a'b"))),)),))
    title = 'say """hi"""\\ \n there'
    source = grammar_source([GrammarPair("pair-0-1", title, program)], ("<unk>", *odd), {}, title)
    grammar = load_grammar(source)
    assert grammar.pair_0_1.__doc__ == title
    fst = grammar.cascade(grammar.PAIRS["pair-0-1"](), grammar.TOKENS, grammar.CLASSES)
    assert grammar.rewrite(fst, ['"""', "\\", '"']) == ['"""', "[x]", "a'b", '"']


@pytest.mark.parametrize("seed", range(12))
def test_feature_changes_agree_with_the_interpreter(seed):
    """Random programs with `SetFeatures`, `Agree` (with a neighbour or along a tier)
    and inclusive tier tests (`fstsynth.random_programs`, whose features give tokens
    bundles to change into), on random words and every word of up to 2 tokens."""
    import random

    from fstsynth import random_programs as rp

    rng = random.Random(seed)
    program = rp.random_program(
        rng, passes=2, max_rules=4, features=("vowel", "voice", "back"), tiers=True, feature_rules=True
    )
    compiled = compile_program(program, rp.ALPHABET, rp.FEATURES)
    grammar, _, fst = cdrewrite_grammar(program, compiled.tokens, _freeze(rp.FEATURES))
    words = [rp.random_word(rng, rp.ALPHABET, 0, 6) for _ in range(40)]
    words += [w for n in range(3) for w in itertools.product(rp.ALPHABET, repeat=n)]
    for word in words:
        assert tuple(grammar.rewrite(fst, list(word))) == run(program, word, rp.FEATURES), (program, word)
    if fst.num_states() * math.prod(f.num_states() for f in compiled.transducers.stages) <= 1_000_000:
        assert same_function(fst, compiled.transducers.composed()), program


@pytest.mark.parametrize("offset", [3, 1, -2])
def test_an_agree_along_a_tier_no_other_test_names_reads_that_tier(offset):
    """The tier an `Agree` reads along is one of the grammar's classes even where no
    test of the program names it (fuzz_equivalence found `Agree(x, ["f", "g"], "f", 3)`
    never firing: the class `f` was missing, so the tier had no token)."""
    from fstsynth.dsl import Agree, Rule

    features = {"a": {"g": True}, "ˈ": {"f": True}}
    program = Program((Pass((Rule((), Agree(("f", "g"), offset, "f")),)),))
    compiled = compile_program(program, ("a", "ˈ"), features)
    grammar, _, fst = cdrewrite_grammar(program, compiled.tokens, _freeze(features))
    if offset == 3:
        assert run(program, ("a", "ˈ", "ˈ", "ˈ"), features) == ("ˈ", "ˈ", "ˈ", "ˈ")
    for word in (w for n in range(6) for w in itertools.product(("a", "ˈ", "<unk>"), repeat=n)):
        assert tuple(grammar.rewrite(fst, list(word))) == run(program, word, features), (offset, word)
    assert same_function(fst, compiled.transducers.composed())
