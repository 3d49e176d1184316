"""Drawings: Graphviz DOT with token labels (rendered as SVG by `fstsynth.drawing`).

Public API:
    to_dot(fst, title="", max_states=MAX_STATES) -> str
    Error, MAX_STATES

The DOT text is OpenFst's own drawer (`Fst.draw`) with the attached symbol table, so arcs
read `a:b`, not integers. Learned transducers can have thousands of states; a drawing
of more than `MAX_STATES` is refused (it would be unreadable and slow to lay out).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pynini

from fstsynth.errors import UserError

MAX_STATES = 300


class Error(UserError):
    """The transducer cannot be drawn (too big, or Graphviz missing)."""


def to_dot(fst: pynini.Fst, title: str = "", max_states: int = MAX_STATES) -> str:
    count = fst.num_states()
    if count > max_states:
        raise Error(
            f"the transducer has {count} states, too many to draw (limit {max_states}); "
            "export --format att or far and inspect it with a tool instead"
        )
    table = fst.input_symbols()
    fd, tmp = tempfile.mkstemp(suffix=".dot")
    os.close(fd)
    try:
        fst.draw(
            tmp,
            isymbols=table,
            osymbols=fst.output_symbols(),
            title=title,
            portrait=True,
            vertical=False,
        )
        return Path(tmp).read_text(encoding="utf-8")
    finally:
        os.unlink(tmp)
