"""Drawings: Graphviz DOT with token labels (rendered as SVG by `fstsynth.drawing`).

Public API:
    to_dot(fst, title="", max_states=MAX_STATES, max_arcs=MAX_ARCS) -> str
    Error, MAX_STATES, MAX_ARCS, TOO_BIG_HINT

The DOT text is OpenFst's own drawer (`Fst.draw`) with the attached symbol table, so arcs
read `a:b`, not integers, one arc per token pair. Learned transducers can have thousands
of states and arcs; a drawing of more than `MAX_STATES` states or `MAX_ARCS` arcs is
refused: it would be unreadable, and Graphviz takes minutes to lay it out (measured:
over 60 s for several transducers of 320 to 1,342 arcs; 10 minutes and more for one of
3,503). `fstsynth report` draws each pass with the arcs between two states grouped.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pynini

from fstsynth.transducers import arc_count
from fstsynth.errors import UserError

MAX_STATES = 300
MAX_ARCS = 250
#: What to do instead of drawing a large transducer.
TOO_BIG_HINT = "`fstsynth report MODEL` draws each pass with its arcs grouped; or export --format att or far"


class Error(UserError):
    """The transducer cannot be drawn (too big, or Graphviz missing)."""


def to_dot(fst: pynini.Fst, title: str = "", max_states: int = MAX_STATES, max_arcs: int = MAX_ARCS) -> str:
    states, arcs = fst.num_states(), arc_count(fst)
    if states > max_states or arcs > max_arcs:
        raise Error(
            f"the transducer has {states} states and {arcs} arcs, too many to draw "
            f"(limit {max_states} states, {max_arcs} arcs): {TOO_BIG_HINT}"
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
