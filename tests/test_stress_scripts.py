"""Short seeded runs of the stress and fuzz scripts; the long runs are the scripts
themselves (`scripts/stress_interrupts`, `scripts/stress_concurrent`,
`scripts/fuzz_inputs`, each with `--help`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Whole learn, solve and apply runs, interrupted, side by side and fuzzed: minutes.
pytestmark = pytest.mark.slow


class Script:
    """A script run with `--json`, started at once; `report()` waits for it and reads
    its report (exit 0 asserted)."""

    def __init__(self, tmp_path: Path, name: str, *args: str) -> None:
        self.path = tmp_path / f"{name}.json"
        self.proc = subprocess.Popen(
            [sys.executable, ROOT / "scripts" / name, *args, "--json", self.path],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )

    def report(self) -> dict:
        try:
            out, err = self.proc.communicate(timeout=900)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise
        assert self.proc.returncode == 0, out[-3000:] + err[-3000:]
        return json.loads(self.path.read_text(encoding="utf-8"))

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()


@pytest.fixture(scope="module")
def side_by_side(tmp_path_factory):
    """The concurrency and fuzz runs, started together (neither depends on timing: one
    checks what readers see, the other exit codes and stderr), each in its own
    directory; the interrupt run, which sends signals at measured moments, runs alone."""
    scripts = {
        "stress_concurrent": Script(tmp_path_factory.mktemp("concurrent"), "stress_concurrent", "--rounds", "1"),
        "fuzz_inputs": Script(tmp_path_factory.mktemp("fuzz"), "fuzz_inputs", "--inputs", "36", "--seed", "0"),
    }
    yield scripts
    for script in scripts.values():
        script.stop()


def test_interrupted_learn_and_solve_leave_the_previous_or_the_new_output(tmp_path):
    report = Script(tmp_path, "stress_interrupts", "--moments", "1", "--rows", "10", "--length", "10").report()
    results = report["results"]
    assert [(r["command"], r["signal"]) for r in results] == [
        ("learn", "SIGINT"), ("learn", "SIGKILL"), ("solve", "SIGINT"), ("solve", "SIGKILL")
    ]
    for r in results:
        assert r["failed"] == 0 and r["tried"] == r["intact"] == r["loads"] == r["clean"] == 1, r
    assert sum(r["signalled"] for r in results) >= 3  # the signals landed in running commands


def test_concurrent_writers_and_readers(side_by_side):
    report = side_by_side["stress_concurrent"].report()
    writers, readers = report["figures"]["writers"], report["figures"]["readers"]
    assert writers["rounds"] == 1 and writers["failed"] == 0
    assert readers["replacements"] == 1 and readers["reads"] >= 1 and readers["bad reads"] == 0
    assert report["failures"] == []


def test_fuzzed_inputs_get_exit_0_or_one_error_line(side_by_side):
    report = side_by_side["fuzz_inputs"].report()
    total = report["results"][-1]
    assert total["target"] == "all" and total["inputs"] == 36
    assert total["failures"] == 0 and report["failures"] == []
    assert total["exit 2"] >= 6 and total["exit 0/1"] >= 6  # the mutations reach both outcomes
