"""Blocks of input mapped in worker processes, results in input order (`apply --jobs N`).

Public API:
    map_blocks(blocks, make_applier, jobs) -> Iterator[Applied]
    map_file(fd, make_applier, jobs, *, encoding, errors="strict", block_bytes=FILE_BLOCK_BYTES, on_read=None,
             shares=None) -> Iterator[Applied]
    Shares (how map_file shared the work: blocks and CPU seconds per process)
    Timeline (events of a process of `apply`, with their times: FSTSYNTH_JOBS_TIMELINE)
    FORKS, FILE_BLOCK_BYTES, SLOT_BYTES, QUEUED, AHEAD, TAIL_FROM, TAIL_SPLIT

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
workers, forked once the model is loaded, share the file's blocks as they go: the
command's process sends each worker the next blocks' numbers (`QUEUED` ahead, so that
a worker never waits for it), and makes the next block itself whenever the one it is
to write out next is not ready. So the one that started the others and writes the
output makes fewer blocks, and all of them finish together (with a fixed share, block
k to process k mod jobs, the command's process had its start-up and the writing on top
of its share). Each process reads its blocks' lines itself (byte offsets; a block holds
the lines that start in its range, `stream.file_block`; the last ones are smaller,
`TAIL_SPLIT`). A worker writes each output
into the buffer of memory shared with the command's process that came with the
block's number (a larger output goes through its pipe), and tells it the block's
unseen tokens and line count through its pipe; the command's process hands the buffer
back with a later block, once it has the output. At most `AHEAD` blocks per process
are made ahead of the one written out next. Lines are counted in the command's
process: a worker numbers the lines of its block from 1, and the command's process
moves the number of a tab warning or an error.
"""

from __future__ import annotations

import marshal
import mmap
import os
import select
import signal
import struct
import sys
import time
from collections import Counter, deque
from typing import TYPE_CHECKING, Callable, Iterable, Iterator

if TYPE_CHECKING:
    import resource

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
FILE_BLOCK_BYTES = 1 << 18
#: `map_file`: a block's output up to this many bytes goes through shared memory.
SLOT_BYTES = 4 << 20
#: `map_file`: blocks a worker is sent ahead (the one it makes, the next ones queued),
#: so that it never waits while the command's process makes a block of its own.
QUEUED = 2
#: `map_file`: blocks made ahead of the one to write out next, per process (memory).
AHEAD = 4
#: `map_file`, on a file of more than `TAIL_FROM * jobs` blocks: the bytes of the last
#: `jobs` blocks are made as `TAIL_SPLIT * jobs` smaller ones, so that the processes end
#: at most a small block apart (a block of 256 KB is some 7 ms of one core's work).
TAIL_FROM = 2
TAIL_SPLIT = 4


class Shares:
    """How `map_file` shared the work, once it is done: per process (the command's
    first, then each worker's), the blocks it made and its CPU seconds; and the
    command's CPU seconds before the workers started (start-up, model)."""

    __slots__ = ("blocks", "cpu", "before")

    def __init__(self) -> None:
        self.blocks: list[int] = []
        self.cpu: list[float] = []
        self.before = 0.0

    def __str__(self) -> str:
        processes = [f"{cpu:.2f} s, {blocks} block{'s' * (blocks != 1)}" for cpu, blocks in zip(self.cpu, self.blocks)]
        return (f"CPU of the command {processes[0]} ({self.before:.2f} s before the workers started); "
                f"of its workers: {'; '.join(processes[1:]) or 'none'}")


class Timeline:
    """Events of one process of `apply`, for finding where its wall time goes: each
    one's monotonic time (the same clock in every process), the process's CPU seconds,
    its name and block number (-1: none). Kept in memory and appended to `path` as the
    process ends, in one write of lines `pid TAB time TAB cpu TAB name TAB block`
    (`scripts/bench_jobs.py --timeline` reads them)."""

    __slots__ = ("path", "pid", "events")

    def __init__(self, path: str) -> None:
        self.path = path
        self.pid = os.getpid()
        self.events: list[tuple[float, float, str, int]] = []

    def mark(self, name: str, block: int = -1) -> None:
        self.events.append((time.monotonic(), time.process_time(), name, block))

    def forked(self) -> None:
        """In a new worker: its own events from now on."""
        self.pid = os.getpid()
        self.events = []

    def save(self) -> None:
        text = "".join(f"{self.pid}\t{at:.6f}\t{cpu:.6f}\t{name}\t{block}\n" for at, cpu, name, block in self.events)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            _write_all(fd, text.encode())
        finally:
            os.close(fd)


def _cpu_seconds(usage: "resource.struct_rusage") -> float:
    return usage.ru_utime + usage.ru_stime


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


#: What a block made: its printed bytes, unseen tokens, tab line (numbered from 1 in
#: the block), and line count.
Made = tuple[bytes, Counter, int | None, int]


