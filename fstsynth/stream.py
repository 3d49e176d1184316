"""Streaming: lines in, in batches, so that applying a model to any input takes memory
bounded by a batch and writes its first outputs before the input has ended.

Public API:
    line_batches(stream, *, chunk=CHUNK_BYTES, name="<stdin>") -> Iterator[list[str]]
    CHUNK_BYTES

A batch is the complete lines of what the stream has ready, up to about `chunk` bytes:
a file or a fast pipe gives batches of thousands of lines (what the numpy walker needs
to be fast), a slow pipe one line at a time as it comes (so an interactive user sees
each answer at once). A line longer than a chunk is read whole, however long.
"""

from __future__ import annotations

from typing import BinaryIO, Iterator

from fstsynth.errors import UserError

#: Bytes read from the stream at a time (at most; fewer if fewer are ready).
CHUNK_BYTES = 1 << 16


def line_batches(stream: BinaryIO, *, chunk: int = CHUNK_BYTES, name: str = "<stdin>") -> Iterator[list[str]]:
    """The lines of a UTF-8 byte stream, in batches (see the module docstring).

    Only `\\n` ends a line (a trailing `\\r` is dropped: CRLF files read like LF ones;
    `str.splitlines` would also split at `\\x1c`, `\\u2028`, ...); a byte-order mark at
    the start is dropped. Bytes that are not UTF-8 raise UserError naming the line.
    """
    read = getattr(stream, "read1", stream.read)
    pending = b""
    lines_before = 0
    first = True
    while True:
        data = read(chunk)
        if not data:
            break
        pending += data
        end = pending.rfind(b"\n")
        if end < 0:
            continue
        block, pending = pending[: end + 1], pending[end + 1 :]
        lines = _decode(block, lines_before, name, first)
        first = False
        lines_before += len(lines)
        yield lines
    if pending:
        yield _decode(pending + b"\n", lines_before, name, first)


def _decode(block: bytes, lines_before: int, name: str, first: bool) -> list[str]:
    """Complete lines (`block` ends with a newline) as text."""
    try:
        text = block.decode("utf-8-sig" if first else "utf-8")
    except UnicodeDecodeError as exc:
        line = lines_before + block[: exc.start].count(b"\n") + 1
        raise UserError(f"{name}: line {line}: not valid UTF-8") from None
    lines = text.split("\n")
    lines.pop()  # after the last newline
    return [line[:-1] if line.endswith("\r") else line for line in lines]
