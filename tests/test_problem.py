from __future__ import annotations

import json
import unicodedata

import pytest

from conftest import DATA
from fstsynth.problem import Error, load_problem, parse_word, split_graphemes


def write(tmp_path, name, content, mode="w"):
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def doc(data, columns=("a", "b"), **extra):
    return json.dumps({"columns": list(columns), "data": data, **extra}, ensure_ascii=False)


def test_json_problem_cells_queries_and_pairs(tmp_path):
    path = write(tmp_path, "p.json", doc([["k a t", "k a t s"], ["d ɔ g", "?"], ["", "b u s"]]))
    problem = load_problem(path)
    assert problem.columns == ("a", "b")
    assert problem.cells[0] == (("k", "a", "t"), ("k", "a", "t", "s"))
    assert problem.cells[1][1] is None and problem.cells[2][0] is None
    assert problem.queries == ((1, 1),)
    assert problem.column_pairs() == [(0, 1), (1, 0)]
    assert problem.training_pairs(0, 1) == [(("k", "a", "t"), ("k", "a", "t", "s"))]


def test_tokens_are_nfc_normalized(tmp_path):
    decomposed = unicodedata.normalize("NFD", "é")
    path = write(tmp_path, "p.json", doc([[f"t {decomposed}", "x"]], features={decomposed: {"vowel": True}}))
    problem = load_problem(path)
    assert problem.cells[0][0] == ("t", "é")
    assert problem.features == {"é": {"vowel": True}}


def test_tsv_pairs_graphemes_comments_and_direction(tmp_path):
    path = write(tmp_path, "p.tsv", "# a comment\nkat\tkats\nt͡ʃ a\tt͡ʃ a s\nśri\t?\n")
    problem = load_problem(path)
    assert problem.cells[0] == (("k", "a", "t"), ("k", "a", "t", "s"))
    assert problem.cells[1][0] == ("t͡ʃ", "a")
    assert problem.queries == ((2, 1),)
    assert problem.column_pairs() == [(0, 1)]


def test_split_graphemes_keeps_combining_marks():
    assert split_graphemes("śri") == ("ś", "r", "i")
    assert split_graphemes("t͡ʃa") == ("t͡ʃ", "a")
    assert split_graphemes("aːtʰa") == ("aː", "tʰ", "a")
    assert parse_word("  a  b ") == ("a", "b")


@pytest.mark.parametrize(
    "name, content, message",
    [
        ("bad.json", "{not json", "p/bad.json: line 1, column 2: not valid JSON"),
        ("ragged.json", doc([["a", "b"], ["a", "b", "c"]]), "row 2: has 3 cells, expected 2"),
        ("short.json", doc([["a"]]), "row 1: has 1 cells, expected 2"),
        ("cell.json", doc([["a", 3]]), "row 1, column 2: cell must be a string, got int"),
        ("dup.json", doc([["a", "b"]], columns=("x", "x")), "duplicate column name 'x'"),
        ("allq.json", doc([["a", "b"], ["?", "?"]]), "row 2: every cell is unknown"),
        ("empty.json", "   \n", "the file is empty"),
        ("notab.tsv", "a b\tc\nd e\n", "line 2: expected source<TAB>target, found no tab"),
        ("three.tsv", "a\tb\tc\n", "line 1: expected source<TAB>target, found 3 fields"),
        ("reserved.json", doc([["a <eps>", "b"]]), "token '<eps>' is reserved"),
    ],
)
def test_bad_files_name_file_and_row(tmp_path, name, content, message):
    (tmp_path / "p").mkdir()
    path = write(tmp_path / "p", name, content)
    with pytest.raises(Error) as info:
        load_problem(path)
    text = str(info.value)
    assert message in text
    assert str(path) in text
    assert "\n" not in text


def test_invalid_utf8_names_the_line(tmp_path):
    path = write(tmp_path, "p.tsv", b"a\tb\n\xff\tc\n")
    with pytest.raises(Error, match=r"line 2: not valid UTF-8"):
        load_problem(path)


def test_bom_and_crlf_are_read_normally(tmp_path):
    path = write(tmp_path, "p.tsv", "\ufeffk a\tk a s\r\nb a\tb a s\r\n".encode("utf-8"))
    problem = load_problem(path)
    assert problem.cells[0] == (("k", "a"), ("k", "a", "s"))
    assert problem.cells[1] == (("b", "a"), ("b", "a", "s"))


def test_trailing_empty_cells_are_tolerated(tmp_path, caplog):
    path = write(tmp_path, "p.json", doc([["a", "b", ""], ["c", "?"]]))
    problem = load_problem(path)
    assert problem.cells[0] == (("a",), ("b",))
    assert "trailing empty" in caplog.text


def test_answer_text_changes_only_the_question_marks(tmp_path):
    original = {"columns": ["a", "b"], "data": [["k a", "?"], ["x", "y "]], "notes": "n", "extra": [1]}
    path = write(tmp_path, "p.json", json.dumps(original))
    problem = load_problem(path)
    answered = json.loads(problem.answer_text({(0, 1): ("k", "a", "s")}))
    assert answered["data"] == [["k a", "k a s"], ["x", "y "]]
    assert {k: v for k, v in answered.items() if k != "data"} == {
        k: v for k, v in original.items() if k != "data"
    }


def test_shipped_examples_load():
    problems = [p for p in DATA.glob("*.json") if not p.name.endswith("-features.json")]
    for path in sorted(problems) + sorted(DATA.glob("*.tsv")):
        problem = load_problem(path)
        assert problem.column_pairs(), path
