"""Progress of long runs: what the library is doing, for whoever wants to show it.

Public API:
    Step, Listener, report(stage, done=None, total=None, detail=""), listening(listener)

Library code says where it is with `report` (cheap: nothing happens unless a listener
is installed). A caller that shows progress, such as the CLI's progress bar, installs a
listener for the duration of a call with `with listening(fn): ...`. The listener is
held in a context variable, so it is scoped to that block (and thread) and a library
import or call never changes it for anyone else. Worker processes report nothing.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Callable, Iterator


@dataclass(frozen=True)
class Step:
    """One report: the stage a run is in and, when known, how far through it."""

    stage: str  # what is being done: "column pair", "aligning", "synthesizing pass 2", "compiling rule", ...
    done: int | None = None  # units of the stage finished so far
    total: int | None = None  # units in the stage, when known
    detail: str = ""  # free text, such as the column pair's name


Listener = Callable[[Step], None]

_listener: ContextVar[Listener | None] = ContextVar("fstsynth_progress_listener", default=None)


def report(stage: str, done: int | None = None, total: int | None = None, detail: str = "") -> None:
    """Tell the installed listener, if any, that the run is at `stage`."""
    listener = _listener.get()
    if listener is not None:
        listener(Step(stage, done, total, detail))


@contextmanager
def listening(listener: Listener) -> Iterator[None]:
    """Send every `report` made inside the block to `listener`."""
    token = _listener.set(listener)
    try:
        yield
    finally:
        _listener.reset(token)
