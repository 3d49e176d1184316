"""Blocks of input mapped in worker processes, results in input order (`apply --jobs N`).

Public API:
    map_blocks(blocks, make_applier, jobs) -> Iterator[Applied]
    map_file(fd, make_applier, jobs, *, encoding, errors="strict", block_bytes=FILE_BLOCK_BYTES, on_read=None)
        -> Iterator[Applied]
    FORKS, FILE_BLOCK_BYTES, SLOT_BYTES

A block's result does not depend on the process that makes it
(`stream.BlockApplier.apply`), so the output is the same bytes whatever `jobs` is.
Memory stays bounded by a few blocks per process however long the input, as with one
process; and a result is written as soon as it and those before it are made, as with
one process. Workers ignore Ctrl-C: the command's process stops them and reports the
interrupt once, as with one job.

`map_blocks` (a pipe on standard input): the command's process reads the input and
sends each block to one of `jobs` workers (a process pool; each worker makes its
applier once, `make_applier()`: a forked worker may return the one it inherited, a
spawned one loads the model from its files), and gets its output back, pickled
through pipes; at most `2 * jobs` blocks are in flight.

`map_file` (a regular file; forked workers only): that traffic would cost the
command's process a third of the workers' own work, and the pool's start-up (its
modules alone) a twentieth of a second. Here the command's process and `jobs - 1`
forked workers take the file's blocks in turn (block k: process k mod jobs, the
command's process first), each reading its block's lines itself (byte offsets; a block
holds the lines that start in its range, `stream.file_block`). While a worker's block
it waits for is not ready, the command's process makes its own next ones ahead. A
worker writes each output into one of `SLOTS` buffers of memory it shares with the
command's process (a larger output goes through its pipe) and tells it the block's
unseen tokens and line count through the pipe; it makes a block only once a buffer is
free (the command's process hands buffers back as it writes them out, in order). Lines
are counted in the command's process: a worker numbers the lines of its block from 1,
and the command's process moves the number of a tab warning or an error.
"""

from __future__ import annotations

import marshal
import mmap
import os
import select
import signal
import sys
from collections import Counter
from typing import TYPE_CHECKING, Callable, Iterable, Iterator

if TYPE_CHECKING:
    from fstsynth.stream import Applied, Block, BlockApplier

#: Whether workers are forked (they start with a copy of this process: its applier
#: too, without pickling it), rather than spawned. (Not asked of `multiprocessing`:
#: importing it is a tenth of a one-word `apply`.)
FORKS = hasattr(os, "fork")  # (as "fork" in multiprocessing.get_all_start_methods())

#: The worker's applier (set once in each worker of `map_blocks` by `_start`).
_applier: "BlockApplier | None" = None


def _start(make_applier: Callable[[], "BlockApplier"]) -> None:
    global _applier
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _applier = make_applier()


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
    import multiprocessing
    import queue
    import threading
    from concurrent.futures import Future, ProcessPoolExecutor

    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, not {jobs}")
    # fork: a worker starts in milliseconds, with the modules already imported.
    context = multiprocessing.get_context("fork" if FORKS else None)
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=_start, initargs=(make_applier,))
    pool.submit(int).result()  # the workers start now, before the reading thread does
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
#: `map_file`: the shared buffers of each worker (blocks it may have made ahead).
SLOTS = 3


def _read_exactly(fd: int, count: int) -> bytes:
    parts, left = [], count
    while left:
        part = os.read(fd, left)
        if not part:
            raise RuntimeError("a worker of apply --jobs stopped")
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _made(applier: "BlockApplier", block: "Block", encoding: str, errors: str) -> tuple[bytes, Counter, int | None]:
    """A block's printed bytes (the line path's text encoded as the output stream
    would), unseen tokens and tab line."""
    if not block.data:
        return b"", Counter(), None
    applied = applier.apply(block)
    return applied.data or applied.text.encode(encoding, errors), applied.unseen, applied.tab_line


