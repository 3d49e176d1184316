"""The apply path, `fstsynth apply` as a user runs it: it loads a model without
compiling anything or importing the learner, Pynini or lingpy, and streams (its first
outputs come before its input has ended). (The tables' agreement with the transducers
and the interpreter is the property of tests/test_backends.py.)"""

from __future__ import annotations

import os
import random
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT, plural_copy
from forked import run_forked
from walkers import compiled_walker


@pytest.fixture(scope="module")
def plural_model(plural_saved, tmp_path_factory) -> Path:
    """data/plural.tsv's model (default options), this module's copy of the session's."""
    return plural_copy(plural_saved, tmp_path_factory, "apply")


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(ROOT))


# The process's modules when it exits (after the command), on stderr.
_MODULES = (
    "import atexit, sys\n"
    "atexit.register(lambda: print('MODULES', ' '.join(sorted(sys.modules)), file=sys.stderr))\n"
)


def _apply_in_child(args: list[str], entry: str, stdin: str = "") -> tuple[str, set[str]]:
    """Run `fstsynth ARGS` in a fresh interpreter through `entry` (a statement that
    starts the command line), `stdin` its input; its standard output and the modules
    it imported."""
    code = _MODULES + f"sys.argv = ['fstsynth', *{args!r}]\n" + entry + "\n"
    proc = subprocess.run(
        [sys.executable, "-c", code], input=stdin, capture_output=True, text=True, env=_env(), cwd=ROOT
    )
    assert proc.returncode == 0, proc.stderr
    modules = set(proc.stderr.split("MODULES ", 1)[1].split())
    assert "fstsynth.tables" in modules  # the module list is the real one
    return proc.stdout, modules


def test_apply_imports_neither_the_learner_nor_pynini_nor_lingpy(plural_model):
    """Nor numpy, for a few words: the tables are read by the standard library, and
    numpy is imported only for a batch large enough to pay for it."""
    args = ["apply", str(plural_model), "k a t", "d ɔ g"]
    out, modules = _apply_in_child(args, "from fstsynth.cli import app; app()")
    assert out == "k a t s\nd ɔ g z\n"
    for heavy in ("pynini", "lingpy", "numpy", "fstsynth.synthesis", "fstsynth.alignment", "fstsynth.compiler",
                  "fstsynth.bimachine", "fstsynth.far", "fstsynth.solve"):
        assert heavy not in modules, heavy


def test_apply_reads_an_unseen_segment_by_its_ipa_features_without_lingpy(plural_model):
    """`v` is not in the plural model's training rows: apply reads it by panphon's
    features. The vowel/consonant classes it also needs live in fstsynth.features, so
    lingpy (seconds to import) stays out of apply."""
    import fstsynth

    out, modules = _apply_in_child(["apply", str(plural_model), "b ʌ v"], "from fstsynth.cli import app; app()")
    assert out == fstsynth.load(plural_model).apply("b ʌ v") + "\n"
    assert "fstsynth.features" in modules
    for heavy in ("lingpy", "fstsynth.alignment", "fstsynth.synthesis"):
        assert heavy not in modules, heavy


def test_with_the_compiled_walker_apply_reads_many_words_without_numpy(plural_model):
    """Where the optional compiled walker (`fstsynth._walk`) is built, a file of words
    goes through it: numpy (a tenth of a second to import) is not imported, and the
    outputs are the tables' own."""
    from fstsynth.model_file import load_model

    pm = load_model(plural_model).pair()
    compiled_walker(pm.tables, [True] * len(pm.tables.tokens))  # (or a skip)
    rng = random.Random(5)
    tokens = sorted(set(load_model(plural_model).alphabet))
    words = [[rng.choice(tokens) for _ in range(rng.randint(1, 8))] for _ in range(5000)]
    stdin = "".join(" ".join(w) + "\n" for w in words)
    out, modules = _apply_in_child(["apply", str(plural_model)], "from fstsynth.__main__ import main; main()", stdin)
    assert out.split("\n")[:-1] == [" ".join(pm.predict(w)) for w in words]
    assert "numpy" not in modules and "fstsynth._walk" in modules


