"""`fstsynth apply` as a user runs it (`fstsynth.apply_command`): blank lines, how
its output is written next to the library's, and `--jobs N` (the same bytes as one
process; Ctrl-C and a closed pipe end it as they end one process)."""

from __future__ import annotations

import io
import os
import random
import select
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from conftest import ROOT, as_from_a_terminal
from forked import run_forked
from fstsynth.block_pool import FILE_BLOCK_BYTES, map_blocks, map_file
from fstsynth.errors import UserError
from fstsynth.stream import blocks
from test_fast_apply import _env
from test_fast_apply import plural_model as plural_model  # (a fixture)


def _main() -> None:
    from fstsynth.__main__ import main

    main()


def _apply(model: Path, *args: str, stdin: bytes = b"") -> subprocess.CompletedProcess:
    """`fstsynth apply MODEL ARGS` as `python -m fstsynth` runs it, in a child forked
    from this process (tests/forked.py: no new interpreter's start-up per run)."""
    argv = ["fstsynth", "apply", str(model), *args]
    code, out, err = run_forked(_main, argv, stdin, _env())
    return subprocess.CompletedProcess(argv, code, out, err)


@pytest.mark.parametrize("plain_lines", [0, 200])
def test_a_blank_line_gives_a_blank_line(plural_model, plain_lines):
    """On the line path (a few lines) and the byte path (a block of many): a blank line,
    or one of spaces only, prints a blank line, not what the model writes for the empty
    word (the plural's suffix)."""
    lines = ["k a t"] * plain_lines + ["k a t", "", "d ɔ g", ""]
    proc = _apply(plural_model, stdin="".join(f"{line}\n" for line in lines).encode())
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout.decode() == "k a t s\n" * plain_lines + "k a t s\n\nd ɔ g z\n\n"
    proc = _apply(plural_model, stdin=b"k a t\n   \nd \xc9\x94 g\n")
    assert proc.stdout.decode() == "k a t s\n\nd ɔ g z\n"


def test_the_command_and_the_library_write_an_unspaced_word_as_the_readme_says(plural_model):
    """`apply MODEL kiːp` prints tokens separated by spaces; `model.apply("kiːp")`
    returns the word run together, as typed; docs/commands.md says so, and why."""
    import fstsynth

    proc = _apply(plural_model, "kiːp")
    assert proc.stdout.decode() == "k iː p s\n"
    assert fstsynth.load(plural_model).apply("kiːp") == "kiːps"
    assert _apply(plural_model, "--join", "kiːp").stdout.decode() == "kiːps\n"
    readme = " ".join((ROOT / "docs" / "commands.md").read_text(encoding="utf-8").split())
    assert (
        "`apply` writes every prediction as tokens separated by spaces, also for a word typed unspaced "
        "(`fstsynth apply MODEL kol` prints `k o l l a r`), where the library's `model.apply(\"kol\")` returns "
        "`kollar`, as the word was typed."
    ) in readme


def _mixed_input(count: int, seed: int) -> bytes:
    """Lines of tokens, with comments, blank lines, TSV lines, unspaced words and
    unseen tokens (one kind on a line, several, alone) among them."""
    rng = random.Random(seed)
    tokens = ["k", "a", "t", "d", "ɔ", "g", "b", "ʊ", "ʃ", "ɪ", "p", "s"]
    lines = []
    for _ in range(count):
        word = " ".join(rng.choice(tokens) for _ in range(rng.randint(1, 8)))
        roll = rng.random()
        lines.append(
            "" if roll < 0.02 else "# a comment" if roll < 0.03 else f"{word} Q" if roll < 0.05
            else "Q zz Q" if roll < 0.055 else "kat" if roll < 0.065 else f"{word}\tk a t s" if roll < 0.07
            else "☃" if roll < 0.075 else word
        )
    return "".join(f"{line}\n" for line in lines).encode()


