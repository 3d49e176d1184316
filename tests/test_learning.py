"""Learning a model (`fstsynth.learning`): where Python's garbage collector is paused."""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator

from typer.testing import CliRunner

from conftest import DATA
from fstsynth import console
from fstsynth.cli import app
from fstsynth.learning import collector_paused
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


def test_the_learn_command_learns_with_the_collector_paused(tmp_path, monkeypatch):
    collector_on: list[bool] = []  # as seen at each step learning reports

    @contextmanager
    def recording(quiet: bool) -> Iterator[None]:
        with listening(lambda step: collector_on.append(gc.isenabled())):
            yield

    monkeypatch.setattr(console, "showing_progress", recording)
    args = ["learn", str(DATA / "plural.tsv"), "--variant", "token", "-o", str(tmp_path / "m")]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert len(collector_on) > 3 and not any(collector_on)
    assert gc.isenabled()
