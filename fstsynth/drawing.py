"""SVG drawings rendered by Graphviz's `dot`, under a time limit.

Public API:
    to_svg(dot_text, time_limit=SVG_TIME_LIMIT) -> bytes
    Error, SVG_TIME_LIMIT

Graphviz's layout time grows much faster than the drawing: a 161-state, 3,503-arc
transducer kept `dot` busy for over ten minutes. `dot` is therefore stopped after
`time_limit` seconds, with a message saying what to do instead.
"""

from __future__ import annotations

import shutil
import subprocess

from fstsynth.errors import UserError

#: Seconds `dot` may take to lay out one drawing.
SVG_TIME_LIMIT = 20.0


class Error(UserError):
    """A drawing could not be made (Graphviz missing, failing or too slow)."""


def to_svg(dot_text: str, time_limit: float = SVG_TIME_LIMIT) -> bytes:
    """Render DOT with Graphviz's `dot -Tsvg`, stopping it after `time_limit` seconds."""
    dot = shutil.which("dot")
    if dot is None:
        raise Error("--format svg needs Graphviz's `dot` program (Debian package graphviz); "
                    "use --format dot to write the DOT text instead")
    try:
        proc = subprocess.run(
            [dot, "-Tsvg"], input=dot_text.encode("utf-8"), capture_output=True, check=False, timeout=time_limit
        )
    except subprocess.TimeoutExpired:
        # subprocess.run has killed and reaped `dot`.
        raise Error(
            f"Graphviz's dot did not lay out the drawing within {time_limit:g} s; "
            "`fstsynth report MODEL` draws each pass with its arcs grouped"
        ) from None
    if proc.returncode != 0:
        raise Error(f"dot failed: {proc.stderr.decode('utf-8', 'replace').strip()[:300]}")
    return proc.stdout