def test_blocks_mapped_by_two_workers_are_the_blocks_mapped_in_order(plural_model):
    """`map_blocks` over many small blocks: each block's result, in order, the same as
    mapping them in this process."""
    from fstsynth.apply_command import _block_applier

    data = _mixed_input(3000, 1)
    make = lambda: _block_applier(plural_model, None, None, " ", "plain", "utf-8")  # noqa: E731
    applier = make()
    here = [applier.apply(b) for b in blocks(io.BytesIO(data), chunk=2048)]
    there = list(map_blocks(blocks(io.BytesIO(data), chunk=2048), make, 2))
    assert len(here) == len(there) > 10
    assert [(a.data, a.text, a.unseen, a.tab_line) for a in here] == [
        (a.data, a.text, a.unseen, a.tab_line) for a in there
    ]


def _file_input(seed: int) -> bytes:
    """`_mixed_input` with a byte-order mark, a line longer than many blocks and a tab
    line late, and no newline at the end."""
    lines = _mixed_input(3000, seed).split(b"\n")
    lines[1700:1700] = [b"k a t " * 3000, "d ɔ g\tk a t s".encode()]
    return "\ufeff".encode() + b"\n".join(lines).rstrip(b"\n")


@pytest.mark.parametrize("start", [0, 5000])
def test_workers_reading_a_file_give_the_blocks_results_in_order(plural_model, tmp_path, start):
    """`map_file` with small blocks (a line holds many): the output, the unseen tokens
    and the first tab line (lines numbered from where reading starts, as on a stream)
    of mapping the file's blocks in this process, from any offset; the offset then at
    the end; a byte that is not UTF-8 named by its line."""
    from fstsynth.apply_command import _block_applier

    data = _file_input(3)
    path = tmp_path / "words.txt"
    path.write_bytes(data)
    make = lambda: _block_applier(plural_model, None, None, " ", "plain", "utf-8")  # noqa: E731
    here = [make().apply(b) for b in blocks(io.BytesIO(data[start:]), chunk=4096)]
    with path.open("rb") as handle:
        handle.seek(start)
        there = list(map_file(handle.fileno(), make, 2, encoding="utf-8", block_bytes=997))
        assert handle.tell() == len(data)
    assert len(there) > 10
    assert b"".join(a.data for a in there) == b"".join(a.data or a.text.encode() for a in here)
    assert sum((a.unseen for a in there), Counter()) == sum((a.unseen for a in here), Counter()) != Counter()
    tab_lines = [a.tab_line for a in here if a.tab_line is not None]
    first_tab = [a.tab_line for a in there if a.tab_line is not None][:1]
    assert first_tab == tab_lines[:1] != []
    path.write_bytes(data[:20_000] + b"\xff" + data[20_000:])
    line = data[:20_000].count(b"\n") + 1
    with path.open("rb") as handle, pytest.raises(UserError, match=f"^<stdin>: line {line}: not valid UTF-8$"):
        list(map_file(handle.fileno(), make, 2, encoding="utf-8", block_bytes=997))


