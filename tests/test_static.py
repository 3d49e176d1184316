"""The linter (ruff) and the type checker (mypy) pass, with the settings in
pyproject.toml, so that CI runs them through the README's test command: every file
of the project is clean (findings are printed by file). They check the project's own
folders only: a virtual environment or a build inside the checkout is not the project's."""

from __future__ import annotations

import re
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Where the project's Python lives (mypy's own list is `files` in pyproject.toml).
PROJECT_PATHS = ["fstsynth", "exporters", "scripts", "tests", "setup.py"]


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
    return findings(["ruff", "check", *PROJECT_PATHS, "--output-format", "concise"], r"^([^:]+):\d+:\d+: ")


@lru_cache(maxsize=None)
def mypy_findings() -> dict[str, list[str]]:
    return findings(["mypy"], r"^([^:]+):\d+: error: ")


def listed(found: dict[str, list[str]]) -> str:
    return "\n".join(line for lines in found.values() for line in lines)


def test_ruff_is_clean():
    found = ruff_findings()
    assert not found, listed(found)


@pytest.mark.slow  # a minute and more of CPU on a fresh checkout (no mypy cache)
def test_mypy_is_clean():
    found = mypy_findings()
    assert not found, listed(found)



def _is_environment(folder: Path) -> bool:
    """A virtual environment (pyvenv.cfg marks one, whatever its name) or a build's output."""
    return (folder / "pyvenv.cfg").exists() or folder.name in {"build", "dist"} or folder.name.endswith(".egg-info")


def test_the_checked_paths_hold_all_of_the_projects_python():
    """A Python file of the project outside PROJECT_PATHS would escape the linter."""
    outside = [
        str(path.relative_to(ROOT))
        for folder in ROOT.iterdir()
        if folder.is_dir() and not folder.name.startswith(".") and folder.name not in PROJECT_PATHS
        and not _is_environment(folder)
        for path in folder.rglob("*.py")
    ]
    outside += [path.name for path in ROOT.glob("*.py") if path.name not in PROJECT_PATHS]
    assert not outside, f"Python files the static tests do not check: {outside[:10]}"
