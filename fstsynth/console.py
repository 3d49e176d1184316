"""Showing the progress of long commands: a progress bar on a terminal, plain lines
elsewhere. The command line's part of `fstsynth.progress`.

Public API:
    ProgressView(stream=None, terminal=None, interval=10.0, delay=2.0)   a `progress` listener
    showing_progress(quiet=False, stream=None) -> context manager

Reports come in three levels, each shown with what is inside it: "problem" (`solve`
over several files), "column pair", and anything else the library reports while a pair
is learned (aligning, cross-validating, synthesizing pass k, compiling rule k of n,
...). On a terminal, `rich` draws a bar of column pairs done (of problems, for `solve`)
with the current stage, its own count and the elapsed time. Elsewhere (a log file, a
pipe) a line says where the run is at most every `interval` seconds, so that a log
stays short (the stages of a pair can change hundreds of times a second) but a long run
shows where it is; nothing is printed in the first `delay` seconds, so a quick run's
standard error stays empty.
"""

from __future__ import annotations

import logging
import sys
import time
from contextlib import contextmanager
from typing import IO, Any, Iterator

from fstsynth.progress import Step, listening

OUTER = ("problem", "column pair")


def _count(step: Step) -> str:
    if step.done is None:
        return ""
    return f" {step.done}/{step.total}" if step.total is not None else f" {step.done}"


class ProgressView:
    """A progress listener drawing on `stream` (standard error by default)."""

    def __init__(
        self,
        stream: IO[str] | None = None,
        terminal: bool | None = None,
        interval: float = 10.0,
        delay: float = 2.0,
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.terminal = self.stream.isatty() if terminal is None else terminal
        self.interval = interval
        self.delay = delay
        self.started = time.monotonic()
        self.levels: dict[str, Step] = {}  # the latest report of each outer level
        self.stage: Step | None = None  # the latest inner report
        self._last_line: float | None = None  # when the last plain line was written
        self._bar: Any = None
        self._tasks: dict[str, Any] = {}
        self._moved: list[logging.StreamHandler] = []

    # -- the listener

    def __call__(self, step: Step) -> None:
        if step.stage in OUTER:
            self.levels[step.stage] = step
            if step.stage == "problem":
                self.levels.pop("column pair", None)
            self.stage = None
        else:
            self.stage = step
        if self._bar is not None:
            self._draw()
        elif not self.terminal:
            self._line(step)

    # -- plain lines

    def where(self) -> str:
        """Where the run is, outermost first: `[1/2] paradigm.json, [2/6] stem -> in stem`."""
        parts = []
        for level in OUTER:
            step = self.levels.get(level)
            if step is not None and step.total and step.done is not None and step.done < step.total:
                parts.append(f"[{step.done + 1}/{step.total}] {step.detail}".rstrip())
        return ", ".join(parts)

    def _line(self, step: Step) -> None:
        if step.stage in OUTER and (step.done is None or step.total is None or step.done >= step.total):
            return  # a level finished: the next report says what comes next
        what = self.where()
        if step.stage not in OUTER:
            what = f"{what}: {step.stage}" if what else step.stage
        now = time.monotonic()
        if now - self.started < self.delay or (self._last_line is not None and now - self._last_line < self.interval):
            return
        inner = step.stage not in OUTER
        count = _count(step) if inner else ""
        detail = f" ({step.detail})" if step.detail and inner else ""
        self.stream.write(f"fstsynth: {what}{count}{detail}  [{now - self.started:.0f}s]\n")
        self.stream.flush()
        self._last_line = now

    # -- the bar

    def start(self) -> None:
        if not self.terminal:
            return
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        console = Console(file=self.stream, force_terminal=True)
        self._bar = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=True,
        )
        self._bar.start()
        # Log lines (warnings) written straight to the terminal would tear the live bar:
        # send them through the stream rich substitutes, which prints them above it.
        for handler in logging.getLogger().handlers:
            if isinstance(handler, logging.StreamHandler) and handler.stream is self.stream:
                self._moved.append(handler)
                handler.setStream(sys.stderr)

    def stop(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
        for handler in self._moved:
            handler.setStream(self.stream)
        self._moved.clear()

    def _task(self, name: str) -> Any:
        if name not in self._tasks:
            self._tasks[name] = self._bar.add_task(name, total=None)
        return self._tasks[name]

    def _draw(self) -> None:
        for level in OUTER:
            step = self.levels.get(level)
            if step is None:
                continue
            label = f"{level}s" if not step.detail or step.done == step.total else f"{level}s: {step.detail}"
            self._bar.update(self._task(level), description=label, completed=step.done or 0, total=step.total)
        inner = self.stage
        if inner is not None:
            description = f"  {inner.stage}" + (f" ({inner.detail})" if inner.detail else "")
            self._bar.update(
                self._task("stage"), description=description, completed=inner.done or 0, total=inner.total
            )
        elif "stage" in self._tasks:
            self._bar.update(self._tasks["stage"], description="", completed=0, total=None)


@contextmanager
def showing_progress(quiet: bool = False, stream: IO[str] | None = None) -> Iterator[ProgressView | None]:
    """Show the library's progress reports for the duration of the block (nothing if `quiet`)."""
    if quiet:
        yield None
        return
    view = ProgressView(stream)
    view.start()
    try:
        with listening(view):
            yield view
    finally:
        view.stop()
