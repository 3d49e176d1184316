from __future__ import annotations

import json
import unicodedata

import pytest

from conftest import DATA
from fstsynth.problem import Error, load_problem


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


# ---------------------------------------------------------------- no silent surprises
# Each of these read without a word of warning before, and learned the wrong thing.


def test_unspaced_json_cells_are_split_into_characters_with_a_warning(tmp_path, caplog):
    path = write(tmp_path, "p.json", doc([["kitap", "kitaplar"], ["ev", "evler"], ["okul", "?"]]))
    problem = load_problem(path)
    assert problem.cells[0] == (tuple("kitap"), tuple("kitaplar"))
    assert problem.cells[2] == (tuple("okul"), None)
    assert "no spaces between tokens" in caplog.text and "'kitap' -> 'k i t a p'" in caplog.text
    # Answers are written as the cells were: without spaces.
    answered = json.loads(problem.answer_text({(2, 1): tuple("okullar")}))
    assert answered["data"][2] == ["okul", "okullar"]


def test_unspaced_json_cells_use_the_tokens_the_features_name(tmp_path):
    path = write(tmp_path, "p.json", doc([["tʃaj", "tʃajlar"], ["at", "atlar"]], features={"tʃ": {"cons": True}}))
    assert load_problem(path).cells[0] == (("tʃ", "a", "j"), ("tʃ", "a", "j", "l", "a", "r"))


def test_an_unspaced_cell_among_spaced_ones_is_split_into_known_tokens(tmp_path, caplog):
    path = write(tmp_path, "p.json", doc([["tʃ a j", "tʃ a j l a r"], ["tʃat", "?"], ["a", "a l a r"]]))
    problem = load_problem(path)
    assert problem.cells[1][0] == ("tʃ", "a", "t")
    assert problem.cells[2][0] == ("a",)  # one character: one token, nothing to say
    assert "row 2, column 1: 'tʃat' has no spaces between its tokens" in caplog.text
    # Spaced columns stay spaced in the answers.
    assert json.loads(problem.answer_text({(1, 1): ("tʃ", "a", "t")}))["data"][1][1] == "tʃ a t"


def test_spaced_json_cells_are_read_as_before(tmp_path, caplog):
    path = write(tmp_path, "p.json", doc([["k a t", "k a t s"], ["a", "b"]]))
    assert load_problem(path).cells == ((("k", "a", "t"), ("k", "a", "t", "s")), (("a",), ("b",)))
    assert caplog.text == ""


def test_a_tsv_header_above_spaced_words_names_the_columns(tmp_path, caplog):
    path = write(tmp_path, "p.tsv", "singular\tplural\nk a t\tk a t s\nd ɔ g\td ɔ g z\n")
    problem = load_problem(path)
    assert problem.columns == ("singular", "plural")
    assert problem.cells == ((tuple("kat"), tuple("kats")), (tuple("dɔg"), tuple("dɔgz")))
    assert "line 1 (singular<TAB>plural) looks like a header" in caplog.text


def test_a_tsv_header_in_letters_the_words_never_use(tmp_path, caplog):
    rows = ["кот\tкоты", "дом\tдома", "сад\tсады", "лес\tлеса", "мир\tмиры"]
    path = write(tmp_path, "p.tsv", "\n".join(["word\tplural", *rows]) + "\n")
    problem = load_problem(path)
    assert problem.columns == ("word", "plural") and len(problem.cells) == 5
    assert "looks like a header" in caplog.text


@pytest.mark.parametrize("header", ["singular\tplural", "Singular\tPlural", "word\tform"])
def test_a_tsv_header_of_column_names_above_unspaced_words(tmp_path, caplog, header):
    """In the words' own letters: only the names tell it from a word pair (learned as
    one, it turned 4 rules into 12)."""
    rows = ["kitap\tkitaplar", "ev\tevler", "göz\tgözler", "yol\tyollar", "kuş\tkuşlar"]
    problem = load_problem(write(tmp_path, "p.tsv", "\n".join([header, *rows]) + "\n"))
    assert problem.columns == tuple(header.split("\t")) and len(problem.cells) == 5
    assert problem.cells[0] == (tuple("kitap"), tuple("kitaplar"))
    assert f"line 1 ({header.replace(chr(9), '<TAB>')}) looks like a header" in caplog.text


