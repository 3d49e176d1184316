"""Written rules compiled into a model: `fstsynth compile`, `fstsynth.compile`, and the
rules text they read (`fstsynth.rules_text`, `dsl_parser.parse` of a program)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import fstsynth
from conftest import DATA, needs_benchmark
from fstsynth import dsl, dsl_parser
from fstsynth.cli import app
from fstsynth.formatting import format_model
from fstsynth.errors import UserError
from fstsynth.model_file import load_model
from fstsynth.problem import load_problem
from fstsynth.rules_text import parse_rules
from programs import PROGRAMS

runner = CliRunner()


def cli(*args: object):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def paradigm(paradigm_feature):
    """fstsynth.learn(DATA / "paradigm.json", variant="feature"), learned once per session."""
    return paradigm_feature


@pytest.fixture(scope="module")
def plural():
    return fstsynth.learn(DATA / "plural.tsv", features=DATA / "plural-features.json", variant="feature")


def test_a_program_s_own_text_parses_back():
    for name, program in PROGRAMS.items():
        assert dsl_parser.parse(str(program)) == program, name
    two = dsl.Program((dsl.Pass(()), dsl.Pass((dsl.Rule((), dsl.Delete()),))))
    assert str(two) == "pass 1: Identity(x)\npass 2: Delete(x)" and dsl_parser.parse(str(two)) == two


def test_show_s_text_parses_back_to_every_pair_s_program(paradigm):
    text = format_model(paradigm)
    written = parse_rules(text)
    names = [f"{w.source} -> {w.target}" for w in written]
    assert names == paradigm.pair_names()
    for w, (_, pm) in zip(written, sorted(paradigm.pairs.items())):
        assert w.program == pm.program


def test_comments_blank_lines_and_unnumbered_rules_are_read():
    text = (
        "# plural, edited by hand\n"
        "\n"
        "pass 1:   # the suffix\n"
        '  IfThen(IsToken(w, "#", 0), Delete(x))   # a token "#" is no comment\n'
        '  2. IfThen(IsToken(w, $, 1), Insert(x, "s"))\n'
        "     else Identity(x)\n"
        'pass 2: ReplaceBy(x, "a", "b")\n'
    )
    (pair,) = parse_rules(text)
    assert (pair.source, pair.target) == (None, None)
    assert str(pair.program) == (
        'pass 1: Else(IfThen(IsToken(w, "#", 0), Delete(x)), IfThen(IsToken(w, $, 1), Insert(x, "s")))\n'
        'pass 2: ReplaceBy(x, "a", "b")'
    )
    (empty,) = parse_rules("a -> b  (0 rules)\n  (no rules: every token is kept)\n")
    assert (empty.source, empty.target, empty.program) == ("a", "b", dsl.Program(()))


@pytest.mark.parametrize(
    "text, where",
    [
        ('pass 1:\n  1. IfThen(IsToken(w, "a", 0), Delete(x)\n', "line 2, column 42: expected ')'"),
        ('pass 2: Delete(x)\n', "line 1, column 1: expected `pass 1:`"),
        ('  1. Delete(x)\n', "line 1, column 6: a rule before its pass"),
        ("pass 1:\n  1. Is(w, \"vowel\", 0)\n", "line 2, column 6: expected one rule on the line"),
        ("pass 1:\n  delete the vowels\n", "line 2, column 3: expected `pass N:`, a rule"),
        ("pass 1: Delete(x)\na -> b\npass 1: Delete(x)\n", "line 1, column 1: rules before the first"),
        ("# nothing\n", "no rules"),
    ],
)
def test_a_parse_error_names_the_text_line_and_column(text, where):
    with pytest.raises(UserError) as caught:
        parse_rules(text, "rules.txt")
    message = str(caught.value)
    assert message.startswith("rules.txt: ") and where in message and "\n" not in message


def test_the_command_names_the_file_line_and_column_in_one_line(tmp_path):
    rules = tmp_path / "rules.txt"
    rules.write_text('pass 1:\n  1. IfThen(IsTokn(w, "a", 0), Delete(x))\n', encoding="utf-8")
    result = cli("compile", rules, "-o", tmp_path / "m")
    assert result.exit_code == 2 and not (tmp_path / "m").exists()
    assert result.stderr == f"fstsynth: error: {rules}: line 2, column 13: expected a predicate\n"


def test_a_header_naming_no_column_of_the_data_is_refused(tmp_path):
    refusal = r"plural.tsv: no column 'singular' \(the rules' header .singular -> plural.\); columns: source, target$"
    with pytest.raises(UserError, match=refusal):
        fstsynth.compile("singular -> plural\npass 1: Delete(x)\n", data=DATA / "plural.tsv")


def _round_trip(tmp_path: Path, learn_args: list[object], data: Path, words: list[str]) -> None:
    """`learn`, `show > rules.txt`, `compile` with the same data and features: the same
    predictions on `words`, by `apply`."""
    learned, compiled = tmp_path / "learned", tmp_path / "compiled"
    assert cli("learn", data, "-o", learned, "-q", *learn_args).exit_code == 0
    shown = cli("show", learned)
    assert shown.exit_code == 0
    (tmp_path / "rules.txt").write_text(shown.stdout, encoding="utf-8")
    result = cli("compile", tmp_path / "rules.txt", "-o", compiled, "--data", data, "-q", *learn_args[2:])
    assert result.exit_code == 0, result.output
    for pm in load_model(learned).pairs.values():
        pair = ["--source", str(pm.source), "--target", str(pm.target)]
        expected = cli("apply", learned, *pair, *words)
        assert expected.exit_code == 0
        assert cli("apply", compiled, *pair, *words).stdout == expected.stdout


def test_the_readme_s_plural_model_compiles_back_from_its_rules(tmp_path):
    test_words = [line.split("\t")[0] for line in (DATA / "plural-test.tsv").read_text(encoding="utf-8").splitlines()]
    words = test_words + (DATA / "plural-words.txt").read_text(encoding="utf-8").split("\n")[:50]
    _round_trip(tmp_path, ["--variant", "feature", "--features", DATA / "plural-features.json"], DATA / "plural.tsv",
                [w for w in words if w.strip()])


def test_the_readme_s_plain_model_compiles_back_from_its_rules(tmp_path):
    test_words = [line.split("\t")[0] for line in (DATA / "plural-test.tsv").read_text(encoding="utf-8").splitlines()]
    _round_trip(tmp_path, ["--variant", "auto"], DATA / "plural.tsv", test_words)


def test_the_paradigm_compiles_back_from_its_rules(paradigm):
    problem = load_problem(DATA / "paradigm.json")
    compiled = fstsynth.compile(format_model(paradigm), data=DATA / "paradigm.json")
    assert compiled.pairs.keys() == paradigm.pairs.keys()
    for key, pm in paradigm.pairs.items():
        words = problem.known_words(pm.source) + [("x", "u", "n", "a"), ("ŋ", "a")]  # unseen tokens too
        assert compiled.pairs[key].predict_many(words) == pm.predict_many(words)
        assert (compiled.pairs[key].train_correct, compiled.pairs[key].train_total) == (pm.train_total,) * 2


def test_a_compiled_model_without_rows_applies_evaluates_reports_and_exports(plural, tmp_path):
    rules = tmp_path / "rules.txt"
    rules.write_text(str(plural.rules) + "\n", encoding="utf-8")
    model = tmp_path / "m"
    result = cli("compile", rules, "--features", DATA / "plural-features.json", "-o", model)
    assert result.exit_code == 0, result.output
    assert "source -> target: rules per pass [3], no rows" in result.stdout
    assert cli("apply", model, "k iː p", "b ʌ s").stdout == "k iː p s\nb ʌ s ɪ z\n"
    evaluated = cli("evaluate", model, DATA / "plural-test.tsv")
    assert evaluated.exit_code == 0 and evaluated.stdout.startswith("words   12\ncorrect 10\n")
    assert fstsynth.load(model).evaluate(DATA / "plural-test.tsv") == plural.evaluate(DATA / "plural-test.tsv")
    report = cli("report", model, "-o", tmp_path / "r.html")
    assert report.exit_code == 0
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "it was compiled from written rules without <code>--data</code>" in page
    assert "<tr><td>rows reproduced</td><td>0/0</td></tr>" in page
    assert cli("export", model, "--format", "att", "-o", tmp_path / "m.att").exit_code == 0
    assert (tmp_path / "m.att").stat().st_size > 0


def test_compile_takes_a_program_and_keeps_the_words_it_mentions():
    program = dsl_parser.parse('pass 1: IfThen(IsToken(w, "q", 1), ReplaceBy(x, "a", "e"))')
    model = fstsynth.compile(program)
    assert model.apply("a q") == "e q" and model.apply("a r") == "a r"
    assert {"a", "e", "q"} <= set(model.alphabet)
    assert model.pair().variant == "compiled" and model.pair().train_total == 0


@pytest.mark.slow
@needs_benchmark
def test_every_dev_split_model_compiles_back_from_its_rules(benchmark_models):
    """For every benchmark problem, `compile` of `show`'s text (with the problem as its
    data) predicts every word of every source column as the learned model does."""
    words = differing = 0
    for name, (problem, learned) in sorted(benchmark_models.items()):
        compiled = fstsynth.compile(format_model(learned), data=problem.source)
        assert compiled.pairs.keys() == learned.pairs.keys(), name
        for key, pm in sorted(learned.pairs.items()):
            source_words = problem.known_words(pm.source)
            got, expected = compiled.pairs[key].predict_many(source_words), pm.predict_many(source_words)
            words += len(source_words)
            differing += sum(a != b for a, b in zip(got, expected))
    assert words > 0 and differing == 0
