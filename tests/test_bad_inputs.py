"""Issue #6: the catalogue of bad inputs. Each gets one exact error line and exit code 2.

Every case runs the real CLI (typer's CliRunner, in process) on a file written by the
test, and checks the whole stderr line, the exit code, and that no traceback appears.
Inputs that are normal files (a BOM, CRLF line ends, FST-syntax characters as tokens)
are accepted, and the tests check the tokens that come out.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import plural_copy
from fstsynth.cli import app
from fstsynth.learning import MAX_TRAINING_TOKENS
from fstsynth.model_file import load_model
from fstsynth.problem import load_problem

runner = CliRunner()

GOOD_ROWS = [["p a t", "p a t s"], ["d o g", "d o g z"], ["k a p", "k a p s"]]


def cli(*args: str, input: str | bytes | None = None) -> tuple[int, str, str]:
    result = runner.invoke(app, [str(a) for a in args], input=input)
    return result.exit_code, result.stdout, result.stderr


def write_json(path: Path, doc: object) -> Path:
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return path


def assert_error(args: list, message: str, input: str | bytes | None = None) -> None:
    code, out, err = cli(*args, input=input)
    assert err == f"fstsynth: error: {message}\n", err
    assert code == 2
    assert "Traceback" not in out + err


# ------------------------------------------------------------------ problem files


def test_not_json(tmp_path):
    path = tmp_path / "p.json"
    path.write_text('{"columns": ["a", "b"],\n "data": [["p a", "p a s"],]}')
    assert_error(
        ["learn", path, "-o", tmp_path / "m"],
        f"{path}: line 2, column 28: not valid JSON: Expecting value",
    )


def test_invalid_utf8(tmp_path):
    path = tmp_path / "p.tsv"
    path.write_bytes(b"p a t\tp a t s\nd o \xff g\td o g z\n")
    assert_error(["learn", path, "-o", tmp_path / "m"], f"{path}: line 2: not valid UTF-8")


@pytest.mark.parametrize("kind", ["bom", "crlf", "bom+crlf"])
def test_bom_and_crlf_are_accepted_silently(tmp_path, kind):
    text = "t͡ʃ a t\tt͡ʃ a t s\nd o g\td o g z\n"
    if "crlf" in kind:
        text = text.replace("\n", "\r\n")
    if "bom" in kind:
        text = "\ufeff" + text
    path = tmp_path / "p.tsv"
    path.write_bytes(text.encode("utf-8"))
    problem = load_problem(path)
    # No BOM glued to the first token, no "\r" glued to the last.
    assert problem.cells == ((("t͡ʃ", "a", "t"), ("t͡ʃ", "a", "t", "s")), (("d", "o", "g"), ("d", "o", "g", "z")))
    # --quiet: no progress line (a loaded machine takes long enough to show one); a
    # warning about the BOM or the line ends would still be printed.
    code, out, err = cli("learn", path, "-o", tmp_path / "m", "--quiet")
    assert (code, err) == (0, "")
    assert sorted(load_model(tmp_path / "m").alphabet) == ["a", "d", "g", "o", "s", "t", "t͡ʃ", "z"]


def test_bom_and_crlf_in_json(tmp_path):
    doc = {"columns": ["a", "b"], "data": GOOD_ROWS}
    path = tmp_path / "p.json"
    path.write_bytes(("\ufeff" + json.dumps(doc, indent=1).replace("\n", "\r\n")).encode("utf-8"))
    assert load_problem(path).cells[0] == (("p", "a", "t"), ("p", "a", "t", "s"))


def test_row_with_too_few_cells(tmp_path):
    rows = [["p a", "p a s", "x"], ["d o", "d o z"]]
    path = write_json(tmp_path / "p.json", {"columns": ["a", "b", "c"], "data": rows})
    assert_error(["learn", path, "-o", tmp_path / "m"], f"{path}: row 2: has 2 cells, expected 3 (one per column)")


def test_row_with_extra_nonempty_cell(tmp_path):
    path = write_json(tmp_path / "p.json", {"columns": ["a", "b"], "data": [["p a", "p a s", "zz"], ["d o", "d o z"]]})
    assert_error(["learn", path, "-o", tmp_path / "m"], f"{path}: row 1: has 3 cells, expected 2 (one per column)")


def test_trailing_empty_cells_are_tolerated_with_a_warning(tmp_path):
    # The benchmark itself has such a row (warlpiri_morphology, row 2).
    path = write_json(tmp_path / "p.json", {"columns": ["a", "b"], "data": [["p a t", "p a t s", " "], *GOOD_ROWS[1:]]})
    code, out, err = cli("learn", path, "-o", tmp_path / "m")
    assert code == 0
    assert f"fstsynth: {path}: row 1: ignoring 1 trailing empty cell(s)\n" in err
    assert load_problem(path).cells[0] == (("p", "a", "t"), ("p", "a", "t", "s"))


@pytest.mark.parametrize(
    "cell, type_name", [(3, "int"), (None, "NoneType"), (["p", "a"], "list"), (True, "bool")]
)
def test_cell_that_is_not_a_string(tmp_path, cell, type_name):
    path = write_json(tmp_path / "p.json", {"columns": ["a", "b"], "data": [["p a", "p a s"], ["d o", cell]]})
    assert_error(
        ["learn", path, "-o", tmp_path / "m"],
        f"{path}: row 2, column 2: cell must be a string, got {type_name}",
    )


def test_no_training_pair_for_a_column_is_a_warning(tmp_path):
    rows = [[s, t, "?"] for s, t in GOOD_ROWS]
    path = write_json(tmp_path / "p.json", {"columns": ["a", "b", "c"], "data": rows})
    code, out, err = cli("learn", path, "-o", tmp_path / "m")
    assert code == 0
    assert (
        f"fstsynth: {path}: column 'c' has no row with another known cell: its '?' cells "
        "cannot be learned\n"
    ) in err
    assert sorted(load_model(tmp_path / "m").pairs) == [(0, 1), (1, 0)]


def test_no_training_pair_at_all(tmp_path):
    path = write_json(tmp_path / "p.json", {"columns": ["a", "b"], "data": [["p a", "?"], ["?", "d o"]]})
    assert_error(["learn", path, "-o", tmp_path / "m"], "p: no column pair has a row with both cells known")


def test_row_of_only_question_marks(tmp_path):
    path = write_json(tmp_path / "p.json", {"columns": ["a", "b"], "data": [GOOD_ROWS[0], ["?", " ? "]]})
    assert_error(
        ["learn", path, "-o", tmp_path / "m"], f"{path}: row 2: every cell is unknown, nothing to predict from"
    )


def test_duplicate_column_names(tmp_path):
    path = write_json(tmp_path / "p.json", {"columns": ["a", "b", "a"], "data": [["p", "p", "p"]]})
    assert_error(["learn", path, "-o", tmp_path / "m"], f"{path}: duplicate column name 'a'")


@pytest.mark.parametrize("content", [b"", b"  \n\r\n\t\n", b"\xef\xbb\xbf"])
def test_empty_file(tmp_path, content):
    path = tmp_path / "p.tsv"
    path.write_bytes(content)
    assert_error(["learn", path, "-o", tmp_path / "m"], f"{path}: the file is empty")


def test_only_comments(tmp_path):
    path = tmp_path / "p.tsv"
    path.write_text("# nothing here\n")
    assert_error(["learn", path, "-o", tmp_path / "m"], f"{path}: no word pairs found")


def test_tsv_line_without_tab(tmp_path):
    path = tmp_path / "p.tsv"
    path.write_text("p a t\tp a t s\nd o g d o g z\n")
    assert_error(["learn", path, "-o", tmp_path / "m"], f"{path}: line 2: expected source<TAB>target, found no tab")


def test_tsv_line_with_three_fields(tmp_path):
    path = tmp_path / "p.tsv"
    path.write_text("p a t\tp a t s\nd o g\td o g z\textra\n")
    assert_error(["learn", path, "-o", tmp_path / "m"], f"{path}: line 2: expected source<TAB>target, found 3 fields")


def test_missing_input_file(tmp_path):
    assert_error(["learn", tmp_path / "nope.tsv", "-o", tmp_path / "m"], f"{tmp_path / 'nope.tsv'}: no such file")


# ------------------------------------------------------------------ FST-syntax tokens


@pytest.mark.parametrize("token", ["<eps>", "<unk>", "<s>"])
def test_reserved_tokens_are_refused(tmp_path, token):
    path = tmp_path / "p.tsv"
    path.write_text(f"p a\tp a s\n{token} a\t{token} a s\n")
    assert_error(["learn", path, "-o", tmp_path / "m"], f"{path}: line 2: token '{token}' is reserved by fstsynth")


def test_fst_syntax_characters_are_ordinary_tokens(tmp_path):
    """`[`, `]`, `\\`, `[a` / `b]` (a bracketed string with a space is two tokens), `"`,
    `:` and `#`-in-the-middle reach the transducer as integer labels: learn, apply,
    show and `--check` all work and the tokens come back unchanged."""
    odd = ["[", "]", "\\", "[a", "b]", '"', "a:", "x#"]
    lines = [f"{tok} o\t{tok} o s" for tok in odd] + ["d o\td o z", "[ d ]\t[ d ] z"]
    path = tmp_path / "p.tsv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out, err = cli("learn", path, "-o", tmp_path / "m")
    assert code == 0, err
    model = load_model(tmp_path / "m")
    assert set(odd) <= set(model.alphabet)
    # The training words give their targets back; new words keep every token and get
    # one suffix (which one is the learner's business, and --check compares backends).
    words = [f"{tok} o" for tok in odd] + ["[ d ]", "[ \\ ] d", "[a b] d \\"]
    code, out, err = cli("apply", tmp_path / "m", "--check", *words)
    assert (code, err) == (0, "")
    predictions = out.splitlines()
    assert predictions[: len(odd) + 1] == [f"{tok} o s" for tok in odd] + ["[ d ] z"]
    for word, prediction in zip(words[len(odd) + 1 :], predictions[len(odd) + 1 :]):
        assert prediction.rsplit(" ", 1)[0] == word and prediction[-1] in "sz"
    symbols = (tmp_path / "m" / "symbols.txt").read_text(encoding="utf-8").splitlines()
    assert {line.split("\t")[0] for line in symbols} >= set(odd)
    code, out, err = cli("show", tmp_path / "m")
    # Every rule of the program learned is shown (which suffix it inserts first is the
    # learner's business too: `-s` and `-z` are allomorphs of one shape).
    program = model.pair().program
    assert code == 0 and "Insert(x, " in out
    assert all(str(rule) in out for pass_ in program.passes for rule in pass_.rules)


# ------------------------------------------------------------------ long words


@pytest.fixture(scope="module")
def plural_model(plural_features_learned, tmp_path_factory):
    """`learn data/plural.tsv --features data/plural-features.json` (run once per
    session, exit 0): this module's copy."""
    return plural_copy(plural_features_learned[0], tmp_path_factory, "plural", "model")


