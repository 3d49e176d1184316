"""Run a program through every apply path, so behavioural tests are written once.

`BACKENDS` lists every path a word can take from a program to its output; the
meta-test in tests/test_tables.py fails if the library has a walker that is not here.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Mapping, Sequence

from walkers import compiled_walker

from fstsynth.block_walker import NumpyBlockWalker
from fstsynth.compiler import Compiled, compile_program
from fstsynth.dsl import Program
from fstsynth.interpreter import run
from fstsynth.model import restore_unknown
from fstsynth.types import Word

#: "interpreter": the DSL's semantics, run directly;
#: "transducer": the word composed with each stage of the compiled passes in turn;
#: "tables-W": the apply tables (`Compiled.tables`) through `Tables.outputs` with
#: walker W (`fstsynth.tables.WALKERS`: the reference word walker, numpy's, C's);
#: "bytes-W": the words as lines of UTF-8 through block walker W
#: (`fstsynth.stream.BLOCK_WALKERS`: C's `apply_block`, `block_walker.NumpyBlockWalker`).
BACKENDS = (
    "interpreter", "transducer", "tables-word", "tables-numpy", "tables-compiled", "bytes-numpy", "bytes-compiled",
)


def _freeze(features: Mapping[str, Mapping[str, bool]]):
    return tuple(sorted((t, tuple(sorted(f.items()))) for t, f in features.items()))


@lru_cache(maxsize=256)
def _compiled(program: Program, alphabet: tuple[str, ...], frozen_features) -> Compiled:
    features = {t: dict(f) for t, f in frozen_features}
    return compile_program(program, alphabet, features)


def run_many(
    backend: str,
    program: Program,
    words: Sequence[Sequence[str]],
    features: Mapping[str, Mapping[str, bool]] | None = None,
    alphabet: Sequence[str] = (),
) -> list[Word]:
    """Every word's output through `backend`, the words in one batch where the path
    takes batches. With an alphabet given, a word's other tokens stay unseen (read as
    <unk>); without, every token of the words is in it."""
    features = features or {}
    alphabet = tuple(sorted(set(alphabet) or {t for w in words for t in w}))
    compiled = _compiled(program, alphabet, _freeze(features))
    mapped = [compiled.map_unknown(w) for w in words]
    tables = compiled.tables()
    if backend == "interpreter":
        outputs = [run(program, m, features) for m in mapped]
    elif backend == "transducer":
        outputs = [compiled.apply(w) for w in words]
    elif backend.startswith("tables-"):
        walker = backend.removeprefix("tables-")
        if walker == "compiled":
            compiled_walker(tables, [True] * len(tables.tokens))  # (or a skip where it is not built)
        outputs = tables.outputs(list(words), walker).words()
    elif backend.startswith("bytes-"):
        seen = [True] * len(tables.tokens)  # unseen tokens are the byte front end's (tests/test_stream.py)
        block_walker = (
            compiled_walker(tables, seen) if backend == "bytes-compiled" else NumpyBlockWalker(tables, seen)
        )
        data = "".join(" ".join(w) + "\n" for w in words).encode()
        done = block_walker.apply_block(data, b" ")
        assert done is not None, f"{backend} declined plain lines"
        outputs = [tuple(line.split(" ")) if line else () for line in done[0].decode().split("\n")[:-1]]
    else:
        raise ValueError(f"unknown backend {backend!r}")
    # As `PairModel.predict` does: unseen tokens come back where they were kept or copied.
    return [restore_unknown(w, m, out) for w, m, out in zip(words, mapped, outputs)]


def run_with(
    backend: str,
    program: Program,
    word: Sequence[str],
    features: Mapping[str, Mapping[str, bool]] | None = None,
    alphabet: Sequence[str] = (),
) -> tuple[str, ...]:
    """One word's output through `backend` (see `run_many`)."""
    return run_many(backend, program, [word], features, alphabet or tuple(word))[0]
