"""Atomic writes: a file or directory fstsynth writes appears whole or not at all.

Public API:
    atomic_write_text(path, text), atomic_write_bytes(path, data)
    atomic_directory(path)   (context manager yielding a temporary directory to fill)
    temporary_file(path), commit_file(tmp, path)   (for writers that need a file name)
    check_writable(path)     (fail early, before hours of work, if `path` cannot be written)
    stable_directory(path)   (context manager: a path to the directory as it is now,
                              kept whole while in use, for readers of several files)
    completed_writes()       (paths this process has replaced, in order: what an
                              interrupted run had already finished)
    interrupted_summary(since=0), interrupt_reported()   (one line for the user after a
                             Ctrl-C, and whether it was given)
    watch_interrupts(), interrupt_requested(), raise_if_interrupted()
                             (the command line's Ctrl-C handler, which also remembers)
    logger(name), log_to_stderr_when_needed(), set_up_deferred_logging()
                             (`logging` imported only when a message comes)
    Error

A file is written to a hidden temporary name in the same directory
(`.NAME.tmp-PID-XXXX`), flushed to disk and renamed over the target; the directory is
then synced so that the rename itself survives a crash. A directory is built beside the
target and swapped in with one atomic `renameat2(RENAME_EXCHANGE)` (Linux), falling back
to two renames elsewhere. Several processes may replace the same target at once: the
last swap wins, none fails, and a reader that goes through `stable_directory` reads
one version's files, never a mix (the writer removes a replaced version only once its
readers are done). Either way an interrupted
run leaves the previous version in place: SIGINT cleans up on the way out; SIGKILL can
leave a hidden temporary, which the next write to the same target removes once the
process that made it (its PID is in the name) is gone. If a run died between the two
fallback renames, the next run puts the previous directory back before doing anything
else.

A Ctrl-C (SIGINT) is held back for the few system calls that create a temporary and
register it for removal, that swap or rename the result into place and record it as
done, and that remove a temporary on the way out: it takes effect right after them. So
an interrupted run never leaves a temporary behind, never stops between the two
fallback renames, and `completed_writes()` tells exactly which targets were replaced.

Temporary files and directories are created private (mkstemp/mkdtemp use 0600/0700)
and get the usual permissions (0666/0777 minus the umask) before they are renamed, so a
model directory can be shared like any other file.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import signal
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from fstsynth.errors import UserError

if TYPE_CHECKING:
    import logging

try:
    import fcntl
except ImportError:  # not POSIX
    fcntl = None  # type: ignore[assignment]

#: Whether a command asked for logging to be set up only once a message comes
#: (`log_to_stderr_when_needed`).
_logging_deferred = False


def log_to_stderr_when_needed() -> None:
    """Log as every command does (`fstsynth: message` on standard error, warnings and
    worse), set up once a message comes through `logger` (or `set_up_deferred_logging`
    is called): `apply` logs nothing in a usual run, and importing `logging` was 7% of
    a one-word `apply`."""
    global _logging_deferred
    _logging_deferred = True


def set_up_deferred_logging() -> None:
    """Set up the logging `log_to_stderr_when_needed` deferred, if not done yet (before
    running code that logs through `logging` itself)."""
    global _logging_deferred
    if _logging_deferred:
        _logging_deferred = False
        import logging

        logging.basicConfig(level=logging.WARNING, format="fstsynth: %(message)s", force=True)


def logger(name: str) -> "logging.Logger":
    """`logging.getLogger(name)`, `logging` imported now (see `log_to_stderr_when_needed`)."""
    import logging

    set_up_deferred_logging()
    return logging.getLogger(name)


def _log() -> "logging.Logger":
    return logger(__name__)


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


class Error(UserError):
    """An output path cannot be written."""


def check_writable(path: str | Path) -> Path:
    """Raise Error unless `path` could be created or replaced; return its directory."""
    path = Path(path)
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.exists():
        raise Error(f"{path}: cannot write: directory {parent} does not exist")
    if not parent.is_dir():
        raise Error(f"{path}: cannot write: {parent} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise Error(f"{path}: cannot write: directory {parent} is not writable")
    return parent


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _fsync_directory(directory: Path) -> None:
    with contextlib.suppress(OSError):  # some filesystems cannot open or sync directories
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _os_error(path: Path, exc: OSError) -> Error:
    return Error(f"{path}: cannot write: {exc.strerror or exc}")


# ------------------------------------------------------------------ interrupts

_completed: list[Path] = []
_interrupted = False
_reported = False


def interrupt_reported() -> bool:
    """Whether `interrupted_summary` has been asked for (the user has been told)."""
    return _reported


def _on_interrupt(signum: int, frame: Any) -> None:
    global _interrupted
    _interrupted = True
    raise KeyboardInterrupt


def watch_interrupts() -> None:
    """Make Ctrl-C raise KeyboardInterrupt *and* remember that it was pressed.

    Some C code that calls back into Python clears whatever exception it gets back: a
    KeyboardInterrupt raised there is lost. Seen: SIGINT while scipy, imported by lingpy
    at start-up, loads numpy's random module; `learn` then went on and wrote its model,
    exit 0. With this handler a lost interrupt is still known: no file or directory is
    replaced after it (the writers here check), and the command line ends as
    interrupted. Installed only over Python's default handler: an inherited SIG_IGN
    (a background job) or an application's own handler is left alone.

    A Ctrl-C that lands in a finalizer (`__del__`, a weakref callback: Python cannot
    raise from there) is not printed as "Exception ignored in ..." with a traceback
    either: it is remembered like the others, and the command ends as interrupted.
    Seen: `solve` interrupted 1.7 s into start-up printed such a traceback."""
    if threading.current_thread() is threading.main_thread() and (
        signal.getsignal(signal.SIGINT) is signal.default_int_handler
    ):
        signal.signal(signal.SIGINT, _on_interrupt)
        if not isinstance(sys.unraisablehook, _QuietInterrupts):
            sys.unraisablehook = _QuietInterrupts(sys.unraisablehook)


class _QuietInterrupts:
    """`sys.unraisablehook` that leaves out the interrupts `_on_interrupt` raised."""

    def __init__(self, previous: Any) -> None:
        self.previous = previous

    def __call__(self, unraisable: Any) -> None:
        if not (_interrupted and isinstance(unraisable.exc_value, KeyboardInterrupt)):
            self.previous(unraisable)


def interrupt_requested() -> bool:
    """Whether Ctrl-C was pressed since `watch_interrupts()`."""
    return _interrupted


def raise_if_interrupted() -> None:
    """Raise KeyboardInterrupt if Ctrl-C was pressed, even if its exception was lost."""
    if _interrupted:
        raise KeyboardInterrupt


def completed_writes() -> list[Path]:
    """Every file or directory this process has swapped into place, in order."""
    return list(_completed)


def interrupted_summary(since: int = 0) -> str:
    """What an interrupted run leaves, in one line: `since` is `len(completed_writes())`
    when the command started. Calling it counts as telling the user (see
    `interrupt_reported`)."""
    global _reported
    _reported = True
    done = _completed[since:]
    kept = "files being written were left as they were"
    if not done:
        return kept
    what = str(done[-1]) if len(done) == 1 else f"{len(done)} files, the last {done[-1]},"
    return f"{kept}; {what} had been written whole before the interrupt"


class _HeldInterrupts:
    """Hold SIGINT back from `__enter__` to `release()` (or `__exit__`): a Ctrl-C that
    arrived meanwhile takes effect, as it would have, on release.

    Only the main thread can handle signals; elsewhere this does nothing. An inherited
    SIG_IGN stays ignored (a held signal is dropped); a handler installed by C code,
    which Python cannot put back, is left alone."""

    def __init__(self) -> None:
        self.held: list[int] = []
        self.previous: Any = None
        self.active = False

    def _hold(self, signum: int, frame: Any) -> None:
        self.held.append(signum)

    def __enter__(self) -> "_HeldInterrupts":
        if threading.current_thread() is threading.main_thread():
            self.previous = signal.getsignal(signal.SIGINT)
            if self.previous is not None:
                signal.signal(signal.SIGINT, self._hold)
                self.active = True
        return self

    def release(self) -> None:
        if not self.active:
            return
        self.active = False
        signal.signal(signal.SIGINT, self.previous)
        if self.held:
            if callable(self.previous):
                self.previous(signal.SIGINT, None)  # raises KeyboardInterrupt by default
            elif self.previous == signal.SIG_DFL:
                os.kill(os.getpid(), signal.SIGINT)

    def __exit__(self, *exc: object) -> None:
        self.release()


def _new_name(parent: Path, name: str, kind: str) -> Path:
    return parent / f".{name}.{kind}-{os.getpid()}-{os.urandom(4).hex()}"  # as secrets.token_hex(4)


# ------------------------------------------------------------------ stale temporaries

_STALE = re.compile(r"^\.(?P<name>.+)\.(?:tmp|old)-(?P<pid>\d+)-")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _stale_entries(parent: Path, name: str, kind: str) -> list[Path]:
    """Hidden temporaries of `name` left by processes that no longer exist."""
    out = []
    for entry in parent.glob(f".{_glob_escape(name)}.{kind}-*"):
        match = _STALE.match(entry.name)
        if match and match["name"] == name and not _alive(int(match["pid"])):
            out.append(entry)
    return sorted(out)


def _glob_escape(text: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", text)


def _remove(entry: Path) -> None:
    if entry.is_dir() and not entry.is_symlink():
        shutil.rmtree(entry, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            entry.unlink()


def _clean_stale(parent: Path, name: str) -> None:
    """Restore a directory lost between two fallback renames; remove dead temporaries."""
    target = parent / name
    olds = _stale_entries(parent, name, "old")
    if olds and not target.exists():
        _log().warning("%s: restoring the previous version from %s", target, olds[-1].name)
        os.rename(olds[-1], target)
        olds = olds[:-1]
    for entry in [*olds, *_stale_entries(parent, name, "tmp")]:
        _log().info("removing %s, left by an interrupted run", entry)
        _remove(entry)


# ------------------------------------------------------------------ files


@contextlib.contextmanager
def temporary_file(path: str | Path) -> Iterator[Path]:
    """Yield a hidden temporary path beside `path`; it is removed unless committed."""
    path = Path(path)
    parent = check_writable(path)
    _clean_stale(parent, path.name)
    held = _HeldInterrupts().__enter__()  # no Ctrl-C between creating it and the `try`
    tmp: Path | None = None
    try:
        try:
            while tmp is None:
                candidate = _new_name(parent, path.name, "tmp")
                try:
                    os.close(os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
                except FileExistsError:
                    continue
                except OSError as exc:
                    raise _os_error(path, exc) from None
                tmp = candidate
        finally:
            held.release()
        yield tmp
    finally:
        if tmp is not None:
            with _HeldInterrupts(), contextlib.suppress(FileNotFoundError):
                tmp.unlink()


def commit_file(tmp: Path, path: str | Path) -> None:
    """Sync `tmp` to disk, give it normal permissions and rename it over `path`."""
    path = Path(path)
    try:
        with open(tmp, "rb+") as handle:
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        with _HeldInterrupts():  # replaced and recorded as done, or neither
            raise_if_interrupted()
            os.replace(tmp, path)
            _completed.append(path)
    except OSError as exc:
        raise _os_error(path, exc) from None
    _fsync_directory(path.parent if str(path.parent) else Path("."))


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    path = Path(path)
    with temporary_file(path) as tmp:
        try:
            tmp.write_bytes(data)
        except OSError as exc:
            raise _os_error(path, exc) from None
        commit_file(tmp, path)


def atomic_write_text(path: str | Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


# ------------------------------------------------------------------ directories


_RENAME_NOREPLACE = 1


def _renameat2(a: Path, b: Path, flags: int) -> int:
    """renameat2(2): 0 on success, else the errno; -1 if the system has no renameat2."""
    import ctypes  # here: importing it costs a one-word `apply` start-up time

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return -1
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), flags) == 0:
        return 0
    return ctypes.get_errno()


def _unsupported(err: int) -> bool:
    return err in (-1, errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP)


def _swap_in(tmp: Path, path: Path, parent: Path) -> Path | None:
    """Put directory `tmp` at `path` in one step; return where the previous version is
    now (to be removed), or None if there was none.

    Another process may be swapping the same target at the same moment: each step is
    one atomic rename that either finds the target as it expects or fails and is tried
    again, so the last one to swap wins and no version is lost or mixed."""
    for _ in range(100):
        err = _renameat2(tmp, path, _RENAME_EXCHANGE)
        if err == 0:
            return tmp  # tmp now holds the previous version
        if err == errno.ENOENT and not path.exists():
            err = _renameat2(tmp, path, _RENAME_NOREPLACE)
            if err == 0:
                return None
            if err == errno.EEXIST:
                continue  # someone else created it meanwhile: exchange with theirs
        if _unsupported(err):
            return _swap_in_two_steps(tmp, path, parent)
        raise OSError(err, os.strerror(err), str(path))
    raise OSError(errno.EBUSY, "the target kept changing while being replaced", str(path))


def _swap_in_two_steps(tmp: Path, path: Path, parent: Path) -> Path | None:
    """Without renameat2 (not Linux, or a filesystem that cannot exchange): move the
    previous version aside, then rename. A SIGKILL between the two leaves no directory
    at `path`; the next write puts the previous version back (`_clean_stale`)."""
    aside = _new_name(parent, path.name, "old")
    old: Path | None = aside
    try:
        os.rename(path, aside)
    except FileNotFoundError:
        old = None
    try:
        os.rename(tmp, path)
    except OSError:
        if old is not None and not path.exists():
            os.rename(old, path)
        raise
    return old


@contextlib.contextmanager
def atomic_directory(path: str | Path) -> Iterator[Path]:
    """Yield an empty temporary directory; on success it replaces `path`."""
    path = Path(path)
    parent = check_writable(path)
    if path.exists() and not path.is_dir():
        raise Error(f"{path}: exists and is not a directory; not overwriting it")
    _clean_stale(parent, path.name)
    held = _HeldInterrupts().__enter__()  # no Ctrl-C between creating it and the `try`
    tmp: Path | None = None
    try:
        try:
            while tmp is None:
                candidate = _new_name(parent, path.name, "tmp")
                try:
                    os.mkdir(candidate, 0o700)
                except FileExistsError:
                    continue
                tmp = candidate
        finally:
            held.release()
        yield tmp
        for child in tmp.iterdir():
            with open(child, "rb") as handle:
                os.fsync(handle.fileno())
        _fsync_directory(tmp)
        os.chmod(tmp, 0o777 & ~_umask())
        with _HeldInterrupts():  # swapped in and recorded as done, or neither
            raise_if_interrupted()
            previous = _swap_in(tmp, path, parent)
            _completed.append(path)
            tmp = previous  # what is left to remove, on success or interrupt alike
        if tmp is not None:
            _remove_when_unread(tmp)
        _fsync_directory(parent)
    except BaseException as exc:
        if tmp is not None:
            with _HeldInterrupts():  # a second Ctrl-C does not cut the clean-up short
                shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(exc, OSError):
            raise _os_error(path, exc) from None
        raise


@contextlib.contextmanager
def stable_directory(path: str | Path, attempts: int = 50) -> Iterator[Path]:
    """Yield a path naming the directory `path` names now, which stays whole while the
    block runs even if a writer swaps another version in meanwhile: files read through
    it all come from one version, never a mix, and none vanishes.

    The directory is opened once and locked shared (`flock`); a writer that replaced it
    waits for that lock before removing it (`_remove_when_unread`). If `path` was
    swapped between the open and the lock, it is opened again (up to `attempts` times,
    then Error). Linux: the path is `/proc/PID/fd/N`, which child processes can read
    too; elsewhere `path` itself (no guarantee there)."""
    path = Path(path)
    fds = Path(f"/proc/{os.getpid()}/fd")
    if not fds.is_dir() or fcntl is None:
        yield path
        return
    for _ in range(attempts):
        try:
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        except NotADirectoryError:
            raise Error(f"{path}: not a directory") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
            try:
                current = os.stat(path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                current = False
            if current:
                yield fds / str(fd)
                return
        finally:
            os.close(fd)  # also releases the lock
    raise Error(f"{path}: the directory kept changing while being read; try again")


def _remove_when_unread(directory: Path, patience: float = 10.0) -> None:
    """Remove a replaced version once no reader holds it (see `stable_directory`); after
    `patience` seconds, remove it anyway (a reader still in it will fail and retry)."""
    fd = None
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        if fcntl is not None:
            waited = 0.0
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if waited >= patience:
                        _log().warning("%s: still being read after %.0f s; removing it", directory, patience)
                        break
                    time.sleep(0.05)
                    waited += 0.05
    except OSError:
        pass
    try:
        shutil.rmtree(directory, ignore_errors=True)
    finally:
        if fd is not None:
            os.close(fd)