def _made(applier: "BlockApplier", block: "Block", encoding: str, errors: str) -> Made:
    """A block's printed bytes (the line path's text encoded as the output stream
    would), unseen tokens, tab line and line count."""
    if not block.data:
        return b"", Counter(), None, 0
    applied = applier.apply(block)
    printed = applied.data or applied.text.encode(encoding, errors)
    return printed, applied.unseen, applied.tab_line, block.data.count(b"\n")


#: An order to a worker: the block's number and the shared buffer for its output.
_ORDER = struct.Struct("<II")


class _Worker:
    """A forked worker of `map_file`: makes the blocks it is sent, in the order sent.
    An order is 8 bytes through its order pipe (`_ORDER`); for each one it sends the
    block's record through its result pipe: its length, then `R` and marshal's
    `(size, inline, unseen, tab_line, lines)` (the output in the order's buffer, unless
    `inline`), or `E` and the error pickled (and then it ends). It ends when its order
    pipe is closed."""

    def __init__(
        self, block_at: Callable[[int], "Block"], applier: "BlockApplier", encoding: str, errors: str,
        slots: list[mmap.mmap], others: Iterable[int], timeline: Timeline | None = None,
    ) -> None:
        self.queue: deque[tuple[int, int]] = deque()  # (block, buffer) sent, not yet answered
        self.blocks = 0
        self.ended = False  # (after sending an error)
        orders_r, orders_w = os.pipe()
        results_r, results_w = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        self.pid = os.fork()
        if self.pid == 0:
            code = 1
            try:
                for fd in (orders_w, results_r, *others):  # (the other workers' pipes: theirs to close)
                    os.close(fd)
                signal.signal(signal.SIGINT, signal.SIG_IGN)
                if timeline is not None:
                    timeline.forked()
                    timeline.mark("forked")
                self._serve(block_at, applier, encoding, errors, slots, orders_r, results_w, timeline)
                code = 0
                if timeline is not None:
                    timeline.mark("ended")
                    timeline.save()
            finally:
                os._exit(code)  # (no exit handlers, no flushing: they are the command's)
        os.close(orders_r)
        os.close(results_w)
        self.orders, self.results = orders_w, results_r

    @staticmethod
    def _serve(
        block_at: Callable[[int], "Block"], applier: "BlockApplier", encoding: str, errors: str,
        slots: list[mmap.mmap], orders: int, results: int, timeline: Timeline | None,
    ) -> None:
        while True:
            if timeline is not None:
                timeline.mark("read")
            # (Orders are written whole, 8 bytes each: a read of 8 takes one whole.)
            order = os.read(orders, _ORDER.size)
            if not order:
                return
            k, slot = _ORDER.unpack(order)
            if timeline is not None:
                timeline.mark("order", k)
            try:
                printed, unseen, tab_line, lines = _made(applier, block_at(k), encoding, errors)
                inline = printed if len(printed) > SLOT_BYTES else b""
                if not inline:
                    slots[slot][: len(printed)] = printed
                record = b"R" + marshal.dumps((len(printed), inline, dict(unseen), tab_line, lines))
            except BaseException as exc:  # (raised by the command's process, in its turn)
                import pickle

                try:
                    record = b"E" + pickle.dumps(exc)
                except Exception:
                    import traceback

                    failed = RuntimeError("a worker of apply --jobs failed:\n" + traceback.format_exc())
                    record = b"E" + pickle.dumps(failed)
                _write_all(results, len(record).to_bytes(8, "little") + record)
                return
            if timeline is not None:
                timeline.mark("made", k)
            _write_all(results, len(record).to_bytes(8, "little") + record)

    def send(self, k: int, slot: int) -> None:
        os.write(self.orders, _ORDER.pack(k, slot))
        self.queue.append((k, slot))

    def take(self, slots: list[mmap.mmap]) -> tuple[int, int, Made | Exception]:
        """The block this worker made first of those it was sent: its number, its
        buffer (free again) and what it made (or its error: the worker has ended)."""
        k, slot = self.queue.popleft()
        record = _read_exactly(self.results, int.from_bytes(_read_exactly(self.results, 8), "little"))
        if record[:1] == b"E":
            import pickle

            self.ended = True
            self.queue.clear()  # (its later blocks come after the error: never given out)
            return k, slot, pickle.loads(record[1:])
        size, inline, unseen, tab_line, lines = marshal.loads(record[1:])
        self.blocks += 1
        return k, slot, (inline or slots[slot][:size], Counter(unseen), tab_line, lines)

    def stop(self, kill: bool) -> float:
        """Wait for the worker to end (`kill`: end it now); its CPU seconds."""
        os.close(self.results)
        os.close(self.orders)
        if kill:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        return _cpu_seconds(os.wait4(self.pid, 0)[2])


