from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from conftest import DATA, plural_copy
from fstsynth.cli import app

runner = CliRunner()


def invoke(*args, input=None):
    return runner.invoke(app, [str(a) for a in args], input=input)


@pytest.fixture(scope="module")
def plural_model(plural_features_learned, tmp_path_factory):
    """`learn data/plural.tsv --features data/plural-features.json` (run once per
    session, exit 0): this module's copy."""
    directory, output = plural_features_learned
    assert "rules per pass" in output
    return plural_copy(directory, tmp_path_factory, "cli")


def test_apply_from_arguments_and_stdin(plural_model):
    result = invoke("apply", plural_model, "p ɪ g", "b ʌ s", "--check")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == ["p ɪ g z", "b ʌ s ɪ z"]
    result = invoke("apply", plural_model, input=(DATA / "plural-words.txt").read_text(encoding="utf-8"))
    assert result.exit_code == 0
    assert result.stdout.splitlines() == ["p ɪ g z", "s l ʌ g z", "b ɛ l z", "f ɒ k s ɪ z", "s t æ m p s"]


def test_apply_splits_unspaced_words_into_known_tokens(plural_model):
    result = invoke("apply", plural_model, "kiːp")
    assert result.stdout.strip() == "k iː p s"


def test_learn_with_two_jobs_writes_the_same_model(plural_model, tmp_path):
    directory = tmp_path / "plural-jobs"
    result = invoke(
        "learn", DATA / "plural.tsv", "--features", DATA / "plural-features.json", "-o", directory,
        "--jobs", "2",
    )
    assert result.exit_code == 0, result.output
    one = json.loads((plural_model / "model.json").read_text(encoding="utf-8"))
    two = json.loads((directory / "model.json").read_text(encoding="utf-8"))
    assert two["pairs"] == one["pairs"]
    assert invoke("learn", DATA / "plural.tsv", "-o", tmp_path / "x", "--jobs", "0").exit_code != 0


def test_show_prints_rules(plural_model):
    result = invoke("show", plural_model)
    assert result.exit_code == 0
    assert "pass 1:" in result.stdout and "Insert(x, " in result.stdout


def test_solve_writes_answer_files_and_checks(tmp_path):
    out = tmp_path / "answers"
    result = invoke("solve", DATA / "paradigm.json", "--out", out, "--check")
    assert result.exit_code == 0, result.output
    assert "mismatches: 0" in result.stdout
    answered = json.loads((out / "paradigm.json").read_text(encoding="utf-8"))
    original = json.loads((DATA / "paradigm.json").read_text(encoding="utf-8"))
    assert "?" not in {c for row in answered["data"] for c in row}
    for row_a, row_o in zip(answered["data"], original["data"]):
        for a, o in zip(row_a, row_o):
            if o != "?":
                assert a == o


def test_solve_goes_on_after_a_bad_problem(tmp_path):
    problems = tmp_path / "problems"
    problems.mkdir()
    (problems / "a_bad.json").write_text("{oops", encoding="utf-8")
    (problems / "b_good.json").write_text((DATA / "paradigm.json").read_text(encoding="utf-8"), encoding="utf-8")
    # `--variant token`: what is tested is going on past the bad file, not the default
    # variant's choice (test_solve_writes_answer_files_and_checks runs that).
    result = invoke("solve", problems, "--out", tmp_path / "out", "--variant", "token")
    assert result.exit_code == 0
    assert (tmp_path / "out" / "b_good.json").is_file()
    assert "a_bad.json: line 1, column 2: not valid JSON" in result.output


