"""Shared helpers of the stress and fuzz scripts (`stress_interrupts`, `stress_concurrent`,
`fuzz_inputs`): running the real `fstsynth` command, made-up problems, directory
snapshots.

The command runs as `python -m fstsynth` from this checkout, with SIGINT handled as a
terminal would (a script started in the background by a shell inherits SIGINT ignored,
and Python keeps it so: a Ctrl-C would then seem lost).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, Sequence

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
FSTSYNTH = [sys.executable, "-m", "fstsynth"]


def as_from_a_terminal() -> None:
    """preexec_fn: default SIGINT handling, whatever this script inherited."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start(args: Sequence[Any], **kwargs: Any) -> subprocess.Popen:
    """Start `fstsynth ARGS` with stdout and stderr captured as text."""
    return subprocess.Popen(
        [*FSTSYNTH, *map(str, args)],
        cwd=ROOT,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=as_from_a_terminal,
        **kwargs,
    )


def run(args: Sequence[Any], timeout: float = 600, **kwargs: Any) -> subprocess.CompletedProcess:
    proc = start(args, **kwargs)
    out, err = proc.communicate(timeout=timeout)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def state(pid: int) -> str:
    """The kernel's one-letter state of a process ('Z': exited, not yet waited for)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return "?"


def snapshot(path: Path) -> dict[str, bytes] | bytes | None:
    """A directory's files (name -> bytes), a file's bytes, or None if absent."""
    if path.is_dir():
        return {p.name: p.read_bytes() for p in sorted(path.iterdir())}
    if path.is_file():
        return path.read_bytes()
    return None


def hidden_leftovers(directory: Path) -> list[str]:
    """Entries of `directory` that fstsynth writes as temporaries (`.NAME.tmp-PID-...`)."""
    return sorted(p.name for p in directory.iterdir() if p.name.startswith(".") and "-" in p.name)


LETTERS = "p t k b d g a e i o u m n s l r".split()


def plural_rows(rng: random.Random, rows: int, length: int) -> list[list[str]]:
    """Rows of (stem, plural, possessive): a voicing-dependent suffix and a prefix."""
    out = []
    for _ in range(rows):
        word = [rng.choice(LETTERS) for _ in range(rng.randint(max(1, length // 2), length))]
        suffix = "z" if word[-1] in "bdgmnlraeiou" else "s"
        out.append([" ".join(word), " ".join(word + [suffix]), " ".join(["a", "m", *word])])
    return out


def write_problem(path: Path, rows: list[list[str]], unknown: int = 0) -> Path:
    """A JSON problem of three columns; the last `unknown` rows get a `?` to predict."""
    data = [list(r) for r in rows]
    for k, row in enumerate(data[len(data) - unknown:]):
        row[1 + k % 2] = "?"
    doc = {"columns": ["stem", "plural", "my"], "data": data}
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return path
