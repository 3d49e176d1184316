"""AT&T text transducers (the `fstprint` layout) for HFST and foma, with a symbols file.

Public API:
    to_att(fst) -> str, symbols_text(fst) -> str, write_att(fst, path) -> Path,
    write_symbols(fst, path) -> Path, Error

One line per arc, `src<TAB>dst<TAB>input<TAB>output[<TAB>weight]`, then one line per
final state, `state[<TAB>weight]`, the start state first (AT&T readers take the first
line's source as the start, HFST and foma state 0: states are renumbered so that the
start state is 0). Epsilon is written `@0@`, the one spelling that HFST
(`hfst-txt2fst`) and foma (`read att`) both read as epsilon without options; the
symbols file written beside it (OpenFst text format, `@0@` = 0) lets OpenFst's
`fstcompile --isymbols --osymbols` read the same file back. Weights are tropical and
printed only when not 0, as `fstprint` does.

Tokens that HFST or foma would read as something else are refused with an error rather
than exported wrongly: `@0@`-style names (`@...@`: epsilon, identity, flag diacritics)
and tokens with whitespace.
"""

from __future__ import annotations

import re
from pathlib import Path

import pynini

from fstsynth.errors import UserError
from fstsynth.fileio import atomic_write_text

ATT_EPSILON = "@0@"
_SPECIAL = re.compile(r"^@.*@$")


class Error(UserError):
    """The transducer cannot be written as AT&T text."""


def _names(fst: pynini.Fst) -> dict[int, str]:
    table = fst.input_symbols()
    if table is None:
        raise Error("the transducer has no symbol table; cannot write token names")
    names = {}
    for label, name in table:
        if label == 0:
            names[0] = ATT_EPSILON
            continue
        if _SPECIAL.match(name) or any(ch.isspace() for ch in name):
            raise Error(f"token {name!r} cannot be written in AT&T text (HFST/foma read it specially)")
        names[label] = name
    return names


def _weight(weight: pynini.Weight) -> str:
    text = str(weight)
    return "" if text in ("0", "0.0") else f"\t{text}"


def to_att(fst: pynini.Fst) -> str:
    names = _names(fst)
    start = fst.start()
    if start == pynini.NO_STATE_ID:
        raise Error("the transducer is empty (no start state)")
    # HFST and foma take state 0 as the start state: renumber so that it is.
    order = [start] + [s for s in fst.states() if s != start]
    number = {state: k for k, state in enumerate(order)}
    lines: list[str] = []
    finals: list[str] = []
    zero = pynini.Weight.zero(fst.weight_type())
    for state in order:
        for arc in fst.arcs(state):
            lines.append(
                f"{number[state]}\t{number[arc.nextstate]}\t{names[arc.ilabel]}\t{names[arc.olabel]}{_weight(arc.weight)}"
            )
        final = fst.final(state)
        if final != zero:
            finals.append(f"{number[state]}{_weight(final)}")
    if not lines:  # a lone final start state: AT&T needs it first too
        return "\n".join(finals) + "\n"
    return "\n".join(lines + finals) + "\n"


def symbols_text(fst: pynini.Fst) -> str:
    """The symbol table in OpenFst text format, epsilon spelled `@0@` like the arcs."""
    names = _names(fst)
    return "".join(f"{name}\t{label}\n" for label, name in sorted(names.items()))


def write_att(fst: pynini.Fst, path: str | Path) -> Path:
    """Write `path` and its symbols file (`path` with suffix `.syms`); returns the latter."""
    path = Path(path)
    text = to_att(fst)  # errors before anything is written
    syms = write_symbols(fst, path)
    atomic_write_text(path, text)
    return syms


def write_symbols(fst: pynini.Fst, path: str | Path) -> Path:
    """Write the symbols file of AT&T text `path` (`path` with suffix `.syms`)."""
    path = Path(path)
    syms = path.with_suffix(".syms")
    if syms == path:
        raise Error(f"{path}: choose an output name whose suffix is not .syms")
    atomic_write_text(syms, symbols_text(fst))
    return syms
