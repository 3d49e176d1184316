"""Short seeded runs of the stress and fuzz scripts; the long runs are the scripts
themselves (`scripts/stress_interrupts`, `scripts/stress_concurrent`,
`scripts/fuzz_inputs`, each with `--help`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_script(tmp_path: Path, name: str, *args: str) -> dict:
    report = tmp_path / f"{name}.json"
    proc = subprocess.run(
        [sys.executable, ROOT / "scripts" / name, *args, "--json", report],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads(report.read_text(encoding="utf-8"))


def test_interrupted_learn_and_solve_leave_the_previous_or_the_new_output(tmp_path):
    report = run_script(tmp_path, "stress_interrupts", "--moments", "1", "--rows", "10", "--length", "10")
    results = report["results"]
    assert [(r["command"], r["signal"]) for r in results] == [
        ("learn", "SIGINT"), ("learn", "SIGKILL"), ("solve", "SIGINT"), ("solve", "SIGKILL")
    ]
    for r in results:
        assert r["failed"] == 0 and r["tried"] == r["intact"] == r["loads"] == r["clean"] == 1, r
    assert sum(r["signalled"] for r in results) >= 3  # the signals landed in running commands


def test_concurrent_writers_and_readers(tmp_path):
    report = run_script(tmp_path, "stress_concurrent", "--rounds", "1")
    writers, readers = report["figures"]["writers"], report["figures"]["readers"]
    assert writers["rounds"] == 1 and writers["failed"] == 0
    assert readers["replacements"] == 1 and readers["reads"] >= 1 and readers["bad reads"] == 0
    assert report["failures"] == []


def test_fuzzed_inputs_get_exit_0_or_one_error_line(tmp_path):
    report = run_script(tmp_path, "fuzz_inputs", "--inputs", "36", "--seed", "0")
    total = report["results"][-1]
    assert total["target"] == "all" and total["inputs"] == 36
    assert total["failures"] == 0 and report["failures"] == []
    assert total["exit 2"] >= 6 and total["exit 0/1"] >= 6  # the mutations reach both outcomes
