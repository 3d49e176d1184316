"""Atomic writes: a file or directory fstsynth writes appears whole or not at all.

Public API:
    atomic_write_text(path, text), atomic_write_bytes(path, data)
    atomic_directory(path)   (context manager yielding a temporary directory to fill)

A file is written to a temporary name in the same directory, flushed to disk and renamed
over the target. A directory is built beside the target and swapped in by renames; an
interrupted run leaves the previous version and, at worst, a hidden `.name.tmp-*`
directory that the next run removes.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path
from typing import Iterator

from fstsynth.errors import UserError


class Error(UserError):
    """An output path cannot be written."""


def _check_parent(path: Path) -> Path:
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise Error(f"{path}: cannot write: directory {parent} does not exist")
    if not os.access(parent, os.W_OK):
        raise Error(f"{path}: cannot write: directory {parent} is not writable")
    return parent


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    path = Path(path)
    parent = _check_parent(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.tmp-", dir=parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def atomic_write_text(path: str | Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def _remove_stale(parent: Path, name: str) -> None:
    for stale in parent.glob(f".{name}.tmp-*"):
        shutil.rmtree(stale, ignore_errors=True)
    for stale in parent.glob(f".{name}.old-*"):
        shutil.rmtree(stale, ignore_errors=True)


@contextlib.contextmanager
def atomic_directory(path: str | Path) -> Iterator[Path]:
    """Yield an empty temporary directory; on success it replaces `path`."""
    path = Path(path)
    parent = _check_parent(path)
    if path.exists() and not path.is_dir():
        raise Error(f"{path}: exists and is not a directory; not overwriting it")
    _remove_stale(parent, path.name)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.tmp-", dir=parent))
    try:
        yield tmp
        for child in tmp.iterdir():
            with open(child, "rb") as handle:
                os.fsync(handle.fileno())
        if path.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{path.name}.old-", dir=parent))
            os.rmdir(old)
            os.rename(path, old)
            os.rename(tmp, path)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(tmp, path)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