@pytest.mark.parametrize(
    "content, message",
    [
        ("{not json", "not valid JSON"),
        ('{"columns": ["a", "b"], "data": [["a", "b"], ["c"]]}', "row 2: has 1 cells, expected 2"),
        ('{"columns": ["a", "b"], "data": [["a", 1]]}', "cell must be a string"),
        ("", "the file is empty"),
    ],
)
def test_malformed_input_is_one_line_and_exit_2(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    result = invoke("learn", path, "-o", tmp_path / "m")
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("fstsynth: error: ") and message in lines[0]
    assert str(path) in lines[0]
    assert not (tmp_path / "m").exists()


def test_tsv_line_without_tab(tmp_path):
    path = tmp_path / "bad.tsv"
    path.write_text("a b\tc\nd e f\n", encoding="utf-8")
    result = invoke("learn", path, "-o", tmp_path / "m")
    assert result.exit_code == 2
    assert result.output.strip() == f"fstsynth: error: {path}: line 2: expected source<TAB>target, found no tab"


def test_missing_model_and_bad_variant(tmp_path):
    result = invoke("apply", tmp_path / "none", "a")
    assert result.exit_code == 2 and "no such model directory" in result.output
    result = invoke("learn", DATA / "plural.tsv", "-o", tmp_path / "m", "--variant", "fancy")
    assert result.exit_code == 2 and "variant must be one of" in result.output



USAGE_ERRORS = [
    (["learn"], "learn: missing argument 'input' (see fstsynth learn --help)"),
    (["learn", "x.tsv"], "learn: missing option '--output' / '-o' (see fstsynth learn --help)"),
    (["learn", "x.tsv", "-o", "m", "--bogus"], "learn: no such option: --bogus"),
    (["learn", "x.tsv", "-o", "m", "--time-limit", "soon"], "learn: invalid value for '--time-limit'"),
    (["learn", "x.tsv", "-o"], "option '-o' requires an argument"),
    (["frobnicate"], "no such command 'frobnicate' (see fstsynth --help)"),
    (["apply"], "apply: missing argument"),
]


@pytest.mark.parametrize("args, message", USAGE_ERRORS)
def test_usage_errors_are_one_line_and_exit_2(args, message):
    """Typer's own usage errors: one line naming what is wrong, not a framed box."""
    result = runner.invoke(app, args, prog_name="fstsynth")
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"fstsynth: error: {message}") and result.stderr.count("\n") == 1, result.stderr
    assert result.stdout == ""


