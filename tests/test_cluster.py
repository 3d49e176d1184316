"""Models shipped as their files, and the Dask path (`fstsynth.cluster`): `apply
--scheduler`, the `dask.bag` recipe and `solve --scheduler` against the commands run
here, byte for byte, on a `distributed.LocalCluster` of two worker processes (loopback
only, one per module, always closed).

Dask is the `dask` extra (`scripts/install-test-deps` installs it); without it the
cluster tests skip, and in CI (FSTSYNTH_REQUIRE_TOOLS=1, set by `.ci/run`) fail."""

from __future__ import annotations

import gc
import io
import json
import os
import pickle
import random
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import DATA, ROOT, plural_copy
from forked import run_forked


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(ROOT), PYTHONIOENCODING="utf-8")


def _fstsynth(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "fstsynth", *args], input=stdin, capture_output=True, env=_env(), cwd=ROOT,
        timeout=300,
    )


#: Whether the module's LocalCluster (`scheduler`) has started, in this process.
_cluster_running = False


def _fstsynth_forked(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess:
    """`_fstsynth` in a child forked from this process (`tests/forked.py`): the same
    command without a new interpreter's start-up. A new process once the module's
    cluster runs (its threads would be forked mid-work)."""
    if _cluster_running:
        return _fstsynth(*args, stdin=stdin)
    from fstsynth.__main__ import main

    code, out, err = run_forked(main, ["fstsynth", *args], stdin)
    return subprocess.CompletedProcess(args, code, out, err)


@pytest.fixture(scope="module")
def plural_model(plural_saved, tmp_path_factory) -> Path:
    """data/plural.tsv's model (default options), this module's copy of the session's."""
    return plural_copy(plural_saved, tmp_path_factory, "cluster")


@pytest.fixture(scope="module")
def word_files(tmp_path_factory) -> list[Path]:
    """A large plain file (the byte path), one with everything the line path reads
    (comments, a tab line, unspaced words, tokens never seen, CRLF), and an empty one."""
    directory = tmp_path_factory.mktemp("words")
    rng = random.Random(7)
    tokens = "p ɪ g s l ʌ b ɛ k t æ m z".split()
    plain = "".join(" ".join(rng.choice(tokens) for _ in range(rng.randint(1, 8))) + "\n" for _ in range(3000))
    mixed = "p ɪ g\n# a comment\nbʌs\nf ɒ k s\tfɒksɪz\nq ʔ\ns t æ m p\r\nkiːp\nʔ a"
    files = {"plain.txt": plain, "mixed.txt": mixed, "empty.txt": ""}
    for name, text in files.items():
        (directory / name).write_text(text, encoding="utf-8")
    return [directory / name for name in files]


# ------------------------------------------------------------------ shipping a model


def test_a_loaded_model_pickles_as_its_files_and_predicts_the_same(plural_model):
    import fstsynth

    model = fstsynth.load(plural_model)
    data = pickle.dumps(model)
    found: list[tuple[str, str]] = []

    class Recording(pickle.Unpickler):
        def find_class(self, module: str, name: str):  # every global the pickle names
            found.append((module, name))
            return super().find_class(module, name)

    copy = Recording(io.BytesIO(data)).load()
    # No code, no tables, no transducers: one function to call, and the files' bytes.
    assert found == [("fstsynth.cluster", "from_files")]
    files = {p.name: p.read_bytes() for p in plural_model.iterdir()}
    assert set(model.files) == set(files) and all(model.files[n] == files[n] for n in files)
    assert len(data) < sum(map(len, files.values())) + 1000
    rng = random.Random(1)
    alphabet = [*model.alphabet, "ʔ"]  # and a token never seen
    words = [" ".join(rng.choice(alphabet) for _ in range(rng.randint(0, 7))) for _ in range(300)]
    assert copy.apply_many(words) == model.apply_many(words)
    assert copy.apply("bʌs") == model.apply("bʌs") == "bʌsɪz"
    # The transducers come from the rebuilt model's own copy of the files.
    assert copy.pair().transduce(("p", "ɪ", "g")) == ("p", "ɪ", "g", "z")
    assert pickle.loads(pickle.dumps(copy)).apply("k a t") == model.apply("k a t")


def test_a_rebuilt_model_removes_its_files_when_collected(plural_model):
    import fstsynth

    copy = pickle.loads(pickle.dumps(fstsynth.load(plural_model)))
    directory = copy.pair().stages.path.parent
    assert (directory / "model.json").is_file()
    del copy
    gc.collect()
    assert not directory.exists()


def test_model_bytes_are_checked_as_a_directory_is(plural_model):
    from fstsynth.cluster import from_files
    from fstsynth.model import Error

    files = {p.name: p.read_bytes() for p in plural_model.iterdir()}
    files["tables.npz"] = files["tables.npz"][:-1] + bytes([files["tables.npz"][-1] ^ 1])
    with pytest.raises(Error, match="checksum"):
        from_files(files)
    with pytest.raises(Error, match="not a model file name"):
        from_files({"../model.json": b"{}"})


# ------------------------------------------------------------------ apply to files, here


#: `_reference`'s runs, made once for the tests that compare with them.
_REFERENCES: dict[tuple[Path, Path, tuple[str, ...]], tuple[bytes, bytes]] = {}


def _reference(model: Path, words: Path, *options: str) -> tuple[bytes, bytes]:
    """`fstsynth apply MODEL OPTIONS < words`: its standard output and error."""
    key = (model, words, options)
    if key not in _REFERENCES:
        proc = _fstsynth_forked("apply", str(model), *options, stdin=words.read_bytes())
        assert proc.returncode == 0, proc.stderr
        _REFERENCES[key] = (proc.stdout, proc.stderr)
    return _REFERENCES[key]


@pytest.mark.parametrize("options", [(), ("--format", "tsv", "--join")])
def test_apply_output_dir_writes_what_apply_prints(plural_model, word_files, tmp_path, options):
    out = tmp_path / "out"
    proc = _fstsynth_forked("apply", str(plural_model), *map(str, word_files), "--output-dir", str(out), *options)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b""
    for path in word_files:
        assert (out / path.name).read_bytes() == _reference(plural_model, path, *options)[0], path.name
    warnings = proc.stderr.decode()
    assert f"{word_files[1]}: line 4 has a tab" in warnings
    # All IPA segments, and the model's features were derived from IPA: read by them.
    assert "never seen in training, read by their IPA features: ʔ (2 words), f (1 word), q (1 word)" in warnings


def test_apply_output_dir_refuses_clashing_names_and_the_terminal_options(plural_model, word_files, tmp_path):
    other = tmp_path / "plain.txt"
    other.write_text("p ɪ g\n", encoding="utf-8")
    proc = _fstsynth_forked(
        "apply", str(plural_model), str(word_files[0]), str(other), "--output-dir", str(tmp_path / "o")
    )
    assert proc.returncode == 2 and b"would both be written to" in proc.stderr
    proc = _fstsynth_forked("apply", str(plural_model), str(word_files[0]), "--output-dir", str(tmp_path), "--check")
    assert proc.returncode == 2 and b"run --check, --trace and --jobs without it" in proc.stderr
    proc = _fstsynth_forked("apply", str(plural_model), "--scheduler", "tcp://127.0.0.1:1")
    assert proc.returncode == 2 and b"give --output-dir" in proc.stderr


def test_scheduler_without_dask_is_one_clear_line(plural_model, word_files, tmp_path):
    code = (
        "import sys; sys.modules['distributed'] = None\n"  # as if Dask were not installed
        "from fstsynth.__main__ import main; sys.argv = ['fstsynth', *sys.argv[1:]]; main()\n"
    )
    args = ["apply", str(plural_model), str(word_files[0]), "-o", str(tmp_path), "--scheduler", "tcp://127.0.0.1:1"]
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, env=_env(), cwd=ROOT, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.decode().strip().splitlines() == [
        "fstsynth: error: --scheduler needs Dask, an optional extra: pip install 'fstsynth[dask]'"
    ]


# ------------------------------------------------------------------ on a Dask cluster


@pytest.fixture(scope="module")
def scheduler():
    """The address of a LocalCluster of 2 worker processes, 1 thread each, on loopback."""
    try:
        from distributed import LocalCluster
    except ImportError:
        message = "dask[distributed] (the 'dask' extra) is not installed"
        if os.environ.get("FSTSYNTH_REQUIRE_TOOLS") == "1":
            pytest.fail(f"FSTSYNTH_REQUIRE_TOOLS=1 but {message}")
        pytest.skip(message)
    global _cluster_running
    _cluster_running = True
    cluster = LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None,
        worker_dashboard_address=None, timeout=120,
        # With the dashboard off the scheduler still serves its HTTP routes, on port 8787
        # unless told otherwise: a free loopback port keeps two runs side by side from
        # warning "Port 8787 is already in use".
        scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
    )
    try:
        yield cluster.scheduler_address
    finally:
        cluster.close(timeout=30)


