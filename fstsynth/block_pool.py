"""Blocks of input mapped in worker processes, results in input order (`apply --jobs N`).

Public API:
    map_blocks(blocks, make_applier, jobs) -> Iterator[Applied]
    map_file(fd, make_applier, jobs, *, encoding, errors="strict", block_bytes=FILE_BLOCK_BYTES, on_read=None)
        -> Iterator[Applied]
    FORKS, FILE_BLOCK_BYTES, SLOT_BYTES

Each worker makes its applier once (`make_applier()`: a forked worker may return the
one it inherited; a spawned one loads the model from its files) and maps whole blocks
with it (`stream.BlockApplier.apply`): a block's result
does not depend on the process, so the output is the same bytes whatever `jobs` is.
At most `2 * jobs` blocks are in flight, so memory stays bounded by a few blocks per
worker however long the input, as with one process; and a result is written as soon as
it and those before it are made, as with one process. Workers ignore Ctrl-C: the
command's process stops them and reports the interrupt once, as with one job.

`map_blocks` reads the input itself and sends each block to a worker and its output
back, pickled through pipes: what a pipe on standard input needs. On a regular file
(`map_file`, forked workers only) that traffic would cost the command's process about
a third of the workers' own work, and with as many workers as cores it would hold
them back: there each worker reads its block's lines itself (byte offsets; a block
holds the lines that start in its range, `stream.file_block`) and writes its output
into one of `2 * jobs` buffers of memory shared with the command's process (a larger
output comes back through the pipe), which writes them out in order. Lines are
counted in the command's process, in order: a worker numbers the lines of its block
from 1, and the command's process moves the number of a tab warning or an error.
"""

from __future__ import annotations

import mmap
import multiprocessing
import os
import queue
import signal
import threading
from collections import Counter, deque
from concurrent.futures import Future, ProcessPoolExecutor
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, NamedTuple, Sequence

if TYPE_CHECKING:
    from fstsynth.stream import Applied, Block, BlockApplier

#: Whether workers are forked (they start with a copy of this process: its applier
#: too, without pickling it), rather than spawned.
FORKS = "fork" in multiprocessing.get_all_start_methods()

#: The worker's applier (set once in each worker by `_start`).
_applier: "BlockApplier | None" = None
#: A forked worker's output buffers, shared with the command's process (`map_file`;
#: index: the slot a block is given).
_slots: "Sequence[mmap.mmap]" = ()


def _start(make_applier: Callable[[], "BlockApplier"], slots: "Sequence[mmap.mmap]") -> None:
    global _applier, _slots
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _applier = make_applier()
    _slots = slots


def _pool(
    make_applier: Callable[[], "BlockApplier"], jobs: int, fork: bool, slots: "Sequence[mmap.mmap]" = ()
) -> ProcessPoolExecutor:
    """`jobs` workers, started now, each with its applier (and `slots`: forked only)."""
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, not {jobs}")
    # fork: a worker starts in milliseconds, with the modules already imported.
    context = multiprocessing.get_context("fork" if fork else None)
    pool = ProcessPoolExecutor(
        max_workers=jobs, mp_context=context, initializer=_start, initargs=(make_applier, slots)
    )
    pool.submit(int).result()  # the workers start now
    return pool


def _apply(block: "Block") -> "Applied":
    assert _applier is not None, "a worker without its applier"
    return _applier.apply(block)


def map_blocks(
    blocks: Iterable["Block"], make_applier: Callable[[], "BlockApplier"], jobs: int
) -> Iterator["Applied"]:
    """Each block's result, in the order of `blocks`, made in `jobs` worker processes
    (`make_applier`: called once in each; picklable where workers are not forked). A result is given as soon as it
    and those before it are made: a thread reads the blocks, so that the output does
    not wait for more input (a pipe written line by line gets each answer at once)."""
    pool = _pool(make_applier, jobs, FORKS)  # (the workers start before the reading thread does)
    # Futures in input order; at most 2 * jobs blocks read and not yet given out.
    pending: queue.Queue[Future | BaseException | None] = queue.Queue(maxsize=2 * jobs)
    stop = threading.Event()

    def read() -> None:
        try:
            for block in blocks:
                if stop.is_set():
                    return
                pending.put(pool.submit(_apply, block))
            pending.put(None)
        except BaseException as exc:  # (an error reading the input: raised where results are taken)
            pending.put(exc)

    reader = threading.Thread(target=read, name="fstsynth-apply-reader", daemon=True)
    reader.start()
    try:
        while True:
            item = pending.get()
            if item is None:
                return
            if isinstance(item, BaseException):
                raise item
            yield item.result()
    finally:
        stop.set()
        # On an error or an interrupt too, the blocks not started are cancelled and the
        # pool is waited for (the workers ignore Ctrl-C and finish at most their current
        # block, a small one): a pool left running races the interpreter's exit, whose
        # hook then writes to the pool's closed wake-up pipe and prints a traceback.
        pool.shutdown(wait=True, cancel_futures=True)


