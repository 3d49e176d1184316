"""Learning a model (`fstsynth.learning`): where Python's garbage collector is paused."""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator

from typer.testing import CliRunner

from conftest import DATA
from fstsynth import console
from fstsynth.cli import app
from fstsynth.learning import BLAS_THREAD_VARIABLES, collector_paused, one_blas_thread
from fstsynth.progress import listening


def test_collector_paused_restores_the_collector_as_it_was():
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # it was off: left off
    finally:
        gc.enable()


def _blas_threads() -> set[int]:
    import numpy  # noqa: F401  (its BLAS loaded, for threadpoolctl to find)
    from threadpoolctl import threadpool_info

    return {pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"}


def test_one_blas_thread_unless_the_user_set_the_threads(monkeypatch):
    from threadpoolctl import threadpool_limits

    for name in BLAS_THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    with threadpool_limits(limits=2, user_api="blas"):
        assert _blas_threads() == {2}
        with one_blas_thread():
            assert _blas_threads() == {1}
        assert _blas_threads() == {2}  # as it was
        monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")
        with one_blas_thread():
            assert _blas_threads() == {2}  # the user's setting stands


def test_the_learn_command_learns_with_the_collector_paused(tmp_path, monkeypatch):
    collector_on: list[bool] = []  # as seen at each step learning reports
    blas_threads: set[int] = set()
    for name in BLAS_THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)

    @contextmanager
    def recording(quiet: bool) -> Iterator[None]:
        with listening(lambda step: (collector_on.append(gc.isenabled()), blas_threads.update(_blas_threads()))):
            yield

    monkeypatch.setattr(console, "showing_progress", recording)
    args = ["learn", str(DATA / "plural.tsv"), "--variant", "token", "-o", str(tmp_path / "m")]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert len(collector_on) > 3 and not any(collector_on)
    assert blas_threads == {1}
    assert gc.isenabled()


def test_a_pairs_compilation_is_not_charged_the_other_pairs_learning(monkeypatch):
    # Each column pair has its own time limit; its compilation comes after every pair
    # is learned, and may take what its own learning left, whatever the others took.
    import time

    import fstsynth.compiler
    import fstsynth.synthesis
    from fstsynth.learning import learn_model
    from fstsynth.problem import Problem
    from fstsynth.synthesis import Options

    words = [("b a d", "b a t"), ("r o b", "r o p")]
    problem = Problem("p", ("a", "b"), tuple((tuple(x.split()), tuple(y.split())) for x, y in words), ())
    from fstsynth.dsl import Program
    from fstsynth.synthesis import LearnResult

    real_compile = fstsynth.compiler.compile_program

    def slow_learn(pairs, features, options, jobs, deadline):
        time.sleep(0.6)  # learning; for the first pair's clock, the second pair's too
        return LearnResult(Program(()), 0.0, 0, len(pairs))  # the identity

    left = []

    def compile_program(program, alphabet, features, deadline=None):
        left.append(deadline - time.monotonic())
        return real_compile(program, alphabet, features, deadline=deadline)

    monkeypatch.setattr(fstsynth.synthesis, "learn", slow_learn)
    monkeypatch.setattr(fstsynth.compiler, "compile_program", compile_program)
    model = learn_model(problem, Options(time_limit=1.0), pairs=[(0, 1), (1, 0)])
    assert set(model.pairs) == {(0, 1), (1, 0)}
    assert len(left) == 2 and all(0.0 < s < 0.45 for s in left)
