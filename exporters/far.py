"""OpenFst FAR archives: write and read named transducers.

Public API:
    write_far(path, fsts), read_far(path) -> dict[str, pynini.Fst], Error

FSTs are written under their keys in sorted order (the default sttable FAR type drops,
with only a log line, a key added out of order). The write is atomic.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from pathlib import Path
from typing import Iterator, Mapping

import pynini

from fstsynth.errors import UserError
from fstsynth.fileio import atomic_write_bytes


class Error(UserError):
    """A FAR file is missing or cannot be read."""


def write_far(path: str | Path, fsts: Mapping[str, pynini.Fst]) -> None:
    path = Path(path)
    fd, tmp = tempfile.mkstemp(suffix=".far")
    os.close(fd)
    try:
        far = pynini.Far(tmp, mode="w", arc_type="standard", far_type="default")
        for key in sorted(fsts):
            far[key] = fsts[key]
        far.close()
        data = Path(tmp).read_bytes()
    finally:
        os.unlink(tmp)
    atomic_write_bytes(path, data)


def read_far(path: str | Path) -> dict[str, pynini.Fst]:
    path = Path(path)
    if not path.is_file():
        raise Error(f"{path}: FAR file not found")
    fsts: dict[str, pynini.Fst] = {}
    # OpenFst reports a bad archive on stderr (dumping its bytes) before raising.
    with _quiet_stderr():
        try:
            far = pynini.Far(str(path), mode="r")
        except Exception:  # pynini raises FstIOError and kin for unreadable archives
            raise Error(f"{path}: not a readable FAR archive") from None
        try:
            while not far.done():
                fsts[far.get_key()] = far.get_fst().copy()
                far.next()
        except Exception:
            raise Error(f"{path}: corrupted FAR archive") from None
    return fsts


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)