# The options on the cluster in the slow run: the same writer (`cluster.apply_file`) and
# options run here in test_apply_output_dir_writes_what_apply_prints[options1], and the
# cluster's own path with the default options.
@pytest.mark.parametrize("options", [(), pytest.param(("--format", "tsv", "--join"), marks=pytest.mark.slow)])
def test_apply_on_the_cluster_writes_what_apply_prints(plural_model, word_files, tmp_path, scheduler, options):
    out = tmp_path / "out"
    proc = _fstsynth(
        "apply", str(plural_model), *map(str, word_files), "--output-dir", str(out), "--scheduler", scheduler, *options
    )
    assert proc.returncode == 0, proc.stderr
    for path in word_files:
        assert (out / path.name).read_bytes() == _reference(plural_model, path, *options)[0], path.name
    warnings = proc.stderr.decode()
    assert f"{word_files[1]}: line 4 has a tab" in warnings
    # All IPA segments, and the model's features were derived from IPA: read by them.
    assert "never seen in training, read by their IPA features: ʔ (2 words), f (1 word), q (1 word)" in warnings


def test_the_dask_bag_recipe_writes_what_apply_prints(plural_model, word_files, tmp_path, scheduler):
    import dask.bag
    from distributed import Client

    import fstsynth

    model = fstsynth.load(plural_model)
    inputs = word_files[:2]  # dask reads an empty file as no partition
    with Client(scheduler, set_as_default=False) as client:
        lines = dask.bag.read_text([str(p) for p in inputs], blocksize=None)
        written = lines.map_partitions(model.apply_partition).to_textfiles(
            str(tmp_path / "*.txt"), last_endline=True, scheduler=client.get
        )
    for path, out in zip(inputs, written):
        assert Path(out).read_bytes() == _reference(plural_model, path)[0], path.name


