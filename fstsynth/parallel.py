"""Solve many problem files, in worker processes when asked (`solve --jobs N`).

Public API:
    FileResult
    solve_files(paths, options, check=False, jobs=1) -> Iterator[FileResult]
    load_one(path) -> FileResult, solve_loaded(loaded, options, check) -> FileResult
      (the two halves of one file's work; `fstsynth.cluster` runs the second on Dask)

Each problem is solved by the very same `solve_problem` call in whichever process runs
it, so the answers do not depend on `jobs`; results come back in the order of `paths`.
Problems are handed out largest first (by training cells), which keeps the two workers
of a small machine busy when one problem costs much more than the rest. Workers send
back the answers and timings only: learned models hold transducers that are costly to
ship between processes and that the caller does not need.
"""

from __future__ import annotations

import gc
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Sequence

from fstsynth.errors import UserError
from fstsynth.problem import Problem, load_problem
from fstsynth.solve import SolveReport, solve_problem
from fstsynth.synthesis import Options


@dataclass
class FileResult:
    """One problem file: the problem and its report, or the error that stopped it.

    `load_error`: the file could not be read (no problem). `learn_error`: it was read but
    could not be learnt (the caller writes best guesses)."""

    path: Path
    problem: Problem | None
    report: SolveReport | None
    load_error: str | None = None
    learn_error: str | None = None


def load_one(path: Path) -> FileResult:
    """The file's problem, not yet solved (or the error reading it)."""
    try:
        return FileResult(path, load_problem(path), None)
    except UserError as exc:
        return FileResult(path, None, None, load_error=str(exc))


def solve_loaded(loaded: FileResult, options: Options, check: bool) -> FileResult:
    """Solve the problem `load_one` read (a result without one is returned as it is)."""
    path, problem = loaded.path, loaded.problem
    if problem is None:
        return loaded
    try:
        report = solve_problem(problem, options, check=check)
    except UserError as exc:
        return FileResult(path, problem, None, learn_error=str(exc))
    return FileResult(path, problem, SolveReport(report.problem, report.answers, None, report.seconds))


def _solve_one(path: Path, options: Options, check: bool) -> FileResult:
    return solve_loaded(load_one(path), options, check)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def solve_files(
    paths: Sequence[Path], options: Options, *, check: bool = False, jobs: int = 1
) -> Iterator[FileResult]:
    """Solve each file; yields results in the order of `paths`."""
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, not {jobs}")
    if jobs == 1 or len(paths) <= 1:
        for path in paths:
            yield _solve_one(path, options, check)
        return
    jobs = min(jobs, len(paths), os.cpu_count() or jobs)
    # Largest first: file size stands in for the number of training cells.
    order = sorted(range(len(paths)), key=lambda k: -_size(paths[k]))
    # Workers are processes of their own: their collector can be off while they learn
    # (`fstsynth.learning.collector_paused`).
    with ProcessPoolExecutor(max_workers=jobs, initializer=gc.disable) as pool:
        futures = {k: pool.submit(_solve_one, paths[k], options, check) for k in order}
        for k in range(len(paths)):
            yield futures[k].result()