@pytest.mark.parametrize("jobs", [2, 3, 5])
def test_workers_that_end_before_the_file_is_written_out(plural_model, tmp_path, jobs):
    """Fewer blocks than processes, or a worker done with its last block while the
    blocks before it are still being written: the output of one process."""
    from fstsynth.apply_command import _block_applier

    data = b"k a t\nd \xc9\x94 g\n" * 300
    path = tmp_path / "words.txt"
    path.write_bytes(data)
    make = lambda: _block_applier(plural_model, None, None, " ", "plain", "utf-8")  # noqa: E731
    expected = make().apply(next(blocks(io.BytesIO(data), chunk=len(data)))).data
    for block_bytes in (len(data) // 3 + 1, len(data) // 7 + 1):
        got = []
        with path.open("rb") as handle:
            for applied in map_file(handle.fileno(), make, jobs, encoding="utf-8", block_bytes=block_bytes):
                got.append(applied.data)
                time.sleep(0.02)  # (a slow reader: the workers are done, and gone, before it is)
        assert b"".join(got) == expected


@pytest.mark.parametrize("jobs", [2, 3])
def test_the_processes_share_the_blocks_of_a_file(plural_model, tmp_path, jobs):
    """`map_file`'s shares: each block made by one process, every worker made some, and
    the output is that of one process; `apply --jobs` prints the shares on standard error
    when asked (FSTSYNTH_JOBS_SHARES), and nothing else changes."""
    from fstsynth.apply_command import SHARES_VARIABLE, _block_applier
    from fstsynth.block_pool import Shares

    data = b"k a t\nd \xc9\x94 g\n" * 2000
    path = tmp_path / "words.txt"
    path.write_bytes(data)
    make = lambda: _block_applier(plural_model, None, None, " ", "plain", "utf-8")  # noqa: E731
    expected = make().apply(next(blocks(io.BytesIO(data), chunk=len(data)))).data
    shares = Shares()
    with path.open("rb") as handle:
        got = [applied.data for applied in map_file(handle.fileno(), make, jobs, encoding="utf-8",
                                                     block_bytes=1000, shares=shares)]
    assert b"".join(got) == expected
    # 26 blocks of 1,000 bytes, the last `jobs` of them made as 4 * jobs smaller ones
    # (TAIL_SPLIT: the processes end at most a small block apart).
    assert len(data) == 26_000
    assert sum(shares.blocks) == len(got) == 26 - jobs + 4 * jobs
    # (Each worker is sent blocks at once; the command's process makes those it would
    # otherwise wait for, how many depends on the machine's load.)
    assert len(shares.blocks) == len(shares.cpu) == jobs and min(shares.blocks[1:]) > 0, str(shares)
    assert 0 < shares.before < shares.cpu[0]
    one = _apply(plural_model, stdin=data)
    env = dict(_env(), **{SHARES_VARIABLE: "1"})
    many = subprocess.run([sys.executable, "-m", "fstsynth", "apply", str(plural_model), "--jobs", str(jobs)],
                          stdin=path.open("rb"), capture_output=True, env=env, cwd=ROOT)
    assert (many.returncode, many.stdout) == (one.returncode, one.stdout) == (0, expected)
    assert many.stderr.decode().startswith(f"fstsynth: apply --jobs {jobs}: CPU of the command "), many.stderr
    # (The command reads the file in blocks of FILE_BLOCK_BYTES: one here, so no worker.)
    assert many.stderr.count(b"\n") == 1 and b" s, 1 block (" in many.stderr
    assert many.stderr.endswith(b"; of its workers: none\n"), many.stderr


@pytest.mark.parametrize("jobs", [2, 3])
def test_the_timeline_has_each_process_and_block(plural_model, tmp_path, jobs):
    """`map_file`'s timeline (`block_pool.Timeline`): the events of every process, each
    process's in the order of its clock; each block made once, by one process, and
    written out in order after it was made; the output that of one process. `apply`
    fills one in when asked (FSTSYNTH_JOBS_TIMELINE), and nothing else changes."""
    from fstsynth.apply_command import TIMELINE_VARIABLE, _block_applier
    from fstsynth.block_pool import Timeline

    data = b"k a t\nd \xc9\x94 g\n" * 2000
    path = tmp_path / "words.txt"
    path.write_bytes(data)
    make = lambda: _block_applier(plural_model, None, None, " ", "plain", "utf-8")  # noqa: E731
    expected = make().apply(next(blocks(io.BytesIO(data), chunk=len(data)))).data
    timeline = Timeline(str(tmp_path / "timeline.tsv"))
    with path.open("rb") as handle:
        got = [applied.data for applied in map_file(handle.fileno(), make, jobs, encoding="utf-8",
                                                     block_bytes=1000, timeline=timeline)]
    timeline.save()
    assert b"".join(got) == expected
    events: dict[int, list[tuple[float, str, int]]] = {}
    for line in (tmp_path / "timeline.tsv").read_text().splitlines():
        pid, at, cpu, name, block = line.split("\t")
        events.setdefault(int(pid), []).append((float(at), name, int(block)))
    assert list(events)[-1] == os.getpid() and len(events) == jobs
    for marks in events.values():
        assert [at for at, _, _ in marks] == sorted(at for at, _, _ in marks)
    made = {block: (pid, at) for pid, marks in events.items() for at, name, block in marks if name == "made"}
    assert sum(name == "made" for marks in events.values() for _, name, _ in marks) == len(made) == len(got)
    # (Each worker is sent blocks at once; the command's process makes those it would
    # otherwise wait for, how many depends on the machine's load.)
    assert {pid for pid, _ in made.values()} >= set(events) - {os.getpid()}, "a worker made no block"
    written = [(block, at) for at, name, block in events[os.getpid()] if name == "written"]
    assert [block for block, _ in written] == list(range(len(got)))
    # (A worker's clock is the same as this process's: a block is written after it is made.)
    assert all(made[block][1] <= at for block, at in written)
    one = _apply(plural_model, stdin=data)
    env = dict(_env(), **{TIMELINE_VARIABLE: str(tmp_path / "command.tsv")})
    many = subprocess.run([sys.executable, "-m", "fstsynth", "apply", str(plural_model), "--jobs", str(jobs)],
                          stdin=path.open("rb"), capture_output=True, env=env, cwd=ROOT)
    assert (many.returncode, many.stdout, many.stderr) == (one.returncode, one.stdout, one.stderr)
    names = [line.split("\t")[3] for line in (tmp_path / "command.tsv").read_text().splitlines()]
    # (One block: the command's process makes it, with no worker.)
    assert names == ["main", "loaded", "applier", "forked", "make", "made", "out", "written", "stop", "stopped",
                     "end", "flushed", "exit"]


def test_jobs_on_a_file_print_the_same_bytes_as_one_process(plural_model):
    """Standard input a regular file of two blocks (the workers read theirs
    themselves); then with a byte that is not UTF-8 in the second block: the output,
    the warnings, the error and the exit code of one process. (From an offset:
    `test_workers_reading_a_file_give_the_blocks_results_in_order`.)"""
    piece = _file_input(4)
    data = piece * (FILE_BLOCK_BYTES // len(piece) + 1)
    assert FILE_BLOCK_BYTES < len(data) < 2 * FILE_BLOCK_BYTES
    one, two = (_apply(plural_model, "--jobs", jobs, stdin=data) for jobs in ("1", "2"))
    assert one.returncode == 0 and one.stdout.count(b"\n") > 15_000, one.stderr.decode()
    assert (two.returncode, two.stdout, two.stderr) == (one.returncode, one.stdout, one.stderr)
    whole = one.stdout
    at = (FILE_BLOCK_BYTES + len(data)) // 2  # in the second block
    bad = data[:at] + b"\xff" + data[at:]
    one, two = (_apply(plural_model, "--jobs", jobs, stdin=bad) for jobs in ("1", "2"))
    line = bad[:at].count(b"\n") + 1
    assert one.returncode == 2 and f"<stdin>: line {line}: not valid UTF-8" in one.stderr.decode()
    assert (two.returncode, two.stderr) == (one.returncode, one.stderr)
    # What is printed before the error: the blocks before the bad one (blocks of
    # another size than one process reads).
    assert whole.startswith(two.stdout) and whole.startswith(one.stdout) and two.stdout.count(b"\n") < line


@pytest.mark.slow  # (a few seconds: three commands on 8 blocks)
def test_jobs_on_a_large_file_print_the_same_bytes_as_one_process(plural_model, tmp_path):
    """Eight blocks of the command's size, plain lines with lines of every kind among
    them (a block that only the line path reads, a line across blocks, unseen tokens,
    a tab late): `--jobs 2` and `--jobs 3` print the bytes and warnings of one process."""
    rng = random.Random(5)
    tokens = ["k", "a", "t", "d", "ɔ", "g", "b", "ʊ", "ʃ", "ɪ", "p", "s"]
    parts, size = [], 0
    while size < 8 * FILE_BLOCK_BYTES:
        plain = "".join(" ".join(rng.choices(tokens, k=rng.randint(1, 9))) + "\n" for _ in range(5000)).encode()
        part = plain if rng.random() < 0.8 else _mixed_input(rng.randint(10, 1000), rng.randrange(1000))
        parts.append(part)
        size += len(part)
    parts.insert(len(parts) // 2, b"k a t " * 100_000 + b"\n")
    path = tmp_path / "words.txt"
    path.write_bytes(b"".join(parts))

    def run(jobs: str) -> subprocess.CompletedProcess:
        with path.open("rb") as stdin:
            return subprocess.run([sys.executable, "-m", "fstsynth", "apply", str(plural_model), "--jobs", jobs],
                                  stdin=stdin, capture_output=True, env=_env(), cwd=ROOT)

    one = run("1")
    assert one.returncode == 0 and one.stdout.count(b"\n") > 100_000, one.stderr.decode()
    assert b"has a tab" in one.stderr and b"Q (" in one.stderr
    for jobs in ("2", "3"):
        many = run(jobs)
        assert (many.returncode, many.stdout, many.stderr) == (one.returncode, one.stdout, one.stderr), jobs


@pytest.mark.parametrize("args", [[], ["--format", "tsv"], ["--join"]])
def test_jobs_print_the_same_bytes_as_one_process(plural_model, args):
    """A few thousand lines of every kind (comments, blank lines, TSV lines, unseen
    tokens, unspaced words), through `--jobs 2` and `--jobs 3`: the output and the
    warnings are those of one process."""
    data = _mixed_input(40_000, 2)  # several blocks, however the pipe cuts them
    one = _apply(plural_model, *args, stdin=data)
    assert one.returncode == 0, one.stderr.decode()
    assert "Q (" in one.stderr.decode() and one.stdout.count(b"\n") > 35_000
    for jobs in ("2", "3"):
        many = _apply(plural_model, *args, "--jobs", jobs, stdin=data)
        assert (many.returncode, many.stdout, many.stderr) == (one.returncode, one.stdout, one.stderr), jobs


def _started(model: Path, jobs: str, words: Path | None = None) -> subprocess.Popen:
    """`apply --jobs JOBS` reading a pipe that stays open (or the file `words`, which
    it does not get to the end of: its output is not read), after its first output."""
    with (words.open("rb") if words else open(os.devnull, "rb")) as file:
        proc = subprocess.Popen(
            [sys.executable, "-m", "fstsynth", "apply", str(model), "--jobs", jobs],
            stdin=file if words else subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(),
            cwd=ROOT, start_new_session=True, preexec_fn=as_from_a_terminal,
        )
    assert proc.stdout is not None
    if proc.stdin is not None:
        proc.stdin.write(b"k a t\n" * 5000)
        proc.stdin.flush()
    ready, _, _ = select.select([proc.stdout], [], [], 60)
    assert ready, "no output"
    assert proc.stdout.readline() == b"k a t s\n"
    return proc


@pytest.mark.parametrize("jobs,stdin", [("1", "pipe"), ("2", "pipe"), ("2", "file")])
def test_ctrl_c_ends_jobs_as_it_ends_one_process(plural_model, tmp_path, jobs, stdin):
    """Ctrl-C (SIGINT to the whole process group, as a terminal sends it): exit code 130
    and one line on standard error, whatever `--jobs` and standard input; no worker
    left running."""
    words = None
    if stdin == "file":
        words = tmp_path / "words.txt"
        words.write_bytes(b"k a t\n" * 500_000)
    proc = _started(plural_model, jobs, words)
    try:
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130
        assert err.decode().startswith("fstsynth: interrupted;") and err.count(b"\n") == 1, err.decode()
        time.sleep(0.5)
        with pytest.raises(ProcessLookupError):
            os.killpg(proc.pid, 0)  # the group is gone: no worker outlived the command
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_closed_pipe_ends_jobs_quietly(plural_model, tmp_path, jobs):
    """The reader goes away (`apply ... < words | head -1`): exit code 141 and nothing
    on standard error, whatever `--jobs`."""
    words = tmp_path / "words.txt"
    words.write_bytes(b"k a t\n" * 400_000)
    with words.open("rb") as stdin:
        proc = subprocess.Popen(
            [sys.executable, "-m", "fstsynth", "apply", str(plural_model), "--jobs", jobs],
            stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(), cwd=ROOT,
        )
    assert proc.stdout is not None and proc.stderr is not None
    try:
        assert proc.stdout.readline() == b"k a t s\n"
        proc.stdout.close()
        assert proc.wait(60) == 141
        assert proc.stderr.read() == b""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
