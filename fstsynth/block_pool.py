"""Blocks of input mapped in worker processes, results in input order (`apply --jobs N`).

Public API:
    map_blocks(blocks, make_applier, jobs) -> Iterator[Applied]

Each worker makes its applier once (`make_applier()`: a forked worker may return the
one it inherited; a spawned one loads the model from its files) and maps whole blocks
with it (`stream.BlockApplier.apply`): a block's result
does not depend on the process, so the output is the same bytes whatever `jobs` is.
At most `2 * jobs` blocks are in flight, so memory stays bounded by a few blocks per
worker however long the input, as with one process; and a result is written as soon as
it and those before it are made, as with one process. Workers ignore Ctrl-C: the
command's process stops them and reports the interrupt once, as with one job.
"""

from __future__ import annotations

import multiprocessing
import queue
import signal
import threading
from concurrent.futures import Future, ProcessPoolExecutor
from typing import TYPE_CHECKING, Callable, Iterable, Iterator

if TYPE_CHECKING:
    from fstsynth.stream import Applied, Block, BlockApplier

#: Whether workers are forked (they start with a copy of this process: its applier
#: too, without pickling it), rather than spawned.
FORKS = "fork" in multiprocessing.get_all_start_methods()

#: The worker's applier (set once in each worker by `_start`).
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
