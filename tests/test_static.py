"""The linter (ruff) and the type checker (mypy) pass, with the settings in
pyproject.toml, so that CI runs them through the README's test command: every file
of the project is clean (findings are printed by file)."""

from __future__ import annotations

import re
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def findings(command: list[str], pattern: str) -> dict[str, list[str]]:
    """Run a checker; its findings by file (relative to the project)."""
    proc = subprocess.run([sys.executable, "-m", *command], cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert "No module named" not in proc.stderr, f"{command[0]} is not installed: scripts/install-test-deps installs it"
    by_file: dict[str, list[str]] = {}
    for line in proc.stdout.splitlines():
        match = re.match(pattern, line)
        if match:
            by_file.setdefault(match[1], []).append(line)
    assert proc.returncode == 0 or by_file, proc.stdout[-2000:] + proc.stderr[-2000:]
    return by_file


@lru_cache(maxsize=None)
def ruff_findings() -> dict[str, list[str]]:
    return findings(["ruff", "check", ".", "--output-format", "concise"], r"^([^:]+):\d+:\d+: ")


@lru_cache(maxsize=None)
def mypy_findings() -> dict[str, list[str]]:
    return findings(["mypy"], r"^([^:]+):\d+: error: ")


def listed(found: dict[str, list[str]]) -> str:
    return "\n".join(line for lines in found.values() for line in lines)


def test_ruff_is_clean():
    found = ruff_findings()
    assert not found, listed(found)


def test_mypy_is_clean():
    found = mypy_findings()
    assert not found, listed(found)

