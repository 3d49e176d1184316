"""fileio: a Ctrl-C at the worst moments of a write, and writers and readers at once.

The interrupts here are real SIGINTs sent by the process to itself at a chosen point
(through a wrapped system call), so they arrive exactly where a user's Ctrl-C could.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from fstsynth import fileio

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def ctrl_c_raises():
    """SIGINT raises KeyboardInterrupt here even if pytest was started with it ignored."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def ctrl_c() -> None:
    os.kill(os.getpid(), signal.SIGINT)


def write_version(target: Path, text: str) -> None:
    with fileio.atomic_directory(target) as tmp:
        (tmp / "a").write_text(text)
        (tmp / "b").write_text(text)


def listing(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


@pytest.mark.parametrize("existing", [True, False])
def test_ctrl_c_during_the_swap_takes_effect_right_after_it(tmp_path, monkeypatch, existing):
    target = tmp_path / "model"
    if existing:
        write_version(target, "previous")
    real = fileio._swap_in

    def swap_with_ctrl_c(*args):
        ctrl_c()  # pressed while the new version is being put in place
        return real(*args)

    monkeypatch.setattr(fileio, "_swap_in", swap_with_ctrl_c)
    before = len(fileio.completed_writes())
    with pytest.raises(KeyboardInterrupt):
        write_version(target, "new")
    # The swap was not cut in two, the run knows it finished, and nothing is left over.
    assert (target / "a").read_text() == (target / "b").read_text() == "new"
    assert fileio.completed_writes()[before:] == [target]
    assert fileio.interrupted_summary(before) == (
        f"files being written were left as they were; {target} had been written whole before the interrupt"
    )
    assert listing(tmp_path) == ["model"]


def test_ctrl_c_while_the_temporary_directory_is_made_leaves_nothing(tmp_path, monkeypatch):
    target = tmp_path / "model"
    write_version(target, "previous")
    real_mkdir = os.mkdir

    def mkdir_then_ctrl_c(*args, **kwargs):
        real_mkdir(*args, **kwargs)
        ctrl_c()  # after the directory exists, before anything knows to remove it

    monkeypatch.setattr(os, "mkdir", mkdir_then_ctrl_c)
    before = len(fileio.completed_writes())
    with pytest.raises(KeyboardInterrupt):
        write_version(target, "new")
    monkeypatch.undo()
    assert (target / "a").read_text() == "previous"
    assert listing(tmp_path) == ["model"]
    assert fileio.interrupted_summary(before) == "files being written were left as they were"


def test_ctrl_c_while_the_temporary_file_is_made_leaves_nothing(tmp_path, monkeypatch):
    target = tmp_path / "answers.json"
    target.write_text("previous")
    real_open = os.open

    def open_then_ctrl_c(*args, **kwargs):
        fd = real_open(*args, **kwargs)
        ctrl_c()
        return fd

    monkeypatch.setattr(os, "open", open_then_ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        fileio.atomic_write_text(target, "new")
    monkeypatch.undo()
    assert target.read_text() == "previous"
    assert listing(tmp_path) == ["answers.json"]


def test_ctrl_c_during_the_clean_up_does_not_cut_it_short(tmp_path, monkeypatch):
    """A second Ctrl-C while an interrupted write removes its temporary."""
    target = tmp_path / "model"
    real_rmtree = fileio.shutil.rmtree

    def rmtree_with_ctrl_c(*args, **kwargs):
        ctrl_c()
        real_rmtree(*args, **kwargs)

    monkeypatch.setattr(fileio.shutil, "rmtree", rmtree_with_ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        with fileio.atomic_directory(target) as tmp:
            (tmp / "a").write_text("half")
            ctrl_c()
    monkeypatch.undo()
    assert listing(tmp_path) == []


def test_an_ignored_sigint_stays_ignored(tmp_path):
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    target = tmp_path / "f"
    fileio.atomic_write_text(target, "x")
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    assert target.read_text() == "x"


def test_the_fallback_swap_puts_the_previous_version_back_if_the_second_rename_fails(tmp_path, monkeypatch):
    target = tmp_path / "model"
    write_version(target, "previous")
    monkeypatch.setattr(fileio, "_renameat2", lambda a, b, flags: -1)
    real_rename = os.rename

    def rename(a, b):
        if Path(b) == target and ".tmp-" in Path(a).name:  # the new version's rename
            raise OSError(28, "No space left on device")
        real_rename(a, b)

    monkeypatch.setattr(os, "rename", rename)
    with pytest.raises(fileio.Error, match="No space left on device"):
        write_version(target, "new")
    monkeypatch.undo()
    assert (target / "a").read_text() == "previous"
    assert listing(tmp_path) == ["model"]


WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from fstsynth import fileio
    target, name, rounds = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    for r in range(rounds):
        with fileio.atomic_directory(target) as tmp:
            for f in "abc":
                (tmp / f).write_text(f"{name} {r}" * 2000)
    """
)


def test_concurrent_writers_and_readers_see_whole_versions(tmp_path):
    """Three processes replace one directory 30 times each while this one reads it: a
    read through `stable_directory` gets one version's files, all of them (never two
    versions mixed, no file vanished); the last swap wins; nothing is left over."""
    target = tmp_path / "model"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    writers = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(target), f"w{k}", "30"], env=env)
        for k in range(3)
    ]
    reads = 0
    while any(w.poll() is None for w in writers):
        if not target.exists():
            continue
        with fileio.stable_directory(target) as snapshot:
            texts = {(snapshot / f).read_text() for f in "abc"}
        assert len(texts) == 1, "a read mixed two versions"
        reads += 1
    assert [w.returncode for w in writers] == [0, 0, 0]
    assert reads > 0
    assert listing(tmp_path) == ["model"]
    texts = {(target / f).read_text() for f in "abc"}
    assert len(texts) == 1 and texts.pop().startswith(("w0 29", "w1 29", "w2 29"))


def test_logging_set_up_when_the_first_message_comes():
    """`apply` defers logging's set-up (importing `logging` is start-up time); a message
    still comes out as every command prints one."""
    code = (
        "import sys\n"
        "from fstsynth import fileio\n"
        "fileio.log_to_stderr_when_needed()\n"
        "assert 'logging' not in sys.modules\n"
        "fileio.logger('fstsynth.x').info('not shown')\n"
        "fileio.logger('fstsynth.x').warning('a %s', 'warning')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stderr) == (0, "fstsynth: a warning\n")
