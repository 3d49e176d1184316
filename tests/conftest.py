"""Shared fixtures: the project's data directory and the benchmark, when present."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data"
SHARED = ROOT.parent / "shared" / "olympiad-dev"


def benchmark_problems() -> list[Path]:
    """The benchmark's problem files, or [] when ../shared is not beside the project."""
    directory = SHARED / "problems"
    return sorted(directory.glob("*.json")) if directory.is_dir() else []


needs_benchmark = pytest.mark.skipif(
    not benchmark_problems(),
    reason=f"benchmark data not found at {SHARED} (it exists only beside a development checkout)",
)
