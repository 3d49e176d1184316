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