class _Worker:
    """A forked worker of `map_file`: makes blocks `index`, `index + jobs`, ... and
    sends each one's record through its pipe: its length, then `R` and marshal's
    `(size, inline, unseen, tab_line, lines)` (the output in buffer `n mod SLOTS` for its
    n-th block, unless `inline`), or `E` and the error pickled. It makes a block only
    while it has a free buffer: the command's process sends a byte for each one it frees."""

    def __init__(
        self, index: int, jobs: int, block: Callable[[int], "Block | None"], applier: "BlockApplier",
        encoding: str, errors: str,
    ) -> None:
        self.slots = [mmap.mmap(-1, SLOT_BYTES) for _ in range(SLOTS)]  # (shared: made before the fork)
        self.taken = 0  # records read so far
        results_r, results_w = os.pipe()
        free_r, free_w = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        self.pid = os.fork()
        if self.pid == 0:
            code = 1
            try:
                os.close(results_r)
                os.close(free_w)
                signal.signal(signal.SIGINT, signal.SIG_IGN)
                self._run(index, jobs, block, applier, encoding, errors, results_w, free_r)
                code = 0
            finally:
                os._exit(code)  # (no exit handlers, no flushing: they are the command's)
        os.close(results_w)
        os.close(free_r)
        self.results, self.free = results_r, free_w

    def _run(
        self, index: int, jobs: int, block_at: Callable[[int], "Block | None"], applier: "BlockApplier",
        encoding: str, errors: str, results: int, free: int,
    ) -> None:
        credit, made, k = SLOTS, 0, index
        while True:
            try:
                block = block_at(k)
                if block is None:
                    return
                printed, unseen, tab_line = _made(applier, block, encoding, errors)
                if not credit:
                    credit = len(os.read(free, SLOTS))
                    if not credit:
                        return  # the command's process has stopped reading
                inline = printed if len(printed) > SLOT_BYTES else b""
                if not inline:
                    self.slots[made % SLOTS][: len(printed)] = printed
                record = b"R" + marshal.dumps(
                    (len(printed), inline, dict(unseen), tab_line, block.data.count(b"\n"))
                )
            except BaseException as exc:  # (raised by the command's process)
                import pickle

                try:
                    record = b"E" + pickle.dumps(exc)
                except Exception:
                    import traceback

                    failed = RuntimeError("a worker of apply --jobs failed:\n" + traceback.format_exc())
                    record = b"E" + pickle.dumps(failed)
                _write_all(results, len(record).to_bytes(8, "little") + record)
                return
            _write_all(results, len(record).to_bytes(8, "little") + record)
            credit -= 1
            made += 1
            k += jobs

    def ready(self) -> bool:
        """Whether the next block's record has begun to come."""
        return bool(select.select([self.results], [], [], 0)[0])

    def result(self) -> tuple[bytes, Counter, int | None, int]:
        """The next block's printed bytes, unseen tokens, tab line and line count (or its
        error raised); its buffer handed back."""
        record = _read_exactly(self.results, int.from_bytes(_read_exactly(self.results, 8), "little"))
        if record[:1] == b"E":
            import pickle

            raise pickle.loads(record[1:])
        size, inline, unseen, tab_line, lines = marshal.loads(record[1:])
        printed = inline or self.slots[self.taken % SLOTS][:size]
        self.taken += 1
        try:
            os.write(self.free, b"\0")
        except BrokenPipeError:
            pass  # the worker has made its last block and ended
        return printed, Counter(unseen), tab_line, lines

    def stop(self, kill: bool) -> None:
        """Wait for the worker to end (`kill`: end it now)."""
        os.close(self.results)
        os.close(self.free)
        if kill:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        os.waitpid(self.pid, 0)


def map_file(
    fd: int, make_applier: Callable[[], "BlockApplier"], jobs: int, *, encoding: str, errors: str = "strict",
    block_bytes: int = FILE_BLOCK_BYTES, on_read: Callable[[int], None] | None = None,
) -> Iterator["Applied"]:
    """`map_blocks` for a regular file open on `fd`, from its offset (see the module
    docstring; forked workers only): this process and `jobs - 1` workers. Each block's
    result, in order: `data` the bytes to print (the line path's text encoded with
    `encoding` and `errors`, as the output stream would); the tab line numbered from the
    offset, as on a stream. The file is read to the size it has now (a file still
    growing: its last line to its newline), and its offset left at that size.
    `on_read`: called once, first, with the number of bytes to read."""
    from fstsynth.stream import Applied, LineError, file_block

    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, not {jobs}")
    if not FORKS:
        raise ValueError("map_file needs forked workers")
    start = os.lseek(fd, 0, os.SEEK_CUR)
    size = max(start, os.fstat(fd).st_size)
    count = -(-(size - start) // block_bytes)

    def block_at(k: int) -> "Block | None":
        if k >= count:
            return None
        begin = start + k * block_bytes
        return file_block(fd, start, begin, min(begin + block_bytes, size))

    if on_read is not None:
        # All of it, now: the memory watchdog (`apply`'s `on_input`) starts before the
        # workers, as on a stream, where reading the first few blocks starts it.
        on_read(size - start)
    applier = make_applier()
    workers: list[_Worker] = []
    # This process's blocks made ahead while a worker's block it waits for is not ready
    # (a worker the machine's load holds back), at most `jobs * SLOTS` blocks ahead;
    # an error is kept for its turn, when the lines before it are counted.
    ahead: dict[int, tuple[bytes, Counter, int | None, int] | LineError] = {}
    next_own = 0

    def make_own() -> None:
        nonlocal next_own
        block = block_at(next_own)
        assert block is not None
        try:
            ahead[next_own] = (*_made(applier, block, encoding, errors), block.data.count(b"\n"))
        except LineError as exc:
            ahead[next_own] = exc
        next_own += jobs

    lines = 0
    finished = False
    try:
        for index in range(1, min(jobs, count)):
            workers.append(_Worker(index, jobs, block_at, applier, encoding, errors))
        for k in range(count):
            if k % jobs == 0:  # this process's block
                if k not in ahead:
                    make_own()
                made = ahead.pop(k)
            else:
                worker = workers[k % jobs - 1]
                while next_own < min(count, k + jobs * SLOTS) and not worker.ready():
                    make_own()
                try:
                    made = worker.result()
                except LineError as exc:
                    made = exc
            if isinstance(made, LineError):
                raise made.shifted(lines) from None
            printed, unseen, tab_line, block_lines = made
            yield Applied(printed, unseen, "", None if tab_line is None else lines + tab_line)
            lines += block_lines
        finished = True
    finally:
        for worker in workers:
            worker.stop(kill=not finished)
    os.lseek(fd, size, os.SEEK_SET)
