"""AT&T text transducers (the `fstprint` layout) for HFST and foma, with a symbols file.

Public API:
    to_att(fst, unknown=None) -> str, symbols_text(fst, unknown=None) -> str,
    write_att(fst, path, unknown=None) -> Path, write_symbols(fst, path, unknown=None) -> Path,
    Error

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

With `unknown` (the label of fstsynth's `<unk>`), the transducer is written so that a
token it does not know passes through HFST and foma as fstsynth passes an unseen token:
an arc reading `<unk>` and writing `<unk>` becomes an identity arc
(`@_IDENTITY_SYMBOL_@`: any symbol outside the transducer's alphabet, kept), and one
reading `<unk>` and writing something else an unknown-symbol arc
(`@_UNKNOWN_SYMBOL_@`: any symbol outside the alphabet, replaced). Both tools read
these names in AT&T text. The `<unk>` arcs are kept beside them, so that a word written
with `<unk>` as fstsynth reads it gets the same output too. (An arc writing `<unk>`
where the transducer copies a token read elsewhere keeps the literal `<unk>`: no finite
transducer can copy a symbol it does not know.) The symbols file then lists both names as aliases of `<unk>`'s label,
so that `fstcompile` reads the text back into the very transducer exported.
"""

from __future__ import annotations

import re
from pathlib import Path

import pynini

from fstsynth.errors import UserError
from fstsynth.fileio import atomic_write_text

ATT_EPSILON = "@0@"
ATT_IDENTITY = "@_IDENTITY_SYMBOL_@"
ATT_UNKNOWN = "@_UNKNOWN_SYMBOL_@"
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


def to_att(fst: pynini.Fst, unknown: int | None = None) -> str:
    """The transducer as AT&T text (`unknown`: see the module docstring)."""
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
            ilabel, olabel = names[arc.ilabel], names[arc.olabel]
            where = f"{number[state]}\t{number[arc.nextstate]}\t"
            if unknown is not None and arc.ilabel == unknown:
                special = ATT_IDENTITY if arc.olabel == unknown else ATT_UNKNOWN
                out = ATT_IDENTITY if arc.olabel == unknown else olabel
                lines.append(f"{where}{special}\t{out}{_weight(arc.weight)}")
            lines.append(f"{where}{ilabel}\t{olabel}{_weight(arc.weight)}")
        final = fst.final(state)
        if final != zero:
            finals.append(f"{number[state]}{_weight(final)}")
    if not lines:  # a lone final start state: AT&T needs it first too
        return "\n".join(finals) + "\n"
    return "\n".join(lines + finals) + "\n"


def symbols_text(fst: pynini.Fst, unknown: int | None = None) -> str:
    """The symbol table in OpenFst text format, epsilon spelled `@0@` like the arcs
    (with `unknown`: the identity and unknown symbols too, as aliases of that label)."""
    names = _names(fst)
    lines = [f"{name}\t{label}\n" for label, name in sorted(names.items())]
    if unknown is not None:
        lines += [f"{ATT_IDENTITY}\t{unknown}\n", f"{ATT_UNKNOWN}\t{unknown}\n"]
    return "".join(lines)


def write_att(fst: pynini.Fst, path: str | Path, unknown: int | None = None) -> Path:
    """Write `path` and its symbols file (`path` with suffix `.syms`); returns the latter."""
    path = Path(path)
    text = to_att(fst, unknown)  # errors before anything is written
    syms = write_symbols(fst, path, unknown)
    atomic_write_text(path, text)
    return syms


def write_symbols(fst: pynini.Fst, path: str | Path, unknown: int | None = None) -> Path:
    """Write the symbols file of AT&T text `path` (`path` with suffix `.syms`)."""
    path = Path(path)
    syms = path.with_suffix(".syms")
    if syms == path:
        raise Error(f"{path}: choose an output name whose suffix is not .syms")
    atomic_write_text(syms, symbols_text(fst, unknown))
    return syms
