"""A clock for deadline tests: `time.monotonic` read as this process's CPU time.

A deadline is a `time.monotonic()` value and every check reads that clock, so with
this clock a time limit counts the work done, not how busy the machine is: the tests
can then bound the work done after a deadline (one step between two checks) in CPU
seconds. Learning runs in this process (jobs=1), so its CPU time is all there is."""

from __future__ import annotations

import time

import pytest


class CpuClock:
    """`time.monotonic` replaced by `time.process_time`, remembering each read."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.reads: list[float] = []
        monkeypatch.setattr(time, "monotonic", self.read)

    def read(self) -> float:
        now = time.process_time()
        self.reads.append(now)
        return now

    @staticmethod
    def now() -> float:
        return time.process_time()