def test_apply_to_a_word_of_100000_tokens(plural_model):
    word = " ".join(["k", "a", "t"] * 33_333 + ["b"])
    code, out, err = cli("apply", plural_model, "--check", input=word + "\n")
    assert (code, err) == (0, "")
    assert out == word + " z\n"


def test_training_word_beyond_the_limit(tmp_path):
    long_word = " ".join(["k", "a"] * 50_000)
    path = tmp_path / "p.tsv"
    path.write_text(f"p a t\tp a t s\n{long_word}\t{long_word} s\n")
    assert_error(
        ["learn", path, "-o", tmp_path / "m"],
        f"{path}: line 2: a word of 100000 tokens; training words may have at most {MAX_TRAINING_TOKENS}",
    )


# ------------------------------------------------------------------ apply inputs


def test_unseen_token_is_restored_and_both_backends_agree(plural_model):
    # "ʔ" and "q" never occur in training: read as <unk>, kept, and put back.
    code, out, err = cli("apply", plural_model, "--check", "ʔ a q", "b a ʔ", "q")
    # The output is as documented; a warning on stderr names the unseen tokens.
    assert code == 0 and err.startswith("fstsynth: warning: tokens never seen in training: q (2 words), ʔ (2 words);")
    assert len(err.splitlines()) == 1
    assert out.splitlines() == ["ʔ a q s", "b a ʔ s", "q s"]


