"""Write one model's transducers in the formats other tools read.

Public API:
    FORMATS, export_model(model, fmt, path, source=None, target=None) -> list[Path], Error

Formats (each is read by a real tool in the tests, see tests/test_exports.py):
- `far`: an OpenFst archive (`farinfo`, `farextract`, `fstprint`), symbol tables
  attached; every column pair unless `source`/`target` pick some.
- `att`: AT&T text plus a `.syms` symbols file (HFST `hfst-txt2fst`, foma `read att`,
  OpenFst `fstcompile`), one column pair.
- `foma`: a foma/XFST script of rewrite rules, one column pair.
- `dot` / `svg`: a drawing (Graphviz), one column pair, small transducers only.
"""

from __future__ import annotations

from pathlib import Path

from exporters.att import write_att
from exporters.dot import to_dot, to_svg
from exporters.far import write_far
from exporters.foma_script import program_to_foma
from fstsynth.errors import UserError
from fstsynth.fileio import atomic_write_bytes, atomic_write_text
from fstsynth.model import Model, PairModel, far_key

FORMATS = ("far", "att", "foma", "dot", "svg")


class Error(UserError):
    """An unknown export format."""


def _title(model: Model, pm: PairModel) -> str:
    name = f"{model.name}: " if model.name else ""
    return f"{name}{model.columns[pm.source]} -> {model.columns[pm.target]}"


def export_model(
    model: Model,
    fmt: str,
    path: str | Path,
    source: int | str | None = None,
    target: int | str | None = None,
) -> list[Path]:
    """Write `model` (or the column pair chosen) as `fmt` to `path`; the files written."""
    path = Path(path)
    if fmt not in FORMATS:
        raise Error(f"unknown export format {fmt!r}; choose one of {', '.join(FORMATS)}")
    if fmt == "far":
        if source is None and target is None:
            chosen = list(model.pairs.values())
        else:
            chosen = [model.pair(source, target)]
        write_far(path, {far_key(pm.source, pm.target): pm.compiled.fst for pm in chosen})
        return [path]
    pm = model.pair(source, target)
    if fmt == "att":
        return [path, write_att(pm.compiled.fst, path)]
    if fmt == "foma":
        tokens = sorted(pm.compiled.labels)
        atomic_write_text(path, program_to_foma(pm.program, tokens, model.features, _title(model, pm)))
        return [path]
    dot = to_dot(pm.compiled.fst, _title(model, pm))
    if fmt == "dot":
        atomic_write_text(path, dot)
    else:
        atomic_write_bytes(path, to_svg(dot))
    return [path]
