"""OpenFst FAR archives: write and read named transducers.

Public API:
    write_far(path, fsts), read_far(path, sha256=None) -> dict[str, pynini.Fst]
    check_far(path)   (reads the archive in a child process; raises Error if it fails)
    Error, ChecksumError

FSTs are written under their keys in sorted order (the default sttable FAR type drops,
with only a log line, a key added out of order). The write is atomic: the archive is
built under a hidden temporary name beside the target and renamed over it.

Reading is defensive because a FAR may come from someone else. OpenFst trusts the bytes
it reads: measured on this machine, a truncated or doctored archive (with its checksum
updated, so the model's SHA-256 check passes) made the reader hang or abort the whole
process (SIGABRT) in 3 of 60 random damages. So `read_far` first reads the archive in a
child process with a memory and time limit (`check_far`); only if the child reads and
verifies every FST cleanly does this process read it, and each FST is `verify()`-ed
again before use. The price is one short-lived child process (about 0.5 s) per read.

Given the SHA-256 the archive should have, `read_far` reads its bytes once, checks
them, and has both the child and OpenFst read a private copy of exactly those bytes:
the file may be replaced meanwhile (a model being relearned) without this process ever
reading a mix of the old and the new.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Iterator, Mapping

import pynini

from fstsynth.errors import UserError
from fstsynth.fileio import commit_file, temporary_file

log = logging.getLogger(__name__)

#: The magic number an sttable FAR starts with (little-endian int32 0x7eb2f35c).
FAR_MAGIC = bytes.fromhex("5cf3b27e")
#: Limits for the child process that reads an untrusted archive first.
CHECK_SECONDS = 60.0
CHECK_MEMORY_BYTES = 4 << 30


class Error(UserError):
    """A FAR file is missing or cannot be read."""


class ChecksumError(Error):
    """A FAR file's bytes are not those expected (`read_far(path, sha256=...)`)."""


def write_far(path: str | Path, fsts: Mapping[str, pynini.Fst]) -> None:
    path = Path(path)
    with temporary_file(path) as tmp:
        far = pynini.Far(str(tmp), mode="w", arc_type="standard", far_type="default")
        for key in sorted(fsts):
            far[key] = fsts[key]
        far.close()
        commit_file(tmp, path)


# The child: read every FST, verify it, print the keys as JSON. No project imports, so
# that it starts fast and depends on nothing but pynini.
_CHECK_CODE = """
import json, sys
import pynini
far = pynini.Far(sys.argv[1], mode="r")
keys = []
while not far.done():
    key = far.get_key()
    fst = far.get_fst()
    if not fst.verify():
        print(json.dumps({"bad": key}))
        sys.exit(3)
    keys.append(key)
    far.next()
print(json.dumps({"keys": keys}))
"""


def _limit_child() -> None:  # pragma: no cover - runs in the child
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (CHECK_MEMORY_BYTES, CHECK_MEMORY_BYTES))


def check_far(path: str | Path) -> list[str]:
    """Read the archive in a child process; return its keys, or raise Error saying why not."""
    path = Path(path)
    with open(path, "rb") as handle:
        head = handle.read(4)
    if head != FAR_MAGIC:
        raise Error(f"{path}: not a FAR archive (wrong magic number)")
    try:
        child = subprocess.run(
            [sys.executable, "-c", _CHECK_CODE, str(path)],
            capture_output=True,
            timeout=CHECK_SECONDS,
            preexec_fn=_limit_child,
        )
    except subprocess.TimeoutExpired:
        raise Error(
            f"{path}: corrupted FAR archive (reading it took over {CHECK_SECONDS:.0f} s)"
        ) from None
    if child.returncode < 0:
        name = signal.Signals(-child.returncode).name
        raise Error(f"{path}: corrupted FAR archive (the OpenFst reader crashed: {name})")
    if child.returncode != 0:
        try:
            bad = json.loads(child.stdout)["bad"]
            raise Error(f"{path}: corrupted FAR archive (transducer {bad!r} is inconsistent)")
        except (ValueError, KeyError, TypeError):
            pass
        log.debug("FAR check of %s failed: %s", path, child.stderr.decode(errors="replace")[-2000:])
        raise Error(f"{path}: not a readable FAR archive")
    try:
        return list(json.loads(child.stdout)["keys"])
    except (ValueError, KeyError, TypeError):
        raise Error(f"{path}: not a readable FAR archive") from None


def read_far(path: str | Path, *, isolated: bool = True, sha256: str | None = None) -> dict[str, pynini.Fst]:
    """All FSTs of the archive by key. `isolated=False` skips the child-process check:
    only for archives this process has just written itself. With `sha256`, the bytes
    read must have that checksum (else ChecksumError) and are the ones parsed."""
    path = Path(path)
    if not path.is_file():
        raise Error(f"{path}: FAR file not found")
    if sha256 is None:
        return _read(path, path, isolated)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise Error(f"{path}: cannot read: {exc.strerror or exc}") from None
    if hashlib.sha256(data).hexdigest() != sha256:
        raise ChecksumError(f"{path}: damaged (checksum does not match model.json)")
    with tempfile.TemporaryDirectory(prefix="fstsynth-far-") as tmp:
        copy = Path(tmp) / path.name
        copy.write_bytes(data)
        return _read(copy, path, isolated)


def _read(path: Path, shown: Path, isolated: bool) -> dict[str, pynini.Fst]:
    """Read `path`, naming it `shown` in errors."""
    try:
        keys = check_far(path) if isolated else None
    except Error as exc:
        raise Error(str(exc).replace(str(path), str(shown), 1)) from None
    fsts: dict[str, pynini.Fst] = {}
    # OpenFst reports a bad archive on stderr (dumping its bytes) before raising.
    with _quiet_stderr():
        try:
            far = pynini.Far(str(path), mode="r")
        except Exception:  # pynini raises FstIOError and kin for unreadable archives
            raise Error(f"{shown}: not a readable FAR archive") from None
        try:
            while not far.done():
                fst = far.get_fst().copy()
                if not fst.verify():
                    raise Error(f"{shown}: corrupted FAR archive (transducer {far.get_key()!r})")
                fsts[far.get_key()] = fst
                far.next()
        except Error:
            raise
        except Exception:
            raise Error(f"{shown}: corrupted FAR archive") from None
    if keys is not None and sorted(keys) != sorted(fsts):
        raise Error(f"{shown}: the archive changed while it was being read")
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