def test_apply_stdin_invalid_utf8(plural_model):
    assert_error(["apply", plural_model], "<stdin>: line 2: not valid UTF-8", input=b"k a t\n\xff\n")


def test_apply_stdin_bom_and_crlf(plural_model):
    code, out, err = cli("apply", plural_model, input="\ufeffk a t\r\nd ɔ g\r\n".encode())
    assert (code, err, out) == (0, "", "k a t s\nd ɔ g z\n")


# ------------------------------------------------------------------ output paths


def test_output_in_a_missing_directory(tmp_path):
    target = tmp_path / "no" / "such" / "m"
    assert_error(
        ["learn", Path(__file__).parent.parent / "data" / "plural.tsv", "-o", target],
        f"{target}: cannot write: directory {target.parent} does not exist",
    )


def test_output_under_a_file(tmp_path):
    (tmp_path / "f").write_text("x")
    target = tmp_path / "f" / "m"
    assert_error(
        ["learn", Path(__file__).parent.parent / "data" / "plural.tsv", "-o", target],
        f"{target}: cannot write: {tmp_path / 'f'} is not a directory",
    )


def test_output_in_a_read_only_directory(tmp_path):
    read_only = tmp_path / "ro"
    read_only.mkdir()
    read_only.chmod(0o555)
    try:
        import os

        if os.access(read_only, os.W_OK):
            # root ignores permission bits; /sys refuses new entries even to root.
            read_only = Path("/sys")
            if not Path("/sys").is_dir() or os.access("/sys", os.W_OK) and _can_create(read_only):
                pytest.skip("no directory here that this user cannot write")
        target = read_only / "m"
        # --quiet: learning takes over two seconds on a loaded machine, and progress
        # lines would then come before the error line (failed once so, at load 10).
        code, out, err = cli("learn", Path(__file__).parent.parent / "data" / "plural.tsv", "-o", target, "--quiet")
        assert code == 2 and "Traceback" not in out + err
        assert err in (
            f"fstsynth: error: {target}: cannot write: directory {read_only} is not writable\n",
            f"fstsynth: error: {target}: cannot write: Operation not permitted\n",
            f"fstsynth: error: {target}: cannot write: Permission denied\n",
        )
        assert not target.exists()
    finally:
        (tmp_path / "ro").chmod(0o755)