def _problems(directory: Path) -> Path:
    """Two small problems with `?` cells, and a file that is not a problem."""
    directory.mkdir()
    text = (DATA / "plural.tsv").read_text(encoding="utf-8")
    rows = [line.split("\t") for line in text.splitlines() if line and not line.startswith("#")]
    for k, name in enumerate(("first.json", "second.json")):
        data = [[s, "?" if n % 5 == k else t] for n, (s, t) in enumerate(rows)]
        problem = {"columns": ["singular", "plural"], "data": data}
        (directory / name).write_text(json.dumps(problem, ensure_ascii=False), encoding="utf-8")
    (directory / "broken.json").write_text("{", encoding="utf-8")
    return directory


# Slow (18 s under load, two `solve` runs of two problems): the default run keeps the
# cluster's apply paths above; CI runs this one with the slow tests.
@pytest.mark.slow
def test_solve_on_the_cluster_writes_what_solve_writes(tmp_path, scheduler):
    problems = _problems(tmp_path / "problems")
    options = ("--variant", "token", "--quiet")
    here = _fstsynth("solve", str(problems), "--out", str(tmp_path / "here"), *options)
    there = _fstsynth("solve", str(problems), "--out", str(tmp_path / "there"), "--scheduler", scheduler, *options)
    assert here.returncode == there.returncode == 0, there.stderr
    names = sorted(p.name for p in (tmp_path / "here").iterdir())
    assert names == ["first.json", "second.json"]
    assert sorted(p.name for p in (tmp_path / "there").iterdir()) == names
    for name in names:
        assert (tmp_path / "there" / name).read_bytes() == (tmp_path / "here" / name).read_bytes()
    assert b"broken.json" in there.stderr

    def lines(proc: subprocess.CompletedProcess) -> list[str]:  # less the timings
        return [line.rsplit(" in ", 1)[0] for line in proc.stdout.decode().splitlines()]

    assert lines(there) == lines(here)