def map_file(
    fd: int, make_applier: Callable[[], "BlockApplier"], jobs: int, *, encoding: str, errors: str = "strict",
    block_bytes: int = FILE_BLOCK_BYTES, on_read: Callable[[int], None] | None = None,
    shares: Shares | None = None, timeline: Timeline | None = None,
) -> Iterator["Applied"]:
    """`map_blocks` for a regular file open on `fd`, from its offset (see the module
    docstring; forked workers only): this process and `jobs - 1` workers. Each block's
    result, in order: `data` the bytes to print (the line path's text encoded with
    `encoding` and `errors`, as the output stream would); the tab line numbered from the
    offset, as on a stream. The file is read to the size it has now (a file still
    growing: its last line to its newline), and its offset left at that size.
    `on_read`: called once, with the number of bytes to read, once the workers have
    started. `shares`: filled in once all is done. `timeline`: this process's events
    marked there, and each worker's saved as it ends."""
    import resource  # (Unix's, as fork)

    from fstsynth.stream import Applied, LineError, file_block

    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, not {jobs}")
    if not FORKS:
        raise ValueError("map_file needs forked workers")
    start = os.lseek(fd, 0, os.SEEK_CUR)
    size = max(start, os.fstat(fd).st_size)
    count = whole = -(-(size - start) // block_bytes)
    tail = piece = 0  # the bytes of the last `jobs` blocks, made as smaller blocks
    if whole > TAIL_FROM * jobs:
        whole -= jobs
        tail = start + whole * block_bytes
        piece = -(-(size - tail) // (jobs * TAIL_SPLIT))
        count = whole + -(-(size - tail) // piece)

    def block_at(k: int) -> "Block":
        begin, length = (start + k * block_bytes, block_bytes) if k < whole else (tail + (k - whole) * piece, piece)
        return file_block(fd, start, begin, min(begin + length, size))

    applier = make_applier()
    workers: list[_Worker] = []
    # The workers' output buffers, shared with them: made before the forks.
    slots = [mmap.mmap(-1, SLOT_BYTES) for _ in range((min(jobs, count) - 1) * QUEUED)]
    free = list(range(len(slots)))
    made: dict[int, Made | Exception] = {}  # blocks made, not yet given out
    own_blocks = 0
    before = _cpu_seconds(resource.getrusage(resource.RUSAGE_SELF))
    finished = False
    try:
        for _ in range(1, min(jobs, count)):
            others = [end for worker in workers for end in (worker.orders, worker.results)]
            if timeline is not None:
                timeline.mark("fork")
            workers.append(_Worker(block_at, applier, encoding, errors, slots, others, timeline))
        if timeline is not None:
            timeline.mark("forked")
        if on_read is not None:
            # All of it, now: the memory watchdog (`apply`'s `on_input`) starts, as on a
            # stream once a few blocks are read; after the forks, so that the workers
            # make blocks while it starts.
            on_read(size - start)
        lines = 0
        next_out = next_new = 0  # the next block to give out, and to make or send
        while next_out < count:
            last = min(count, next_out + AHEAD * jobs)  # blocks made ahead: memory stays bounded
            for worker in workers:
                # (Fewer queued near the end, where the processes then finish together.)
                while (not worker.ended and free and next_new < last
                       and len(worker.queue) < min(QUEUED, -(-(count - next_new) // jobs))):
                    worker.send(next_new, free.pop())
                    next_new += 1
            busy = [worker.results for worker in workers if worker.queue]
            if busy:
                # Take the blocks the workers have made (and send them more); wait for
                # them only when this process has nothing else to do.
                idle = next_out not in made and next_new == last
                if timeline is not None and idle:
                    timeline.mark("wait", next_out)
                ready = select.select(busy, [], [], None if idle else 0)[0]
                for worker in workers:
                    if worker.results in ready:
                        k, slot, result = worker.take(slots)
                        if timeline is not None:
                            timeline.mark("taken", k)
                        made[k] = result
                        if not worker.ended:
                            free.append(slot)
                if ready:
                    continue
            if next_out not in made:
                # A worker's block not made yet (or none sent): this process makes one.
                assert next_new < last, "no block to make or to wait for"
                if timeline is not None:
                    timeline.mark("make", next_new)
                try:
                    made[next_new] = _made(applier, block_at(next_new), encoding, errors)
                except Exception as exc:  # (raised in its turn, once the blocks before it are out)
                    made[next_new] = exc
                if timeline is not None:
                    timeline.mark("made", next_new)
                next_new += 1
                own_blocks += 1
                continue
            result = made.pop(next_out)
            if isinstance(result, LineError):
                raise result.shifted(lines) from None
            if isinstance(result, Exception):
                raise result
            printed, unseen, tab_line, block_lines = result
            if timeline is not None:
                timeline.mark("out", next_out)
            yield Applied(printed, unseen, "", None if tab_line is None else lines + tab_line)
            if timeline is not None:
                timeline.mark("written", next_out)
            lines += block_lines
            next_out += 1
        finished = True
    finally:
        if timeline is not None:
            timeline.mark("stop")
        worker_cpu = [worker.stop(kill=not finished) for worker in workers]
        if timeline is not None:
            timeline.mark("stopped")
    os.lseek(fd, size, os.SEEK_SET)
    if shares is not None:
        shares.blocks = [own_blocks, *(worker.blocks for worker in workers)]
        shares.cpu = [_cpu_seconds(resource.getrusage(resource.RUSAGE_SELF)), *worker_cpu]
        shares.before = before
