"""Commands run in a child forked from the test process: a command line's behaviour
(exit code, standard output and error) without a new interpreter's start-up and
imports for each run. `scripts/fuzz_inputs` runs its commands so too."""

from __future__ import annotations

import io
import os
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Callable


def run_forked(
    entry: Callable[[], object], argv: list[str], stdin: bytes = b"", env: dict[str, str] | None = None
) -> tuple[int, bytes, bytes]:
    """Call `entry()` (a command's entry point) with `sys.argv = argv` in a forked child
    whose standard streams are files: (exit code, stdout, stderr), the exit code being
    the one a process would exit with (SystemExit's, 1 for an uncaught exception, whose
    traceback is printed as Python prints it)."""
    with tempfile.TemporaryDirectory(prefix="forked-") as work:
        streams = [Path(work, name) for name in ("stdin", "stdout", "stderr")]
        streams[0].write_bytes(stdin)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            _child(entry, argv, streams, env)
        _, status = os.waitpid(pid, 0)
        return os.waitstatus_to_exitcode(status), streams[1].read_bytes(), streams[2].read_bytes()


def _child(entry: Callable[[], object], argv: list[str], streams: list[Path], env: dict[str, str] | None) -> None:
    code = 1
    try:
        for fd, path, flags in zip((0, 1, 2), streams, (os.O_RDONLY, os.O_WRONLY, os.O_WRONLY)):
            opened = os.open(path, flags | (os.O_CREAT | os.O_TRUNC if fd else 0), 0o600)
            os.dup2(opened, fd)
            os.close(opened)
        # New standard streams over the files, as the interpreter makes them at start-up
        # (a test runner may have replaced the objects, not the file descriptors).
        for fd, name in enumerate(("stdin", "stdout", "stderr")):
            like = getattr(sys, f"__{name}__")
            raw = io.FileIO(fd, "r" if fd == 0 else "w", closefd=False)
            buffered = io.BufferedReader(raw) if fd == 0 else io.BufferedWriter(raw)
            wrapper = io.TextIOWrapper(buffered, encoding=like.encoding, errors=like.errors, line_buffering=fd == 2)
            setattr(sys, name, wrapper)
            setattr(sys, f"__{name}__", wrapper)
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        sys.argv = argv
        try:
            entry()
            code = 0
        except SystemExit as exc:  # what the interpreter does with it at exit
            if exc.code is None or isinstance(exc.code, int):
                code = exc.code or 0
            else:
                sys.stderr.write(f"{exc.code}\n")
    except BaseException:  # noqa: BLE001 - an uncaught exception: Python prints its traceback
        traceback.print_exc()
    finally:
        for name in ("stdout", "stderr"):
            try:
                getattr(sys, name).flush()
            except BaseException:  # noqa: BLE001 - as at interpreter exit: nothing more to do
                pass
        os._exit(code)