#: `map_file`: bytes of the file per block (a block holds the lines that start in them).
FILE_BLOCK_BYTES = 1 << 19
#: `map_file`: a block's output up to this many bytes goes through shared memory.
SLOT_BYTES = 4 << 20



class _FileResult(NamedTuple):
    """A block of a file as a worker made it: `size` output bytes, in its slot unless
    `data` holds them; the unseen tokens; the first line with a tab and the number of
    lines, counted within the block."""

    size: int
    data: bytes
    unseen: Counter
    tab_line: int | None
    lines: int


def _apply_range(fd: int, start: int, begin: int, end: int, slot: int, encoding: str, errors: str) -> _FileResult:
    from fstsynth.stream import file_block

    assert _applier is not None, "a worker without its applier"
    block = file_block(fd, start, begin, end)
    if not block.data:
        return _FileResult(0, b"", Counter(), None, 0)
    applied = _applier.apply(block)
    out = applied.data or applied.text.encode(encoding, errors)
    lines = block.data.count(b"\n")
    if len(out) > SLOT_BYTES:
        return _FileResult(len(out), out, applied.unseen, applied.tab_line, lines)
    _slots[slot][: len(out)] = out
    return _FileResult(len(out), b"", applied.unseen, applied.tab_line, lines)


def map_file(
    fd: int, make_applier: Callable[[], "BlockApplier"], jobs: int, *, encoding: str, errors: str = "strict",
    block_bytes: int = FILE_BLOCK_BYTES, on_read: Callable[[int], None] | None = None,
) -> Iterator["Applied"]:
    """`map_blocks` for a regular file open on `fd`, from its offset to its end, read by
    the workers themselves (see the module docstring; forked workers only). Each
    block's result, in order: `data` the bytes to print (the line path's text encoded
    with `encoding` and `errors`, as the output stream would); the tab line numbered
    from the offset, as on a stream. The offset of `fd` ends at
    the end of the file, as if it had been read. `on_read`: called with the bytes given
    out to the workers so far."""
    from fstsynth.stream import Applied, LineError

    if not FORKS:
        raise ValueError("map_file needs forked workers")
    start = os.lseek(fd, 0, os.SEEK_CUR)
    depth = 2 * jobs  # blocks in flight
    slots = [mmap.mmap(-1, SLOT_BYTES) for _ in range(depth)]  # (shared: the workers fork after)
    pool = _pool(make_applier, jobs, True, slots)
    size = os.fstat(fd).st_size
    offset = start

    def submit(slot: int) -> None:
        nonlocal offset, size
        if offset >= size:
            size = os.fstat(fd).st_size  # (a file still growing is read to its end, as a stream is)
            if offset >= size:
                return
        end = min(offset + block_bytes, size)
        pending.append((pool.submit(_apply_range, fd, start, offset, end, slot, encoding, errors), slot))
        offset = end
        if on_read is not None:
            on_read(offset - start)

    pending: deque[tuple[Future, int]] = deque()
    lines = 0
    try:
        for slot in range(depth):
            submit(slot)
        while pending:
            future, slot = pending.popleft()
            try:
                done: _FileResult = future.result()
            except LineError as exc:
                raise exc.shifted(lines) from None
            data = done.data or slots[slot][: done.size]  # (a copy: the slot is used again)
            tab_line = None if done.tab_line is None else lines + done.tab_line
            yield Applied(data, done.unseen, "", tab_line)
            lines += done.lines
            submit(slot)  # the slot is free: its output was taken
        os.lseek(fd, offset, os.SEEK_SET)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