def test_the_command_prints_usage_errors_on_one_line():
    """The same through the real entry point (`fstsynth.__main__`, as installed)."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(DATA.parent)}
    proc = subprocess.run([sys.executable, "-m", "fstsynth", "learn"], capture_output=True, text=True,
                          timeout=120, env=env)
    assert (proc.returncode, proc.stdout) == (2, ""), proc.stderr
    assert proc.stderr == "fstsynth: error: learn: missing argument 'input' (see fstsynth learn --help)\n"


def test_help_is_unchanged_by_the_one_line_usage_errors():
    result = runner.invoke(app, ["--help"], prog_name="fstsynth")
    assert result.exit_code == 0 and "Usage: fstsynth [OPTIONS] COMMAND" in result.stdout
    result = runner.invoke(app, ["learn", "--help"], prog_name="fstsynth")
    assert result.exit_code == 0 and "--time-limit" in result.stdout
    result = runner.invoke(app, [], prog_name="fstsynth")  # a bare command prints the help, as before
    assert result.exit_code == 2 and "Usage: fstsynth" in result.output and "fstsynth: error" not in result.output

# ------------------------------------------------------------------ evaluate


def test_evaluate_prints_the_figures_and_the_errors_with_their_rules(plural_model, tmp_path):
    result = invoke("evaluate", plural_model, DATA / "plural-test.tsv", "--json", tmp_path / "e.json", "--errors", "1")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[:5] == [
        "words   12",
        "correct 10",
        "Exact   83.33%",
        "WER     16.67%",
        "PER     5.56%  (3 token edits / 54 target tokens)",
    ]
    assert lines[5] == "errors (first 1 of 2):"
    assert lines[6] == "  f ʊ t: predicted f ʊ t s, expected f iː t (2 edits)"
    assert lines[7].startswith("    pass 1, at 3 (t): rule ") and lines[7].endswith("=>  t s")
    figures = json.loads((tmp_path / "e.json").read_text(encoding="utf-8"))
    assert {"words", "correct", "exact", "wer", "per", "errors"} <= set(figures)
    assert (figures["words"], figures["correct"], len(figures["errors"])) == (12, 10, 2)  # JSON: every error


def test_evaluate_bad_gold_is_exit_2(plural_model, tmp_path):
    gold = tmp_path / "gold.tsv"
    gold.write_text("k a t\n", encoding="utf-8")
    result = invoke("evaluate", plural_model, gold)
    assert result.exit_code == 2 and f"{gold}: line 1: expected source<TAB>target" in result.stderr


# ------------------------------------------------------------------ apply's input and output


def test_apply_format_tsv_and_join(plural_model):
    result = invoke("apply", plural_model, "--format", "tsv", "p ɪ g", "bʌs")
    assert result.stdout.splitlines() == ["p ɪ g\tp ɪ g z", "bʌs\tb ʌ s ɪ z"]
    result = invoke("apply", plural_model, "--join", "p ɪ g", "bʌs")
    assert result.stdout.splitlines() == ["pɪgz", "bʌsɪz"]
    result = invoke("apply", plural_model, "--format", "tsv", "--join", "kiːp")
    assert result.stdout == "kiːp\tkiːps\n"
    assert invoke("apply", plural_model, "--format", "xml", "a").exit_code == 2


def test_apply_skips_comments_and_reads_the_source_of_tsv_lines(plural_model):
    piped = "# words to try\np ɪ g\tp ɪ g z\nb ʌ s\n"
    result = invoke("apply", plural_model, input=piped)
    assert result.exit_code == 0
    assert result.stdout.splitlines() == ["p ɪ g z", "b ʌ s ɪ z"]
    assert result.stderr.splitlines() == [
        "fstsynth: warning: <stdin>: line 2 has a tab: the word is its first field (the source); "
        "to score source<TAB>target lines use `fstsynth evaluate MODEL FILE`"
    ]


def test_apply_warns_of_tokens_never_seen_in_training(plural_model):
    result = invoke("apply", plural_model, "ʔ a q", "b a ʔ", "k a t")
    assert result.exit_code == 0
    assert result.stdout.splitlines() == ["ʔ a q s", "b a ʔ s", "k a t s"]  # as documented
    assert result.stderr == (
        "fstsynth: warning: tokens never seen in training: ʔ (2 words), q (1 word); the model "
        "reads them as <unk> (README: Tokens the model has never seen)\n"
    )
    assert invoke("apply", plural_model, "k a t").stderr == ""


def test_an_unseen_look_alike_of_a_trained_token_is_named_with_its_code_point(plural_model):
    result = invoke("apply", plural_model, "p ɪ \u0261", "q")  # U+0261 typed for the trained g
    assert result.exit_code == 0
    assert result.stderr == (
        "fstsynth: warning: tokens never seen in training: q (1 word), ɡ (1 word; U+0261, which looks like the "
        "trained token g, U+0067); the model reads them as <unk> (README: Tokens the model has never seen)\n"
    )


# ------------------------------------------------------------------ learn and solve: what they read


def test_learn_takes_a_header_line_as_the_column_names(tmp_path):
    lines = (DATA / "plural.tsv").read_text(encoding="utf-8")
    path = tmp_path / "with-header.tsv"
    path.write_text("singular\tplural\n" + lines, encoding="utf-8")
    result = invoke("learn", path, "--features", DATA / "plural-features.json", "-o", tmp_path / "m")
    assert result.exit_code == 0, result.output
    assert "line 1 (singular<TAB>plural) looks like a header" in result.stderr
    assert "singular -> plural: rules per pass [3], training pairs reproduced 20/20" in result.stdout
    assert invoke("apply", tmp_path / "m", "p ɪ g").stdout == "p ɪ g z\n"


def test_learn_refuses_a_csv_saying_so(tmp_path):
    path = tmp_path / "plural.tsv"
    path.write_text("kat,kats\ndog,dogs\n", encoding="utf-8")
    result = invoke("learn", path, "-o", tmp_path / "m")
    assert result.exit_code == 2 and "it looks comma-separated" in result.stderr


def test_learn_warns_of_features_for_tokens_the_data_splits_otherwise(tmp_path):
    path = tmp_path / "p.tsv"
    path.write_text("t ʃ a\tt ʃ a s\nk a\tk a s\n", encoding="utf-8")
    features = tmp_path / "f.json"
    features.write_text(json.dumps({"tʃ": {"cons": True}, "a": {"vowel": True}}), encoding="utf-8")
    result = invoke("learn", path, "--features", features, "-o", tmp_path / "m")
    assert result.exit_code == 0
    assert f"{features}: names tokens that occur nowhere in {path} (tʃ)" in result.stderr
    features.write_text(json.dumps({"tʃ": {"cons": True}}), encoding="utf-8")
    result = invoke("learn", path, "--features", features, "-o", tmp_path / "m2")
    assert result.exit_code == 2 and "none of the 1 tokens it names occurs in" in result.stderr


def test_solve_splits_unspaced_json_cells_and_answers_in_kind(tmp_path):
    # Read as one token per word, each row made its own whole-word rule and every `?`
    # was answered wrongly.
    problem = tmp_path / "suffix.json"
    rows = [["kitap", "kitaplar"], ["ev", "evlar"], ["okul", "okullar"], ["masa", "masalar"],
            ["kalem", "?"], ["dost", "?"]]
    problem.write_text(json.dumps({"columns": ["sg", "pl"], "data": rows}), encoding="utf-8")
    result = invoke("solve", problem, "--out", tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert "the cells have no spaces between tokens" in result.stderr
    answered = json.loads((tmp_path / "out" / "suffix.json").read_text(encoding="utf-8"))
    assert answered["data"][4:] == [["kalem", "kalemlar"], ["dost", "dostlar"]]


def test_learn_hints_at_features_when_the_program_is_long_for_its_data(plural_model, tmp_path):
    # A variant asked for by name learns without the features derived from IPA: 10 rules.
    result = invoke("learn", DATA / "plural.tsv", "-o", tmp_path / "m", "--variant", "token")
    assert result.exit_code == 0
    hint = [line for line in result.stdout.splitlines() if line.strip().startswith("hint:")]
    assert len(hint) == 1 and "a features file" in hint[0] and "README: Features" in hint[0]
    features = DATA / "plural-features.json"
    assert "hint:" not in invoke("learn", DATA / "plural.tsv", "--features", features, "-o", tmp_path / "f").stdout
    # auto keeps the features derived from IPA where they cross-validate better: a short
    # program, no hint.
    assert "hint:" not in invoke("learn", DATA / "plural.tsv", "-o", tmp_path / "a").stdout


# ------------------------------------------------------------------ progress


def test_learn_progress_lines_and_quiet(tmp_path, monkeypatch):
    from fstsynth import console

    # Lines start at once and come at every report (not after two seconds, one per ten at
    # most: tests/test_progress.py checks those) so that this quick run shows each pair.
    monkeypatch.setattr(console.ProgressView.__init__, "__defaults__", (None, None, 0.0, 0.0))
    result = invoke("learn", DATA / "paradigm.json", "-o", tmp_path / "m", "--variant", "feature")
    assert result.exit_code == 0, result.output
    lines = result.stderr.splitlines()
    assert lines[0].startswith("fstsynth: [1/6] stem -> my stem")
    assert any(line.startswith("fstsynth: [6/6] in stem -> my stem") for line in lines)
    # The same lines for one column pair (a quicker run), then none with --quiet.
    loud = invoke("learn", DATA / "plural.tsv", "-o", tmp_path / "p", "--variant", "token")
    assert loud.exit_code == 0 and loud.stderr.startswith("fstsynth: [1/1] source -> target"), loud.stderr
    quiet = invoke("learn", DATA / "plural.tsv", "-o", tmp_path / "q", "--variant", "token", "--quiet")
    assert quiet.exit_code == 0 and quiet.stderr == ""
