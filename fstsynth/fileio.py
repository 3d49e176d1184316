"""Atomic writes: a file or directory fstsynth writes appears whole or not at all.

Public API:
    atomic_write_text(path, text), atomic_write_bytes(path, data)
    atomic_directory(path)   (context manager yielding a temporary directory to fill)
    temporary_file(path), commit_file(tmp, path)   (for writers that need a file name)
    check_writable(path)     (fail early, before hours of work, if `path` cannot be written)
    Error

A file is written to a hidden temporary name in the same directory
(`.NAME.tmp-PID-XXXX`), flushed to disk and renamed over the target; the directory is
then synced so that the rename itself survives a crash. A directory is built beside the
target and swapped in with one atomic `renameat2(RENAME_EXCHANGE)` (Linux), falling back
to two renames elsewhere. Either way an interrupted run leaves the previous version in
place: SIGINT cleans up on the way out; SIGKILL can leave a hidden temporary, which the
next write to the same target removes once the process that made it (its PID is in the
name) is gone. If a run died between the two fallback renames, the next run puts the
previous directory back before doing anything else.

Temporary files and directories are created private (mkstemp/mkdtemp use 0600/0700)
and get the usual permissions (0666/0777 minus the umask) before they are renamed, so a
model directory can be shared like any other file.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import logging
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Iterator

from fstsynth.errors import UserError

log = logging.getLogger(__name__)

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
        log.warning("%s: restoring the previous version from %s", target, olds[-1].name)
        os.rename(olds[-1], target)
        olds = olds[:-1]
    for entry in [*olds, *_stale_entries(parent, name, "tmp")]:
        log.info("removing %s, left by an interrupted run", entry)
        _remove(entry)


# ------------------------------------------------------------------ files


@contextlib.contextmanager
def temporary_file(path: str | Path) -> Iterator[Path]:
    """Yield a hidden temporary path beside `path`; it is removed unless committed."""
    path = Path(path)
    parent = check_writable(path)
    _clean_stale(parent, path.name)
    try:
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.tmp-{os.getpid()}-", dir=parent)
    except OSError as exc:
        raise _os_error(path, exc) from None
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def commit_file(tmp: Path, path: str | Path) -> None:
    """Sync `tmp` to disk, give it normal permissions and rename it over `path`."""
    path = Path(path)
    try:
        with open(tmp, "rb+") as handle:
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
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


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two directory entries; False if the system cannot."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):  # filesystem cannot exchange
        return False
    raise OSError(err, os.strerror(err), str(b))


@contextlib.contextmanager
def atomic_directory(path: str | Path) -> Iterator[Path]:
    """Yield an empty temporary directory; on success it replaces `path`."""
    path = Path(path)
    parent = check_writable(path)
    if path.exists() and not path.is_dir():
        raise Error(f"{path}: exists and is not a directory; not overwriting it")
    _clean_stale(parent, path.name)
    pid = os.getpid()
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.tmp-{pid}-", dir=parent))
    except OSError as exc:
        raise _os_error(path, exc) from None
    old: Path | None = None
    try:
        yield tmp
        for child in tmp.iterdir():
            with open(child, "rb") as handle:
                os.fsync(handle.fileno())
        _fsync_directory(tmp)
        os.chmod(tmp, 0o777 & ~_umask())
        if not path.exists():
            os.rename(tmp, path)
        elif _exchange(tmp, path):
            shutil.rmtree(tmp, ignore_errors=True)  # tmp now holds the previous version
        else:
            old = Path(tempfile.mkdtemp(prefix=f".{path.name}.old-{pid}-", dir=parent))
            os.rmdir(old)
            os.rename(path, old)
            os.rename(tmp, path)
            shutil.rmtree(old, ignore_errors=True)
        _fsync_directory(parent)
    except BaseException as exc:
        if old is not None and old.exists() and not path.exists():
            os.rename(old, path)  # interrupted between the two renames: put it back
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(exc, OSError):
            raise _os_error(path, exc) from None
        raise
