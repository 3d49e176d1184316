"""`python -m fstsynth` and the `fstsynth` command: the command line (`fstsynth.cli`).

Public API:
    main()

`main` installs the Ctrl-C handler that remembers (`fileio.watch_interrupts`), then
runs a plain `apply` without typer (`fstsynth.apply_command`), or imports the command line
itself, so that a Ctrl-C during start-up (importing lingpy,
numpy and pynini takes a second or two) ends as one anywhere else does: one line and
exit code 130, not a traceback. Nothing has been written by then.
"""

import sys

# Nothing but `sys` before `main` installs its Ctrl-C handler (a Ctrl-C while this module
# imported `typing` ended in a traceback); the annotations below are strings for that.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn

INTERRUPTED = 130
NOTHING_WRITTEN = "files being written were left as they were"


def _forget_unhandled_interrupt() -> None:
    """CPython marks a KeyboardInterrupt that ended a `PyRun_*` call (some extension
    modules run Python code that way while they are imported) as unhandled, and at exit
    kills the process with SIGINT, even though the command handled the interrupt and
    chose its exit code. Seen: 12 of 30 Ctrl-Cs during start-up ended by SIGINT instead
    of exit code 130. Clear the mark (where this CPython has it)."""
    import ctypes

    try:
        ctypes.c_int.in_dll(ctypes.pythonapi, "_Py_UnhandledKeyboardInterrupt").value = 0
    except (AttributeError, ValueError, OSError):
        pass


def main() -> None:
    try:
        from fstsynth import fileio  # the standard library only: quick to import

        fileio.watch_interrupts()
        from fstsynth.apply_command import plain_apply  # `apply` without typer: see there

        fileio.raise_if_interrupted()  # an interrupt that C code swallowed on the way
        code = plain_apply(sys.argv[1:])  # a plain `apply`; None for anything else
        if code is None:
            from fstsynth.cli import app

            fileio.raise_if_interrupted()
    except KeyboardInterrupt:
        _interrupted_at_start()
    if code is not None:
        if code == INTERRUPTED:
            _forget_unhandled_interrupt()
        sys.exit(code)
    try:
        app(prog_name="fstsynth")
    except SystemExit as exc:
        if exc.code == INTERRUPTED:
            _forget_unhandled_interrupt()
            # typer turns a Ctrl-C outside the command's body (while it reads the
            # arguments and imports what it needs for them) into exit 130, silently.
            if not fileio.interrupt_reported():
                sys.stderr.write(f"fstsynth: interrupted; {NOTHING_WRITTEN}\n")
        raise


def _interrupted_at_start() -> "NoReturn":
    sys.stderr.write(f"fstsynth: interrupted; {NOTHING_WRITTEN}\n")
    _forget_unhandled_interrupt()
    sys.exit(INTERRUPTED)


if __name__ == "__main__":
    main()
