"""How every command ends: the error guard its body runs in, the exit codes, and the
lines it writes (`fstsynth: error: ...`, `fstsynth: warning: ...`).

Public API:
    guarded(body, debug=False) -> int, echo(text, err=False), warn(message), error(message) -> int
    USER_ERROR, MISMATCH, BROKEN_PIPE, INTERRUPTED

Apart from the typer layer (`fstsynth.cli`): `fstsynth apply` runs without typer for a
plain command line (`fstsynth.apply_command`), and needs these too.
"""

from __future__ import annotations

import os
import sys
from typing import Callable

from fstsynth.errors import UserError
from fstsynth.fileio import completed_writes, interrupted_summary, raise_if_interrupted

#: Exit codes: a user error (and a usage error), `--check` finding a mismatch, a closed
#: output pipe (as a shell reports SIGPIPE), Ctrl-C.
USER_ERROR, MISMATCH, BROKEN_PIPE, INTERRUPTED = 2, 1, 141, 130


def echo(text: str, err: bool = False) -> None:
    """A line on standard output (or error), flushed at once, as `typer.echo` writes it
    (a batch of predictions reaches a reader as soon as it is made)."""
    stream = sys.stderr if err else sys.stdout
    stream.write(text + "\n")
    stream.flush()


def warn(message: str) -> None:
    """Print `fstsynth: warning: MESSAGE` on standard error."""
    echo(f"fstsynth: warning: {message}", err=True)


def error(message: str) -> int:
    """Print `fstsynth: error: MESSAGE`; the exit code of a user error."""
    echo(f"fstsynth: error: {message}", err=True)
    return USER_ERROR


def guarded(body: Callable[[], int | None], debug: bool = False) -> int:
    """Run a command body; its exit code (None: 0). User errors become one line
    `fstsynth: error: ...` and exit code 2 (`debug`: raised, for their traceback).

    Errors from the environment (a full disk, a file that vanished, no memory) are not
    bugs either, and get one line too; anything else keeps its traceback. A closed
    output pipe (`fstsynth apply ... | head`) ends the command quietly.
    """
    from fstsynth import guard

    written_before = len(completed_writes())
    try:
        code = body()
        raise_if_interrupted()  # a Ctrl-C whose exception some C code swallowed
        return code or 0
    except UserError as exc:
        if debug:
            raise
        return error(str(exc))
    except BrokenPipeError:
        # Python would complain again when flushing stdout at exit: point it at devnull.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return BROKEN_PIPE
    except OSError as exc:
        if debug:
            raise
        where = f"{exc.filename}: " if exc.filename else ""
        return error(f"{where}{exc.strerror or exc}")
    except MemoryError:
        if debug:
            raise
        return error("out of memory (see the Limits section of the README)")
    except guard.MemoryLimitExceeded as exc:
        guard.acknowledge_stop()
        return error(str(exc))
    except KeyboardInterrupt:
        echo(f"fstsynth: interrupted; {interrupted_summary(written_before)}", err=True)
        return INTERRUPTED