def test_apply_starts_the_memory_watchdog_once_its_input_or_model_is_large(plural_model):
    """The watchdog (a process of its own) would cost a short `apply` a sixth of its
    time: `apply` starts it once it has read WATCH_BYTES of input, or before loading a
    model at least that large (here WATCH_BYTES is set just above, then at, the model's
    size)."""
    from fstsynth.apply_command import _model_bytes

    size = _model_bytes(plural_model)
    assert size > 0

    def run(watch_bytes: int, stdin: str) -> tuple[str, int]:
        code = (
            "import sys\n"
            "import fstsynth.guard as g, fstsynth.apply_command as lc\n"
            f"lc.WATCH_BYTES = {watch_bytes}\n"
            "real = g.start\n"
            "def start(limit):\n"
            "    sys.stderr.write('WATCHDOG\\n')\n"
            "    return real(limit)\n"
            "g.start = start\n"
            f"sys.argv = ['fstsynth', 'apply', {str(plural_model)!r}]\n"
            "from fstsynth.__main__ import main\n"
            "main()\n"
        )
        proc = subprocess.run([sys.executable, "-c", code], input=stdin, capture_output=True, text=True,
                              env=_env(), cwd=ROOT)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout, proc.stderr.count("WATCHDOG")

    few = "k a t\n" * 10
    many = "k a t\n" * (size // 6 + 10)  # more bytes than the model's files
    assert run(size + 1, few) == ("k a t s\n" * 10, 0)
    assert run(size + 1, many) == ("k a t s\n" * (size // 6 + 10), 1)
    assert run(size, few) == ("k a t s\n" * 10, 1)


def test_a_plain_apply_skips_typers_parser_and_matches_it(plural_model):
    """`fstsynth apply MODEL WORDS [options]` runs without typer (whose import, and
    pydantic's, is most of a one-word apply's start-up) and prints what the
    typer-parsed command prints; anything else (help, a usage error) is typer's."""
    from typer.testing import CliRunner

    from fstsynth.cli import app
    from fstsynth.apply_command import plain_apply

    args = ["apply", str(plural_model), "k a t", "-f", "tsv", "dɔg", "--join"]
    out, modules = _apply_in_child(args, "from fstsynth.__main__ import main; main()")
    assert out == CliRunner().invoke(app, args).stdout == "k a t\tkats\ndɔg\tdɔgz\n"
    for heavy in ("pydantic", "typer", "click", "fstsynth.cli", "fstsynth.dsl"):
        assert heavy not in modules, heavy
    # Spaced words: nor logging (set up when a message comes), nor the DSL (the program
    # is checked as JSON, and read into DSL nodes only for --trace, --check or unseen
    # tokens read by their features).
    out, modules = _apply_in_child(["apply", str(plural_model), "k a t"], "from fstsynth.__main__ import main; main()")
    assert out == "k a t s\n"
    for heavy in ("logging", "fstsynth.dsl", "fstsynth.problem"):
        assert heavy not in modules, heavy
    for argv in (["apply", "--help"], ["apply"], ["apply", str(plural_model), "--nope"], ["apply", "-s"],
                 ["--debug", "apply", str(plural_model), "k a t"], ["apply", "--format=tsv", "m", "w"], ["show", "m"],
                 ["apply", "m", "--jobs", "0"], ["apply", "m", "-j", "two"]):
        assert plain_apply(argv) is None, argv


def test_typers_apply_is_made_from_the_option_table():
    """The command typer parses (`fstsynth.cli`'s `apply`, as click sees it) has the
    arguments and options of `apply_command`'s table, the one the plain command line
    is read with: the same words, kinds, defaults and bounds."""
    import typer

    from fstsynth.apply_command import APPLY_ARGUMENTS, APPLY_OPTIONS
    from fstsynth.cli import app

    command = typer.main.get_command(app).commands["apply"]  # type: ignore[attr-defined]
    options = {p.name: p for p in command.params if p.param_type_name == "option"}
    arguments = [p.name for p in command.params if p.param_type_name == "argument"]
    assert arguments == [name for name, _, _ in APPLY_ARGUMENTS]
    assert set(options) == {o.name for o in APPLY_OPTIONS}
    for o in APPLY_OPTIONS:
        got = options[o.name]
        assert (tuple(got.opts), got.is_flag, got.default, got.min) == (o.decls, o.flag, o.default, o.minimum), o.name


@pytest.fixture(scope="module")
def damaged_model(plural_model, tmp_path_factory) -> Path:
    """The plural model with its tables file cut short (its checksum no longer matches)."""
    import shutil

    directory = tmp_path_factory.mktemp("damaged") / "plural"
    shutil.copytree(plural_model, directory)
    data = (directory / "tables.npz").read_bytes()
    (directory / "tables.npz").write_bytes(data[: len(data) // 2])
    return directory


_MANY = "".join(f"{w}\n" for w in ["k a t", "d ɔ g", "b ʊ ʃ", "☃ a t", "", "kat"] * 40)
def _lean() -> None:
    from fstsynth.__main__ import main

    main()


def _typer() -> None:
    from fstsynth.cli import app

    app(prog_name="fstsynth")


#: The two ways in: `python -m fstsynth` (no typer for a plain apply) and typer's parser.
_ROUTES = {"lean": _lean, "typer": _typer}


@pytest.mark.parametrize(
    "args, stdin",
    [
        (["MODEL", "k a t", "dɔg", "☃ a t"], ""),
        (["MODEL", "-f", "tsv", "--join", "k a t", "b ʊ ʃ"], ""),
        (["MODEL"], _MANY),  # blocks of plain lines: the byte path
        (["MODEL", "--join"], _MANY),
        (["MODEL", "--jobs", "2"], _MANY),
        (["MODEL", "-j", "0"], _MANY),  # a usage error (typer's, on either route)
        (["MODEL", "-j", "two", "k a t"], ""),
        (["MODEL", "-f", "tsv"], "# a comment\nk a t\tk a t s\nd ɔ g\n"),
        (["MODEL", "--check", "--trace", "k a t"], ""),
        (["MODEL", "-s", "0", "-t", "1", "k a t"], ""),
        (["MODEL", "-s", "nope", "k a t"], ""),
        (["MODEL", "-f", "json", "k a t"], ""),
        (["MODEL"], "k a t\nd \udcff g\n"),
        (["NOWHERE", "k a t"], ""),
        (["DAMAGED", "k a t"], ""),
    ],
)
def test_apply_without_typer_behaves_as_with_it(plural_model, damaged_model, tmp_path, args, stdin):
    """The same command line through `python -m fstsynth` (no typer for a plain apply)
    and through typer's parser: the same output, errors and exit code."""
    places = {"MODEL": str(plural_model), "DAMAGED": str(damaged_model), "NOWHERE": str(tmp_path / "nope")}
    argv = ["apply", *(places.get(a, a) for a in args)]
    data = stdin.encode("utf-8", "surrogateescape")
    seen = {}
    for route, entry in _ROUTES.items():
        # In a child forked from this process: the command as a process runs it, without
        # an interpreter's start-up and imports for each of the 30 runs.
        code, out, err = run_forked(entry, ["fstsynth", *argv], data, _env())
        seen[route] = (code, out.decode(), err.decode())
    assert seen["lean"] == seen["typer"]
    assert "Traceback" not in seen["lean"][2]


def test_apply_never_compiles(plural_model, monkeypatch):
    """A loaded model predicts through the tables it was saved with."""
    import fstsynth.bimachine as bimachine
    import fstsynth.compiler as compiler
    from fstsynth.model_file import load_model

    def no_compile(*args, **kwargs):
        raise AssertionError("compiled again")

    monkeypatch.setattr(compiler, "compile_program", no_compile)
    monkeypatch.setattr(bimachine, "build_pass_machine", no_compile)
    model = load_model(plural_model)
    pm = model.pair()
    words = [("k", "a", "t"), ("b", "ʊ", "ʃ"), ("d", "ɔ", "g", "☃")] * 20
    expected = [pm.interpret(w, model.features) for w in words]
    assert pm.predict_many(words) == expected == [pm.predict(w) for w in words]
    assert expected[:2] == [("k", "a", "t", "s"), ("b", "ʊ", "ʃ", "ɪ", "z")]


def test_apply_streams_its_output(plural_model):
    """The first predictions are written while the input is still open."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "fstsynth", "apply", str(plural_model)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(), cwd=ROOT,
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("k a t\nd ɔ g\n".encode())
        proc.stdin.flush()
        ready, _, _ = select.select([proc.stdout], [], [], 60)
        assert ready, "no output while the input is open"
        first = proc.stdout.readline().decode()
        assert first == "k a t s\n"
        proc.stdin.write("b ʊ ʃ\n".encode())
        proc.stdin.close()
        rest = proc.stdout.read().decode()
        assert rest == "d ɔ g z\nb ʊ ʃ ɪ z\n"
        assert proc.wait(60) == 0
    finally:
        proc.kill()
        proc.wait()


def test_apply_reads_long_inputs_in_batches(plural_model, tmp_path):
    """Many words (more than one read) and one very long word, through the command."""
    words = ["k a t", "d ɔ g", "b ʊ ʃ", "☃ a t"] * 10_000
    long_word = " ".join(["k", "a", "t"] * 30_000)
    text = "\n".join(words + [long_word] + words[:3]) + "\n"
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "fstsynth", "apply", str(plural_model)],
        input=text.encode(), capture_output=True, env=_env(), cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    lines = proc.stdout.decode().split("\n")
    assert lines[:4] == ["k a t s", "d ɔ g z", "b ʊ ʃ ɪ z", "☃ a t s"]
    assert len(lines) == len(words) + 4 + 1 and lines[-1] == ""
    assert lines[len(words)] == long_word + " s"
    assert time.perf_counter() - started < 120


def test_apply_refuses_bad_utf8_naming_the_line(plural_model):
    data = "k a t\n".encode() * 3 + b"d \xff g\n"
    proc = subprocess.run(
        [sys.executable, "-m", "fstsynth", "apply", str(plural_model)],
        input=data, capture_output=True, env=_env(), cwd=ROOT,
    )
    assert proc.returncode == 2
    assert proc.stderr.decode() == "fstsynth: error: <stdin>: line 4: not valid UTF-8\n"
