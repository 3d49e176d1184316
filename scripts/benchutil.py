"""Shared helpers of the benchmark scripts: tables, JSON reports, one-core pinning.

Every script prints a plain-text table and writes the same figures as JSON; figures are
given beside a baseline measured in the same run, because this machine is shared and
absolute times drift.
"""

from __future__ import annotations

import json
import os
import platform
import time
from pathlib import Path
from typing import Any, Sequence

ROOT = Path(__file__).resolve().parent.parent
DEV = ROOT.parent / "shared" / "olympiad-dev"


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A right-aligned text table (floats with 3 significant decimals)."""

    def cell(v: Any) -> str:
        if isinstance(v, float):
            return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.3g}" if abs(v) < 1 else f"{v:.2f}"
        if isinstance(v, int) and not isinstance(v, bool):
            return f"{v:,}"
        return str(v)

    text = [[cell(v) for v in row] for row in rows]
    widths = [max(len(h), *(len(r[k]) for r in text)) if text else len(h) for k, h in enumerate(headers)]
    lines = ["  ".join(h.rjust(w) for h, w in zip(headers, widths))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.rjust(w) for c, w in zip(r, widths)) for r in text]
    return "\n".join(lines)


def write_json(path: str | Path, payload: dict[str, Any]) -> None:
    payload = dict(payload)
    payload["machine"] = {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg(),
        "time_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    Path(path).write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def pin_one_core() -> int | None:
    """Run this process on one core (the first allowed), so words/s are one-core figures."""
    try:
        cpu = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})
        return cpu
    except (AttributeError, OSError):
        return None


def rate(count: int, seconds: float) -> float:
    return count / seconds if seconds > 0 else float("inf")
