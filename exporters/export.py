"""Write one model's transducers in the formats other tools read.

Public API:
    FORMATS, export_model(model, fmt, path, source=None, target=None, passes=False)
        -> list[Path], Error

Formats (each is read by a real tool in the tests, see tests/test_exports.py):
- `far`: an OpenFst archive (`farinfo`, `farextract`, `fstprint`), symbol tables
  attached; every column pair unless `source`/`target` pick some. One transducer per
  pair (`pair-S-T`: its passes composed), or with `passes` one per pass (`pair-S-T.pass1`,
  `.pass2`, ..., applied in that order, each the pass's stages composed): for programs
  whose composition is too large to build or read in good time. (The model's own
  archive keeps the stages themselves, see `fstsynth.compiler`.)
- `att`: AT&T text plus a `.syms` symbols file (HFST `hfst-txt2fst`, foma `read att`,
  OpenFst `fstcompile`), one column pair. The composed transducer is written with
  HFST's and foma's identity and unknown symbols where it reads `<unk>`, so that tokens
  it never saw pass through those tools where the rules keep them (`exporters.att`);
  with `passes`, one file per pass (`NAME.pass1.att`, ...; the same) and one symbols
  file.
- `foma`: a foma/XFST script of rewrite rules, one column pair; with `passes`, the
  passes are defined but not composed (foma takes minutes to compose some programs).
- `dot` / `svg`: a drawing (Graphviz), one column pair, small transducers only
  (`exporters.dot`; `dot` lays out the SVG under a time limit, `fstsynth.drawing`).
- `pynini`: a Python module of Pynini rewrite rules (`exporters.pynini_grammar`), every
  column pair unless `source`/`target` pick one; run as a script it writes a FAR with
  one transducer per pair (`pair-S-T`).

far, att, dot and svg need the model's transducers: for a pair whose transducers were
too large to build (`PairModel.unbuilt`) they stop with `StageTooLargeError` naming it;
foma and pynini are written from the rules and need none.
"""

from __future__ import annotations

from pathlib import Path

import pynini

from exporters.att import to_att, write_att, write_symbols
from exporters.dot import TOO_BIG_HINT, to_dot
from exporters.foma_script import program_to_foma
from exporters.pynini_grammar import GrammarPair, grammar_source
from fstsynth.compiler import CompositionTooLargeError
from fstsynth.drawing import to_svg
from fstsynth.errors import UserError
from fstsynth.far import write_far
from fstsynth.fileio import atomic_write_bytes, atomic_write_text
from fstsynth.model import Model, PairModel, far_key
from fstsynth.tables import UNK

FORMATS = ("far", "att", "foma", "dot", "svg", "pynini")


class Error(UserError):
    """An unknown export format."""


def _title(model: Model, pm: PairModel) -> str:
    name = f"{model.name}: " if model.name else ""
    return f"{name}{model.columns[pm.source]} -> {model.columns[pm.target]}"


def _composed(model: Model, pm: PairModel, drawing: bool = False) -> pynini.Fst:
    """The pair's stages composed, or an error naming the pair if that is too large."""
    transducers = pm.transducers(_title(model, pm))
    try:
        return transducers.composed()
    except CompositionTooLargeError as exc:
        hint = TOO_BIG_HINT if drawing else "export it with --passes (one transducer per pass, applied in order)"
        raise Error(f"{_title(model, pm)}: {exc}; {hint}") from None


def _passes(model: Model, pm: PairModel) -> list[pynini.Fst]:
    """One transducer per pass (or an error naming the pair if one is too large)."""
    transducers = pm.transducers(_title(model, pm))
    try:
        return transducers.pass_transducers()
    except CompositionTooLargeError as exc:
        raise Error(f"{_title(model, pm)}: {exc}") from None


def export_model(
    model: Model,
    fmt: str,
    path: str | Path,
    source: int | str | None = None,
    target: int | str | None = None,
    passes: bool = False,
) -> list[Path]:
    """Write `model` (or the column pair chosen) as `fmt` to `path`; the files written.

    `passes`: each pass's transducer on its own instead of their composition (far,
    att; for foma, a script that defines the passes without composing them)."""
    path = Path(path)
    if fmt not in FORMATS:
        raise Error(f"unknown export format {fmt!r}; choose one of {', '.join(FORMATS)}")
    if passes and fmt not in ("far", "att", "foma"):
        raise Error(f"--passes applies to the far, att and foma formats, not {fmt!r}")
    if fmt == "far":
        if source is None and target is None:
            chosen = list(model.pairs.values())
        else:
            chosen = [model.pair(source, target)]
        if passes:
            fsts = {
                f"{far_key(pm.source, pm.target)}.pass{k}": fst
                for pm in chosen
                for k, fst in enumerate(_passes(model, pm), start=1)
            }
        else:
            fsts = {far_key(pm.source, pm.target): _composed(model, pm) for pm in chosen}
        write_far(path, fsts)
        return [path]
    if fmt == "pynini":
        chosen = list(model.pairs.values()) if source is None and target is None else [model.pair(source, target)]
        pairs = [GrammarPair(far_key(pm.source, pm.target), _title(model, pm), pm.program) for pm in chosen]
        tokens = sorted({tok for pm in chosen for tok in pm.tables.tokens})
        atomic_write_text(path, grammar_source(pairs, tokens, model.features, model.name))
        return [path]
    pm = model.pair(source, target)
    if fmt == "att":
        if not passes:
            fst = _composed(model, pm)
            return [path, write_att(fst, path, unknown=fst.input_symbols().find(UNK))]
        pass_fsts = _passes(model, pm)
        unknown = pass_fsts[0].input_symbols().find(UNK)
        files = [path.with_name(f"{path.stem}.pass{k}{path.suffix}") for k in range(1, len(pass_fsts) + 1)]
        # Every pass carries the pair's whole table: one symbols file serves them all.
        shared = write_symbols(pass_fsts[0], path, unknown)
        for file, fst in zip(files, pass_fsts):
            atomic_write_text(file, to_att(fst, unknown))
        return [*files, shared]
    if fmt == "foma":
        tokens = sorted(pm.tables.tokens)
        script = program_to_foma(pm.program, tokens, model.features, _title(model, pm), compose=not passes)
        atomic_write_text(path, script)
        return [path]
    dot = to_dot(_composed(model, pm, drawing=True), _title(model, pm))
    if fmt == "dot":
        atomic_write_text(path, dot)
    else:
        atomic_write_bytes(path, to_svg(dot))
    return [path]
