from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from conftest import DATA
from fstsynth.cli import app

runner = CliRunner()


def invoke(*args, input=None):
    return runner.invoke(app, [str(a) for a in args], input=input)


@pytest.fixture(scope="module")
def plural_model(tmp_path_factory):
    directory = tmp_path_factory.mktemp("cli") / "plural"
    result = invoke("learn", DATA / "plural.tsv", "--features", DATA / "plural-features.json", "-o", directory)
    assert result.exit_code == 0, result.output
    assert "rules per pass" in result.output
    return directory


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
    result = invoke("solve", problems, "--out", tmp_path / "out")
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