def _can_create(directory: Path) -> bool:
    import tempfile

    try:
        tempfile.mkdtemp(dir=directory)
    except OSError:
        return False
    return True  # pragma: no cover - a writable /sys


def test_solve_output_is_a_file(tmp_path):
    (tmp_path / "out").write_text("x")
    assert_error(
        ["solve", Path(__file__).parent.parent / "data" / "paradigm.json", "--out", tmp_path / "out"],
        f"{tmp_path / 'out'}: exists and is not a directory",
    )


@pytest.mark.parametrize("value", ["-5", "nan"])
def test_time_limit_must_be_a_number_of_seconds(tmp_path, value):
    assert_error(
        ["learn", Path(__file__).parent.parent / "data" / "plural.tsv", "-o", tmp_path / "m", "--time-limit", value],
        f"--time-limit must be a number of seconds (0: no limit), not {float(value)}",
    )


def test_debug_shows_the_traceback(tmp_path):
    result = runner.invoke(app, ["--debug", "learn", str(tmp_path / "nope.tsv"), "-o", str(tmp_path / "m")])
    assert result.exit_code != 0
    assert result.exc_info is not None and result.exc_info[0].__name__ == "Error"


# ------------------------------------------------------------------ more structure


@pytest.mark.parametrize(
    "content, message",
    [
        ("[1, 2]", "expected a JSON object with 'columns' and 'data'"),
        ('{"columns": ["a", "b"]}', "'data' must be a non-empty list of rows"),
        ('{"columns": ["a"], "data": [["x"]]}', "a problem needs at least two columns, found 1"),
        ('{"columns": "a b", "data": [["x", "y"]]}', "'columns' must be a list of strings"),
        ('{"columns": ["a", "b"], "data": ["x y"]}', "row 1: a row must be a list of cells"),
        ('{"columns": ["a", "b"], "data": [["x", "y"]], "features": {"x": {"f": 1}}}',
         "features of token 'x' must map names to true/false"),
        ('{"a": ' * 100_000 + "1" + "}" * 100_000, "not a problem file: JSON nested too deeply"),
    ],
    ids=["list", "no-data", "one-column", "columns-string", "row-string", "features", "deep"],
)
def test_json_structure(tmp_path, content, message):
    path = tmp_path / "p.json"
    path.write_text(content)
    assert_error(["learn", path, "-o", tmp_path / "m"], f"{path}: {message}")


@pytest.mark.parametrize(
    "content, message",
    [
        ("?\tp a\n", "line 1: the source cannot be unknown"),
        ("p a\t \n", "line 1: empty target"),
    ],
)
def test_tsv_cells(tmp_path, content, message):
    path = tmp_path / "p.tsv"
    path.write_text(content)
    assert_error(["learn", path, "-o", tmp_path / "m"], f"{path}: {message}")


def test_features_file_not_json(tmp_path):
    features = tmp_path / "f.json"
    features.write_text('{"a": {"vowel": true},\n}')
    assert_error(
        ["learn", Path(__file__).parent.parent / "data" / "plural.tsv", "--features", features, "-o", tmp_path / "m"],
        f"{features}: line 2, column 1: not valid JSON: Expecting property name enclosed in double quotes",
    )


def test_problem_path_is_a_directory(tmp_path):
    assert_error(["learn", tmp_path, "-o", tmp_path / "m"], f"{tmp_path}: is a directory, not a problem file")


def test_features_file_nested_too_deeply(tmp_path):
    """Found by scripts/fuzz_inputs: a RecursionError traceback."""
    features = tmp_path / "f.json"
    features.write_text("[" * 5000 + "]" * 5000, encoding="utf-8")
    assert_error(
        ["learn", Path(__file__).parent.parent / "data" / "plural.tsv", "--features", features, "-o", tmp_path / "m"],
        f"{features}: not a features file: nested too deeply",
    )