def test_a_tsv_word_pair_of_column_names_is_a_word_pair_when_the_column_uses_them(tmp_path, caplog):
    content = "form\tforms\nform\tforms\nword\twords\n"  # English plurals: the words are data
    problem = load_problem(write(tmp_path, "p.tsv", content))
    assert problem.columns == ("source", "target") and len(problem.cells) == 3
    assert "header" not in caplog.text


def test_a_features_file_splits_unspaced_tsv_words_as_it_splits_json_cells(tmp_path):
    from fstsynth.problem import with_features

    features = {t: {"vowel": t in ("a", "aɪ", "ɔɪ")} for t in ("aɪ", "ɔɪ", "pf", "ts", "a", "t", "k")}
    tsv = load_problem(write(tmp_path, "p.tsv", "pfaɪ\tpfaɪts\nkɔɪ\tkɔɪts\nta\tk a t\n"))
    json_problem = load_problem(write(tmp_path, "p.json", doc(
        [["pfaɪ", "pfaɪts"], ["kɔɪ", "kɔɪts"], ["ta", "k a t"]], features=features,
    )))
    split = with_features(tsv, features, "f.json").cells
    assert split == json_problem.cells
    assert split[0] == (("pf", "aɪ"), ("pf", "aɪ", "ts")) and split[2] == (("t", "a"), ("k", "a", "t"))


@pytest.mark.parametrize(
    "content",
    [
        "kat\tkats\ndog\tdogs\npen\tpens\n",  # unspaced words throughout
        "k a t\tk a t s\nd o g\td o g z\n",  # spaced throughout
        "kat\tk a t\ndog\td o g\n",  # spelling to spaced sounds: the first line is data
        "qix\tqixes\nkat\tkats\ndog\tdogs\npen\tpens\ncup\tcups\nhat\thats\n",  # rare letters
    ],
)
def test_a_first_line_like_the_others_is_a_word_pair(tmp_path, caplog, content):
    problem = load_problem(write(tmp_path, "p.tsv", content))
    assert problem.columns == ("source", "target")
    assert len(problem.cells) == content.count("\n")
    assert "header" not in caplog.text


def test_a_csv_given_as_tsv_is_refused_saying_so(tmp_path):
    path = write(tmp_path, "p.tsv", "singular,plural\nkat,kats\n")
    with pytest.raises(Error, match=r"line 1: expected source<TAB>target, found no tab \(it looks comma-separated"):
        load_problem(path)


def test_features_naming_tokens_absent_from_the_data(tmp_path, caplog):
    from fstsynth.problem import with_features

    problem = load_problem(write(tmp_path, "p.tsv", "t ʃ a\tt ʃ a s\nk a\tk a s\n"))
    # The features write the affricate as one token, the data as two: a warning names both.
    merged = with_features(problem, {"tʃ": {"cons": True}, "k": {"cons": True}, "a": {"vowel": True}}, "f.json")
    assert merged.features["k"] == {"cons": True}
    assert "f.json: names tokens that occur nowhere in" in caplog.text
    assert "(tʃ) while tokens of the data get no features from it (s, t, ʃ)" in caplog.text
    # Naming only tokens the data never uses would change nothing: an error.
    with pytest.raises(Error, match=r"f.json: none of the 1 tokens it names occurs in .*p.tsv"):
        with_features(problem, {"tʃ": {"cons": True}}, "f.json")


def test_a_features_table_of_a_whole_inventory_is_no_warning(tmp_path, caplog):
    from fstsynth.problem import with_features

    problem = load_problem(write(tmp_path, "p.tsv", "k a\tk a s\n"))
    with_features(problem, {t: {"x": True} for t in "kaseiou"}, "f.json")
    assert caplog.text == ""


def test_problem_from_pairs_reads_like_a_tsv():
    from fstsynth.problem import problem_from_pairs

    problem = problem_from_pairs([("k a t", "k a t s"), ("dɔg", "dɔgz"), (("b", "u"), "?")])
    assert problem.cells == ((tuple("kat"), tuple("kats")), (tuple("dɔg"), tuple("dɔgz")), (("b", "u"), None))
    assert problem.queries == ((2, 1),) and problem.directed
    with pytest.raises(Error, match="pair 2: expected"):
        problem_from_pairs([("a", "b"), ("c",)])
